//! Refinement: any measured number the twin can reproduce adjusts the
//! parameters it determines, by least squares.
//!
//! A [`Target`] is a list of measured numbers and a way to compute each
//! one on a candidate drive: the results of fio jobs outside the battery,
//! replayed as fio recorded them from the state they were measured in
//! ([`JobsTarget`]), or a preset's published figures measured as
//! `ssdtwin validate` measures them ([`super::figures`]). The stage
//!
//! 1. measures each free parameter's sensitivities (the sensitivity
//!    matrix of [`super::report`], d ln number / d ln parameter by a 5%
//!    step);
//! 2. keeps as determined the parameters that move some number by at
//!    least [`MIN_SENSITIVITY`] and whose column is not (nearly) a
//!    combination of the columns kept before it (Gram–Schmidt, columns
//!    taken strongest first): the others are reported as undetermined and
//!    keep the base's values;
//! 3. minimises the sum of squared log errors over the determined ones
//!    (Nelder–Mead, argmin, in ln units) plus, for each parameter an
//!    earlier stage fitted, its squared distance from that fit in units of
//!    its uncertainty (the earlier fit as prior knowledge); when the read
//!    path is determined and no battery fixed the dies, for the base's die
//!    count, half and double (raw capacity kept) side by side, the lowest
//!    cost kept.
//!
//! Results no drive can reproduce are excluded before the fit, with a
//! warning ([`host_limited`]): two jobs with the same commands
//! outstanding that differ only in how many fio threads issue them (a
//! drive sees its queue, not the threads, so the difference is the
//! host's: one thread's submission rate); and after it, a sweep whose
//! measured rate stays flat over a doubling of the queue depth where the
//! fitted twin's still rises and overshoots (then the fit is run again
//! without those jobs).
//!
//! Left out: weights per number (every number counts alike in log
//! units), the measurements' own noise (fio's JSON gives no spread of a
//! job's mean), parameters outside [`Param`] (the drive's structure is
//! the base's beyond the die count).

use std::sync::atomic::{AtomicUsize, Ordering};

use argmin::core::{CostFunction, Error as ArgminError};

use super::battery::Unit;
use super::measure::JobRecord;
use super::params::{dies, Param};
use super::remote::Dispatch;
use super::replay::Plan;
use super::report::{measurement_sigma, param_table, sensitivities, stepped, ParamFit, Residual};
use super::search::{best_die_count, Ctx};
use super::{FitError, Measurement};
use crate::run::state::DriveState;
use crate::spec::DriveSpec;

/// Smallest |d ln number / d ln parameter| for which a number counts as
/// determining a parameter: a 10% change moves it by 0.5%, about what
/// run-to-run noise of a real drive hides.
pub const MIN_SENSITIVITY: f64 = 0.05;

/// Log error given to a number a candidate gave no value for.
const MISSING: f64 = 3.0;

/// Every number of a target on one candidate (`None`: it gave none).
pub type Values = Vec<Option<f64>>;

/// Measured numbers and how a candidate drive gives them.
pub trait Target: Sync {
    /// How many numbers.
    fn count(&self) -> usize;
    /// The number's name (job and quantity, or figure).
    fn label(&self, i: usize) -> String;
    /// The measured value (the middle of a published range).
    fn measured(&self, i: usize) -> f64;
    /// ln(twin / measured) of number `i` (0 inside a published range).
    fn log_error(&self, i: usize, twin: f64) -> f64;
    /// Every number on each candidate (`None`: the candidate gave none),
    /// the candidates computed in parallel.
    fn predict(&self, specs: &[DriveSpec]) -> Vec<Result<Values, FitError>>;
}

/// The given jobs' numbers, replayed on candidates: one plan per result
/// file, its jobs in order from the state given.
pub struct JobsTarget<'a> {
    /// The plans.
    pub plans: Vec<Plan<'a>>,
    /// The numbers.
    pub measured: Vec<Measurement>,
    /// Where the replays run (and their starting states' seed).
    pub dispatch: &'a Dispatch<'a>,
    /// Replays run.
    pub evals: &'a AtomicUsize,
}

