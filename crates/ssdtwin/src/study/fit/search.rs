//! The search's machinery that every stage shares: the context that
//! replays candidate twins ([`super::replay`]) and scores them against the
//! measurements (sum of squared log errors), argmin's Nelder–Mead over
//! parameters as ln offsets, and making a candidate with more dies valid.
//! The stages themselves are in [`super::optimise`] (the battery's) and
//! [`super::refine`] (any fio result).

use std::sync::atomic::{AtomicUsize, Ordering};

use argmin::core::{CostFunction, Executor, State};
use argmin::solver::neldermead::NelderMead;

use super::battery::{self, Unit};
use super::measure::{JobRecord, Quantity};
use super::params::{dies, set_dies, Param};
use super::remote::Dispatch;
use super::replay::{self, Observation, Plan};
use super::{FitError, FitOptions, Measurement};
use crate::spec::DriveSpec;

/// Log error given to a measurement the candidate gave no value for.
pub(super) const MISSING: f64 = 3.0;

/// The signed log error a root search gives a number the twin did not
/// give: a post-cache rate is missing when the twin's write had no knee
/// (its rate over the last third stayed above 70% of the cache's rate,
/// [`super::measure::knee`]), so it lies above any knee's post-cache rate
/// (+[`MISSING`]): a native program time short enough to hide the knee is
/// too short, not too long. What random writes wrote before GC started
/// is missing when GC did not start ([`super::measure::gc_knee`]): more
/// than any knee. Any other missing number (a log too short to measure)
/// counts as far too low.
pub(super) fn missing_log_error(quantity: Quantity) -> f64 {
    if matches!(quantity, Quantity::PostCacheMbps | Quantity::FreeGb) {
        MISSING
    } else {
        -MISSING
    }
}

/// What every stage needs: the measurements, the jobs to replay, the
/// options, and the count of replays.
pub(super) struct Ctx<'a> {
    pub(super) jobs: &'a [JobRecord],
    pub(super) measured: Vec<Measurement>,
    pub(super) opts: &'a FitOptions,
    pub(super) evals: AtomicUsize,
    /// Where the replays run.
    pub(super) dispatch: Dispatch<'a>,
}

impl<'a> Ctx<'a> {
    /// The measured jobs of `unit` (of those named in `only`, if given),
    /// in battery order, as a plan; `None` when none was measured.
    pub(super) fn plan(&self, unit: Unit, only: Option<&[&str]>, size_cap: Option<u64>) -> Option<Plan<'a>> {
        let jobs: Vec<&JobRecord> = battery::JOBS
            .iter()
            .filter(|b| b.unit == Some(unit) && only.is_none_or(|o| o.contains(&b.name)))
            .filter_map(|b| self.jobs.iter().find(|j| j.name == b.name))
            .collect();
        let prepare: Vec<&JobRecord> = jobs
            .first()
            .map_or_else(Vec::new, |first| battery::prepared_before(unit, &first.name))
            .into_iter()
            .filter_map(|name| self.jobs.iter().find(|j| j.name == name))
            .collect();
        (!jobs.is_empty()).then_some(Plan {
            unit,
            state: unit.state(),
            prepare,
            jobs,
            runtime_cap_ns: Some(self.opts.runtime_cap_ns),
            size_cap,
        })
    }

    /// Replay the tasks in parallel; the observations of each (errors
    /// kept per task).
    pub(super) fn run(&self, tasks: &[(DriveSpec, Plan)]) -> Vec<Result<Vec<Observation>, FitError>> {
        self.evals.fetch_add(tasks.len(), Ordering::Relaxed);
        self.dispatch.run(tasks)
    }

    pub(super) fn say(&self, line: &str) {
        if let Some(p) = &self.opts.progress {
            p(line);
        }
    }

    /// Sum of squared log errors over the measurements `keep` selects (a
    /// measurement the twin gave no value for counts [`MISSING`]).
    pub(super) fn cost(&self, obs: &[Observation], keep: impl Fn(&Measurement) -> bool) -> f64 {
        self.measured
            .iter()
            .filter(|m| keep(m))
            .map(|m| log_error(obs, &m.job, m.quantity, m.value).unwrap_or(MISSING).powi(2))
            .sum()
    }
}

