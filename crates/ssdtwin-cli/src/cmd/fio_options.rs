//! `ssdtwin fio-options`: fio's whole option table as the twin reads it —
//! for each option its aliases, whether the twin models it with fio's
//! meaning, ignores it as describing the host, or refuses it (and why),
//! its kind of value, fio's default and a line of help. `--markdown`
//! prints docs/fio-options.md.

use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use ssdtwin::run::workload::fio::table::{self, Class};

/// Options of `ssdtwin fio-options`.
#[derive(Args)]
pub struct FioOptionsArgs {
    /// Show only these options (any spelling).
    pub names: Vec<String>,
    /// Only options of this class: fio, ssdtwin, host or refused.
    #[arg(long)]
    pub class: Option<String>,
    /// Print the Markdown page (docs/fio-options.md).
    #[arg(long)]
    pub markdown: bool,
}

/// Run the command.
pub fn run(args: FioOptionsArgs) -> Result<ExitCode> {
    if args.markdown {
        out!("{}", table::markdown());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(c) = &args.class {
        if !["fio", "ssdtwin", "host", "refused"].contains(&c.as_str()) {
            bail!("--class `{c}` is not one of fio, ssdtwin, host, refused");
        }
    }
    let mut defs: Vec<_> = if args.names.is_empty() {
        table::all().collect()
    } else {
        let mut v = Vec::new();
        for n in &args.names {
            match table::lookup(n) {
                Some(d) => v.push(d),
                None => bail!("`{n}` is not a fio option (nor one of ssdtwin's)"),
            }
        }
        v
    };
    defs.retain(|d| args.class.as_deref().is_none_or(|c| d.class_label() == c));
    if args.names.is_empty() {
        defs.sort_by_key(|d| d.name);
    }
    for d in defs {
        let mut name = d.name.to_string();
        if !d.aliases.is_empty() {
            name = format!("{name} ({})", d.aliases.join(", "));
        }
        let default = if d.default.is_empty() { String::new() } else { format!(" [default {}]", d.default) };
        outln!("{name:<34} {:<8} {:<10} {}{default}", d.class_label(), d.kind.label(), d.help);
        if let Class::Refused(why) = d.class {
            outln!("{:<54} refused: {why}", "");
        }
    }
    Ok(ExitCode::SUCCESS)
}
