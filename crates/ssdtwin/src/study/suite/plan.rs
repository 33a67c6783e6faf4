//! Second stage of reading a suite: validate the file and expand its step
//! templates into concrete steps (sweeps become one step per value).
//!
//! Models: sizes in decimal units (`GB` = 10^9 bytes, as the methodology
//! writes them) unless marked binary (`KiB`, `MiB`), times with fio's
//! suffixes (a bare number is seconds). Sweeps nest in a fixed order, outer
//! to inner: `bs`, `rw`, `rwmixread`, `percentage_random`, `numjobs`,
//! `iodepth`. A step is named after its template's `name` (or its `rw`) and
//! the values it sweeps, e.g. `qd4`, `read70`, `bs128KiB-write`.
//!
//! A step with `trace` replays a trace file or a synthetic generator
//! ([`StepSource::Trace`]) instead of its fio fields, which it must not
//! set; it is named after its `name` (or `trace`).
//!
//! Leaves out: anything that depends on the drive (capacity, spans that
//! fit); that is checked when a suite is run on a drive ([`super::run`]).

use std::collections::BTreeSet;

use super::def::{ScoreDef, StepDef, SuiteFile, TestDef};
use super::SuiteError;
use crate::error::JobError;
use crate::run::state::DriveState;
use crate::run::trace::ReplayMode;
use crate::run::workload::fio::{is_host_only, is_known, is_schedule, parse_size, parse_time};
use crate::run::workload::{IoSpec, JobOptions, Phase, RwPattern};

/// A validated suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The file as written (parsed).
    pub def: SuiteFile,
    /// The TOML text it was read from.
    pub source: String,
    /// Built-in name or path it was read from.
    pub origin: String,
    /// Passes (at least one).
    pub passes: Vec<Pass>,
    /// Tests in order.
    pub tests: Vec<TestPlan>,
}

/// One pass over all tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    /// Name, e.g. `standard`.
    pub name: String,
    /// What it means.
    pub description: String,
    /// State replacing each test's own test data.
    pub base: Option<DriveState>,
    /// Idle after preconditioning replacing the tests' own, ns.
    pub prep_idle_ns: Option<u64>,
}

/// What is written before a test (after a secure erase).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prep {
    /// Nothing.
    Fresh,
    /// This many bytes of test data from LBA 0 (`None`: the test's
    /// largest span), written sequentially.
    Data(Option<u64>),
    /// Test data as [`Prep::Data`], then one pass of 4 KiB random writes
    /// over it (every 4 KiB rewritten once, in random order).
    Fragmented(Option<u64>),
    /// A drive state (`full`, `filled:N`, `steady`).
    State(DriveState),
}

/// Idle after each step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IdleRule {
    /// None.
    None,
    /// A fixed time, ns.
    Fixed(u64),
    /// So that the step's busy time is this fraction of step + idle.
    DutyCycle(f64),
}

pub use crate::study::metric::{Metric, METRICS};

/// How a test is scored.
#[derive(Debug, Clone, PartialEq)]
pub enum ScoreRule {
    /// Mean of `metric` over the steps matching `filter` (all steps when
    /// empty): (field, accepted values).
    Mean {
        /// Per-step metric.
        metric: Metric,
        /// Step selection.
        filter: Vec<(String, Vec<u64>)>,
        /// Label in tables.
        label: String,
        /// Further metrics averaged over the same steps.
        also: Vec<Metric>,
    },
    /// Over the last `window_ns` of the single step's per-second IOPS:
    /// the mean, and consistency = mean / standard deviation.
    SteadyState {
        /// Window at the end of the step, ns.
        window_ns: u64,
        /// Label in tables.
        label: String,
    },
    /// `metric` (and `also`) of every step.
    Each {
        /// Main metric.
        metric: Metric,
        /// Further metrics.
        also: Vec<Metric>,
    },
    /// Chosen metrics of chosen steps: (step index, metric, label).
    Pick(Vec<(usize, Metric, String)>),
    /// A whole-drive fill (one sequential write step): the average rate,
    /// the data written before the rate fell (the cache's size) and the
    /// rate after it ([`super::score::fill_scores`]).
    Fill,
    /// PCMark 8's Storage score ([`super::pcmark`]).
    Pcmark8(super::pcmark::Pcmark8Rule),
    /// PCMark Vantage's HDD suite score ([`super::pcmark`]).
    PcmarkVantage(super::pcmark::VantageRule),
    /// PCMark 10's storage score, unscaled ([`super::pcmark`]).
    Pcmark10(super::pcmark::Pcmark10Rule),
}

