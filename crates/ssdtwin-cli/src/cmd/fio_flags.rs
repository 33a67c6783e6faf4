//! fio's command line for `ssdtwin run`, as people paste it: job options
//! `--name=value` (or `-name=value`, `-name value`: fio reads options with
//! getopt_long_only, so one dash is enough) in fio's spelling, any option
//! a job file takes, and fio's program options (`--eta-newline`,
//! `--minimal`, ...).
//!
//! clap knows only ssdtwin's own flags; before parsing, [`rewrite`] turns
//! every other `--key[=value]` after `run` into `--fio key=value`, keeping
//! the order (fio's `--name` starts a new job, options before the first
//! `--name` are global), so that the command line goes through the same
//! job parser as a job file. A flag without `=` takes the next word as its
//! value unless that word starts with `-`, the option is a switch in fio's
//! table (`--time_based`, `--norandommap`, `--group_reporting`, ...), or it
//! is a boolean and the word is not 0 or 1. fio's program options become
//! `--fio-program NAME=VALUE` ([`program_option`] says what `ssdtwin run`
//! makes of each); `--minimal` is `--output-format=terse`, as in fio.

use std::ffi::OsString;

use clap::{Args, Command};
use ssdtwin::run::workload::fio::table::{self, Kind};

use super::run::RunArgs;

/// What `ssdtwin run` makes of one of fio's program options (fio's
/// `init.c`, `l_opts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// Describes fio's own console, logging or helpers: ignored.
    Ignored,
    /// A mode of fio the twin does not have: an error with this reason.
    Refused(&'static str),
    /// `--section=NAME`: run only the job file's sections so named
    /// ([`only_sections`]).
    Section,
}

