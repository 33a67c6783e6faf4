//! Everything the Python package asks of the library, as plain Rust
//! returning JSON text: the one place that knows the library's API (drive
//! loading, job parsing, drive states, suites, figures, reports). The
//! PyO3 layer (`lib.rs`) only converts arguments and errors; the Python
//! side builds its DataFrames from the JSON, so a change of the library's
//! job semantics or JSON layout is absorbed here and in
//! `python/ssdtwin/_frames.py`.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use ssdtwin::model::health::Health;
use ssdtwin::run::device::Device;
use ssdtwin::run::sim::{Progress, ProgressFn};
use ssdtwin::run::workload::fio::{parse_command_line, JobFile};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::run::{execute, RunOptions, RunResults};
use ssdtwin::study::fio_out::FioReport;
use ssdtwin::study::report::RunReport;
use ssdtwin::study::suite::{self, DriveUnderTest, SuiteOptions};
use ssdtwin::{Drive, DriveSpec, DriveState};

/// Where a drive comes from: a preset name or file path, or TOML text.
#[derive(Debug, Clone)]
pub struct DriveSource {
    /// Preset name, file path, or the TOML text itself.
    pub source: String,
    /// Whether `source` is TOML text.
    pub is_text: bool,
    /// `path=value` overrides, as `--set` takes them.
    pub set: Vec<String>,
}

impl DriveSource {
    /// The name the library uses for this drive in messages and results.
    pub fn origin(&self) -> &str {
        if self.is_text {
            "<drive TOML>"
        } else {
            &self.source
        }
    }

    /// Load and validate: the resolved spec and the model's user capacity.
    pub fn load(&self) -> Result<DriveUnderTest> {
        let spec = if self.is_text {
            DriveSpec::from_toml_with_overrides(&self.source, self.origin(), &self.set)?
        } else {
            DriveSpec::load(&self.source, &self.set)?
        };
        let model = spec.build(self.origin())?;
        // A drive given as text is known by its `name` field.
        let name = if self.is_text { model.spec.name.clone() } else { self.source.clone() };
        Ok(DriveUnderTest { name, overrides: self.set.clone(), model })
    }
}

/// A workload: single phases from fio options, or a job file's text.
#[derive(Debug, Clone)]
pub enum JobSource {
    /// One phase per entry, each a list of fio `(option, value)` pairs,
    /// as `ssdtwin run --rw ... --bs ...` builds one phase.
    Phases(Vec<Vec<(String, String)>>),
    /// A fio job file: its text and where it came from (for messages).
    File {
        /// The file's text.
        text: String,
        /// Its path, or a label for text given directly.
        origin: String,
    },
}

/// The resolved drive: `(name, TOML, spec as JSON)`.
pub fn resolve_drive(d: &DriveSource) -> Result<(String, String, String)> {
    let dut = d.load()?;
    let spec = &dut.model.spec;
    Ok((spec.name.clone(), spec.to_toml(), serde_json::to_string(spec)?))
}

/// Parse `job` for a drive of `capacity` bytes as `ssdtwin run` parses its
/// command line or `--job-file`, with `seed` as the default `randseed`
/// (the CLI's `--seed`). Several phases become jobs run one after another
/// (each after the first with fio's `stonewall`), as
/// `fio --name=a ... --name=b --stonewall ...` would.
fn build_job(job: &JobSource, capacity: u64, seed: u64) -> Result<JobFile> {
    let mut defaults = JobOptions::new();
    defaults.push("randseed", &seed.to_string(), "command line (--seed)");
    Ok(match job {
        JobSource::File { text, origin } => parse_job_file(text, origin, capacity, &defaults)?,
        JobSource::Phases(phases) => {
            if phases.is_empty() {
                bail!("the job has no phase");
            }
            let mut pairs: Vec<(String, String)> = Vec::new();
            for (i, opts) in phases.iter().enumerate() {
                if !opts.iter().any(|(k, _)| k == "rw" || k == "readwrite" || k == "idle" || k == "secure_erase") {
                    bail!("job phase {}: give `rw` (with bs, iodepth, ...), `idle` or `secure_erase`", i + 1);
                }
                let default_name = if phases.len() == 1 { "job".to_string() } else { format!("job{}", i + 1) };
                let name = opts.iter().find(|(k, _)| k == "name").map_or(default_name, |(_, v)| v.clone());
                pairs.push(("name".into(), name));
                if i > 0 {
                    pairs.push(("stonewall".into(), "1".into()));
                }
                pairs.extend(opts.iter().filter(|(k, _)| k != "name").cloned());
            }
            parse_command_line(&pairs, "command line", capacity, &defaults)?
        }
    })
}

