//! `ssdtwin run`: a workload (fio options on the command line, or a fio
//! job file) on one drive from a chosen state; jobs run concurrently on
//! the drive unless the file orders them (see
//! [`ssdtwin::run::jobs`]); prints fio's output format and writes JSON.
//! Which runner runs the job is [`ssdtwin::run::execute`]'s to decide;
//! this command reads the arguments, shows progress and writes the output.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use ssdtwin::run::sim::{Progress, ProgressFn};
use ssdtwin::run::workload::fio::{parse_command_line, JobFile};
use ssdtwin::run::workload::{parse_job_file, JobOptions, Phase};
use ssdtwin::run::{execute, mode, Mode, RunOptions, RunOutcome, RunResults};
use ssdtwin::study::fio_out::FioReport;
use ssdtwin::study::report::RunReport;
use ssdtwin::{Drive, DriveSpec, DriveState};

use crate::output::{spinner, write_atomically, write_atomically_with, write_json_to};

/// Options of `ssdtwin run`.
#[derive(Args)]
#[command(after_help = "Job options: any fio option in fio's spelling, `--name=value` (or `--name value`), \
e.g. --rw=randread --bs=4k --iodepth=32 --size=10% --runtime=10s; `--name=JOB` starts a new job, \
options before the first --name apply to all jobs; fio's one-dash spelling (-rw=read -iodepth 4) works too. \
`ssdtwin fio-options` lists fio's whole option table and what the twin makes of each option.")]
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
    /// Seed for the starting state (default 1); given, also the jobs'
    /// default randseed (without it, fio's 0x89).
    #[arg(long)]
    pub seed: Option<u64>,
    /// fio job file (INI); its jobs run concurrently unless `stonewall`,
    /// `wait_for` or `startdelay` order them.
    #[arg(long, value_name = "FILE")]
    pub job_file: Option<PathBuf>,
    /// Output format: normal (fio's layout, then ssdtwin's summary), json
    /// or json+ (fio's JSON; json+ adds latency bins), terse (fio's
    /// semicolon-separated version 3).
    #[arg(long = "output-format", default_value = "normal")]
    pub output_format: String,
    /// Write the output to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the results as fio JSON to FILE (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// No progress spinner and nothing on standard output: results go only
    /// to --output and --json (for timing runs and scripts).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// A fio job option `KEY=VALUE` (fio's own `--KEY=VALUE` flags become these).
    #[arg(long = "fio", value_name = "KEY=VALUE", hide = true)]
    pub fio: Vec<String>,
    /// One of fio's program options `NAME=VALUE` (`--eta-newline=1`, ...).
    #[arg(long = "fio-program", value_name = "NAME=VALUE", hide = true)]
    pub fio_program: Vec<String>,
    #[command(flatten)]
    pub trace: crate::cmd::trace::TraceArgs,
}

/// Whether `key` is spelled with a hyphen in fio itself
/// (`hugepage-size`).
pub fn is_fio_spelling(key: &str) -> bool {
    key.contains('-') && ssdtwin::run::workload::fio::table::lookup(key).is_some()
}