/// A job file's text with only `[global]` and the sections `names` left
/// (fio's `--section`, init.c `skip_this_section`: the other sections'
/// options are not even read). Their lines become empty, so that errors
/// still name the file's own line numbers.
pub fn only_sections(text: &str, names: &[String]) -> String {
    let mut keep = true;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix('[').and_then(|r| r.split_once(']')).map(|(n, _)| n.trim()) {
            keep = name == "global" || names.iter().any(|n| n == name);
        }
        if keep {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// fio's program options: name, whether it takes a value (`None`:
/// optional), and what `ssdtwin run` makes of it. `--output`,
/// `--output-format`, `--help` and `--version` are ssdtwin's own too.
const PROGRAM: &[(&str, Option<bool>, Program)] = &[
    ("latency-log", Some(true), Program::Ignored),
    ("bandwidth-log", None, Program::Ignored),
    ("append-terse", None, Program::Ignored),
    ("eta", Some(true), Program::Ignored),
    ("eta-interval", Some(true), Program::Ignored),
    ("eta-newline", Some(true), Program::Ignored),
    ("debug", Some(true), Program::Ignored),
    ("alloc-size", Some(true), Program::Ignored),
    ("warnings-fatal", Some(false), Program::Ignored),
    ("max-jobs", Some(true), Program::Ignored),
    ("status-interval", Some(true), Program::Ignored),
    ("idle-prof", Some(true), Program::Ignored),
    ("aux-path", Some(true), Program::Ignored),
    ("readonly", Some(false), Program::Ignored),
    ("terse-version", Some(true), Program::Ignored),
    ("trigger-file", Some(true), Program::Refused("fio's triggers run host commands")),
    ("trigger-timeout", Some(true), Program::Refused("fio's triggers run host commands")),
    ("trigger", Some(true), Program::Refused("fio's triggers run host commands")),
    ("trigger-remote", Some(true), Program::Refused("fio's triggers run host commands")),
    ("showcmd", Some(false), Program::Refused("fio's job-file-to-command-line mode is not modelled")),
    ("parse-only", Some(false), Program::Refused("fio's parse-only mode is not modelled")),
    ("section", Some(true), Program::Section),
    ("inflate-log", Some(true), Program::Refused("a fio helper, not a workload")),
    ("profile", Some(true), Program::Refused("fio's built-in profiles are not modelled")),
    ("cmdhelp", None, Program::Refused("`ssdtwin fio-options` lists fio's options and what the twin makes of them")),
    ("enghelp", None, Program::Refused("`ssdtwin fio-options --class host` lists the engines' options")),
    ("server", None, Program::Refused("fio's client/server mode is not modelled")),
    ("server-internal", Some(true), Program::Refused("fio's client/server mode is not modelled")),
    ("daemonize", Some(true), Program::Refused("fio's client/server mode is not modelled")),
    ("client", Some(true), Program::Refused("fio's client/server mode is not modelled")),
    ("remote-config", Some(true), Program::Refused("fio's client/server mode is not modelled")),
    ("cpuclock-test", Some(false), Program::Refused("a fio self-test, not a workload")),
    ("crctest", None, Program::Refused("a fio self-test, not a workload")),
    ("memcpytest", None, Program::Refused("a fio self-test, not a workload")),
    ("merge-blktrace-only", Some(false), Program::Refused("merging blktrace files is not modelled")),
];

/// What `ssdtwin run` makes of fio's program option `name` (`None`: not
/// one of them).
pub fn program_option(name: &str) -> Option<Program> {
    PROGRAM.iter().find(|p| p.0 == name).map(|p| p.2)
}

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
        let Some(flag) = long_flag(&tok) else {
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
            out.push("--help".into());
            continue;
        }
        if let Some(tv) = takes_value(&key) {
            out.push(format!("--{flag}").into());
            if tv && value.is_none() && i < args.len() {
                out.push(args[i].clone());
                i += 1;
            }
            continue;
        }
        let next = args.get(i).and_then(|a| a.to_str()).filter(|n| !n.starts_with('-'));
        if key == "minimal" && value.is_none() {
            out.push("--output-format=terse".into());
            continue;
        }
        if let Some(p) = PROGRAM.iter().find(|p| p.0 == key) {
            let value = match (value, p.1, next) {
                (Some(v), _, _) => v,
                (None, Some(true), Some(n)) => {
                    i += 1;
                    n.to_string()
                }
                _ => String::new(),
            };
            out.push("--fio-program".into());
            out.push(format!("{key}={value}").into());
            continue;
        }
        let key = if super::run::is_fio_spelling(&key) { key } else { key.replace('-', "_") };
        let kind = table::lookup(&key).map(|d| d.kind);
        let value = match value {
            Some(v) => v,
            None if kind == Some(Kind::Switch) => "1".to_string(),
            None if OPTIONAL_VALUE.contains(&key.as_str()) => match next {
                Some(next) => {
                    i += 1;
                    next.to_string()
                }
                None => String::new(),
            },
            None => match next {
                Some(next) if kind != Some(Kind::Bool) || ["0", "1", "true", "false"].contains(&next) => {
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

/// The option in a long flag, `--name[=value]` or fio's one-dash
/// `-name[=value]` (a name of two letters or more; `-d`, `-q` stay short
/// flags).
fn long_flag(tok: &str) -> Option<&str> {
    if let Some(f) = tok.strip_prefix("--") {
        return Some(f).filter(|f| !f.is_empty());
    }
    let f = tok.strip_prefix('-')?;
    let name = f.split_once('=').map_or(f, |(n, _)| n);
    (name.len() >= 2 && name.starts_with(|c: char| c.is_ascii_alphabetic())).then_some(f)
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

    /// fio's command line as people paste it: one dash, switches from
    /// fio's table, booleans that take 0 or 1, program options.
    #[test]
    fn fio_command_lines_as_pasted() {
        assert_eq!(
            r(&["ssdtwin", "run", "-d", "x", "-rw=randrw", "-iodepth", "1", "-group_reporting", "-direct", "1", "-q"]),
            [
                "ssdtwin",
                "run",
                "-d",
                "x",
                "--fio",
                "rw=randrw",
                "--fio",
                "iodepth=1",
                "--fio",
                "group_reporting=1",
                "--fio",
                "direct=1",
                "-q"
            ]
        );
        // A switch never takes the next word; a boolean takes only 0 or 1.
        assert_eq!(
            r(&["ssdtwin", "run", "--norandommap", "--unlink", "--name", "a", "--exitall_on_error", "--thread"]),
            [
                "ssdtwin",
                "run",
                "--fio",
                "norandommap=1",
                "--fio",
                "unlink=1",
                "--fio",
                "name=a",
                "--fio",
                "exitall_on_error=1",
                "--fio",
                "thread=1"
            ]
        );
        // ssdtwin's own flags with one dash, fio's program options, fio's
        // --minimal (terse output).
        assert_eq!(
            r(&["ssdtwin", "run", "-drive", "x", "--eta-newline=1", "-eta", "never", "--minimal", "-hugepage-size=2m"]),
            [
                "ssdtwin",
                "run",
                "--drive",
                "x",
                "--fio-program",
                "eta-newline=1",
                "--fio-program",
                "eta=never",
                "--output-format=terse",
                "--fio",
                "hugepage-size=2m"
            ]
        );
        assert_eq!(program_option("eta"), Some(Program::Ignored));
        assert!(matches!(program_option("client"), Some(Program::Refused(_))));
        assert_eq!(program_option("rw"), None);
    }
}
