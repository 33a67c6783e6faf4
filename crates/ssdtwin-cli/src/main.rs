//! `ssdtwin`: command-line front end of the ssdtwin simulator.
//!
//! A thin binary: parse the command line, dispatch, print. The work is in
//! the `ssdtwin` library.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssdtwin::run::workload::{parse_job_file, Job, JobOptions};
use ssdtwin::spec::{preset_names, preset_source};
use ssdtwin::study::report::RunReport;
use ssdtwin::study::suite::{self, DriveUnderTest, SuiteOptions, SuiteProgress, SuiteProgressFn};
use ssdtwin::{Drive, DriveSpec, DriveState, Simulator};

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
    ssdtwin bench\n  \
    ssdtwin review generic-tlc-nvme\n  \
    ssdtwin suite --list\n  \
    ssdtwin suite client-2015 --drive generic-mlc-sata --only consistency --out results/\n  \
    ssdtwin report results/client-2015.json")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the drive presets shipped with ssdtwin.
    Presets,
    /// Print a preset (or drive file) as TOML, with overrides applied.
    Show {
        /// Preset name or path to a drive TOML file.
        drive: String,
        /// Override a field, e.g. `--set geometry.channels=4` (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// Run a workload (fio options or a fio job file) on a drive.
    Run(Box<RunArgs>),
    /// Compare presets with their published figures (exit status 1 if any fails).
    ///
    /// Each preset ships the figures it is calibrated against (vendor specs,
    /// reviews), with sources and tolerances; this runs the measurement
    /// behind each one and prints published vs simulated values.
    Validate {
        /// Presets to check (default: every preset that has figures).
        drives: Vec<String>,
        /// Cap each timed workload at 5 simulated seconds (for CI).
        #[arg(long)]
        quick: bool,
        /// No progress bar.
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Run a benchmark suite (the reviewers' and vendor's tests) on drives.
    Suite(Box<SuiteArgs>),
    /// Review drives: run client-2018 on the standard and the full drive,
    /// print the score table and write everything as JSON.
    Review(Box<ReviewArgs>),
    /// Render the HTML report (with SVG charts and CSV) of a saved suite or
    /// review JSON again; the same JSON gives the same bytes.
    Report {
        /// The JSON that `ssdtwin suite` or `ssdtwin review` wrote.
        results: PathBuf,
        /// Directory for report.html, charts/ and the CSV files (default: the JSON's directory).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Print nothing.
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Measure the simulator's own speed (simulated I/Os per wall second).
    ///
    /// Runs a fixed set: full and steady-state preconditioning of a large
    /// drive (time and peak memory), steady-state 4 KiB random writes on
    /// it, then 4 KiB random reads and 128 KiB sequential writes (through
    /// the SLC cache and folding) on a full main drive. The output format
    /// is stable, for comparing builds.
    Bench {
        /// Run every row on this preset or drive file instead of the
        /// default pair (large: intel-660p-2tb, main: intel-660p-1tb).
        #[arg(long)]
        drive: Option<String>,
        /// Override a field of the drives (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Multiply the number of simulated I/Os (1.0 = standard set).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Skip the large drive's steady-state preconditioning and the
        /// random writes on it (the slowest rows).
        #[arg(long)]
        no_steady: bool,
    },
}

#[derive(Args)]
struct RunArgs {
    /// Preset name or path to a drive TOML file (`ssdtwin presets` lists presets).
    #[arg(long, short = 'd')]
    drive: String,
    /// Override a drive field, e.g. `--set controller.cores=1` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Starting state: fresh, full, filled:N (N% written sequentially),
    /// steady (full, then 2× capacity of random 4 KiB writes; built from
    /// its statistics in seconds) or steady-exact (the same writes
    /// replayed one by one: minutes on a terabyte drive).
    #[arg(long, default_value = "fresh")]
    state: String,
    /// Seed for the starting state (and default for randseed).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// fio job file (INI); its sections run one after another.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rw", "idle"])]
    job_file: Option<PathBuf>,
    /// Write all results as JSON to FILE (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// No progress bar and no summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    #[command(flatten)]
    job: FioArgs,
}

/// Options shared by `suite` and `review`.
#[derive(Args)]
struct SuiteRunArgs {
    /// Override a field of every drive, e.g. `--set ftl.gc_policy=fifo` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Run only this test (repeatable; `ssdtwin suite NAME --list` lists them).
    #[arg(long, value_name = "TEST")]
    only: Vec<String>,
    /// Directory for the results (JSON named after the suite).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Seed of every random offset and mix.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Multiply every size of the suite (spans, limits, bursts, test data),
    /// e.g. 0.01 for a quick look or a small drive; rounded to whole blocks.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Multiply every time of the suite (runtimes, idle); default: --scale.
    #[arg(long, value_name = "F")]
    time_scale: Option<f64>,
    /// Runs (drive × pass) simulated at once (default: the number of CPUs).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// No progress bar and no score table.
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Args)]
struct SuiteArgs {
    /// Built-in suite name or path to a suite TOML file.
    #[arg(required_unless_present = "list")]
    suite: Option<String>,
    /// List the built-in suites (or, with a suite, its tests and steps).
    #[arg(long)]
    list: bool,
    /// Print the suite's TOML (to copy and edit).
    #[arg(long, requires = "suite", conflicts_with = "list")]
    show: bool,
    /// Preset name or drive file (repeatable: one run per drive).
    #[arg(long, short = 'd', required_unless_present_any = ["list", "show"])]
    drive: Vec<String>,
    /// Start every test from this state (fresh, full, filled:N, steady,
    /// steady-exact)
    /// instead of the suite's own states and passes.
    #[arg(long)]
    state: Option<String>,
    #[command(flatten)]
    run: SuiteRunArgs,
}

#[derive(Args)]
struct ReviewArgs {
    /// Presets or drive files to review (default: intel-660p-1tb).
    drives: Vec<String>,
    #[command(flatten)]
    run: SuiteRunArgs,
}

/// fio options for a single-phase job (same meaning as in fio).
#[derive(Args)]
#[command(next_help_heading = "Job options (fio vocabulary)")]
struct FioArgs {
    /// Job name.
    #[arg(long)]
    name: Option<String>,
    /// Pattern: read, write, randread, randwrite, rw, randrw, trim, randtrim.
    #[arg(long)]
    rw: Option<String>,
    /// Block size, e.g. 4k, 128k.
    #[arg(long)]
    bs: Option<String>,
    /// Outstanding I/Os.
    #[arg(long)]
    iodepth: Option<String>,
    /// Workers (each with iodepth outstanding I/Os).
    #[arg(long)]
    numjobs: Option<String>,
    /// Start of the span, e.g. 0, 1g, 10%.
    #[arg(long)]
    offset: Option<String>,
    /// Size of the span, e.g. 16g, 50% (default: whole drive).
    #[arg(long)]
    size: Option<String>,
    /// Bytes to transfer (default: size, unless runtime is given).
    #[arg(long = "io_size", alias = "io-size")]
    io_size: Option<String>,
    /// Time limit, e.g. 60 (seconds), 500ms.
    #[arg(long)]
    runtime: Option<String>,
    /// Run for the whole runtime, repeating the span.
    #[arg(long = "time_based", alias = "time-based")]
    time_based: bool,
    /// Percentage of reads in rw/randrw.
    #[arg(long)]
    rwmixread: Option<String>,
    /// Pause after each completion (default unit µs).
    #[arg(long)]
    thinktime: Option<String>,
    /// Time at the start not counted in results.
    #[arg(long = "ramp_time", alias = "ramp-time")]
    ramp_time: Option<String>,
    /// Seed of offsets and read/write mix.
    #[arg(long)]
    randseed: Option<String>,
    /// Random offsets with replacement.
    #[arg(long)]
    norandommap: bool,
    /// Bytes per burst (ssdtwin extension).
    #[arg(long = "burst_size", alias = "burst-size")]
    burst_size: Option<String>,
    /// Busy fraction for bursts, e.g. 0.2 (ssdtwin extension).
    #[arg(long = "duty_cycle", alias = "duty-cycle")]
    duty_cycle: Option<String>,
    /// The host enables autonomous power state transitions (APST): an idle
    /// drive steps down its non-operational power states (ssdtwin extension).
    #[arg(long)]
    apst: bool,
    /// Run an idle phase of this length instead of I/O (ssdtwin extension).
    #[arg(long)]
    idle: Option<String>,
}

impl FioArgs {
    fn options(&self, seed: u64) -> JobOptions {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Presets => {
            for name in preset_names() {
                let spec = DriveSpec::load(name, &[])?;
                println!("{name:<24} {}", spec.description);
            }
        }
        Command::Show { drive, set } => {
            let spec = DriveSpec::load(&drive, &set)?;
            spec.build(&drive)?;
            match preset_source(&drive) {
                Some(src) if set.is_empty() && !src.lines().any(|l| l.starts_with("base")) => print!("{src}"),
                Some(src) => {
                    // A derived preset or overrides: its own comments, then
                    // the resolved drive in full.
                    for line in src.lines().take_while(|l| l.starts_with('#')) {
                        println!("{line}");
                    }
                    println!("# Resolved (base preset and overrides applied):");
                    print!("{}", spec.to_toml());
                }
                None => print!("{}", spec.to_toml()),
            }
        }
        Command::Run(args) => return run_job(*args),
        Command::Validate { drives, quick, quiet } => return validate(drives, quick, quiet),
        Command::Suite(args) => return run_suite_cmd(*args),
        Command::Review(args) => return review(*args),
        Command::Report { results, out, quiet } => return report_cmd(&results, out, quiet),
        Command::Bench { drive, set, scale, no_steady } => {
            let load = |name: &str| -> Result<(String, ssdtwin::spec::DriveModel)> {
                let spec = DriveSpec::load(name, &set)?;
                let model = spec.build(name)?;
                Ok((spec.name, model))
            };
            let (large, main) = match &drive {
                Some(d) => (load(d)?, load(d)?),
                None => (load("intel-660p-2tb")?, load("intel-660p-1tb")?),
            };
            let describe = |(name, m): &(String, ssdtwin::spec::DriveModel)| {
                format!("{name} ({} dies, {:.0} GB)", m.geometry.dies, m.user_lpns as f64 * 4096.0 / 1e9)
            };
            println!(
                "ssdtwin {} bench: large drive {}, main drive {}",
                env!("CARGO_PKG_VERSION"),
                describe(&large),
                describe(&main)
            );
            println!("{}", ssdtwin::study::bench::HEADER);
            let drives = ssdtwin::study::bench::BenchDrives { large, main };
            ssdtwin::study::bench::run(&drives, scale, !no_steady, |row| {
                println!("{}", ssdtwin::study::bench::format_row(row));
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_job(args: RunArgs) -> Result<ExitCode> {
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
        None => {
            let opts = args.job.options(args.seed);
            if args.job.rw.is_none() && args.job.idle.is_none() {
                bail!("give a workload: --rw PATTERN (with --bs, --iodepth, ...), --idle TIME, or --job-file FILE");
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
    let results = sim.run_job(&job);
    bar.finish_and_clear();
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

fn validate(drives: Vec<String>, quick: bool, quiet: bool) -> Result<ExitCode> {
    let drives: Vec<String> = if drives.is_empty() {
        ssdtwin::study::figures::FIGURES.iter().map(|(n, _)| n.to_string()).collect()
    } else {
        drives
    };
    let mut failed = 0;
    let show = !quiet && std::io::stderr().is_terminal();
    for name in &drives {
        let set = ssdtwin::study::figures::figures_for(name).with_context(|| {
            let have: Vec<_> = ssdtwin::study::figures::FIGURES.iter().map(|(n, _)| *n).collect();
            format!("no published figures for `{name}` (presets with figures: {})", have.join(", "))
        })??;
        let spec = DriveSpec::load(&set.drive, &[])?;
        let model = spec.build(&set.drive)?;
        println!("\n{} — {}{}", spec.name, spec.description, if quick { " (quick)" } else { "" });
        println!("{}", ssdtwin::study::figures::HEADER);
        for fig in &set.figures {
            let bar = spinner(show, &fig.name);
            let (b, name) = (bar.clone(), fig.name.clone());
            let hook: ssdtwin::study::figures::ProgressHook =
                std::rc::Rc::new(move |p: &ssdtwin::run::sim::Progress| {
                    b.set_message(format!("{name}: {} · {:.0} s simulated", p.phase, p.phase_ns as f64 / 1e9));
                });
            let v = ssdtwin::study::figures::measure_reporting(&model, fig, quick, show.then_some(hook))?;
            bar.finish_and_clear();
            println!("{}", ssdtwin::study::figures::format_verdict(&v));
            if !v.pass {
                failed += 1;
            }
        }
    }
    if failed > 0 {
        println!("\n{failed} figure(s) outside tolerance");
        return Ok(ExitCode::from(1));
    }
    println!("\nall figures within tolerance");
    Ok(ExitCode::SUCCESS)
}

fn spinner(show: bool, msg: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new_spinner();
    b.set_message(msg.to_string());
    b.enable_steady_tick(std::time::Duration::from_millis(120));
    b
}

/// Write to a temporary file beside `path`, then rename, so that a failed
/// run never leaves a half-written result.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().context("output path has no file name")?;
    let tmp = dir.join(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(())
}

/// The default drive of `ssdtwin review`.
const REVIEW_DEFAULT_DRIVE: &str = "intel-660p-1tb";

fn run_suite_cmd(args: SuiteArgs) -> Result<ExitCode> {
    if args.list && args.suite.is_none() {
        for name in suite::builtin_names() {
            let s = suite::load(name)?;
            println!("{name:<16} {}", s.def.title);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let name = args.suite.as_deref().expect("clap requires a suite");
    let s = suite::load(name)?;
    if args.show {
        print!("{}", s.source);
        return Ok(ExitCode::SUCCESS);
    }
    if args.list {
        println!("{} — {}", s.def.name, s.def.title);
        let passes: Vec<_> = s.passes.iter().map(|p| p.name.as_str()).collect();
        println!("passes: {}", passes.join(", "));
        for t in &s.tests {
            let steps: Vec<_> = t.steps.iter().map(|st| st.name.as_str()).collect();
            println!("  {:<32} {}\n  {:<32} steps: {}", t.name, t.title, "", steps.join(" "));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let state =
        args.state.as_deref().map(|st| st.parse().map_err(|e: String| anyhow::anyhow!("--state {e}"))).transpose()?;
    let out = args.run.out.clone().unwrap_or_else(|| PathBuf::from("ssdtwin-results"));
    run_and_report(&s, &args.drive, state, &args.run, &out)
}

fn review(args: ReviewArgs) -> Result<ExitCode> {
    let drives = if args.drives.is_empty() {
        if preset_source(REVIEW_DEFAULT_DRIVE).is_none() {
            bail!(
                "the default review drive `{REVIEW_DEFAULT_DRIVE}` is not a preset in this build \
                 (presets: {}); name the drives to review, e.g. `ssdtwin review generic-tlc-nvme`",
                preset_names().join(", ")
            );
        }
        vec![REVIEW_DEFAULT_DRIVE.to_string()]
    } else {
        args.drives.clone()
    };
    let s = suite::load("client-2018")?;
    let out = args.run.out.clone().unwrap_or_else(|| PathBuf::from("ssdtwin-review"));
    run_and_report(&s, &drives, None, &args.run, &out)
}

fn run_and_report(
    s: &suite::Suite,
    drive_names: &[String],
    state: Option<DriveState>,
    a: &SuiteRunArgs,
    out: &Path,
) -> Result<ExitCode> {
    if !(a.scale > 0.0 && a.time_scale.unwrap_or(1.0) > 0.0) {
        bail!("--scale and --time-scale must be positive");
    }
    let drives = drive_names.iter().map(|d| DriveUnderTest::load(d, &a.set)).collect::<Result<Vec<_>, _>>()?;
    let opts = SuiteOptions {
        scale: a.scale,
        time_scale: a.time_scale.unwrap_or(a.scale),
        seed: a.seed,
        only: a.only.clone(),
        state,
        threads: a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let show = !a.quiet && std::io::stderr().is_terminal();
    let passes = suite::run::passes_for(s, &opts);
    let tests = suite::run::selected_tests(s, &opts.only)?.len();
    let multi =
        MultiProgress::with_draw_target(if show { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() });
    let style = ProgressStyle::with_template("{prefix:.bold} [{bar:20}] {pos}/{len} {msg} {elapsed}")
        .expect("valid template")
        .progress_chars("=> ");
    let bars: Vec<ProgressBar> = drives
        .iter()
        .flat_map(|d| passes.iter().map(move |p| (d, p)))
        .map(|(d, p)| {
            let b = multi.add(ProgressBar::new(tests as u64));
            b.set_style(style.clone());
            b.set_prefix(format!("{} · {}", d.name, p.name));
            b
        })
        .collect();
    let progress: Option<SuiteProgressFn> = show.then(|| {
        let bars = bars.clone();
        Arc::new(move |p: &SuiteProgress| {
            let b = &bars[p.run];
            if p.done {
                b.finish_with_message("done");
                return;
            }
            b.set_position(p.test_index.0 as u64);
            b.set_message(format!(
                "{} · {} ({}/{}) · {:.0} s simulated",
                p.test,
                p.step,
                p.step_index.0 + 1,
                p.step_index.1.max(1),
                p.step_ns as f64 / 1e9
            ));
        }) as SuiteProgressFn
    });
    let result = suite::run_suite(s, &drives, &opts, progress)?;
    multi.clear().ok();
    let text = serde_json::to_string_pretty(&suite::json::suite_json(&result))? + "\n";
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join(format!("{}.json", s.def.name));
    write_atomically(&path, text.as_bytes())?;
    // Rendered from the text as written, so `ssdtwin report` on the file
    // gives the same bytes.
    let page = render_report(&serde_json::from_str(&text)?, out, show)?;
    if !a.quiet {
        print!("{}", suite::json::score_table(&result));
        println!("\nresults: {}\nreport:  {}", path.display(), page.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn render_report(doc: &serde_json::Value, out: &Path, show: bool) -> Result<PathBuf> {
    let bar = spinner(show, "rendering the report");
    let report = ssdtwin_report::render(doc)?;
    let page = report.write(out)?;
    bar.finish_and_clear();
    Ok(page)
}

fn report_cmd(results: &Path, out: Option<PathBuf>, quiet: bool) -> Result<ExitCode> {
    let text = std::fs::read_to_string(results).with_context(|| format!("reading {}", results.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", results.display()))?;
    let out =
        out.unwrap_or_else(|| results.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).into());
    let show = !quiet && std::io::stderr().is_terminal();
    let page = render_report(&doc, &out, show).with_context(|| format!("rendering {}", results.display()))?;
    if !quiet {
        println!("report: {}", page.display());
    }
    Ok(ExitCode::SUCCESS)
}