/// What a step runs.
#[derive(Debug, Clone, PartialEq)]
pub enum StepSource {
    /// A fio workload: the same [`IoSpec`] the command line, job files and
    /// figures build, with sizes in bytes (`size: None` = the whole space
    /// the test may use), made concrete for a drive and the run's scaling
    /// when the test is set up.
    Io(Box<IoSpec>),
    /// A trace replayed (the fio fields are unused).
    Trace(TraceStep),
}

/// A trace step: which source and how it is timed.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceStep {
    /// Trace file or synthetic generator.
    pub source: String,
    /// Timing.
    pub mode: ReplayMode,
}

/// AnandTech's playback of its Storage Bench traces: recorded groups kept
/// (dependent), idle capped at 25 ms.
pub const DEFAULT_TRACE_REPLAY: &str = "dependent:25";

/// Most steps one test's sweep may make (the product of its swept
/// options' value counts), so that a suite file cannot ask for more
/// steps than memory holds.
pub const MAX_SWEEP_STEPS: usize = 10_000;

/// One concrete step (before scaling to a drive).
#[derive(Debug, Clone, PartialEq)]
pub struct StepPlan {
    /// Unique name within the test.
    pub name: String,
    /// fio fields or a trace.
    pub source: StepSource,
    /// Swept fields and this step's value, e.g. `("iodepth", 4)`.
    pub sweep: Vec<(String, u64)>,
}

impl StepPlan {
    /// Value of a sweepable field (`None` for a trace step).
    pub fn field(&self, name: &str) -> Option<u64> {
        let StepSource::Io(io) = &self.source else {
            return None;
        };
        Some(match name {
            "iodepth" => io.iodepth as u64,
            "numjobs" => io.numjobs as u64,
            "rwmixread" => io.rwmixread as u64,
            "percentage_random" => io.percentage_random as u64,
            "bs" => io.bs as u64,
            _ => return None,
        })
    }
}

/// One validated test.
#[derive(Debug, Clone, PartialEq)]
pub struct TestPlan {
    /// Identifier.
    pub name: String,
    /// Title.
    pub title: String,
    /// State before the test.
    pub prep: Prep,
    /// Fraction of user capacity left unused.
    pub extra_op: f64,
    /// Idle after preconditioning, ns.
    pub prep_idle_ns: u64,
    /// Idle after each step.
    pub idle: IdleRule,
    /// Steps in order.
    pub steps: Vec<StepPlan>,
    /// Scoring rule.
    pub score: ScoreRule,
    /// Passes the test runs in (`None`: every pass).
    pub passes: Option<Vec<String>>,
}

impl TestPlan {
    /// Whether the test runs in the pass named `pass`.
    pub fn runs_in(&self, pass: &str) -> bool {
        self.passes.as_ref().is_none_or(|p| p.iter().any(|n| n == pass))
    }
}

const FILTER_FIELDS: &[&str] = &["iodepth", "numjobs", "rwmixread", "percentage_random", "bs"];

struct Ctx<'a> {
    origin: &'a str,
    at: String,
}

impl Ctx<'_> {
    fn err(&self, field: &str, reason: impl Into<String>) -> SuiteError {
        SuiteError::Invalid {
            origin: self.origin.to_string(),
            at: self.at.clone(),
            field: field.to_string(),
            reason: reason.into(),
        }
    }
    fn size(&self, field: &str, v: &str) -> Result<u64, SuiteError> {
        if v.trim().ends_with('%') {
            return Err(self.err(
                field,
                format!(
                    "`{v}`: give a size (e.g. \"16GB\"); for a share of the drive use span = \"whole\" with extra_op"
                ),
            ));
        }
        parse_size(v, 1000, 0).map_err(|r| self.err(field, r))
    }
    fn time(&self, field: &str, v: &str) -> Result<u64, SuiteError> {
        parse_time(v, 1_000_000_000).map_err(|r| self.err(field, r))
    }
}

