//! `ssdtwin presets` and `ssdtwin show`: the shipped drive presets, and a
//! preset or drive file as TOML with overrides applied.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use ssdtwin::run::workload::fio::parse_size;
use ssdtwin::spec::{preset_names, preset_source};
use ssdtwin::study::fit::identify::keep_valid;
use ssdtwin::study::fit::params::shrink;
use ssdtwin::DriveSpec;

/// Options of `ssdtwin show`.
#[derive(Args)]
pub struct ShowArgs {
    /// Preset name or path to a drive TOML file.
    pub drive: String,
    /// Override a field, e.g. `--set geometry.channels=4` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Scale the drive to this user capacity (fio's size syntax, e.g. `4g`,
    /// `16GB`): a small twin of a preset for trying things fast. Blocks per
    /// plane and pages per block shrink so that the spare area stays; the
    /// SLC cache, DRAM and host memory buffer scale alike; dies, planes and
    /// every timing stay (a few blocks more where GC's reserve needs them).
    /// Applied after `--set`.
    #[arg(long, value_name = "SIZE")]
    pub capacity: Option<String>,
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
pub fn run(ShowArgs { drive, set, capacity }: ShowArgs) -> Result<ExitCode> {
    let mut spec = DriveSpec::load(&drive, &set)?;
    if let Some(size) = &capacity {
        let bytes = parse_size(size, 1024, 0)
            .ok()
            .filter(|&b| b >= 1 << 20)
            .ok_or_else(|| anyhow::anyhow!("--capacity {size}: not a size of at least 1 MiB (e.g. 4g, 16GB)"))?;
        shrink(&mut spec, bytes as f64);
        // GC's reserve and the open blocks are whole blocks: a small twin
        // may need a few more blocks per plane than the spare ratio gives.
        let scaled_bpp = spec.geometry.blocks_per_plane;
        keep_valid(&mut spec, &mut Vec::new());
        if spec.geometry.blocks_per_plane != scaled_bpp {
            errln!(
                "note: blocks per plane {scaled_bpp} → {}: GC's reserve and the open blocks need them beside \
                 the user capacity",
                spec.geometry.blocks_per_plane
            );
        }
        spec.description = format!("{} scaled to {} bytes (ssdtwin show --capacity {size})", spec.description, bytes);
    }
    spec.build(&drive)?;
    match preset_source(&drive) {
        Some(_) if capacity.is_some() => out!("{}", spec.to_toml()),
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
