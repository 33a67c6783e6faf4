//! Published figures of the presets, and the measurements that reproduce
//! them (`ssdtwin validate`).
//!
//! Figures are data: one TOML file per preset under
//! `crates/ssdtwin/figures/`, each figure with its source, the published
//! value (a number or a `[low, high]` range) and its `unit`, a tolerance,
//! and how to measure it on the simulated drive. `metric` is one of:
//!
//! - a workload metric of the suites' vocabulary ([`crate::study::metric`]:
//!   `read_mbps`, `write_iops`, `write_lat`, `write_max_lat`, `idle_power`,
//!   …) with a `job` in fio vocabulary and a `prepare` step: `none`
//!   (secure-erased drive), `write-span` (the job's span written
//!   sequentially first, as IOMeter writes its test file),
//!   `fill-slc-cache` (as much written sequentially as the cache holds, so
//!   the job runs after the cache is exhausted; its span starts after the
//!   written data) or `apst-idle` (drives with `[power]`: with the host's
//!   APST on, one 4 KiB read and a minute of idle, as client-2018's idle
//!   test does; `idle_power` is that idle's last second, any other metric
//!   is of the job run after it — the wake-up read);
//! - `slc_cache` with a `state`: the SLC cache as a reviewer measures it —
//!   the drive is brought into that state, rests until its folding backlog
//!   is gone (at most 30 simulated minutes), then takes 128 KiB QD32
//!   sequential writes after its data, 128 MiB at a time, until a chunk
//!   runs at less than half the first one's speed: the bytes written before
//!   that chunk are the cache (GB);
//! - `percentage_used` with a write `job`: the health log's percentage of
//!   rated endurance used after that job on a fresh drive (the writes run
//!   through the FTL untimed, as preconditioning does), or with an aging
//!   job (`age`, `per_day` and its workload, as a job file's `age`
//!   section): a rated endurance checked by the aging model.
//!
//! The simulated value is converted from the metric's unit (µs, MB/s, mW…)
//! into the figure's `unit` (e.g. `ms`); a unit that measures something
//! else is an error naming the figure.
//!
//! A figure passes when the simulated value lies within the published
//! range widened by the tolerance. `quick` mode caps each job's runtime so
//! that CI can run the whole set in seconds; steady throughput figures
//! converge within a few simulated seconds.

use serde::Deserialize;

use crate::error::SpecError;
use crate::model::drive::{Drive, IoKind};
use crate::run::sim::{Progress, Simulator};
use crate::run::state::DriveState;
use crate::run::workload::{IoSpec, JobOptions, Phase, RwPattern};
use crate::spec::DriveModel;
use crate::study::metric::{convert, Metric, METRICS};
use std::rc::Rc;

/// Figure files shipped with the presets: (preset name, TOML source).
pub const FIGURES: &[(&str, &str)] = &[
    ("intel-600p-512gb", include_str!("../../figures/intel-600p-512gb.toml")),
    ("intel-660p-512gb", include_str!("../../figures/intel-660p-512gb.toml")),
    ("intel-660p-1tb", include_str!("../../figures/intel-660p-1tb.toml")),
    ("intel-660p-2tb", include_str!("../../figures/intel-660p-2tb.toml")),
    ("intel-x25m-80gb", include_str!("../../figures/intel-x25m-80gb.toml")),
    ("ocz-core-64gb", include_str!("../../figures/ocz-core-64gb.toml")),
    ("ocz-slc-64gb", include_str!("../../figures/ocz-slc-64gb.toml")),
    ("samsung-pm9d3a-3.84tb", include_str!("../../figures/samsung-pm9d3a-3.84tb.toml")),
    ("smi-sm2260-mlc-512gb", include_str!("../../figures/smi-sm2260-mlc-512gb.toml")),
    ("toshiba-rc100-480gb", include_str!("../../figures/toshiba-rc100-480gb.toml")),
    ("wd-zn540", include_str!("../../figures/wd-zn540.toml")),
];

/// The figures of one preset.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSet {
    /// Preset the figures belong to.
    pub drive: String,
    /// The figures.
    #[serde(rename = "figure")]
    pub figures: Vec<Figure>,
}

/// A published value.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Published {
    /// One value.
    Value(f64),
    /// A range of values (e.g. over test platforms).
    Range([f64; 2]),
    /// A lower bound (`published = { at_least = 500 }`: "spikes above
    /// 0.5 s").
    AtLeast {
        /// The bound.
        at_least: f64,
    },
    /// An upper bound (`published = { at_most = 100 }`: a rating the drive
    /// must meet, such as its endurance used at the rated writes).
    AtMost {
        /// The bound.
        at_most: f64,
    },
}