/// Parse a test's `state`.
pub fn parse_prep(s: &str) -> Result<Prep, String> {
    let (kind, arg) = match s.split_once(':') {
        Some((k, v)) => (k, Some(v)),
        None => (s, None),
    };
    let size = || arg.map(|v| parse_size(v, 1000, 0).map_err(|e| format!("`{s}`: {e}"))).transpose();
    match kind {
        "data" => Ok(Prep::Data(size()?)),
        "fragmented" => Ok(Prep::Fragmented(size()?)),
        _ => s
            .parse::<DriveState>()
            .map(|st| match st {
                DriveState::Fresh => Prep::Fresh,
                st => Prep::State(st),
            })
            .map_err(|e| format!("{e}, data[:SIZE] or fragmented[:SIZE]")),
    }
}

/// Validate a parsed suite file and expand its steps.
pub fn build(def: SuiteFile, source: String, origin: String) -> Result<Suite, SuiteError> {
    let o = origin.as_str();
    let top = Ctx { origin: o, at: "suite".into() };
    if def.tests.is_empty() {
        return Err(top.err("test", "the suite has no [[test]]"));
    }
    let mut passes = Vec::new();
    for p in &def.passes {
        let c = Ctx { origin: o, at: format!("pass `{}`", p.name) };
        if passes.iter().any(|q: &Pass| q.name == p.name) {
            return Err(c.err("name", "two passes have this name"));
        }
        let base = p.base.as_deref().map(|b| b.parse::<DriveState>().map_err(|e| c.err("base", e))).transpose()?;
        let prep_idle_ns = p.prep_idle.as_deref().map(|t| c.time("prep_idle", t)).transpose()?;
        passes.push(Pass { name: p.name.clone(), description: p.description.clone(), base, prep_idle_ns });
    }
    if passes.is_empty() {
        passes.push(Pass {
            name: "standard".into(),
            description: "each test prepares its own drive state".into(),
            base: None,
            prep_idle_ns: None,
        });
    }
    let mut names = BTreeSet::new();
    let mut tests = Vec::new();
    for t in &def.tests {
        let c = Ctx { origin: o, at: format!("test `{}`", t.name) };
        if !names.insert(t.name.clone()) {
            return Err(c.err("name", "two tests have this name"));
        }
        let plan = build_test(&def, t, &c)?;
        if let Some(ps) = &plan.passes {
            for p in ps {
                if !passes.iter().any(|q| &q.name == p) {
                    let known: Vec<&str> = passes.iter().map(|q| q.name.as_str()).collect();
                    return Err(c.err("passes", format!("no pass is named `{p}` (passes: {})", known.join(", "))));
                }
            }
        }
        tests.push(plan);
    }
    Ok(Suite { def, source, origin, passes, tests })
}

fn build_test(def: &SuiteFile, t: &TestDef, c: &Ctx) -> Result<TestPlan, SuiteError> {
    let d = &def.defaults;
    let state = t.state.as_deref().or(d.state.as_deref()).unwrap_or("fresh");
    let prep = parse_prep(state).map_err(|e| c.err("state", e))?;
    let extra_op = t.extra_op.unwrap_or(0.0);
    if !(0.0..=0.9).contains(&extra_op) {
        return Err(c.err("extra_op", format!("{extra_op} is not between 0 and 0.9")));
    }
    let prep_idle_ns = match t.prep_idle.as_deref().or(d.prep_idle.as_deref()) {
        Some(v) => c.time("prep_idle", v)?,
        None => 0,
    };
    let (idle, idle_dc, at) = if t.idle.is_some() || t.idle_duty_cycle.is_some() {
        (&t.idle, t.idle_duty_cycle, c.at.clone())
    } else {
        (&d.idle, d.idle_duty_cycle, "[defaults]".to_string())
    };
    let ic = Ctx { origin: c.origin, at };
    let idle = match (idle, idle_dc) {
        (Some(_), Some(_)) => return Err(ic.err("idle_duty_cycle", "give either idle or idle_duty_cycle, not both")),
        (Some(v), None) => IdleRule::Fixed(ic.time("idle", v)?),
        (None, Some(dc)) if dc > 0.0 && dc <= 1.0 => IdleRule::DutyCycle(dc),
        (None, Some(dc)) => return Err(ic.err("idle_duty_cycle", format!("{dc} is not in (0, 1]"))),
        (None, None) => IdleRule::None,
    };
    if t.steps.is_empty() {
        return Err(c.err("step", "the test has no [[test.step]]"));
    }
    let mut steps: Vec<StepPlan> = Vec::new();
    for (i, s) in t.steps.iter().enumerate() {
        let sc = Ctx { origin: c.origin, at: format!("{}, step {}", c.at, i + 1) };
        // A trace step does not inherit the fio defaults.
        let step = if s.options.contains_key("trace") { s.clone() } else { merge(&d.step, s) };
        for p in expand(&step, &sc)? {
            if steps.iter().any(|q| q.name == p.name) {
                return Err(sc.err("name", format!("two steps are named `{}`", p.name)));
            }
            steps.push(p);
        }
    }
    let score = build_score(&t.score, &steps, &Ctx { origin: c.origin, at: format!("{}, score", c.at) })?;
    Ok(TestPlan {
        name: t.name.clone(),
        title: t.title.clone(),
        prep,
        extra_op,
        prep_idle_ns,
        idle,
        steps,
        score,
        passes: t.passes.clone(),
    })
}

