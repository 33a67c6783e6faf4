//! Optimisation: the parameters found stage by stage, each against the
//! measurements it moves, every candidate judged by replaying the
//! measured jobs on it ([`super::replay`]).
//!
//! 1. Reads (units `ReadLow`, `ReadHigh`): for the base's die count,
//!    half and double (raw capacity kept), side by side, Nelder–Mead
//!    (argmin) over ln tR, ln command overhead and ln channel rate,
//!    minimising the sum of squared log errors of the QD1 latencies, the
//!    random-read IOPS at every depth and the sequential read rates; the
//!    count with the lowest cost is kept and its fit continued.
//! 2. Fill (unit `Fill`): the pSLC program time from the rate into the
//!    cache (a fill cut at half the measured cache), the largest cache by
//!    fixed-point steps on the knee's position, the native program time
//!    from the rate after the knee (Brent's root finding, argmin).
//! 3. Idle and spare, in parallel: the static cache by fixed-point steps
//!    on what the write after the long idle wrote before its knee (on a
//!    base with a static pool: [`identify::has_static_pool`]); the blocks
//!    per plane (raw capacity, so the spare area) by root finding on the
//!    random writes' late rate, which write amplification sets. The
//!    static pool is reserved blocks, not spare: when the idle stage
//!    changes it, the blocks per plane move by as many blocks per die.
//! 4. Command overhead (the QD1 writes at the end of unit `ReadLow`,
//!    after its pause), once the cache and the
//!    reserve are fitted (before, a candidate's QD1 writes could meet
//!    folding or GC): root finding on the QD1 writes' mean latency, which
//!    the write buffer makes the overhead plus the transfer; then the read
//!    stage's simplex again over tR and the channel rate with the overhead
//!    held (the reads alone trade the overhead against tR).
//!
//! Each evaluation replays its plans on both cores ([`super::replay::run_all`]);
//! the stages that search one parameter run side by side instead.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
use argmin::solver::brent::BrentRoot;

use super::battery::{self, Unit};
use super::identify::{self, measured};
use super::measure::{JobRecord, Quantity};
use super::params::{dies, set_dies, shrink, Param};
use super::replay::Plan;
use super::search::{best_die_count, flatten, log_error, make_valid, simplex_ln, Ctx, MISSING};
use super::{report, Fit, FitError, FitOptions, Measurement};
use crate::spec::DriveSpec;

