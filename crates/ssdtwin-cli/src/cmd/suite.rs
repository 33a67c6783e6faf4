//! `ssdtwin suite` and `ssdtwin review`: a benchmark suite (the reviewers'
//! and vendor's tests) on one or more drives, the score table, the JSON
//! and the HTML report.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssdtwin::spec::{preset_names, preset_source};
use ssdtwin::study::suite::{self, DriveUnderTest, SuiteOptions, SuiteProgress, SuiteProgressFn};
use ssdtwin::DriveState;

use crate::cmd::report::render_report;
use crate::output::write_atomically;

/// Options shared by `suite` and `review`.
#[derive(Args)]
pub struct SuiteRunArgs {
    /// Override a field of every drive, e.g. `--set ftl.gc_policy=fifo` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Run only this test (repeatable; `ssdtwin suite NAME --list` lists them).
    #[arg(long, value_name = "TEST")]
    pub only: Vec<String>,
    /// Directory for the results (JSON named after the suite).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed of every random offset and mix.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run the suite N times, with the seeds --seed, --seed + 1, …, and
    /// report each score's median (the score) and spread (min, max), as
    /// the vendor guide reports the median of repeated runs. The steps'
    /// series and charts are the first seed's.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Multiply every size of the suite (spans, limits, bursts, test data),
    /// e.g. 0.01 for a quick look or a small drive; rounded to whole blocks.
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Multiply every time of the suite (runtimes, idle); default: --scale.
    #[arg(long, value_name = "F")]
    pub time_scale: Option<f64>,
    /// Replay only this fraction of each trace test (the synthetic
    /// Destroyer, Heavy and Light, PCMark 8, 10 and Vantage): their first
    /// requests, the same mix, shorter in requests and time. Default: the
    /// whole trace.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub trace_scale: f64,
    /// Runs (drive × pass) simulated at once (default: the number of CPUs).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// No progress bar and no score table.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Options of `ssdtwin suite`.
#[derive(Args)]
pub struct SuiteArgs {
    /// Built-in suite name or path to a suite TOML file.
    #[arg(required_unless_present = "list")]
    pub suite: Option<String>,
    /// List the built-in suites (or, with a suite, its tests and steps).
    #[arg(long)]
    pub list: bool,
    /// Print the suite's TOML (to copy and edit).
    #[arg(long, requires = "suite", conflicts_with = "list")]
    pub show: bool,
    /// Preset name or drive file (repeatable: one run per drive).
    #[arg(long, short = 'd', required_unless_present_any = ["list", "show"])]
    pub drive: Vec<String>,
    /// Start every test from this state (fresh, full, filled:N, steady,
    /// steady-exact)
    /// instead of the suite's own states and passes.
    #[arg(long)]
    pub state: Option<String>,
    #[command(flatten)]
    pub run: SuiteRunArgs,
}

/// Options of `ssdtwin review`.
#[derive(Args)]
pub struct ReviewArgs {
    /// Presets or drive files to review (default: intel-660p-1tb).
    pub drives: Vec<String>,
    #[command(flatten)]
    pub run: SuiteRunArgs,
}

/// The default drive of `ssdtwin review`.
const REVIEW_DEFAULT_DRIVE: &str = "intel-660p-1tb";

/// `ssdtwin suite`: list, show or run a suite.
pub fn run(args: SuiteArgs) -> Result<ExitCode> {
    if args.list && args.suite.is_none() {
        for name in suite::builtin_names() {
            let s = suite::load(name)?;
            outln!("{name:<16} {}", s.def.title);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let name = args.suite.as_deref().expect("clap requires a suite");
    let s = suite::load(name)?;
    if args.show {
        out!("{}", s.source);
        return Ok(ExitCode::SUCCESS);
    }
    if args.list {
        outln!("{} — {}", s.def.name, s.def.title);
        let passes: Vec<_> = s.passes.iter().map(|p| p.name.as_str()).collect();
        outln!("passes: {}", passes.join(", "));
        for t in &s.tests {
            let steps: Vec<_> = t.steps.iter().map(|st| st.name.as_str()).collect();
            outln!("  {:<32} {}\n  {:<32} steps: {}", t.name, t.title, "", steps.join(" "));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let state =
        args.state.as_deref().map(|st| st.parse().map_err(|e: String| anyhow::anyhow!("--state {e}"))).transpose()?;
    let out = args.run.out.clone().unwrap_or_else(|| PathBuf::from("ssdtwin-results"));
    run_and_report(&s, &args.drive, state, &args.run, &out)
}

/// `ssdtwin review`: client-2018 on the named drives (default: the 660p 1 TB).
pub fn review(args: ReviewArgs) -> Result<ExitCode> {
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
    if !(a.trace_scale > 0.0 && a.trace_scale <= 1.0) {
        bail!("--trace-scale {}: must be above 0 and at most 1", a.trace_scale);
    }
    let drives = drive_names.iter().map(|d| DriveUnderTest::load(d, &a.set)).collect::<Result<Vec<_>, _>>()?;
    let opts = SuiteOptions {
        scale: a.scale,
        time_scale: a.time_scale.unwrap_or(a.scale),
        seed: a.seed,
        only: a.only.clone(),
        state,
        threads: a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        trace_scale: a.trace_scale,
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
    let result = suite::run_repeated(s, &drives, &opts, a.repeat, progress)?;
    multi.clear().ok();
    let text = serde_json::to_string_pretty(&suite::json::suite_json(&result))? + "\n";
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join(format!("{}.json", s.def.name));
    write_atomically(&path, text.as_bytes())?;
    // Rendered from the text as written, so `ssdtwin report` on the file
    // gives the same bytes.
    let page = render_report(&serde_json::from_str(&text)?, out, show)?;
    if !a.quiet {
        out!("{}", suite::json::score_table(&result));
        if let Some(rep) = &result.repeat {
            out!("\n{}", suite::repeat::spread_table(rep));
        }
        outln!("\nresults: {}\nreport:  {}", path.display(), page.display());
    }
    Ok(ExitCode::SUCCESS)
}