impl<'a> JobsTarget<'a> {
    /// The target of `measured`'s given jobs among `jobs`, replayed from
    /// `state`; read-only plans are capped at `runtime_cap_ns` (their rate
    /// is stationary), plans that write keep their runtime.
    pub fn new(
        jobs: &'a [JobRecord],
        measured: &[Measurement],
        state: DriveState,
        runtime_cap_ns: u64,
        dispatch: &'a Dispatch<'a>,
        evals: &'a AtomicUsize,
    ) -> JobsTarget<'a> {
        let measured: Vec<Measurement> = measured.iter().filter(|m| m.unit == Unit::Given).cloned().collect();
        let mut plans: Vec<Plan<'a>> = Vec::new();
        for j in jobs.iter().filter(|j| measured.iter().any(|m| m.job == j.name)) {
            match plans.last_mut() {
                Some(p) if p.jobs[0].file() == j.file() => p.jobs.push(j),
                _ => plans.push(Plan {
                    unit: Unit::Given,
                    state,
                    prepare: Vec::new(),
                    jobs: vec![j],
                    runtime_cap_ns: None,
                    size_cap: None,
                }),
            }
        }
        for p in &mut plans {
            let reads_only = p.jobs.iter().all(|j| matches!(j.rw(), "read" | "randread"));
            p.runtime_cap_ns = reads_only.then_some(runtime_cap_ns);
        }
        JobsTarget { plans, measured, dispatch, evals }
    }
}

impl Target for JobsTarget<'_> {
    fn count(&self) -> usize {
        self.measured.len()
    }

    fn label(&self, i: usize) -> String {
        let m = &self.measured[i];
        format!("{} {}", m.job, m.quantity.label().0)
    }

    fn measured(&self, i: usize) -> f64 {
        self.measured[i].value
    }

    fn log_error(&self, i: usize, twin: f64) -> f64 {
        (twin / self.measured[i].value).ln()
    }

    fn predict(&self, specs: &[DriveSpec]) -> Vec<Result<Values, FitError>> {
        let tasks: Vec<(DriveSpec, Plan)> =
            specs.iter().flat_map(|s| self.plans.iter().map(move |p| (s.clone(), p.clone()))).collect();
        self.evals.fetch_add(tasks.len(), Ordering::Relaxed);
        let mut results = self.dispatch.run(&tasks).into_iter();
        specs
            .iter()
            .map(|_| {
                let mut obs = Vec::new();
                for r in results.by_ref().take(self.plans.len()) {
                    obs.extend(r?);
                }
                Ok(self
                    .measured
                    .iter()
                    .map(|m| obs.iter().find(|o| o.job == m.job && o.quantity == m.quantity).map(|o| o.value))
                    .collect())
            })
            .collect()
    }
}

/// How to refine.
#[derive(Debug, Clone)]
pub struct RefineOptions {
    /// The parameters free to move (those the drive has).
    pub params: Vec<Param>,
    /// Whether to try half and double the die count.
    pub dies: bool,
    /// Most Nelder–Mead iterations.
    pub iterations: u64,
    /// Earlier fits: parameter, value, relative uncertainty (1σ).
    pub prior: Vec<(Param, f64, f64)>,
}

/// A finished refinement.
#[derive(Debug, Clone)]
pub struct Refined {
    /// The refined drive.
    pub spec: DriveSpec,
    /// The parameters the numbers determine (adjusted).
    pub determined: Vec<Param>,
    /// The free parameters they do not (kept).
    pub undetermined: Vec<Param>,
    /// Every number on the refined drive.
    pub values: Vec<Option<f64>>,
    /// The sensitivity matrix at the refined drive (rows numbers,
    /// columns `determined`).
    pub jac: Vec<Vec<f64>>,
    /// The cost (sum of squared log errors) at the refined drive.
    pub cost: f64,
    /// What the stage found (the die count's costs).
    pub notes: Vec<String>,
}

