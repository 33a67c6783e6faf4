//! `ssdtwin presets` and `ssdtwin show`: the shipped drive presets, and a
//! preset or drive file as TOML with overrides applied.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use ssdtwin::spec::{preset_names, preset_source};
use ssdtwin::DriveSpec;

/// Options of `ssdtwin show`.
#[derive(Args)]
pub struct ShowArgs {
    /// Preset name or path to a drive TOML file.
    pub drive: String,
    /// Override a field, e.g. `--set geometry.channels=4` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
}

/// `ssdtwin presets`: one line per preset.
pub fn presets() -> Result<ExitCode> {
    for name in preset_names() {
        let spec = DriveSpec::load(name, &[])?;
        outln!("{name:<24} {}", spec.description);
    }
    Ok(ExitCode::SUCCESS)
}

/// `ssdtwin show`.
pub fn run(ShowArgs { drive, set }: ShowArgs) -> Result<ExitCode> {
    let spec = DriveSpec::load(&drive, &set)?;
    spec.build(&drive)?;
    match preset_source(&drive) {
        Some(src) if set.is_empty() && !src.lines().any(|l| l.starts_with("base")) => out!("{src}"),
        Some(src) => {
            // A derived preset or overrides: its own comments, then the
            // resolved drive in full.
            for line in src.lines().take_while(|l| l.starts_with('#')) {
                outln!("{line}");
            }
            outln!("# Resolved (base preset and overrides applied):");
            out!("{}", spec.to_toml());
        }
        None => out!("{}", spec.to_toml()),
    }
    Ok(ExitCode::SUCCESS)
}
