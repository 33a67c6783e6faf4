//! `ssdtwin sweep`: a parameter sweep from a grid file. Sweeps live in the
//! Python package (`python/ssdtwin/_sweep.py`: local processes or a Ray
//! cluster, tidy Parquet/CSV results, resume); this command runs it with
//! the same arguments (`python3 -m ssdtwin sweep`), so the CLI and Python
//! share one grid format and one implementation.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result};
use clap::Args;

/// Options of `ssdtwin sweep`.
#[derive(Args)]
pub struct SweepArgs {
    /// Grid file: TOML (a table of lists, expanded as their product, or
    /// `[[point]]` tables) or JSON; keys drive, job, state, seed, set,
    /// `"a.b"` drive fields and `"job.OPTION"`.
    pub grid: PathBuf,
    /// Where the points run: local (every core), ray, or serial.
    #[arg(long, default_value = "local")]
    pub backend: String,
    /// Ray cluster address (default: a local Ray).
    #[arg(long)]
    pub address: Option<String>,
    /// Processes (local) or tasks in flight (ray).
    #[arg(long)]
    pub max_workers: Option<usize>,
    /// Results, `.parquet` or `.csv`; also the checkpoint a rerun resumes from.
    #[arg(long, default_value = "sweep.parquet")]
    pub out: PathBuf,
    /// Python interpreter with the `ssdtwin` package installed (default:
    /// `$SSDTWIN_PYTHON`, else `python3`).
    #[arg(long)]
    pub python: Option<String>,
}

/// Run the command.
pub fn run(a: SweepArgs) -> Result<ExitCode> {
    let python = a.python.clone().or_else(|| std::env::var("SSDTWIN_PYTHON").ok()).unwrap_or_else(|| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "ssdtwin", "sweep"]).arg(&a.grid).args(["--backend", &a.backend]).arg("--out").arg(&a.out);
    if let Some(addr) = &a.address {
        cmd.args(["--address", addr]);
    }
    if let Some(n) = a.max_workers {
        cmd.args(["--max-workers", &n.to_string()]);
    }
    let status = cmd.status().with_context(|| {
        format!("running `{} -m ssdtwin sweep` (sweeps need the Python package: see docs/python.md)", python)
    })?;
    Ok(ExitCode::from(status.code().map_or(2, |c| c.clamp(0, 255) as u8)))
}