/// A step's template over `[defaults.step]`: the step's own options win,
/// option by option.
fn merge(d: &StepDef, s: &StepDef) -> StepDef {
    let mut options = d.options.clone();
    options.extend(s.options.iter().map(|(k, v)| (k.clone(), v.clone())));
    StepDef { name: s.name.clone().or_else(|| d.name.clone()), options }
}

fn format_bs(b: u64) -> String {
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{}MiB", b >> 20)
    } else if b >= 1024 && b % 1024 == 0 {
        format!("{}KiB", b >> 10)
    } else {
        format!("{b}B")
    }
}

/// A step replaying `trace`: it takes only `replay` besides.
fn trace_step(s: &StepDef, c: &Ctx) -> Result<StepPlan, SuiteError> {
    if let Some(f) = s.options.keys().find(|k| !matches!(k.as_str(), "trace" | "replay")) {
        return Err(c.err(f, "a trace step takes no fio I/O fields (its requests come from the trace)"));
    }
    let one = |key: &str| -> Result<Option<String>, SuiteError> {
        match s.option(key) {
            None => Ok(None),
            Some(v) if v.len() == 1 => Ok(v.into_iter().next()),
            Some(_) => Err(c.err(key, "a trace step sweeps nothing (give one value)")),
        }
    };
    let source = one("trace")?.unwrap_or_default();
    if source.trim().is_empty() {
        return Err(c.err("trace", "needs a trace file or generator name"));
    }
    let replay = one("replay")?.unwrap_or_else(|| DEFAULT_TRACE_REPLAY.to_string());
    let mode = ReplayMode::parse(&replay).map_err(|e| c.err("replay", e.to_string()))?;
    Ok(StepPlan {
        name: s.name.clone().unwrap_or_else(|| source.clone()),
        source: StepSource::Trace(TraceStep { source, mode }),
        sweep: Vec::new(),
    })
}

/// Swept options nest in this order, outer to inner, before any other
/// swept option (those follow in key order); each names its steps so.
const SWEEP_ORDER: &[&str] = &["bs", "rw", "rwmixread", "percentage_random", "numjobs", "iodepth"];

/// Options whose value is a size within the drive: a suite gives them in
/// bytes, never as a share of the drive (whose usable part depends on the
/// test's `extra_op`).
const SPAN_OPTIONS: &[&str] = &["size", "filesize", "offset", "io_size", "io_limit", "burst_size"];

/// A drive capacity for checking a step without a drive: every span the
/// suite names fits; the real fit is checked per drive ([`super::run`]).
const ANY_CAPACITY: u64 = 1 << 60;

