//! `ssdtwin run`: one workload (fio options on the command line, or a fio
//! job file) on one drive from a chosen state; prints the summary and
//! writes the JSON.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use ssdtwin::run::workload::{parse_job_file, Job, JobOptions, Phase};
use ssdtwin::study::report::RunReport;
use ssdtwin::{Drive, DriveSpec, DriveState, Simulator};

use crate::output::{spinner, write_atomically};

/// Options of `ssdtwin run`.
#[derive(Args)]
pub struct RunArgs {
    /// Preset name or path to a drive TOML file (`ssdtwin presets` lists presets).
    #[arg(long, short = 'd')]
    pub drive: String,
    /// Override a drive field, e.g. `--set controller.cores=1` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Starting state: fresh, full, filled:N (N% written sequentially),
    /// steady (full, then 2× capacity of random 4 KiB writes; built from
    /// its statistics in seconds) or steady-exact (the same writes
    /// replayed one by one: minutes on a terabyte drive).
    #[arg(long, default_value = "fresh")]
    pub state: String,
    /// Seed for the starting state (and default for randseed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// fio job file (INI); its sections run one after another.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rw", "idle"])]
    pub job_file: Option<PathBuf>,
    /// Write all results as JSON to FILE (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// No progress bar and no summary.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub job: FioArgs,
    #[command(flatten)]
    pub trace: crate::cmd::trace::TraceArgs,
}

/// fio options for a single-phase job (same meaning as in fio).
#[derive(Args)]
#[command(next_help_heading = "Job options (fio vocabulary)")]
pub struct FioArgs {
    /// Job name.
    #[arg(long)]
    pub name: Option<String>,
    /// Pattern: read, write, randread, randwrite, rw, randrw, trim, randtrim.
    #[arg(long)]
    pub rw: Option<String>,
    /// Block size, e.g. 4k, 128k.
    #[arg(long)]
    pub bs: Option<String>,
    /// Outstanding I/Os.
    #[arg(long)]
    pub iodepth: Option<String>,
    /// Workers (each with iodepth outstanding I/Os).
    #[arg(long)]
    pub numjobs: Option<String>,
    /// Start of the span, e.g. 0, 1g, 10%.
    #[arg(long)]
    pub offset: Option<String>,
    /// Size of the span, e.g. 16g, 50% (default: whole drive).
    #[arg(long)]
    pub size: Option<String>,
    /// Bytes to transfer (default: size, unless runtime is given).
    #[arg(long = "io_size", alias = "io-size")]
    pub io_size: Option<String>,
    /// Time limit, e.g. 60 (seconds), 500ms.
    #[arg(long)]
    pub runtime: Option<String>,
    /// Run for the whole runtime, repeating the span.
    #[arg(long = "time_based", alias = "time-based")]
    pub time_based: bool,
    /// Percentage of reads in rw/randrw.
    #[arg(long)]
    pub rwmixread: Option<String>,
    /// Pause after each completion (default unit µs).
    #[arg(long)]
    pub thinktime: Option<String>,
    /// Time at the start not counted in results.
    #[arg(long = "ramp_time", alias = "ramp-time")]
    pub ramp_time: Option<String>,
    /// Seed of offsets and read/write mix.
    #[arg(long)]
    pub randseed: Option<String>,
    /// Random offsets with replacement.
    #[arg(long)]
    pub norandommap: bool,
    /// Bytes per burst (ssdtwin extension).
    #[arg(long = "burst_size", alias = "burst-size")]
    pub burst_size: Option<String>,
    /// Busy fraction for bursts, e.g. 0.2 (ssdtwin extension).
    #[arg(long = "duty_cycle", alias = "duty-cycle")]
    pub duty_cycle: Option<String>,
    /// The host enables autonomous power state transitions (APST): an idle
    /// drive steps down its non-operational power states (ssdtwin extension).
    #[arg(long)]
    pub apst: bool,
    /// Run an idle phase of this length instead of I/O (ssdtwin extension).
    #[arg(long)]
    pub idle: Option<String>,
}

