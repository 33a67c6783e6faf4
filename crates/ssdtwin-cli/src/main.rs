//! `ssdtwin`: command-line front end of the ssdtwin simulator.
//!
//! A thin binary: parse the command line, dispatch to the command's module
//! in [`cmd`], print errors. The work is in the `ssdtwin` library.

#[macro_use]
mod output;
mod cmd;
mod interrupt;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// A digital twin of a flash SSD: simulate a drive and run benchmarks on it.
///
/// Describe a drive in TOML (or pick a preset), choose the state it starts
/// in, and run fio-style workloads against it in virtual time.
#[derive(Parser)]
#[command(name = "ssdtwin", version, about, long_about = None)]
#[command(after_help = "Examples:\n  \
    ssdtwin presets\n  \
    ssdtwin show generic-tlc-nvme\n  \
    ssdtwin run --drive generic-tlc-nvme --state full --rw randread --bs 4k --iodepth 32 --runtime 10s\n  \
    ssdtwin run --drive my-drive.toml --set ftl.gc_policy=fifo --job-file steady.fio --json out.json\n  \
    ssdtwin run --drive intel-660p-1tb --state full --trace web.blkparse.gz --replay capped-idle:25\n  \
    ssdtwin fio-options zonemode fsync ioengine\n  \
    ssdtwin trace stats msr-hm_0.csv.gz\n  \
    ssdtwin bench\n  \
    ssdtwin fit --jobs battery/\n  \
    ssdtwin fit --base intel-660p-1tb battery/battery.json --out my-drive.toml\n  \
    ssdtwin review generic-tlc-nvme\n  \
    ssdtwin suite --list\n  \
    ssdtwin suite client-2015 --drive generic-mlc-sata --only consistency --out results/\n  \
    ssdtwin report results/client-2015.json\n  \
    ssdtwin serve --drive intel-660p-1tb --state filled:50 --time-scale 0\n  \
    ssdtwin sweep grid.toml --backend ray --out results.parquet")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the drive presets shipped with ssdtwin.
    Presets,
    /// Print a preset (or drive file) as TOML, with overrides applied.
    Show(cmd::show::ShowArgs),
    /// Run a workload (fio options or a fio job file) on a drive.
    Run(Box<cmd::run::RunArgs>),
    /// List fio's options and what the twin makes of each: modelled with
    /// fio's meaning, ignored as describing the host, or refused (and why).
    FioOptions(cmd::fio_options::FioOptionsArgs),
    /// Compare presets with their published figures (exit status 1 if any fails).
    ///
    /// Each preset ships the figures it is calibrated against (vendor specs,
    /// reviews), with sources and tolerances; this runs the measurement
    /// behind each one and prints published vs simulated values.
    Validate(cmd::validate::ValidateArgs),
    /// Run a benchmark suite (the reviewers' and vendor's tests) on drives.
    Suite(Box<cmd::suite::SuiteArgs>),
    /// Review drives: run client-2018 on the standard and the full drive,
    /// print the score table and write everything as JSON.
    Review(Box<cmd::suite::ReviewArgs>),
    /// Render the HTML report (with SVG charts and CSV) of a saved suite or
    /// review JSON again; the same JSON gives the same bytes.
    Report(cmd::report::ReportArgs),
    /// A twin of your own drive: write the characterization battery (fio
    /// job file, `--jobs DIR`), then fit a drive file to its results.
    ///
    /// Run the battery with real fio on the drive, then `fit --base PRESET
    /// battery.json --out my-drive.toml`: structure identified from the
    /// measurements (dies, SLC cache sizes, capacity), timings optimised by
    /// replaying every measured job on candidate twins; prints each
    /// measurement beside the twin's value, and the parameters with their
    /// uncertainties.
    Fit(Box<cmd::fit::FitArgs>),
    /// Measure the simulator's own speed (simulated I/Os per wall second).
    ///
    /// Runs a fixed set: full and steady-state preconditioning of a large
    /// drive (time and peak memory), steady-state 4 KiB random writes on
    /// it, then 4 KiB random reads and 128 KiB sequential writes (through
    /// the SLC cache and folding) on a full main drive. The output format
    /// is stable, for comparing builds.
    Bench(cmd::bench::BenchArgs),
    /// Block traces: statistics (`trace stats FILE`) and conversion between
    /// formats (`trace convert IN OUT --to FORMAT`). Replay one with
    /// `ssdtwin run --drive D --trace FILE`.
    Trace(cmd::trace::TraceCmdArgs),
    /// Serve a drive as a network block device (NBD) to real clients.
    ///
    /// qemu-img, nbdcopy, fio (ioengine=nbd), nbdfuse with a filesystem or
    /// a VM use it as a disk: every byte goes through the twin's FTL, and
    /// each completion is sent at its simulated time (scaled by
    /// --time-scale). Stops on Ctrl-C / SIGTERM (or --once) and prints
    /// the statistics of `ssdtwin run`.
    Serve(Box<cmd::serve::ServeArgs>),
    /// Run a parameter sweep from a grid file (drives × overrides × states ×
    /// jobs × seeds) on every local core or a Ray cluster, through the
    /// Python package (`python3 -m ssdtwin sweep`).
    Sweep(cmd::sweep::SweepArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(cmd::fio_flags::rewrite(std::env::args_os().collect()));
    // `serve` stops on these signals itself (and saves the drive).
    if !matches!(cli.command, Command::Serve(_)) {
        if let Err(e) = interrupt::remove_temporaries_on_signals() {
            errln!("warning: cannot catch SIGINT and SIGTERM: {e}");
        }
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) if output::is_closed_pipe(&e) => output::closed_pipe(),
        Err(e) => {
            errln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Presets => cmd::show::presets(),
        Command::Show(args) => cmd::show::run(args),
        Command::Run(args) => cmd::run::run(*args),
        Command::FioOptions(args) => cmd::fio_options::run(args),
        Command::Validate(args) => cmd::validate::run(args),
        Command::Suite(args) => cmd::suite::run(*args),
        Command::Review(args) => cmd::suite::review(*args),
        Command::Report(args) => cmd::report::run(args),
        Command::Fit(args) => cmd::fit::run(*args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Trace(args) => cmd::trace::run(args),
        Command::Serve(args) => cmd::serve::run(*args),
        Command::Sweep(args) => cmd::sweep::run(args),
    }
}