/// Expand a step template into its steps: one fio job per combination of
/// swept values, each parsed by the fio parser.
fn expand(s: &StepDef, c: &Ctx) -> Result<Vec<StepPlan>, SuiteError> {
    if s.options.contains_key("trace") {
        return Ok(vec![trace_step(s, c)?]);
    }
    if s.options.contains_key("replay") {
        return Err(c.err("replay", "only a trace step (with `trace`) has a replay mode"));
    }
    for (key, values) in &s.options {
        let key = key.as_str();
        if key == "name" || !(is_known(key) || is_host_only(key)) {
            return Err(c.err(key, "is not a fio option the twin knows (`ssdtwin help run` lists them)"));
        }
        if is_schedule(key) {
            return Err(c.err(key, "orders the jobs of a job file; a suite runs its steps in order"));
        }
        if SPAN_OPTIONS.contains(&key) && values.0.iter().any(|v| v.to_fio().trim().ends_with('%')) {
            return Err(c.err(
                key,
                "give a size (e.g. \"16GB\" with kb_base = 1000); for a share of the drive leave `size` out (the whole drive) and use extra_op",
            ));
        }
    }
    // Swept options in nesting order.
    let mut swept: Vec<&str> =
        SWEEP_ORDER.iter().copied().filter(|k| s.options.get(*k).is_some_and(|v| v.0.len() > 1)).collect();
    swept.extend(
        s.options.iter().filter(|(k, v)| v.0.len() > 1 && !SWEEP_ORDER.contains(&k.as_str())).map(|(k, _)| k.as_str()),
    );
    let fixed: Vec<(&str, String)> =
        s.options.iter().filter(|(_, v)| v.0.len() == 1).map(|(k, v)| (k.as_str(), v.0[0].to_fio())).collect();
    // Every combination is a step: bound their number before making any.
    let steps = swept.iter().try_fold(1usize, |n, k| n.checked_mul(s.options[*k].0.len()));
    if steps.is_none_or(|n| n > MAX_SWEEP_STEPS) {
        let what = steps.map_or("more than usize::MAX".to_string(), |n| n.to_string());
        return Err(c.err(
            swept.first().copied().unwrap_or("step"),
            format!("the sweep makes {what} steps; a test has at most {MAX_SWEEP_STEPS}"),
        ));
    }
    let origin = format!("{}: {}", c.origin, c.at);
    let mut out = Vec::new();
    let mut choice = vec![0usize; swept.len()];
    loop {
        let mut opts = JobOptions::new();
        for (k, v) in &fixed {
            opts.push(k, v, &origin);
        }
        for (k, &i) in swept.iter().zip(&choice) {
            opts.push(k, &s.options[*k].0[i].to_fio(), &origin);
        }
        let phase = opts.to_phase("step", ANY_CAPACITY).map_err(|e| match e {
            JobError::Invalid { option, reason, .. } => c.err(&option, reason),
            other => c.err("step", other.to_string()),
        })?;
        let Phase::Io(mut io) = phase else {
            return Err(c.err(
                "step",
                "a step is an fio I/O job or a trace (`trace`); idle and other sections are the suite's",
            ));
        };
        // A sequential step without a limit covers its span once, as
        // fio's job does (the whole-drive fill); a random one must say
        // how much it does.
        let sequential = matches!(io.rw, RwPattern::Read | RwPattern::Write);
        if io.io_size.is_none() && io.runtime_ns.is_none() && !sequential {
            return Err(c.err(
                "runtime",
                "a random step needs a limit: runtime, io_size or both (whichever comes first); a sequential \
                 step without one covers its span once",
            ));
        }
        if io.io_size == Some(0) || io.runtime_ns == Some(0) {
            return Err(c.err("io_size", "a limit of zero runs nothing"));
        }
        let mut sweep = Vec::new();
        let mut label = vec![s.name.clone().unwrap_or_default()];
        for key in &swept {
            match *key {
                "bs" => {
                    sweep.push(("bs".to_string(), io.bs as u64));
                    label.push(format!("bs{}", format_bs(io.bs as u64)));
                }
                "rw" => label.push(io.rw.name().to_string()),
                "rwmixread" => {
                    sweep.push(("rwmixread".to_string(), io.rwmixread as u64));
                    label.push(format!("read{}", io.rwmixread));
                }
                "percentage_random" => {
                    sweep.push(("percentage_random".to_string(), io.percentage_random as u64));
                    label.push(format!("random{}", io.percentage_random));
                }
                "numjobs" => {
                    sweep.push(("numjobs".to_string(), io.numjobs as u64));
                    label.push(format!("t{}", io.numjobs));
                }
                "iodepth" => {
                    sweep.push(("iodepth".to_string(), io.iodepth as u64));
                    label.push(format!("qd{}", io.iodepth));
                }
                other => {
                    let i = choice[swept.iter().position(|k| k == key).expect("swept")];
                    label.push(format!("{other}{}", s.options[other].0[i].to_fio()));
                }
            }
        }
        label.retain(|l| !l.is_empty());
        io.name = if label.is_empty() { io.rw.name().to_string() } else { label.join("-") };
        let name = io.name.clone();
        out.push(StepPlan { name, source: StepSource::Io(Box::new(io)), sweep });
        // The next combination, innermost option fastest.
        let mut level = swept.len();
        loop {
            if level == 0 {
                return Ok(out);
            }
            level -= 1;
            choice[level] += 1;
            if choice[level] < s.options[swept[level]].0.len() {
                break;
            }
            choice[level] = 0;
        }
    }
}