impl Published {
    /// The lowest and highest value the figure allows (infinite for an
    /// open bound).
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Published::Value(v) => (v, v),
            Published::Range([a, b]) => (a.min(b), a.max(b)),
            Published::AtLeast { at_least } => (at_least, f64::INFINITY),
            Published::AtMost { at_most } => (f64::NEG_INFINITY, at_most),
        }
    }
}

impl std::fmt::Display for Published {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Published::Value(v) => write!(f, "{}", fmt_num(*v)),
            Published::Range([a, b]) => write!(f, "{}–{}", fmt_num(*a), fmt_num(*b)),
            Published::AtLeast { at_least } => write!(f, "≥ {}", fmt_num(*at_least)),
            Published::AtMost { at_most } => write!(f, "≤ {}", fmt_num(*at_most)),
        }
    }
}

fn fmt_num(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.0}", v)
    } else if v >= 10.0 {
        format!("{:.1}", v)
    } else {
        format!("{:.2}", v)
    }
}

/// One published figure and how to measure it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// What the figure is.
    pub name: String,
    /// Where it was published.
    pub source: String,
    /// What to measure (see the module docs).
    pub metric: String,
    /// Published value or range.
    pub published: Published,
    /// Unit of the published value.
    pub unit: String,
    /// Relative tolerance, e.g. 0.05.
    pub tolerance: f64,
    /// Drive state for `slc_cache` (`fresh`, `filled:80`, ...).
    #[serde(default)]
    pub state: Option<String>,
    /// Preparation before a workload metric.
    #[serde(default)]
    pub prepare: Option<String>,
    /// The workload, as fio options.
    #[serde(default)]
    pub job: Option<toml::Table>,
    /// Why the tolerance or the procedure is what it is.
    #[serde(default)]
    pub note: Option<String>,
}

/// The outcome of one figure.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The figure.
    pub figure: Figure,
    /// Simulated value, in the figure's unit.
    pub simulated: f64,
    /// Relative distance from the published range (0 inside it).
    pub error: f64,
    /// Whether the simulated value is within tolerance.
    pub pass: bool,
}

/// The figure set of a preset, if it has one.
pub fn figures_for(preset: &str) -> Option<Result<FigureSet, SpecError>> {
    let (_, src) = FIGURES.iter().find(|(n, _)| *n == preset)?;
    Some(toml::from_str(src).map_err(|e: toml::de::Error| SpecError::Parse {
        origin: format!("figures/{preset}.toml"),
        message: e.to_string(),
    }))
}

fn invalid(fig: &Figure, reason: impl Into<String>) -> SpecError {
    SpecError::Invalid { origin: format!("figure `{}`", fig.name), field: "metric".into(), reason: reason.into() }
}

/// Told how a measurement's simulation advances (phase, simulated time).
pub type ProgressHook = Rc<dyn Fn(&Progress)>;

/// A simulator around `drive` that reports to `hook`.
fn simulator(drive: Drive, hook: &Option<ProgressHook>) -> Simulator {
    let mut sim = Simulator::new(drive);
    if let Some(h) = hook {
        let h = h.clone();
        sim.on_progress(move |p| h(p));
    }
    sim
}

/// Measure one figure on a fresh drive built from `model`.
pub fn measure(model: &DriveModel, fig: &Figure, quick: bool) -> Result<Verdict, SpecError> {
    measure_reporting(model, fig, quick, None)
}

/// [`measure`], telling `hook` how the simulation advances.
pub fn measure_reporting(
    model: &DriveModel,
    fig: &Figure,
    quick: bool,
    hook: Option<ProgressHook>,
) -> Result<Verdict, SpecError> {
    let (simulated, unit) = match fig.metric.as_str() {
        "slc_cache" => {
            let state: DriveState =
                fig.state.as_deref().unwrap_or("fresh").parse().map_err(|e: String| invalid(fig, e))?;
            let bytes =
                measure_slc_cache(model, state, &hook).ok_or_else(|| invalid(fig, "the writes never slowed down"))?;
            (bytes / 1e9, "GB")
        }
        "percentage_used" => (measure_wear(model, fig, quick, &hook)?, "%"),
        m => {
            let metric = Metric::parse(m).ok_or_else(|| {
                invalid(fig, format!("unknown metric `{m}`: not slc_cache, percentage_used or {METRICS}"))
            })?;
            (measure_job(model, fig, metric, quick, &hook)?, metric.unit())
        }
    };
    let simulated = convert(simulated, unit, &fig.unit).ok_or_else(|| {
        invalid(fig, format!("unit `{}` does not measure what `{}` does (in {unit})", fig.unit, fig.metric))
    })?;
    let (lo, hi) = fig.published.bounds();
    let error = if simulated < lo {
        (lo - simulated) / lo
    } else if simulated > hi {
        (simulated - hi) / hi
    } else {
        0.0
    };
    Ok(Verdict { figure: fig.clone(), simulated, error, pass: error <= fig.tolerance })
}

