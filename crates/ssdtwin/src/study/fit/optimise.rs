//! Optimisation: the parameters found stage by stage, each against the
//! measurements it moves, every candidate judged by replaying the
//! measured jobs on it ([`super::replay`]).
//!
//! 1. Reads (units `ReadLow`, `ReadHigh`): for the base's die count,
//!    half and double (raw capacity kept), side by side, Nelder–Mead
//!    (argmin) over ln tR, ln command overhead and ln channel rate (and
//!    ln map-cache memory on a drive that caches its map), minimising the sum of squared log errors of the QD1 latencies, the
//!    random-read IOPS at every depth and the sequential read rates; the
//!    count with the lowest cost is kept and its fit continued.
//! 2. Fill (unit `Fill`): the pSLC program time from the rate into the
//!    cache (a fill cut at half the measured cache), the largest cache by
//!    fixed-point steps on the knee's position, the native program time
//!    from the rate after the knee (Brent's root finding, argmin).
//! 3. Spare, then the static pool ([`super::reserve`]): the blocks per
//!    plane (raw capacity, so the spare area) on whole blocks from what
//!    the random writes wrote before GC started (the free room); then the
//!    static pool by root finding on what the write after the long idle
//!    wrote before its knee, the spare and the cache's size held (on a
//!    base with a static pool: [`identify::has_static_pool`]).
//! 4. Command overhead (the QD1 writes at the end of unit `ReadLow`,
//!    after its pause), once the cache and the
//!    reserve are fitted (before, a candidate's QD1 writes could meet
//!    folding or GC): root finding on the QD1 writes' mean latency, which
//!    the write buffer makes the overhead plus the transfer; the channel
//!    rate by root finding on the 16 KiB QD1 reads' latency less the 4 KiB
//!    ones' ([`super::transfer`]: the transfer of 12 KiB, which tR does not
//!    move); then the read stage's simplex again over tR (and the map
//!    memory) with the overhead and the channel held (the reads alone
//!    trade the overhead, and on plain page reads the channel, against tR).
//!
//! Each evaluation replays its plans on both cores ([`super::replay::run_all`]);
//! the stages that search one parameter run side by side instead.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use argmin::core::{CostFunction, Error as ArgminError};