/// Run `job` on the drive from `state` through the library's one entry
/// point ([`ssdtwin::run::execute`]), as `ssdtwin run` does: fio's
/// semantics (jobs of a file run concurrently, `stonewall` and `numjobs`
/// as in fio) and fio's JSON with ssdtwin's additions; a job with a trace
/// section runs sequentially and gives the run document. Returns the JSON
/// text `ssdtwin run --json` writes, byte for byte. `progress` is called
/// with the fraction done of a sequential (trace) run, when known.
pub fn run(
    drive: &DriveSource,
    state: &str,
    seed: u64,
    job: &JobSource,
    progress: Option<Box<dyn FnMut(f64) + Send>>,
) -> Result<String> {
    let dut = drive.load()?;
    let st: DriveState = state.parse().map_err(|e: String| anyhow::anyhow!("state {e}"))?;
    let file = build_job(job, dut.capacity(), seed)?;
    let spec = dut.model.spec.clone();
    let mut d = Drive::new(dut.model);
    if st != DriveState::Fresh {
        st.apply_fast(&mut d, seed);
    }
    let progress = progress.map(|mut f| -> ProgressFn {
        Box::new(move |p: &Progress| {
            if let Some(x) = p.fraction {
                f((p.phase_index as f64 + x) / p.phases as f64);
            }
        })
    });
    let outcome = execute(d, &file, RunOptions { record_commands: false, progress })?;
    let (state, health) = (st.to_string(), &outcome.health);
    let json = match &outcome.results {
        RunResults::Phases(phases) => RunReport { drive: &spec, state, seed, phases, health }.to_json(),
        RunResults::Jobs(jobs) => {
            FioReport { drive: &spec, state, seed, global: &file.global, jobs, health }.to_json(false)
        }
    };
    Ok(serde_json::to_string_pretty(&json)? + "\n")
}

/// Options of a suite run.
#[derive(Debug, Clone)]
pub struct SuiteArgs {
    /// Suite name or file.
    pub suite: String,
    /// Drives (each with its own overrides).
    pub drives: Vec<DriveSource>,
    /// Start every test from this state instead of the suite's passes.
    pub state: Option<String>,
    /// Seed.
    pub seed: u64,
    /// Size scale.
    pub scale: f64,
    /// Time scale (default: `scale`).
    pub time_scale: Option<f64>,
    /// Only these tests.
    pub only: Vec<String>,
    /// Runs simulated at once.
    pub threads: usize,
    /// Directory for the JSON and the HTML report (none: not written).
    pub out: Option<String>,
    /// Runs with the seeds `seed`, `seed + 1`, …: the scores are medians.
    pub repeat: u32,
}

/// Run a suite: the JSON document `ssdtwin suite` writes, and the report
/// page's path when `out` is given.
pub fn run_suite(a: &SuiteArgs) -> Result<(String, Option<String>)> {
    if !(a.scale > 0.0 && a.time_scale.unwrap_or(1.0) > 0.0) {
        bail!("scale and time_scale must be positive");
    }
    let s = suite::load(&a.suite)?;
    let drives = a.drives.iter().map(DriveSource::load).collect::<Result<Vec<_>>>()?;
    let state =
        a.state.as_deref().map(|st| st.parse().map_err(|e: String| anyhow::anyhow!("state {e}"))).transpose()?;
    let opts = SuiteOptions {
        scale: a.scale,
        time_scale: a.time_scale.unwrap_or(a.scale),
        seed: a.seed,
        only: a.only.clone(),
        state,
        threads: a.threads.max(1),
        ..SuiteOptions::default()
    };
    if a.repeat == 0 {
        bail!("repeat must be at least 1");
    }
    let result = suite::run_repeated(&s, &drives, &opts, a.repeat, None)?;
    let text = serde_json::to_string_pretty(&suite::json::suite_json(&result))? + "\n";
    let page = match &a.out {
        None => None,
        Some(dir) => {
            let dir = Path::new(dir);
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            ssdtwin_report::write_atomically(&dir.join(format!("{}.json", s.def.name)), text.as_bytes())?;
            // Rendered from the text as written, as the CLI does.
            let report = ssdtwin_report::render(&serde_json::from_str(&text)?)?;
            Some(report.write(dir)?.display().to_string())
        }
    };
    Ok((text, page))
}

/// Measure a preset's published figures: a JSON list, one object per figure.
pub fn validate(preset: &str, quick: bool) -> Result<String> {
    use ssdtwin::study::figures;
    let set = figures::figures_for(preset).with_context(|| {
        let have: Vec<_> = figures::FIGURES.iter().map(|(n, _)| *n).collect();
        format!("no published figures for `{preset}` (presets with figures: {})", have.join(", "))
    })??;
    let spec = DriveSpec::load(&set.drive, &[])?;
    let model = spec.build(&set.drive)?;
    let mut out = Vec::new();
    for fig in &set.figures {
        let v = figures::measure(&model, fig, quick)?;
        out.push(json!({
            "drive": set.drive,
            "figure": v.figure.name,
            "metric": v.figure.metric,
            "published": v.figure.published.to_string(),
            "unit": v.figure.unit,
            "simulated": v.simulated,
            "error": v.error,
            "tolerance": v.figure.tolerance,
            "pass": v.pass,
            "source": v.figure.source,
        }));
    }
    Ok(serde_json::to_string(&Value::Array(out))?)
}

/// The characterization battery's fio job file (`ssdtwin fit --jobs`),
/// times multiplied by `time_scale`.
pub fn fit_battery(time_scale: f64) -> Result<String> {
    if !(time_scale > 0.0 && time_scale.is_finite()) {
        bail!("time_scale {time_scale} must be a positive number");
    }
    Ok(ssdtwin::study::fit::battery::text(time_scale))
}