/// The figure's `job` as one I/O phase on `model`.
fn job_spec(model: &DriveModel, fig: &Figure) -> Result<IoSpec, SpecError> {
    let Phase::Io(spec) = job_phase(model, fig)? else {
        return Err(invalid(fig, "the job must do I/O"));
    };
    Ok(spec)
}

/// The figure's `job` as one phase on `model` (fio's options and the
/// twin's own, such as `age` and `trace`).
fn job_phase(model: &DriveModel, fig: &Figure) -> Result<Phase, SpecError> {
    let table = fig.job.as_ref().ok_or_else(|| invalid(fig, "a workload metric needs a `job`"))?;
    let capacity = model.user_lpns as u64 * 4096;
    let mut opts = JobOptions::new();
    let origin = format!("figure `{}` job", fig.name);
    for (k, v) in table {
        let text = match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        opts.push(k, &text, &origin);
    }
    opts.to_phase(&fig.name, capacity).map_err(|e| invalid(fig, e.to_string()))
}

/// Percentage of rated endurance used after the figure's write job on a
/// fresh drive. The writes go through the FTL without timing (as
/// preconditioning does: the same blocks are erased in the same modes).
/// `quick`, for jobs of more than three passes over their span, writes
/// three and extrapolates with the third's wear: the first pass lands in
/// fresh blocks and the second folds and rewrites the first's data; from
/// the third on, each pass wears the drive alike.
///
/// An aging job (`age`, `per_day` and its workload: a rated endurance
/// such as "200 TB written over 5 years") runs as the `age` phase does
/// (untimed days, stationary wear carried forward; see
/// [`crate::run::lifetime`]), in quick mode too.
fn measure_wear(model: &DriveModel, fig: &Figure, quick: bool, hook: &Option<ProgressHook>) -> Result<f64, SpecError> {
    if model.spec.nand.native.pe_cycles.is_none() {
        return Err(invalid(fig, "the drive rates no P/E cycles (nand.*.pe_cycles)"));
    }
    let used = |d: &Drive| crate::model::health::Health::of(d).percentage_used.unwrap_or(0.0);
    let mut spec = match job_phase(model, fig)? {
        Phase::Io(spec) => spec,
        age @ Phase::Age(_) => {
            let mut sim = simulator(Drive::new(model.clone()), hook);
            sim.try_run_phase(&age, 0, 1).map_err(|e| invalid(fig, e.to_string()))?;
            return Ok(used(sim.drive()));
        }
        _ => return Err(invalid(fig, "the wear job must write (rw = write or randwrite) or age the drive (age)")),
    };
    if !matches!(spec.rw, RwPattern::Write | RwPattern::RandWrite) {
        return Err(invalid(fig, "the wear job must write (rw = write or randwrite)"));
    }
    let span = spec.size.unwrap_or(model.user_lpns as u64 * 4096 - spec.offset);
    let total = spec.io_size.unwrap_or(span);
    let passes = total as f64 / span as f64;
    let mut drive = Drive::new(model.clone());
    if quick && passes > 3.0 {
        spec.io_size = Some(span);
        crate::run::state::write_fast(&mut drive, &spec);
        crate::run::state::write_fast(&mut drive, &spec);
        let second = used(&drive);
        crate::run::state::write_fast(&mut drive, &spec);
        let third = used(&drive);
        return Ok(third + (passes - 3.0) * (third - second));
    }
    crate::run::state::write_fast(&mut drive, &spec);
    Ok(used(&drive))
}