use super::battery::{self, Unit};
use super::identify::{self, measured};
use super::measure::{JobRecord, Quantity};
use super::params::{dies, set_dies, shrink, Param};
use super::remote::Dispatch;
use super::replay::Plan;
use super::root::match_one;
use super::search::{best_die_count, flatten, log_error, make_valid, simplex_ln, Ctx};
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
    let dispatch = Dispatch::new(opts.executor.as_ref(), opts.seed);
    let ctx = Ctx { jobs, measured, opts, evals: AtomicUsize::new(0), dispatch };
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
    if let Some(e) = ctx.dispatch.failure() {
        return Err(e);
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
    let mut read_set: Vec<Param> = READ_PARAMS.to_vec();
    if ctx.plan(Unit::ReadLow, None, None).is_some() || ctx.plan(Unit::ReadHigh, None, None).is_some() {
        ctx.say("reads: die count, tR, command overhead, channel rate (Nelder–Mead for each die count)");
        let (note, params) = reads(ctx, spec, opts.read_iterations, notes)?;
        dies_note = Some(note);
        fitted.extend(params.iter().copied());
        read_set = params;
    } else {
        notes
            .push("reads: no read job measured; tR, command overhead, channel rate and dies kept from the base".into());
    }
    if ctx.plan(Unit::Fill, None, None).is_some() {
        ctx.say("fill: pSLC program time, cache size, native program time");
        fitted.extend(fill(ctx, spec, notes)?);
    }
    let room = ctx.plan(Unit::FillIdle, None, None).is_some() && {
        ctx.say("idle folding's room from the write after the pause in the fill");
        super::room::stage(ctx, spec, notes)?
    };
    if room {
        fitted.push(Param::IdleFoldRoom);
    }
    ctx.say("spare area, then the static SLC pool with the spare held");
    fitted.extend(super::reserve::stages(ctx, spec, room, notes)?);
    if let Some(n) = dies_note {
        notes.push(n);
    }
    // The QD1 writes replayed after the first read job, whose pause lets
    // the drive fold its cache empty as it had on the real drive.
    let overhead_jobs = ["randread-qd1", OVERHEAD_JOB];
    if let Some(plan) =
        ctx.plan(Unit::ReadLow, Some(&overhead_jobs), None).filter(|p| p.jobs.iter().any(|j| j.name == OVERHEAD_JOB))
    {
        ctx.say("command overhead from the QD1 writes, channel rate from the 16 KiB QD1 reads, then tR again");
        let (note, fitted_here) = overhead(ctx, spec, plan, opts.read_iterations, &read_set, notes)?;
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

/// The read stage's parameters on `spec`: tR, the command overhead, the
/// channel rate, and the map cache's memory on a drive that caches its
/// map. The reads see that memory as the share of reads that miss the
/// cached map: none over the first 1% (`randread-span-qd1`), most over
/// the whole drive (`randread-qd1` and the deeper queues), each miss a
/// translation-page read on a die before the data's. Kept from the base
/// (before): on drive 0 of the prediction check (its truth a 660p 1 TB
/// scaled, half the base's DRAM share) the fitted twin's `mixed` job read
/// 284% faster than the truth.
///
/// The memory is fitted only where the reads see it: where the cached
/// map reaches a small share of the drive, halving or doubling it changes
/// the whole-drive misses little (drive 5 of the prediction check, an
/// RC100-like drive whose host memory buffer maps 5% of the drive: the
/// simplex moved it to 0.56 MB against the truth's 1.33, and the spare
/// stage, whose random writes that smaller map slowed, ran to its bound).
/// As the refinement stage's rule, it is determined when some read number
/// moves by |d ln m / d ln p| ≥ 0.05 between half and twice the base's
/// memory; else the base's is kept and a note says so.
fn read_params(ctx: &Ctx, spec: &DriveSpec, notes: &mut Vec<String>) -> Vec<Param> {
    let mut ps = READ_PARAMS.to_vec();
    let Some(v) = Param::MapMemory.get(spec) else { return ps };
    let drives: Vec<DriveSpec> = [0.5, 2.0]
        .iter()
        .map(|f| {
            let mut s = spec.clone();
            Param::MapMemory.set(&mut s, v * f);
            s
        })
        .collect();
    let plans: Vec<Plan> = READ_UNITS.iter().filter_map(|&u| ctx.plan(u, Some(&battery::read_jobs(u)), None)).collect();
    let tasks: Vec<(DriveSpec, Plan)> =
        drives.iter().flat_map(|d| plans.iter().map(move |p| (d.clone(), p.clone()))).collect();
    let results = ctx.run(&tasks);
    let (half, double) = results.split_at(plans.len());
    let obs = |r: &[Result<Vec<super::replay::Observation>, FitError>]| -> Option<Vec<super::replay::Observation>> {
        let mut out = Vec::new();
        for x in r {
            out.extend(x.as_ref().ok()?.iter().cloned());
        }
        Some(out)
    };
    let slope = match (obs(half), obs(double)) {
        (Some(a), Some(b)) => {
            ctx.measured
                .iter()
                .filter(|m| READ_UNITS.contains(&m.unit))
                .filter_map(|m| {
                    Some(
                        (log_error(&b, &m.job, m.quantity, m.value)? - log_error(&a, &m.job, m.quantity, m.value)?)
                            .abs(),
                    )
                })
                .fold(0.0, f64::max)
                / 4f64.ln()
        }
        _ => 0.0,
    };
    if slope >= 0.05 {
        ps.push(Param::MapMemory);
    } else {
        notes.push(format!(
            "{}: not determined by the reads (|d ln m / d ln p| at most {slope:.3} between half and twice the \
             base's: the cached map reaches too small a share of the drive for the whole-drive reads to see it); \
             the base's kept",
            Param::MapMemory.field().0
        ));
    }
    ps
}

/// Copy `params` from `small` (the drive the search ran on,
/// [`scaled_for_search`]) into `full`.
fn copy_params(small: &DriveSpec, full: &mut DriveSpec, params: &[Param]) {
    let (from, to) = (small.ftl.user_capacity_bytes as f64, full.ftl.user_capacity_bytes as f64);
    for &p in params {
        if let Some(v) = p.get(small) {
            p.set(full, p.rescaled(v, from, to));
        }
    }
}

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
fn reads(
    ctx: &Ctx,
    full: &mut DriveSpec,
    iters: u64,
    notes: &mut Vec<String>,
) -> Result<(String, Vec<Param>), FitError> {
    let mut small = scaled_for_search(full);
    let spec = &mut small;
    let d0 = dies(spec);
    let first = iters * 3 / 5;
    let params = read_params(ctx, spec, notes);
    let (s, _, costs) = best_die_count(spec, |s| nelder_mead(ctx, s, &params, first, 0.5))?;
    // Continued from the winner with a finer simplex.
    let (s, _) = nelder_mead(ctx, &s, &params, iters - first, 0.1)?;
    if dies(&s) != dies(full) {
        set_dies(full, dies(&s));
        make_valid(full);
    }
    copy_params(&s, full, &params);
    let note = format!(
        "dies: {} from the queue-depth scaling (read cost after fitting each die count: {costs}; the base has {d0})",
        dies(&s)
    );
    Ok((note, params))
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
/// transfer: the latency grows with the overhead one for one), the
/// channel rate from the 16 KiB and 4 KiB QD1 reads ([`super::transfer`]),
/// then, when either moved and reads were measured, the read simplex over
/// the rest of `read_set` with them held, for `iters` × 2/5 iterations
/// (the reads' continued fit's share). Returns the note when the latency
/// was not matched, and whether the overhead was fitted here.
fn overhead(
    ctx: &Ctx,
    full: &mut DriveSpec,
    plan: Plan,
    iters: u64,
    read_set: &[Param],
    notes: &mut Vec<String>,
) -> Result<(Option<String>, bool), FitError> {
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
    if moved {
        Param::CmdOverhead.set(full, after.unwrap_or(0.0));
    }
    // The channel rate from the 16 KiB and 4 KiB QD1 reads' difference,
    // which tR does not move ([`super::transfer`]), then held.
    let channel = read_set.contains(&Param::ChannelMts) && super::transfer::stage(ctx, &mut small, notes)?;
    if channel {
        copy_params(&small, full, &[Param::ChannelMts]);
    }
    if (moved || channel) && READ_UNITS.iter().any(|&u| ctx.plan(u, None, None).is_some()) {
        let held = |p: &Param| *p == Param::CmdOverhead || (channel && *p == Param::ChannelMts);
        let free: Vec<Param> = read_set.iter().copied().filter(|p| !held(p)).collect();
        let (s, _) = nelder_mead(ctx, &small, &free, (iters - iters * 3 / 5).max(1), 0.1)?;
        copy_params(&s, full, &free);
    }
    Ok((note, moved))
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
