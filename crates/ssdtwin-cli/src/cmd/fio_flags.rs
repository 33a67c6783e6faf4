//! fio's command-line job options for `ssdtwin run`: `--name=value` in
//! fio's spelling, any option a job file takes.
//!
//! clap knows only ssdtwin's own flags; before parsing, [`rewrite`] turns
//! every other `--key[=value]` after `run` into `--fio key=value`, keeping
//! the order (fio's `--name` starts a new job, options before the first
//! `--name` are global), so that the command line goes through the same
//! job parser as a job file. A flag without `=` takes the next word as its
//! value unless that word starts with `-` or the flag is one of fio's
//! switches (`--time_based`, `--norandommap`, `--stonewall`, ...).

use std::ffi::OsString;

use clap::{Args, Command};

use super::run::RunArgs;

/// fio options that are switches on the command line (no value).
const SWITCHES: &[&str] = &[
    "time_based",
    "norandommap",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "group_reporting",
    "apst",
    "thread",
    "bs_unaligned",
    "unlink",
    "invalidate",
    "secure_erase",
];

/// fio options whose value may be left out (`--write_bw_log` alone: the
/// job's name is the prefix).
const OPTIONAL_VALUE: &[&str] = &["write_bw_log", "write_iops_log", "write_lat_log", "write_hist_log"];

/// Rewrite the command line of `ssdtwin run` so that fio's options reach
/// [`RunArgs::fio`] in order; other commands are left alone.
pub fn rewrite(args: Vec<OsString>) -> Vec<OsString> {
    if args.get(1).and_then(|a| a.to_str()) != Some("run") {
        return args;
    }
    let cmd = RunArgs::augment_args(Command::new("run"));
    let takes_value = |long: &str| -> Option<bool> {
        cmd.get_arguments().find_map(|a| {
            let names: Vec<&str> = a.get_long().into_iter().chain(a.get_all_aliases().unwrap_or_default()).collect();
            names.contains(&long).then(|| a.get_action().takes_values())
        })
    };
    let mut out: Vec<OsString> = args[..2].to_vec();
    let mut i = 2;
    while i < args.len() {
        let Some(tok) = args[i].to_str().map(str::to_string) else {
            out.push(args[i].clone());
            i += 1;
            continue;
        };
        i += 1;
        let Some(flag) = tok.strip_prefix("--").filter(|f| !f.is_empty()) else {
            out.push(tok.into());
            continue;
        };
        let (key, value) = match flag.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (flag.to_string(), None),
        };
        // clap's own `--help` is added when the command is built, so it is
        // not among the arguments above; it stays clap's.
        if key == "help" && value.is_none() {
            out.push(tok.into());
            continue;
        }
        if let Some(tv) = takes_value(&key) {
            out.push(tok.clone().into());
            if tv && value.is_none() && i < args.len() {
                out.push(args[i].clone());
                i += 1;
            }
            continue;
        }
        let key = if super::run::is_fio_spelling(&key) { key } else { key.replace('-', "_") };
        let value = match value {
            Some(v) => v,
            None if SWITCHES.contains(&key.as_str()) => "1".to_string(),
            None if OPTIONAL_VALUE.contains(&key.as_str()) => match args.get(i).and_then(|a| a.to_str()) {
                Some(next) if !next.starts_with('-') => {
                    i += 1;
                    next.to_string()
                }
                _ => String::new(),
            },
            None => match args.get(i).and_then(|a| a.to_str()) {
                Some(next) if !next.starts_with('-') => {
                    i += 1;
                    next.to_string()
                }
                _ => "1".to_string(),
            },
        };
        out.push("--fio".into());
        out.push(format!("{key}={value}").into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: &[&str]) -> Vec<String> {
        rewrite(a.iter().map(OsString::from).collect()).into_iter().map(|o| o.into_string().unwrap()).collect()
    }

    #[test]
    fn fio_flags_become_ordered_pairs() {
        assert_eq!(
            r(&["ssdtwin", "run", "--drive", "x", "--rw", "read", "--bs=4k", "--time_based", "--name=b", "-q"]),
            [
                "ssdtwin",
                "run",
                "--drive",
                "x",
                "--fio",
                "rw=read",
                "--fio",
                "bs=4k",
                "--fio",
                "time_based=1",
                "--fio",
                "name=b",
                "-q"
            ]
        );
        assert_eq!(r(&["ssdtwin", "show", "--rw"]), ["ssdtwin", "show", "--rw"]);
        assert_eq!(r(&["ssdtwin", "run", "--io-size", "1m"]), ["ssdtwin", "run", "--fio", "io_size=1m"]);
        // `--help` stays clap's, so `run --help` prints help without --drive.
        assert_eq!(r(&["ssdtwin", "run", "--help"]), ["ssdtwin", "run", "--help"]);
    }
}