/// How to fit (`ssdtwin fit`'s options).
pub struct FitHow {
    /// `--replay-time`.
    pub replay_time: String,
    /// `--read-iterations`.
    pub read_iterations: u64,
    /// `--state`: the state the jobs outside the battery found the drive in.
    pub state: String,
    /// `--refine-iterations`.
    pub refine_iterations: u64,
}

/// Fit a twin to fio results (`ssdtwin fit`: the battery's, any jobs'
/// the twin can replay, or both), starting from the drive `base`: JSON of
/// `{"toml", "report", "rows", "params", "notes", "evaluations",
/// "wall_s"}`. `executor`: where the replays run (`None`: this
/// machine's cores; see `ssdtwin::study::fit::remote`).
pub fn fit(
    base: &DriveSource,
    results: &[String],
    how: &FitHow,
    executor: Option<ssdtwin::study::fit::remote::Executor>,
) -> Result<String> {
    use ssdtwin::study::fit::{self, measure, report, FitOptions};
    let spec = base.load()?.model.spec;
    let replay_time = &how.replay_time;
    let runtime_cap_ns = ssdtwin::run::workload::fio::parse_time(replay_time, 1_000_000_000)
        .map_err(|e| anyhow::anyhow!("replay_time {replay_time}: {e}"))?;
    let state: ssdtwin::DriveState = how.state.parse().map_err(|e: String| anyhow::anyhow!("state {e}"))?;
    let mut jobs = Vec::new();
    for r in results {
        jobs.extend(measure::read_file(Path::new(r))?);
    }
    let opts = FitOptions {
        runtime_cap_ns,
        read_iterations: how.read_iterations,
        state,
        refine_iterations: how.refine_iterations,
        executor,
        ..FitOptions::default()
    };
    let f = fit::fit(&spec, &jobs, &opts)?;
    let rows: Vec<Value> = f
        .rows
        .iter()
        .map(|r| {
            let (label, unit) = r.quantity.label();
            json!({ "job": r.job, "measurement": label, "unit": unit, "measured": r.measured,
                    "twin": r.twin, "error": r.error() })
        })
        .collect();
    let params: Vec<Value> = f
        .params
        .iter()
        .map(|p| {
            let (field, unit) = p.param.field();
            json!({ "parameter": field, "unit": unit, "base": p.param.display(p.base),
                    "fitted": p.param.display(p.fitted), "sigma": p.sigma,
                    "constrained_by": p.constrained_by.as_ref().map(|c| c.0.clone()),
                    "sensitivity": p.constrained_by.as_ref().map(|c| c.1) })
        })
        .collect();
    let toml = report::drive_toml(&f, base.origin(), results);
    Ok(serde_json::to_string(&json!({
        "toml": toml, "report": report::text(&f), "rows": rows, "params": params,
        "notes": f.notes, "evaluations": f.evaluations, "wall_s": f.wall_s,
    }))?)
}

/// Presets shipped in the library.
pub fn presets() -> Vec<String> {
    ssdtwin::spec::preset_names().into_iter().map(String::from).collect()
}

/// Built-in suites.
pub fn suites() -> Vec<String> {
    suite::builtin_names().into_iter().map(String::from).collect()
}

/// Presets with published figures.
pub fn figure_presets() -> Vec<String> {
    ssdtwin::study::figures::FIGURES.iter().map(|(n, _)| n.to_string()).collect()
}

/// The device core around a drive brought to `state` as `ssdtwin run
/// --state STATE --seed SEED` brings it, at time 0, for Python to step.
pub fn device(drive: &DriveSource, state: &str, seed: u64) -> Result<Device> {
    let dut = drive.load()?;
    let st: DriveState = state.parse().map_err(|e: String| anyhow::anyhow!("state {e}"))?;
    let mut d = Drive::new(dut.model);
    if st != DriveState::Fresh {
        st.apply_fast(&mut d, seed);
    }
    Ok(Device::new(d))
}

/// The data-placement interfaces' counts since the drive was made, as
/// JSON: zones by state and each zone's and each placement handle's
/// activity, the FDP events by type and the FDP log pages
/// (`ssdtwin::run::placement_stats`); `null` for a conventional drive.
pub fn placement(device: &Device) -> Result<String> {
    let d = device.drive();
    let Some(w) = ssdtwin::run::placement_stats::PlacementSnapshot::since_start(d) else {
        return Ok("null".to_string());
    };
    Ok(serde_json::to_string(&w)?)
}

/// The drive's counters now (as a run's `counters` object, plus `waf` and
/// `energy_j`) and its health log, as JSON objects.
pub fn counters_and_health(device: &Device) -> Result<(String, String)> {
    let d = device.drive();
    let c = ssdtwin::run::stats::Counters::of(d);
    let mut v = serde_json::to_value(c)?;
    v["waf"] = json!(c.waf());
    v["energy_j"] = json!(d.energy_j(device.now()));
    Ok((v.to_string(), serde_json::to_string(&Health::of(d))?))
}
