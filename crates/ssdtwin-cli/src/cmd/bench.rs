//! `ssdtwin bench`: the simulator's own speed (simulated I/Os per wall
//! second, preconditioning time and memory, the review's wall time and
//! peak memory) on a fixed set of runs.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use ssdtwin::spec::DriveModel;
use ssdtwin::study::bench;
use ssdtwin::DriveSpec;

/// Options of `ssdtwin bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Run every row on this preset or drive file instead of the
    /// default pair (large: intel-660p-2tb, main: intel-660p-1tb).
    #[arg(long)]
    pub drive: Option<String>,
    /// Override a field of the drives (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Multiply the number of simulated I/Os (1.0 = standard set).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Skip the large drive's steady-state preconditioning and the
    /// random writes on it (the slowest rows).
    #[arg(long)]
    pub no_steady: bool,
    /// Skip the review row (`ssdtwin review` of the main drive: its wall
    /// time and peak memory, about a minute).
    #[arg(long)]
    pub no_review: bool,
    /// Run only the data-placement rows: 128 KiB sequential writes on the
    /// generic TLC drive conventional, zoned and through FDP placement
    /// identifiers, and 4 KiB random reads of it conventional and zoned
    /// (`--drive`, `--set`, `--no-steady` and `--no-review` do not apply).
    #[arg(long, conflicts_with_all = ["drive", "set"])]
    pub placement_only: bool,
}

/// Run the command.
pub fn run(BenchArgs { drive, set, scale, no_steady, no_review, placement_only }: BenchArgs) -> Result<ExitCode> {
    if placement_only {
        outln!("ssdtwin {} bench: data-placement rows", env!("CARGO_PKG_VERSION"));
        outln!("{}", bench::HEADER);
        bench::run_placement(scale, |row| outln!("{}", bench::format_row(row)));
        return Ok(ExitCode::SUCCESS);
    }
    let load = |name: &str| -> Result<(String, DriveModel)> {
        let spec = DriveSpec::load(name, &set)?;
        let model = spec.build(name)?;
        Ok((spec.name, model))
    };
    let (large, main) = match &drive {
        Some(d) => (load(d)?, load(d)?),
        None => (load("intel-660p-2tb")?, load("intel-660p-1tb")?),
    };
    let describe = |(name, m): &(String, DriveModel)| {
        format!("{name} ({} dies, {:.0} GB)", m.geometry.dies, m.user_lpns as f64 * 4096.0 / 1e9)
    };
    outln!(
        "ssdtwin {} bench: large drive {}, main drive {}",
        env!("CARGO_PKG_VERSION"),
        describe(&large),
        describe(&main)
    );
    outln!("{}", bench::HEADER);
    let drives = bench::BenchDrives { large, main };
    bench::run(&drives, scale, !no_steady, !no_review, |row| {
        outln!("{}", bench::format_row(row));
    });
    Ok(ExitCode::SUCCESS)
}