/// Sum of squared log errors of `values` against the target.
pub fn cost_of(target: &dyn Target, values: &[Option<f64>]) -> f64 {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| v.filter(|&t| t > 0.0).map_or(MISSING, |t| target.log_error(i, t)).powi(2))
        .sum()
}

/// The sensitivity matrix of `params` at `spec` (columns in `params`'
/// order; a parameter that cannot be stepped has a zero column), and the
/// values at `spec`.
pub fn sensitivity_at(
    target: &dyn Target,
    spec: &DriveSpec,
    params: &[Param],
) -> Result<(Values, Vec<Vec<f64>>), FitError> {
    let steps: Vec<Option<(DriveSpec, f64)>> = params.iter().map(|&p| stepped(spec, p)).collect();
    let mut specs = vec![spec.clone()];
    specs.extend(steps.iter().flatten().map(|(s, _)| s.clone()));
    let mut results = target.predict(&specs).into_iter();
    let at = results.next().expect("the drive itself")?;
    let mut moved = Vec::new();
    let mut hs = Vec::new();
    for s in &steps {
        match s {
            Some((_, h)) => {
                moved.push(results.next().expect("one per step")?);
                hs.push(*h);
            }
            None => {
                moved.push(vec![None; at.len()]);
                hs.push(1.0);
            }
        }
    }
    Ok((at.clone(), sensitivities(&at, &moved, &hs)))
}

/// The columns of `jac` the numbers determine: some entry at least
/// [`MIN_SENSITIVITY`], and (strongest first) a part at least a fifth of
/// the column's length outside the span of the columns kept before it.
pub fn determined_columns(jac: &[Vec<f64>]) -> Vec<usize> {
    let n = jac.first().map_or(0, Vec::len);
    let col = |j: usize| -> Vec<f64> { jac.iter().map(|r| r[j]).collect() };
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut order: Vec<usize> = (0..n).filter(|&j| jac.iter().any(|r| r[j].abs() >= MIN_SENSITIVITY)).collect();
    order.sort_by(|&a, &b| norm(&col(b)).total_cmp(&norm(&col(a))));
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut kept = Vec::new();
    for j in order {
        let c = col(j);
        let mut r = c.clone();
        for b in &basis {
            let d: f64 = r.iter().zip(b).map(|(x, y)| x * y).sum();
            for (x, y) in r.iter_mut().zip(b) {
                *x -= d * y;
            }
        }
        let rn = norm(&r);
        if rn >= 0.2 * norm(&c) {
            basis.push(r.iter().map(|x| x / rn).collect());
            kept.push(j);
        }
    }
    kept.sort_unstable();
    kept
}

/// The problem as argmin sees it: x is ln(value / start) per parameter.
struct Problem<'t> {
    target: &'t dyn Target,
    spec: DriveSpec,
    start: Vec<(Param, f64)>,
    prior: Vec<(Param, f64, f64)>,
}

impl Problem<'_> {
    fn at(&self, x: &[f64]) -> Option<DriveSpec> {
        let s = super::params::at_log_offsets(&self.spec, &self.start, x)?;
        s.build(&s.name).is_ok().then_some(s)
    }
}

impl CostFunction for Problem<'_> {
    type Param = Vec<f64>;
    type Output = f64;

    /// The squared log errors, the priors' terms, and a weak pull to the
    /// start (1e-4 per squared ln unit, as the battery's read stage).
    fn cost(&self, x: &Vec<f64>) -> Result<f64, ArgminError> {
        let Some(s) = self.at(x) else { return Ok(1e3) };
        let values = match self.target.predict(std::slice::from_ref(&s)).pop() {
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                if std::env::var_os("SSDTWIN_FIT_DEBUG").is_some() {
                    eprintln!("refine: candidate rejected: {e}");
                }
                return Ok(1e3);
            }
            None => return Ok(1e3),
        };
        let prior: f64 = self
            .start
            .iter()
            .zip(x)
            .filter_map(|(&(p, v0), xi)| {
                let &(_, v, sigma) = self.prior.iter().find(|(q, _, _)| *q == p)?;
                Some(((v0.ln() + xi - v.ln()) / sigma.max(1e-3)).powi(2))
            })
            .sum();
        Ok(cost_of(self.target, &values) + prior + 1e-4 * x.iter().map(|v| v * v).sum::<f64>())
    }
}