fn build_score(s: &ScoreDef, steps: &[StepPlan], c: &Ctx) -> Result<ScoreRule, SuiteError> {
    let metric = |m: &Option<String>| -> Result<Metric, SuiteError> {
        let m = m.as_deref().ok_or_else(|| c.err("metric", "missing (iops or mbps)"))?;
        Metric::parse(m).ok_or_else(|| c.err("metric", format!("`{m}` is not {METRICS}")))
    };
    let also = || s.also.iter().map(|m| metric(&Some(m.clone()))).collect::<Result<Vec<_>, _>>();
    match s.kind.as_str() {
        "mean" => {
            let mut filter = Vec::new();
            for (field, v) in &s.filter {
                if !FILTER_FIELDS.contains(&field.as_str()) {
                    return Err(c.err("where", format!("`{field}` is not one of {}", FILTER_FIELDS.join(", "))));
                }
                let items = match v {
                    toml::Value::Array(a) => a.clone(),
                    one => vec![one.clone()],
                };
                let vals = items
                    .iter()
                    .map(|x| match x {
                        toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
                        toml::Value::String(t) if field == "bs" => c.size("where", t),
                        other => Err(c.err("where", format!("`{field} = {other}`: expected whole numbers"))),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                filter.push((field.clone(), vals));
            }
            let selected = steps
                .iter()
                .filter(|st| filter.iter().all(|(f, vals)| st.field(f).is_some_and(|x| vals.contains(&x))))
                .count();
            if selected == 0 {
                return Err(c.err("where", "selects no step"));
            }
            Ok(ScoreRule::Mean {
                metric: metric(&s.metric)?,
                filter,
                label: s.label.clone().unwrap_or_else(|| "mean".into()),
                also: also()?,
            })
        }
        "steady-state" => {
            let w = s.window.as_deref().ok_or_else(|| c.err("window", "missing (e.g. \"400s\")"))?;
            let window_ns = c.time("window", w)?;
            let runtime_ns = match (steps.len(), &steps.first().map(|s| &s.source)) {
                (1, Some(StepSource::Io(io))) => io.runtime_ns,
                _ => None,
            };
            if runtime_ns.is_none() {
                return Err(c.err("kind", "steady-state scores one step with a runtime"));
            }
            if window_ns == 0 || runtime_ns.is_some_and(|r| r < window_ns) {
                return Err(c.err("window", format!("`{w}` must be positive and within the step's runtime")));
            }
            Ok(ScoreRule::SteadyState { window_ns, label: s.label.clone().unwrap_or_else(|| "steady state".into()) })
        }
        "each" => Ok(ScoreRule::Each { metric: metric(&s.metric)?, also: also()? }),
        "fill" => match steps {
            [StepPlan { source: StepSource::Io(io), .. }] if io.rw == RwPattern::Write => Ok(ScoreRule::Fill),
            _ => Err(c.err("kind", "a fill score needs exactly one step, a sequential write (rw = \"write\")")),
        },
        "pick" => {
            if s.pick.is_empty() {
                return Err(c.err("pick", "a pick score needs at least one { step, metric, label }"));
            }
            let mut items = Vec::new();
            for p in &s.pick {
                let i = steps.iter().position(|st| st.name == p.step).ok_or_else(|| {
                    let known: Vec<&str> = steps.iter().map(|st| st.name.as_str()).collect();
                    c.err("pick", format!("no step is named `{}` (steps: {})", p.step, known.join(", ")))
                })?;
                items.push((i, metric(&Some(p.metric.clone()))?, p.label.clone()));
            }
            Ok(ScoreRule::Pick(items))
        }
        "pcmark8" => super::pcmark::build_pcmark8(s, steps).map(ScoreRule::Pcmark8).map_err(|(f, r)| c.err(f, r)),
        "pcmark-vantage" => {
            super::pcmark::build_vantage(s, steps).map(ScoreRule::PcmarkVantage).map_err(|(f, r)| c.err(f, r))
        }
        "pcmark10" => super::pcmark::build_pcmark10(s, steps).map(ScoreRule::Pcmark10).map_err(|(f, r)| c.err(f, r)),
        k => Err(c.err(
            "kind",
            format!("`{k}` is not mean, steady-state, each, pick, fill, pcmark8, pcmark-vantage or pcmark10"),
        )),
    }
}