impl FioArgs {
    /// The options as one job phase's fio options (`randseed` defaults to `seed`).
    pub fn options(&self, seed: u64) -> JobOptions {
        let mut o = JobOptions::new();
        let mut add = |k: &str, v: &Option<String>| {
            if let Some(v) = v {
                o.push(k, v, &format!("command line (--{k})"));
            }
        };
        add("name", &self.name);
        add("rw", &self.rw);
        add("bs", &self.bs);
        add("iodepth", &self.iodepth);
        add("numjobs", &self.numjobs);
        add("offset", &self.offset);
        add("size", &self.size);
        add("io_size", &self.io_size);
        add("runtime", &self.runtime);
        add("rwmixread", &self.rwmixread);
        add("thinktime", &self.thinktime);
        add("ramp_time", &self.ramp_time);
        add("burst_size", &self.burst_size);
        add("duty_cycle", &self.duty_cycle);
        add("idle", &self.idle);
        add("randseed", &Some(self.randseed.clone().unwrap_or_else(|| seed.to_string())));
        if self.time_based {
            o.push("time_based", "1", "command line (--time_based)");
        }
        if self.norandommap {
            o.push("norandommap", "1", "command line (--norandommap)");
        }
        if self.apst {
            o.push("apst", "1", "command line (--apst)");
        }
        o
    }
}

/// Run the command.
pub fn run(args: RunArgs) -> Result<ExitCode> {
    let spec = DriveSpec::load(&args.drive, &args.set)?;
    let model = spec.build(&args.drive)?;
    let state: DriveState = args.state.parse().map_err(|e: String| anyhow::anyhow!("--state {e}"))?;
    let capacity = model.user_lpns as u64 * 4096;
    let job = match &args.job_file {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading job file {}", path.display()))?;
            let mut defaults = JobOptions::new();
            defaults.push("randseed", &args.seed.to_string(), "command line (--seed)");
            parse_job_file(&text, &path.display().to_string(), capacity, &defaults)?
        }
        None if args.trace.trace.is_some() => {
            let spec = args.trace.spec(args.job.name.as_deref().unwrap_or("trace"))?.expect("--trace given");
            Job { phases: vec![Phase::Trace(spec)] }
        }
        None => {
            let opts = args.job.options(args.seed);
            if args.job.rw.is_none() && args.job.idle.is_none() {
                bail!("give a workload: --rw PATTERN (with --bs, --iodepth, ...), --idle TIME, --trace FILE or --job-file FILE");
            }
            Job { phases: vec![opts.to_phase(args.job.name.as_deref().unwrap_or("job"), capacity)?] }
        }
    };
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let mut drive = Drive::new(model);
    if state != DriveState::Fresh {
        let bar = spinner(show_progress, &format!("preconditioning: {state}"));
        state.apply_fast(&mut drive, args.seed);
        bar.finish_and_clear();
    }
    let mut sim = Simulator::new(drive);
    let bar = if show_progress {
        let b = ProgressBar::new(1000);
        b.set_style(ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {elapsed}").expect("valid template"));
        b
    } else {
        ProgressBar::hidden()
    };
    let b2 = bar.clone();
    sim.on_progress(move |p| {
        b2.set_message(format!(
            "phase {}/{} {} · {:.0} s simulated",
            p.phase_index + 1,
            p.phases,
            p.phase,
            p.phase_ns as f64 / 1e9
        ));
        if let Some(f) = p.fraction {
            b2.set_position((f * 1000.0) as u64);
        }
    });
    let record = args.trace.record_format()?;
    if record.is_some() {
        sim.device().log_commands(true);
    }
    let results = sim.try_run_job(&job);
    bar.finish_and_clear();
    let results = results?;
    if let Some((file, format)) = &record {
        crate::cmd::trace::write_recording(&mut sim, file, *format)?;
    }
    let health = ssdtwin::model::health::Health::of(sim.drive());
    let report =
        RunReport { drive: &spec, state: state.to_string(), seed: args.seed, phases: &results, health: &health };
    let json_to_stdout = args.json.as_deref() == Some("-");
    if !args.quiet && !json_to_stdout {
        print!("{}", report.summary());
    }
    if let Some(out) = &args.json {
        let text = serde_json::to_string_pretty(&report.to_json())? + "\n";
        if out == "-" {
            std::io::stdout().write_all(text.as_bytes())?;
        } else {
            write_atomically(Path::new(out), text.as_bytes())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