/// Nelder–Mead over `params` from `spec`: the best drive and its cost.
fn nelder_mead(
    target: &dyn Target,
    spec: &DriveSpec,
    params: &[Param],
    prior: &[(Param, f64, f64)],
    iters: u64,
) -> Result<(DriveSpec, f64), FitError> {
    let start: Vec<(Param, f64)> = params.iter().filter_map(|&p| Some((p, p.get(spec)?))).collect();
    let n = start.len();
    let problem = Problem { target, spec: spec.clone(), start, prior: prior.to_vec() };
    if n == 0 {
        let c = problem.cost(&Vec::new()).map_err(|e| FitError::Replay(e.to_string()))?;
        return Ok((spec.clone(), c));
    }
    let (problem, best, cost) = super::search::simplex_ln(problem, n, 0.3, iters)?;
    Ok((problem.at(&best).unwrap_or_else(|| spec.clone()), cost))
}

/// Refine `spec` against `target` (see the module doc).
pub fn refine(target: &dyn Target, spec: &DriveSpec, opts: &RefineOptions) -> Result<Refined, FitError> {
    let free: Vec<Param> = opts.params.iter().copied().filter(|p| p.get(spec).is_some()).collect();
    let (_, jac) = sensitivity_at(target, spec, &free)?;
    let cols = determined_columns(&jac);
    let determined: Vec<Param> = cols.iter().map(|&j| free[j]).collect();
    let undetermined: Vec<Param> = free.iter().copied().filter(|p| !determined.contains(p)).collect();
    let mut notes = Vec::new();
    let try_dies = opts.dies && determined.contains(&Param::NativeTr);
    let best = if try_dies {
        let (s, c, costs) =
            best_die_count(spec, |s| nelder_mead(target, s, &determined, &opts.prior, opts.iterations))?;
        notes.push(format!(
            "dies: {} from the given results (cost after fitting each die count: {costs}; the base has {})",
            dies(&s),
            dies(spec)
        ));
        (s, c)
    } else {
        nelder_mead(target, spec, &determined, &opts.prior, opts.iterations)?
    };
    let (spec, cost) = best;
    let (values, jac) = sensitivity_at(target, &spec, &determined)?;
    Ok(Refined { spec, determined, undetermined, values, jac, cost, notes })
}

/// Given jobs no drive can reproduce, each with the reason: of two jobs
/// alike but for how the same commands outstanding were issued (fio
/// threads × queue depth), the one with fewer threads when its rate is
/// more than 15% lower (a drive sees its queue, not the threads: the
/// difference is the host's, one thread's submission rate).
pub fn host_limited(jobs: &[JobRecord], measured: &[Measurement]) -> Vec<(String, String)> {
    let given: Vec<&JobRecord> =
        jobs.iter().filter(|j| measured.iter().any(|m| m.unit == Unit::Given && m.job == j.name)).collect();
    let rate = |j: &JobRecord| -> f64 { j.dirs.iter().map(|d| d.iops).sum() };
    let threads = |j: &JobRecord| j.option("numjobs").and_then(|v| v.parse::<u64>().ok()).unwrap_or(1);
    let mut out: Vec<(String, String)> = Vec::new();
    for a in &given {
        for b in &given {
            let alike = a.rw() == b.rw()
                && a.option("bs") == b.option("bs")
                && a.option("rwmixread") == b.option("rwmixread")
                && a.depth() == b.depth()
                && threads(a) < threads(b);
            if alike && rate(a) < 0.85 * rate(b) && !out.iter().any(|(n, _)| *n == a.name) {
                out.push((
                    a.name.clone(),
                    format!(
                        "{:.0} IOPS with {} fio thread(s) against {:.0} IOPS of `{}` with {} for the same {} \
                         commands outstanding: a drive sees its queue, not the threads, so the difference is \
                         the host's (one thread's submission rate)",
                        rate(a),
                        threads(a),
                        rate(b),
                        b.name,
                        threads(b),
                        a.depth()
                    ),
                ));
            }
        }
    }
    out
}