/// Run the command.
pub fn run(args: RunArgs) -> Result<ExitCode> {
    #[derive(Clone, Copy, PartialEq)]
    enum Format {
        Normal,
        Json(bool),
        Terse,
    }
    let format = match args.output_format.as_str() {
        "normal" => Format::Normal,
        "json" => Format::Json(false),
        "json+" => Format::Json(true),
        "terse" => Format::Terse,
        other => bail!("--output-format `{other}` is not one of normal, json, json+, terse"),
    };
    let spec = DriveSpec::load(&args.drive, &args.set)?;
    let model = spec.build(&args.drive)?;
    let state: DriveState = args.state.parse().map_err(|e: String| anyhow::anyhow!("--state {e}"))?;
    let capacity = model.user_lpns as u64 * 4096;
    let mut defaults = JobOptions::new();
    if let Some(seed) = args.seed {
        defaults.push("randseed", &seed.to_string(), "command line (--seed)");
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for kv in &args.fio {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        pairs.push((k.to_string(), v.to_string()));
    }
    let file = if args.trace.trace.is_some() {
        let name = pairs.iter().find(|(k, _)| k == "name").map_or("trace", |(_, v)| v.as_str()).to_string();
        let tspec = args.trace.spec(&name)?.expect("--trace given");
        JobFile::of_phase(Phase::Trace(tspec))
    } else {
        let sections: Vec<String> =
            args.fio_program.iter().filter_map(|kv| kv.strip_prefix("section=")).map(str::to_string).collect();
        let mut file = job_file(&args, pairs, capacity, &defaults, &sections)?;
        for kv in &args.fio_program {
            let name = kv.split_once('=').map_or(kv.as_str(), |(n, _)| n);
            match crate::cmd::fio_flags::program_option(name) {
                Some(crate::cmd::fio_flags::Program::Refused(why)) => bail!("fio's --{name}: {why}"),
                Some(crate::cmd::fio_flags::Program::Section) => {}
                _ => file.ignored.push(format!("--{name}")),
            }
        }
        if !file.ignored.is_empty() {
            errln!("ignored: describes the host: {}", file.ignored.join(", "));
        }
        file
    };
    let record = args.trace.record_format()?;
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let drive = prepared_drive(model, state, args.seed.unwrap_or(1), show_progress);
    let (bar, progress) = match mode(&file, record.is_some()) {
        Mode::Concurrent => (spinner(show_progress, &format!("running {} job(s)", file.jobs.len())), None),
        Mode::Sequential => phase_bar(show_progress),
    };
    let outcome = execute(drive, &file, RunOptions { record_commands: record.is_some(), progress });
    bar.finish_and_clear();
    let RunOutcome { results, health, mut device } = outcome?;
    let state = state.to_string();
    let json_to_stdout = args.json.as_deref() == Some("-");
    let results = match results {
        RunResults::Jobs(results) => results,
        RunResults::Phases(phases) => {
            if let Some((file, format)) = &record {
                crate::cmd::trace::write_recording(&mut device, file, *format)?;
            }
            let report =
                RunReport { drive: &spec, state, seed: args.seed.unwrap_or(1), phases: &phases, health: &health };
            if !args.quiet && !json_to_stdout {
                out!("{}", report.summary());
            }
            if let Some(out) = &args.json {
                write_json_to(out, |w| report.write_json(w))?;
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    let report = FioReport {
        drive: &spec,
        state,
        seed: args.seed.unwrap_or(1),
        global: &file.global,
        jobs: &results,
        health: &health,
    };
    let to_stdout = !args.quiet && !json_to_stdout;
    match (format, &args.output) {
        (Format::Json(plus), Some(path)) => write_atomically_with(path, |w| report.write_json(plus, w))?,
        (Format::Json(plus), None) if to_stdout => write_json_to("-", |w| report.write_json(plus, w))?,
        (Format::Normal | Format::Terse, out) if out.is_some() || to_stdout => {
            let text = if matches!(format, Format::Normal) { report.normal() } else { report.terse() };
            match out {
                Some(path) => write_atomically(path, text.as_bytes())?,
                None => out!("{text}"),
            }
        }
        _ => {}
    }
    if let Some(out) = &args.json {
        write_json_to(out, |w| report.write_json(false, w))?;
    }
    // As fio: each job's error on stderr, and the exit status is the
    // number of jobs that ended with one (backend.c's exit_value).
    for why in results.iter().filter_map(|j| j.error_reason.as_deref()) {
        errln!("{why}");
    }
    let failed = results.iter().filter(|j| j.error != 0).count();
    Ok(ExitCode::from(failed.min(255) as u8))
}

/// The job file of the command line's fio options or of `--job-file`.
/// `sections`: fio's `--section` (empty: every section).
fn job_file(
    args: &RunArgs,
    mut pairs: Vec<(String, String)>,
    capacity: u64,
    defaults: &JobOptions,
    sections: &[String],
) -> Result<JobFile> {
    Ok(match &args.job_file {
        Some(path) => {
            if !pairs.is_empty() {
                bail!(
                    "give job options either on the command line or in --job-file, not both (found --{})",
                    pairs[0].0
                );
            }
            let mut text =
                std::fs::read_to_string(path).with_context(|| format!("reading job file {}", path.display()))?;
            if !sections.is_empty() {
                text = crate::cmd::fio_flags::only_sections(&text, sections);
            }
            parse_job_file(&text, &path.display().to_string(), capacity, defaults)?
        }
        None => {
            if !sections.is_empty() {
                bail!("fio's --section picks sections of a job file: give --job-file");
            }
            if !pairs.iter().any(|(k, _)| k == "rw" || k == "readwrite" || k == "idle" || k == "secure_erase") {
                bail!("give a workload: --rw PATTERN (with --bs, --iodepth, ...), --idle TIME, --trace FILE or --job-file FILE");
            }
            if pairs.first().is_none_or(|(k, _)| k != "name") && !pairs.iter().any(|(k, _)| k == "name") {
                pairs.insert(0, ("name".into(), "job".into()));
            }
            parse_command_line(&pairs, "command line", capacity, defaults)?
        }
    })
}

/// The progress bar of a sequential run (trace replay, trace recording)
/// and the callback that moves it, phase by phase.
fn phase_bar(show_progress: bool) -> (ProgressBar, Option<ProgressFn>) {
    let bar = if show_progress {
        let b = ProgressBar::new(1000);
        b.set_style(ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {elapsed}").expect("valid template"));
        b
    } else {
        ProgressBar::hidden()
    };
    let b2 = bar.clone();
    let progress: ProgressFn = Box::new(move |p: &Progress| {
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
    (bar, Some(progress))
}

/// A drive brought to its starting state (fast path), with a spinner
/// while it is prepared when `show_progress`.
fn prepared_drive(model: ssdtwin::DriveModel, state: DriveState, seed: u64, show_progress: bool) -> Drive {
    let mut drive = Drive::new(model);
    if state != DriveState::Fresh {
        let bar = spinner(show_progress, &format!("preconditioning: {state}"));
        state.apply_fast(&mut drive, seed);
        bar.finish_and_clear();
    }
    drive
}