/// ln(twin / measured) for (`job`, `quantity`).
pub(super) fn log_error(obs: &[Observation], job: &str, quantity: Quantity, value: f64) -> Option<f64> {
    let twin = obs.iter().find(|o| o.job == job && o.quantity == quantity)?.value;
    (twin > 0.0 && value > 0.0).then(|| (twin / value).ln())
}

/// The observations of all tasks, or the first error.
pub(super) fn flatten(results: Vec<Result<Vec<Observation>, FitError>>) -> Result<Vec<Observation>, FitError> {
    let mut out = Vec::new();
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// argmin's Nelder–Mead on `problem` (parameters as ln offsets from their
/// start) for at most `iters` iterations, the first simplex `step` wide in
/// each of the `n` dimensions: the problem back, the best point and its
/// cost.
pub(super) fn simplex_ln<P>(problem: P, n: usize, step: f64, iters: u64) -> Result<(P, Vec<f64>, f64), FitError>
where
    P: CostFunction<Param = Vec<f64>, Output = f64>,
{
    let mut simplex = vec![vec![0.0; n]];
    for i in 0..n {
        let mut v = vec![0.0; n];
        v[i] = step;
        simplex.push(v);
    }
    let solver = NelderMead::new(simplex).with_sd_tolerance(1e-4).map_err(|e| FitError::Replay(e.to_string()))?;
    let mut res = Executor::new(problem, solver)
        .configure(|s| s.max_iters(iters))
        .run()
        .map_err(|e| FitError::Replay(e.to_string()))?;
    let best = res.state().get_best_param().cloned().unwrap_or_else(|| vec![0.0; n]);
    let cost = res.state().get_best_cost();
    let problem = res.problem.problem.take().expect("the problem is returned");
    Ok((problem, best, cost))
}

/// More dies reserve more blocks (GC watermarks, map blocks per die): add
/// blocks per plane, up to half as many again, until the drive is valid
/// (the spare stage fits them later).
pub(super) fn make_valid(s: &mut DriveSpec) {
    let bpp = s.geometry.blocks_per_plane;
    for extra in 0..=bpp / 2 {
        s.geometry.blocks_per_plane = bpp + extra;
        if s.build(&s.name).is_ok() {
            return;
        }
    }
    s.geometry.blocks_per_plane = bpp;
}

/// The die counts a fit tries — the spec's, half and double (raw capacity
/// kept) — each started from the spec with tR scaled by the count's ratio,
/// so that the dies' saturated read rate (dies / tR) stays the spec's, and
/// made valid; fitted side by side with `fit` (spec → fitted spec and
/// cost). The count whose fit has the lowest cost wins: returned with its
/// cost and a list of every count's cost for the notes.
pub(super) fn best_die_count<F>(spec: &DriveSpec, fit: F) -> Result<(DriveSpec, f64, String), FitError>
where
    F: Fn(&DriveSpec) -> Result<(DriveSpec, f64), FitError> + Sync,
{
    let d0 = dies(spec);
    let tr = Param::NativeTr.get(spec).unwrap_or(1.0);
    let candidates: Vec<u32> = [d0 / 2, d0, d0 * 2].into_iter().filter(|&d| (1..=256).contains(&d)).collect();
    let starts: Vec<DriveSpec> = candidates
        .iter()
        .map(|&d| {
            let mut s = spec.clone();
            if d != d0 {
                set_dies(&mut s, d);
                Param::NativeTr.set(&mut s, tr * d as f64 / d0 as f64);
                make_valid(&mut s);
            }
            s
        })
        .collect();
    let fits = replay::parallel_map(&starts, |s| fit(s));
    let mut best: Option<(DriveSpec, f64)> = None;
    let mut costs = Vec::new();
    for (d, f) in candidates.iter().zip(fits) {
        let (s, c) = f?;
        costs.push(format!("{d}: {c:.4}"));
        if best.as_ref().is_none_or(|b| c < b.1) {
            best = Some((s, c));
        }
    }
    let (s, c) = best.expect("the spec's own count is a candidate");
    Ok((s, c, costs.join(", ")))
}