/// Given jobs of a queue-depth sweep (same file, pattern, block size,
/// threads) whose measured rate rose less than 5% over a doubling (or
/// more) of the depth where the fitted twin's rose more than 15% and ends
/// more than 10% above the measurement: that job and the deeper ones of
/// its sweep, each with the reason.
pub fn flat_sweeps(jobs: &[JobRecord], target: &JobsTarget, values: &[Option<f64>]) -> Vec<(String, String)> {
    use super::measure::Quantity;
    let rate_of = |name: &str, v: &dyn Fn(usize) -> Option<f64>| -> Option<f64> {
        target
            .measured
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.job == name
                    && matches!(
                        m.quantity,
                        Quantity::ReadIops | Quantity::WriteIops | Quantity::ReadMbps | Quantity::WriteMbps
                    )
            })
            .map(|(i, _)| v(i))
            .sum()
    };
    let measured = |i: usize| Some(target.measured[i].value);
    let twin = |i: usize| values[i];
    let given: Vec<&JobRecord> = jobs.iter().filter(|j| target.measured.iter().any(|m| m.job == j.name)).collect();
    let mut out: Vec<(String, String)> = Vec::new();
    for a in &given {
        let mut sweep: Vec<&&JobRecord> = given
            .iter()
            .filter(|b| {
                b.file() == a.file()
                    && b.rw() == a.rw()
                    && b.option("bs") == a.option("bs")
                    && b.option("numjobs") == a.option("numjobs")
            })
            .collect();
        sweep.sort_by_key(|j| j.depth());
        for w in sweep.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            if hi.depth() < 2 * lo.depth() || out.iter().any(|(n, _)| *n == hi.name) {
                continue;
            }
            let (Some(m0), Some(m1), Some(t0), Some(t1)) = (
                rate_of(&lo.name, &measured),
                rate_of(&hi.name, &measured),
                rate_of(&lo.name, &twin),
                rate_of(&hi.name, &twin),
            ) else {
                continue;
            };
            if m1 < 1.05 * m0 && t1 > 1.15 * t0 && t1 > 1.10 * m1 {
                for j in sweep.iter().filter(|j| j.depth() >= hi.depth()) {
                    if !out.iter().any(|(n, _)| *n == j.name) {
                        out.push((
                            j.name.clone(),
                            format!(
                                "the measured rate stays flat from queue depth {} to {} ({:.0} → {:.0}) where the \
                                 fitted twin's still rises ({:.0} → {:.0}): a limit outside the drive (the host's)",
                                lo.depth(),
                                hi.depth(),
                                m0,
                                m1,
                                t0,
                                t1
                            ),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// What the refinement on the given jobs leaves: the drive and its
/// parameters (those the jobs determine with their uncertainties).
#[derive(Debug, Clone)]
pub struct GivenFit {
    /// The refined drive.
    pub spec: DriveSpec,
    /// Each parameter the drive has.
    pub params: Vec<ParamFit>,
}

/// The refinement on the jobs outside the battery (`given`), from `spec`
/// (the battery's fit, whose `battery` parameters with an uncertainty
/// are the prior; or the base): host-limited jobs excluded with a
/// warning, the rest fitted ([`refine`]; the die count too when no
/// battery fixed it), a sweep that the fitted twin shows host-limited
/// excluded and the fit run again. Returns the given jobs' residuals.
pub(super) fn given_stage(
    ctx: &Ctx,
    given: &[Measurement],
    base: &DriveSpec,
    spec: &DriveSpec,
    battery: &[ParamFit],
    notes: &mut Vec<String>,
) -> Result<(Vec<Residual>, GivenFit), FitError> {
    let mut excluded = host_limited(ctx.jobs, given);
    let prior: Vec<(Param, f64, f64)> = battery.iter().filter_map(|p| Some((p.param, p.fitted, p.sigma?))).collect();
    let ropts = RefineOptions {
        // Idle folding's room shows only after a pause part-way through
        // a fill (the battery's); other results leave it as it is.
        params: Param::ALL.into_iter().filter(|&p| p != Param::IdleFoldRoom).collect(),
        dies: !battery.iter().any(|p| p.param == Param::NativeTr && p.sigma.is_some()),
        iterations: ctx.opts.refine_iterations,
        prior,
    };
    let run = |excluded: &[(String, String)]| -> Result<(JobsTarget, Refined), FitError> {
        let kept: Vec<Measurement> =
            given.iter().filter(|m| !excluded.iter().any(|(n, _)| *n == m.job)).cloned().collect();
        if kept.is_empty() {
            return Err(FitError::Input {
                origin: "results".into(),
                reason: "every job outside the battery is host-limited (see the warnings): nothing left to fit".into(),
            });
        }
        let target =
            JobsTarget::new(ctx.jobs, &kept, ctx.opts.state, ctx.opts.runtime_cap_ns, &ctx.dispatch, &ctx.evals);
        let r = refine(&target, spec, &ropts)?;
        Ok((target, r))
    };
    let (mut target, mut r) = run(&excluded)?;
    let flat = flat_sweeps(ctx.jobs, &target, &r.values);
    if !flat.is_empty() {
        excluded.extend(flat);
        (target, r) = run(&excluded)?;
    }
    for (job, why) in &excluded {
        notes.push(format!("warning: job `{job}` is not used: {why}; no drive parameter was bent to it"));
    }
    notes.extend(r.notes.iter().cloned());
    for p in &r.undetermined {
        notes.push(format!(
            "{}: not determined by the given results; kept at {}",
            p.field().0,
            if battery.is_empty() { "the base's value" } else { "the battery's fit" }
        ));
    }
    let rows: Vec<Residual> = target
        .measured
        .iter()
        .zip(&r.values)
        .map(|(m, v)| Residual { job: m.job.clone(), quantity: m.quantity, measured: m.value, twin: *v })
        .collect();
    let labels: Vec<String> = (0..target.count()).map(|i| target.label(i)).collect();
    let params = param_table(base, &r.spec, &r.determined, &r.jac, &labels, measurement_sigma(&rows));
    Ok((rows, GivenFit { spec: r.spec, params }))
}

/// The battery's parameters with what the given jobs add: where both
/// determine one, the uncertainties combine as independent estimates
/// (1/σ² = 1/σ₁² + 1/σ₂²) and the constraint is the given jobs' when
/// theirs is the smaller σ; fitted values are `given`'s (the final drive).
pub(super) fn combine(battery: Vec<ParamFit>, given: &[ParamFit]) -> Vec<ParamFit> {
    battery
        .into_iter()
        .map(|mut b| {
            if let Some(g) = given.iter().find(|g| g.param == b.param) {
                b.fitted = g.fitted;
                if let Some(sg) = g.sigma {
                    let before = b.sigma;
                    b.sigma = Some(match b.sigma {
                        Some(sb) => 1.0 / (1.0 / (sb * sb) + 1.0 / (sg * sg)).sqrt(),
                        None => sg,
                    });
                    if before.is_none_or(|sb| sg < sb) {
                        b.constrained_by = g.constrained_by.clone();
                    }
                }
            }
            b
        })
        .collect()
}