fn measure_job(
    model: &DriveModel,
    fig: &Figure,
    metric: Metric,
    quick: bool,
    hook: &Option<ProgressHook>,
) -> Result<f64, SpecError> {
    let capacity = model.user_lpns as u64 * 4096;
    let mut spec = job_spec(model, fig)?;
    if quick {
        spec.runtime_ns = spec.runtime_ns.map(|r| r.min(5_000_000_000));
    }
    let mut drive = Drive::new(model.clone());
    let mut apst_idle = false;
    match fig.prepare.as_deref().unwrap_or("none") {
        "none" => {}
        "write-span" => {
            let mut fill = IoSpec::new("prepare", RwPattern::Write);
            fill.bs = 128 * 1024;
            fill.iodepth = 32;
            fill.offset = spec.offset;
            fill.size = Some(spec.size.unwrap_or(capacity - spec.offset));
            crate::run::state::write_fast(&mut drive, &fill);
        }
        "fill-slc-cache" => {
            let cache = drive.ftl().slc_cache_bytes() / (128 * 1024) * (128 * 1024);
            let mut fill = IoSpec::new("prepare", RwPattern::Write);
            fill.bs = 128 * 1024;
            fill.iodepth = 32;
            fill.size = Some(cache);
            crate::run::state::write_fast(&mut drive, &fill);
            spec.offset += cache;
            if let Some(s) = spec.size {
                spec.size = Some(s.min(capacity - spec.offset));
            }
        }
        "apst-idle" => apst_idle = true,
        other => return Err(invalid(fig, format!("unknown prepare step `{other}`"))),
    }
    drive.reset_time();
    let mut sim = simulator(drive, hook);
    if apst_idle {
        // The host's APST on, one 4 KiB read, then a minute of idle: the
        // job runs on the drive that settled in its deepest idle state.
        let mut read = IoSpec::new("read", RwPattern::RandRead);
        read.size = Some(1 << 30);
        read.io_size = Some(4096);
        read.apst = true;
        sim.run_phase(&Phase::Io(read), 0, 3);
        let idle = Phase::Idle { name: "idle".into(), duration_ns: 60_000_000_000, apst: None };
        let idle = sim.run_phase(&idle, 1, 3);
        if metric.needs_idle() {
            return metric.value(&idle, Some(&idle)).ok_or_else(|| invalid(fig, "the drive has no [power]"));
        }
        let r = sim.run_phase(&Phase::Io(spec), 2, 3);
        return metric.value(&r, None).ok_or_else(|| invalid(fig, format!("the job gives no `{}`", metric.name())));
    }
    let r = sim.run_phase(&Phase::Io(spec), 0, 1);
    metric.value(&r, None).ok_or_else(|| invalid(fig, format!("the job gives no `{}`", metric.name())))
}

/// Bytes a drive in `state` takes at its initial speed after resting: see
/// the module doc. `None` if the writes reach the end of the drive without
/// slowing down.
pub fn measure_slc_cache(model: &DriveModel, state: DriveState, hook: &Option<ProgressHook>) -> Option<f64> {
    const CHUNK: u64 = 128 << 20;
    let mut drive = Drive::new(model.clone());
    state.apply_fast(&mut drive, 1);
    let capacity = drive.user_bytes();
    let mut sim = simulator(drive, hook);
    for i in 0..180 {
        if sim.drive().ftl().fold_backlog_bytes() == 0 {
            break;
        }
        sim.run_phase(&Phase::Idle { name: "rest".into(), duration_ns: 10_000_000_000, apst: None }, i, 180);
    }
    let written = match state {
        DriveState::Filled(p) => (capacity as f64 * p / 100.0) as u64 / CHUNK * CHUNK + CHUNK,
        _ => 0,
    };
    let mut first_rate = None;
    let mut offset = written;
    while offset + CHUNK <= capacity {
        let mut w = IoSpec::new("write", RwPattern::Write);
        w.bs = 128 * 1024;
        w.iodepth = 32;
        w.offset = offset;
        w.size = Some(CHUNK);
        let r = sim.run_phase(&Phase::Io(w), 0, 1);
        let rate = r.bw_bytes(IoKind::Write);
        if let Some(h) = hook {
            h(&Progress {
                phase: format!(
                    "sequential writes, {:.1} GB at {:.0} MB/s",
                    (offset + CHUNK - written) as f64 / 1e9,
                    rate / 1e6
                ),
                phase_index: 0,
                phases: 1,
                phase_ns: sim.now(),
                fraction: None,
            });
        }
        let first = *first_rate.get_or_insert(rate);
        if rate < first / 2.0 {
            return Some((offset - written) as f64);
        }
        offset += CHUNK;
    }
    None
}

/// Header of the validation table.
pub const HEADER: &str =
    "figure                                              published         simulated   error   tol   result";

/// One row of the validation table.
pub fn format_verdict(v: &Verdict) -> String {
    format!(
        "{:<50} {:>10} {:<5} {:>10} {:>6.1}% {:>4.0}%   {}\n    source: {}",
        v.figure.name,
        v.figure.published.to_string(),
        v.figure.unit,
        fmt_num(v.simulated),
        v.error * 100.0,
        v.figure.tolerance * 100.0,
        if v.pass { "pass" } else { "FAIL" },
        v.figure.source
    ) + &v.figure.note.as_ref().filter(|_| !v.pass).map_or(String::new(), |n| format!("\n    note: {n}"))
}