/// Fit a twin to the measured `jobs`, starting from `base`: the
/// battery's stages on its jobs (when given), then the refinement on the
/// other jobs (when given; [`super::refine::given_stage`]).
pub fn fit(base: &DriveSpec, jobs: &[JobRecord], opts: &FitOptions) -> Result<Fit, FitError> {
    let start = Instant::now();
    base.build(&base.name).map_err(|e| FitError::Base(e.to_string()))?;
    let jobs = &super::uniquely_named(jobs)[..];
    let (all, mut notes) = super::measurements(jobs, base.ftl.user_capacity_bytes)?;
    let (given, measured): (Vec<Measurement>, Vec<Measurement>) = all.into_iter().partition(|m| m.unit == Unit::Given);
    let ctx = Ctx { jobs, measured, opts, evals: AtomicUsize::new(0) };
    let mut spec = base.clone();
    let (mut rows, mut params) = (Vec::new(), Vec::new());
    if !ctx.measured.is_empty() {
        (rows, params) = battery_stages(&ctx, base, &mut spec, &mut notes)?;
    }
    if !given.is_empty() {
        ctx.say("refinement on the jobs outside the battery");
        let battery = !ctx.measured.is_empty();
        let (given_rows, refined) = super::refine::given_stage(&ctx, &given, base, &spec, &params, &mut notes)?;
        if battery && refined.spec != spec {
            ctx.say("final replay of the battery on the refined drive");
            spec = refined.spec;
            let fitted: Vec<Param> = params.iter().filter(|p| p.sigma.is_some()).map(|p| p.param).collect();
            let (r, p) = report::assess(&ctx, base, &spec, &fitted)?;
            rows = r;
            params = super::refine::combine(p, &refined.params);
        } else {
            spec = refined.spec;
            params = if battery { super::refine::combine(params, &refined.params) } else { refined.params };
        }
        rows.extend(given_rows);
    }
    Ok(Fit {
        spec,
        rows,
        params,
        notes,
        evaluations: ctx.evals.load(Ordering::Relaxed),
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The battery's stages: identification, reads, fill, idle and spare, the
/// final replay; the residuals and parameters.
fn battery_stages(
    ctx: &Ctx,
    base: &DriveSpec,
    spec: &mut DriveSpec,
    notes: &mut Vec<String>,
) -> Result<(Vec<report::Residual>, Vec<report::ParamFit>), FitError> {
    let jobs = ctx.jobs;
    let opts = ctx.opts;
    identify::capacity(spec, jobs, notes);
    identify::cache(spec, &ctx.measured, notes);
    identify::keep_valid(spec, notes);
    spec.build(&spec.name).map_err(|e| FitError::Candidate(format!("after identification: {e}")))?;
    let mut fitted: Vec<Param> = Vec::new();
    let mut dies_note = None;
    if ctx.plan(Unit::ReadLow, None, None).is_some() || ctx.plan(Unit::ReadHigh, None, None).is_some() {
        ctx.say("reads: die count, tR, command overhead, channel rate (Nelder–Mead for each die count)");
        dies_note = Some(reads(ctx, spec, opts.read_iterations)?);
        fitted.extend([Param::NativeTr, Param::CmdOverhead, Param::ChannelMts]);
    } else {
        notes
            .push("reads: no read job measured; tR, command overhead, channel rate and dies kept from the base".into());
    }
    if ctx.plan(Unit::Fill, None, None).is_some() {
        ctx.say("fill: pSLC program time, cache size, native program time");
        fitted.extend(fill(ctx, spec, notes)?);
    }
    ctx.say("idle folding and spare area (in parallel)");
    let mut idle_notes = Vec::new();
    let (idle_spec, spare_spec) = std::thread::scope(|s| {
        let a = s.spawn(|| idle(ctx, spec.clone(), &mut idle_notes));
        let b = s.spawn(|| spare(ctx, spec.clone()));
        (a.join().expect("idle stage ran"), b.join().expect("spare stage ran"))
    });
    notes.extend(idle_notes);
    if let Some(s) = idle_spec? {
        Param::CacheStatic.set(spec, Param::CacheStatic.get(&s).unwrap_or(0.0));
        Param::CacheMax.set(spec, Param::CacheMax.get(&s).unwrap_or(0.0));
        fitted.push(Param::CacheStatic);
    }
    // The random writes measure the spare beyond the user data and the
    // reserve, and the static pool is part of the reserve (GC never gets
    // its blocks): the spare stage ran with the fill's static pool, so a
    // pool the idle stage changed moves the blocks per plane by as many
    // blocks per die, the spare kept.
    let keep_spare = |s: &DriveSpec, now: &DriveSpec| {
        s.geometry.blocks_per_plane + static_blocks_per_die(now) - static_blocks_per_die(s)
    };
    match spare_spec? {
        Some((s, None)) => {
            spec.geometry.blocks_per_plane = keep_spare(&s, spec);
            fitted.push(Param::BlocksPerPlane);
        }
        Some((s, Some(note))) => {
            spec.geometry.blocks_per_plane = keep_spare(&s, spec);
            notes.push(note);
        }
        None => notes.push("spare area: no random-write log measured; the base's blocks per plane kept".into()),
    }
    if let Some(n) = dies_note {
        notes.push(n);
    }
    // The QD1 writes replayed after the first read job, whose pause lets
    // the drive fold its cache empty as it had on the real drive.
    let overhead_jobs = ["randread-qd1", OVERHEAD_JOB];
    if let Some(plan) =
        ctx.plan(Unit::ReadLow, Some(&overhead_jobs), None).filter(|p| p.jobs.iter().any(|j| j.name == OVERHEAD_JOB))
    {
        ctx.say("command overhead from the QD1 writes, then tR and channel rate again");
        let (note, fitted_here) = overhead(ctx, spec, plan, opts.read_iterations)?;
        notes.extend(note);
        if fitted_here && !fitted.contains(&Param::CmdOverhead) {
            fitted.push(Param::CmdOverhead);
        }
    }
    ctx.say("final replay and sensitivities");
    report::assess(ctx, base, spec, &fitted)
}

const READ_UNITS: [Unit; 2] = [Unit::ReadLow, Unit::ReadHigh];
/// The battery's QD1 writes into the write buffer (at the end of
/// [`Unit::ReadLow`]).
const OVERHEAD_JOB: &str = "randwrite-qd1";
const READ_PARAMS: [Param; 3] = [Param::NativeTr, Param::CmdOverhead, Param::ChannelMts];

/// The read stage's cost at `spec`: its units' read jobs replayed, their
/// measurements compared (the QD1 writes, the overhead stage's, neither:
/// a candidate's cache and reserve are fitted only later, and its writes
/// could meet folding or GC and decide the die count for the wrong reason).
fn read_cost(ctx: &Ctx, spec: &DriveSpec) -> f64 {
    let tasks: Vec<(DriveSpec, Plan)> = READ_UNITS
        .iter()
        .filter_map(|&u| ctx.plan(u, Some(&battery::read_jobs(u)), None))
        .map(|p| (spec.clone(), p))
        .collect();
    match flatten(ctx.run(&tasks)) {
        Ok(obs) => {
            ctx.cost(&obs, |m| READ_UNITS.contains(&m.unit) && battery::read_jobs(m.unit).contains(&m.job.as_str()))
        }
        Err(_) => 1e3,
    }
}

/// The read stage as argmin sees it: x is ln(value / start) per parameter.
struct ReadProblem<'c, 'a> {
    ctx: &'c Ctx<'a>,
    spec: DriveSpec,
    start: Vec<(Param, f64)>,
}

impl ReadProblem<'_, '_> {
    fn at(&self, x: &[f64]) -> Option<DriveSpec> {
        super::params::at_log_offsets(&self.spec, &self.start, x)
    }
}

impl CostFunction for ReadProblem<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;

    /// The read cost plus a weak pull towards the start (1e-4 per squared
    /// ln unit: moving a parameter by a factor e costs what one number 1%
    /// off costs), so that a parameter the reads do not see stays where
    /// the base put it.
    fn cost(&self, x: &Vec<f64>) -> Result<f64, ArgminError> {
        Ok(match self.at(x) {
            Some(s) => read_cost(self.ctx, &s) + 1e-4 * x.iter().map(|v| v * v).sum::<f64>(),
            None => 1e3,
        })
    }
}

/// Nelder–Mead over the read-path parameters `params` from `spec`, at most `iters`
/// iterations, the first simplex `step` wide in each ln: the best drive
/// and its cost.
fn nelder_mead(
    ctx: &Ctx,
    spec: &DriveSpec,
    params: &[Param],
    iters: u64,
    step: f64,
) -> Result<(DriveSpec, f64), FitError> {
    let start: Vec<(Param, f64)> = params.iter().map(|&p| (p, p.get(spec).unwrap_or(1.0))).collect();
    let n = start.len();
    let problem = ReadProblem { ctx, spec: spec.clone(), start };
    let (problem, best, cost) = simplex_ln(problem, n, step, iters)?;
    Ok((problem.at(&best).unwrap_or_else(|| spec.clone()), cost))
}

/// The read stage: the die count and the read-path parameters. Each
/// candidate count — the base's, half and double, raw capacity kept —
/// starts from the base's command overhead and the tR scaled by the
/// count's ratio (so that the dies' saturated read rate, dies / tR, stays
/// the base's) and gets its own Nelder–Mead over the three parameters
/// (the candidates side by side); the count whose fit has the lowest cost
/// wins, and its fit goes on for the rest of `iters`. The queue-depth
/// scaling decides: fewer dies saturate at a lower depth. Returns a note
/// with each count's cost.
fn reads(ctx: &Ctx, full: &mut DriveSpec, iters: u64) -> Result<String, FitError> {
    let mut small = scaled_for_search(full);
    let spec = &mut small;
    let d0 = dies(spec);
    let first = iters * 3 / 5;
    let (s, _, costs) = best_die_count(spec, |s| nelder_mead(ctx, s, &READ_PARAMS, first, 0.5))?;
    // Continued from the winner with a finer simplex.
    let (s, _) = nelder_mead(ctx, &s, &READ_PARAMS, iters - first, 0.1)?;
    if dies(&s) != dies(full) {
        set_dies(full, dies(&s));
        make_valid(full);
    }
    for p in READ_PARAMS {
        if let Some(v) = p.get(&s) {
            p.set(full, v);
        }
    }
    Ok(format!(
        "dies: {} from the queue-depth scaling (read cost after fitting each die count: {costs}; the base has {d0})",
        dies(&s)
    ))
}

/// `full` as the read and overhead stages replay it: scaled to a
/// sixteenth of its capacity (at least 16 GB). `shrink` keeps what a read
/// or a buffered write sees (dies, timings, the share of the map the cache
/// holds, the cache's share, the spans as shares of the drive), and a full
/// drive of a sixteenth is prepared sixteen times faster. The final replay
/// is at full size.
fn scaled_for_search(full: &DriveSpec) -> DriveSpec {
    let cap = full.ftl.user_capacity_bytes as f64;
    let mut small = full.clone();
    if cap > 32e9 {
        shrink(&mut small, (cap / 16.0).max(16e9));
    }
    small
}

/// The command-overhead stage: the overhead by root finding on the QD1
/// writes' mean latency (a buffered write costs the overhead and the
/// transfer: the latency grows with the overhead one for one), then, when
/// it moved and reads were measured, the read simplex over tR and the
/// channel rate with it held, for `iters` × 2/5 iterations (the reads'
/// continued fit's share). Returns the note when the latency was not
/// matched, and whether the overhead was fitted here.
fn overhead(ctx: &Ctx, full: &mut DriveSpec, plan: Plan, iters: u64) -> Result<(Option<String>, bool), FitError> {
    let Some(target) = measured(&ctx.measured, OVERHEAD_JOB, Quantity::WriteLatUs) else {
        return Ok((None, false));
    };
    let mut small = scaled_for_search(full);
    let before = Param::CmdOverhead.get(&small);
    // The first step: the latency grows with the overhead one for one
    // (the transfer and the rest stay), so the overhead that matches is
    // the measured latency less the rest at the current overhead; the
    // root is searched within a factor e^0.7 of that.
    let o0 = match before {
        Some(v) if v >= 1.0 => v,
        _ => {
            Param::CmdOverhead.set(&mut small, 1000.0);
            1000.0
        }
    };
    let now = flatten(ctx.run(&[(small.clone(), plan.clone())]))?;
    let lat0 = now.iter().find(|o| o.job == OVERHEAD_JOB && o.quantity == Quantity::WriteLatUs).map(|o| o.value);
    // Between 10 ns and the whole measured latency.
    let guess = lat0.map_or(o0, |l| (o0 + (target - l) * 1e3).clamp(10.0, target * 1e3));
    let centre = (guess / o0).ln();
    let bracket = Some((centre - 0.7, centre + 0.7));
    let note = match_one(
        ctx,
        &mut small,
        Param::CmdOverhead,
        plan,
        OVERHEAD_JOB,
        Quantity::WriteLatUs,
        target,
        1.0,
        0.0,
        bracket,
    )?;
    let after = Param::CmdOverhead.get(&small);
    let moved = after != before;
    if !moved {
        return Ok((note, false));
    }
    Param::CmdOverhead.set(full, after.unwrap_or(0.0));
    if READ_UNITS.iter().any(|&u| ctx.plan(u, None, None).is_some()) {
        let held = [Param::NativeTr, Param::ChannelMts];
        let (s, _) = nelder_mead(ctx, &small, &held, (iters - iters * 3 / 5).max(1), 0.1)?;
        for p in held {
            if let Some(v) = p.get(&s) {
                p.set(full, v);
            }
        }
    }
    Ok((note, true))
}

/// A monotone function of one parameter whose root argmin's Brent finds:
/// ln(twin / measured) of one measurement as the parameter's ln varies;
/// evaluations are remembered (Brent asks again for the bracket's ends).
struct Root<'c, 'a> {
    ctx: &'c Ctx<'a>,
    spec: DriveSpec,
    param: Param,
    plan: Plan<'a>,
    job: &'static str,
    quantity: Quantity,
    target: f64,
    /// Value when the candidate cannot be built (beyond the low end).
    invalid: f64,
    memo: Mutex<HashMap<u64, f64>>,
}

impl Root<'_, '_> {
    fn eval_many(&self, xs: &[f64]) -> Vec<f64> {
        let todo: Vec<f64> =
            xs.iter().copied().filter(|x| !self.memo.lock().expect("memo").contains_key(&x.to_bits())).collect();
        let tasks: Vec<(DriveSpec, Plan)> = todo
            .iter()
            .map(|&x| {
                let mut s = self.spec.clone();
                self.param.set(&mut s, x.exp());
                (s, self.plan.clone())
            })
            .collect();
        for (x, r) in todo.iter().zip(self.ctx.run(&tasks)) {
            let v = match r {
                Ok(obs) => log_error(&obs, self.job, self.quantity, self.target).unwrap_or(-MISSING),
                Err(_) => self.invalid,
            };
            self.memo.lock().expect("memo").insert(x.to_bits(), v);
        }
        xs.iter().map(|x| self.memo.lock().expect("memo")[&x.to_bits()]).collect()
    }

    /// The root within ln bounds `[lo, hi]`, both ends evaluated in
    /// parallel first. When they have the same sign: `Reach::Bound` with
    /// the end nearer zero if the measurement moves across the bracket,
    /// else `Reach::Flat` (something else limits it).
    fn solve(self, lo: f64, hi: f64) -> Result<(f64, Reach), FitError> {
        let ends = self.eval_many(&[lo, hi]);
        if ends[0].signum() == ends[1].signum() {
            if (ends[0] - ends[1]).abs() < 0.05 {
                return Ok(((lo + hi) / 2.0, Reach::Flat));
            }
            return Ok((if ends[0].abs() < ends[1].abs() { lo } else { hi }, Reach::Bound));
        }
        let solver = BrentRoot::new(lo, hi, 0.01);
        let res = Executor::new(self, solver)
            .configure(|s| s.max_iters(12))
            .run()
            .map_err(|e| FitError::Replay(e.to_string()))?;
        Ok((res.state().get_best_param().copied().unwrap_or((lo + hi) / 2.0), Reach::Root))
    }
}

impl CostFunction for Root<'_, '_> {
    type Param = f64;
    type Output = f64;

    fn cost(&self, x: &f64) -> Result<f64, ArgminError> {
        Ok(self.eval_many(&[*x])[0])
    }
}

/// How a root search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// The measurement was matched.
    Root,
    /// Not within the range searched: the nearer end was taken.
    Bound,
    /// The measurement does not move with the parameter (something else
    /// limits it): the parameter is kept.
    Flat,
}

/// Find `param` so that the twin's (`job`, `quantity`) is `target`,
/// searching ln value ± `span` around a first step that
/// assumes the measurement moves as `1 / value` (`slope` −1) or as
/// `value` (`slope` 1), or within `bracket` (ln steps from the value). A note says when it was not reached.
#[allow(clippy::too_many_arguments)]
fn match_one(
    ctx: &Ctx,
    spec: &mut DriveSpec,
    param: Param,
    plan: Plan,
    job: &'static str,
    quantity: Quantity,
    target: f64,
    slope: f64,
    span: f64,
    bracket: Option<(f64, f64)>,
) -> Result<Option<String>, FitError> {
    let Some(v0) = param.get(spec) else { return Ok(None) };
    let root = Root {
        ctx,
        spec: spec.clone(),
        param,
        plan,
        job,
        quantity,
        target,
        invalid: -MISSING * slope.signum(),
        memo: Mutex::new(HashMap::new()),
    };
    let x0 = v0.ln();
    let (lo, hi) = match bracket {
        Some((lo, hi)) => (x0 + lo, x0 + hi),
        None => {
            let first = root.eval_many(&[x0])[0];
            let centre = x0 - first / slope;
            let (lo_b, hi_b) = param.bounds(v0);
            ((centre - span).max(lo_b.ln()), (centre + span).min(hi_b.ln()))
        }
    };
    let (field, _) = param.field();
    let (label, unit) = quantity.label();
    let valid_at = |x: f64| {
        let mut s = spec.clone();
        param.set(&mut s, x.exp());
        s.build(&s.name).is_ok().then_some(s)
    };
    Ok(match root.solve(lo, hi)? {
        (x, Reach::Root) if valid_at(x).is_some() => {
            *spec = valid_at(x).expect("valid");
            None
        }
        (x, Reach::Bound) if valid_at(x).is_some() => {
            *spec = valid_at(x).expect("valid");
            Some(format!(
                "{field}: {job} {label} ({target:.4} {unit}) not reached within the range searched; \
                 the nearer end taken"
            ))
        }
        (_, Reach::Root | Reach::Bound) => {
            Some(format!("{field}: the value matching {job} {label} is not a valid drive: the base's value kept"))
        }
        (_, Reach::Flat) => Some(format!(
            "{field}: {job} {label} does not move with it (another part limits it): not determined, \
             the base's value kept"
        )),
    })
}

/// The fill stage; the parameters it set.
fn fill(ctx: &Ctx, spec: &mut DriveSpec, notes: &mut Vec<String>) -> Result<Vec<Param>, FitError> {
    let mut set = Vec::new();
    let knee_gb = measured(&ctx.measured, "fill", Quantity::PostCacheMbps)
        .and_then(|_| measured(&ctx.measured, "fill", Quantity::CacheGb));
    let cache_rate = measured(&ctx.measured, "fill", Quantity::CacheMbps);
    // pSLC program time: a fill cut at half the cache runs all in SLC.
    if let (Some(k), Some(rate), true) = (knee_gb, cache_rate, spec.nand.slc.is_some() && spec.slc_cache.is_some()) {
        let cap = ((k * 1e9 * 0.5) as u64 / (128 << 10) * (128 << 10)).max(64 << 20);
        let plan = ctx.plan(Unit::Fill, None, Some(cap)).expect("fill measured");
        // The cut fill's mean rate is its rate into the cache.
        match match_one(ctx, spec, Param::SlcTprog, plan, "fill", Quantity::WriteMbps, rate, -1.0, 0.7, None)? {
            None => set.push(Param::SlcTprog),
            Some(n) => notes.push(n),
        }
    }
    let plan = || ctx.plan(Unit::Fill, Some(&["fill"][..]), None).expect("fill measured");
    let correct_cache = |spec: &mut DriveSpec| -> Result<(), FitError> {
        let (Some(k), Some(v)) = (knee_gb, Param::CacheMax.get(spec)) else { return Ok(()) };
        for _ in 0..4 {
            let obs = flatten(ctx.run(&[(spec.clone(), plan())]))?;
            let Some(e) = log_error(&obs, "fill", Quantity::CacheGb, k) else { break };
            if e.abs() < 0.02 {
                break;
            }
            let now = Param::CacheMax.get(spec).unwrap_or(v);
            let mut next = spec.clone();
            Param::CacheMax.set(&mut next, now * (-e.clamp(-1.4, 1.4)).exp());
            if next.build(&next.name).is_err() {
                break;
            }
            *spec = next;
        }
        Ok(())
    };
    if spec.slc_cache.is_some() && knee_gb.is_some() {
        correct_cache(spec)?;
        set.push(Param::CacheMax);
    }
    // Native program time from the rate after the knee (or the whole
    // fill's rate when there is none).
    let quantity = if knee_gb.is_some() { Quantity::PostCacheMbps } else { Quantity::WriteMbps };
    let Some(target) = measured(&ctx.measured, "fill", quantity) else { return Ok(set) };
    match match_one(ctx, spec, Param::NativeTprog, plan(), "fill", quantity, target, -1.0, 0.5, None)? {
        None => set.push(Param::NativeTprog),
        Some(n) => notes.push(n),
    }
    if spec.slc_cache.is_some() && knee_gb.is_some() {
        correct_cache(spec)?;
    }
    Ok(set)
}

/// The idle stage: the static cache from the write after the long idle;
/// `None` when not measured, the drive has no cache, or its cache has no
/// static pool (a note then says the knee is left to the spare).
fn idle(ctx: &Ctx, mut spec: DriveSpec, notes: &mut Vec<String>) -> Result<Option<DriveSpec>, FitError> {
    let (Some(target), Some(plan)) =
        (measured(&ctx.measured, "idle-long-write", Quantity::CacheGb), ctx.plan(Unit::Idle, None, None))
    else {
        return Ok(None);
    };
    if spec.slc_cache.is_none() {
        return Ok(None);
    }
    if !identify::has_static_pool(&spec) {
        notes.push(format!(
            "static cache: the base's cache is dynamic only (no static pool), so the {target:.2} GB the write \
             after the long idle wrote before its knee is the dynamic cache a full drive keeps on its free \
             blocks, set by the spare area: a check of the spare stage, not fitted (a base with a static pool \
             would read it as one)"
        ));
        return Ok(None);
    }
    for _ in 0..4 {
        let obs = flatten(ctx.run(&[(spec.clone(), plan.clone())]))?;
        let Some(e) = log_error(&obs, "idle-long-write", Quantity::CacheGb, target) else { break };
        if e.abs() < 0.03 {
            break;
        }
        let now = Param::CacheStatic.get(&spec).unwrap_or(0.0).max(1e6);
        let max = Param::CacheMax.get(&spec).unwrap_or(now);
        let mut next = spec.clone();
        Param::CacheStatic.set(&mut next, (now * (-e.clamp(-1.4, 1.4)).exp()).min(max));
        if next.build(&next.name).is_err() {
            break;
        }
        spec = next;
    }
    Ok(Some(spec))
}

/// Blocks per die of `spec`'s static pSLC pool, as the validation counts
/// them (whole pSLC blocks, the same number on every die).
fn static_blocks_per_die(spec: &DriveSpec) -> u32 {
    let Some(c) = &spec.slc_cache else { return 0 };
    let g = &spec.geometry;
    let slc_block_bytes = (g.pages_per_block * g.gang * g.planes_per_die * g.page_bytes / g.bits_per_cell) as f64;
    let blocks = (c.static_bytes as f64 / slc_block_bytes).ceil() as u64;
    blocks.div_ceil((dies(spec) / g.gang).max(1) as u64) as u32
}

/// The spare stage: blocks per plane from the random writes' late rate
/// (and a note when not reached); `None` when not measured.
fn spare(ctx: &Ctx, mut spec: DriveSpec) -> Result<Option<(DriveSpec, Option<String>)>, FitError> {
    let Some(plan) = ctx.plan(Unit::RandomWrite, Some(&["randwrite"][..]), None) else { return Ok(None) };
    let Some(target) = measured(&ctx.measured, "randwrite", Quantity::LateWriteIops) else { return Ok(None) };
    // More spare, less write amplification, a higher rate. The spare is
    // a few percent of the blocks, so the search is narrow: from 8% fewer
    // blocks (below the valid drives, if the others reserve that much:
    // an invalid drive counts as far too slow) to 30% more.
    let note = match_one(
        ctx,
        &mut spec,
        Param::BlocksPerPlane,
        plan,
        "randwrite",
        Quantity::LateWriteIops,
        target,
        8.0,
        0.0,
        Some((-0.08, 0.26)),
    )?;
    Ok(Some((spec, note)))
}
