//! Published figures as measurements: a preset's free parameters refitted
//! against its own published figures (`ssdtwin fit --base PRESET
//! --figures`), and leave-one-out errors per figure (`ssdtwin validate
//! --cv`), each figure predicted by a fit to the others.
//!
//! Each figure is measured as `ssdtwin validate` measures it (its own
//! workload; with `quick`, timed jobs capped at 5 simulated seconds), on
//! every core
//! ([`FiguresTarget`]); its error is validate's: the distance from the
//! published value or range, 0 inside it. The refit is the refinement
//! stage ([`super::refine`]) with the figures as its target.
//!
//! Leave-one-out is kept affordable by linearising once: the sensitivity
//! matrix J of every figure to every parameter at the preset ((k + 1)
//! measurements of the n figures, k parameters), then for each figure a
//! Gauss–Newton step fitted to the other n − 1 figures alone (ridge
//! regularised towards the preset, λ = [`RIDGE`]: with fewer figures than
//! parameters it moves the parameters least), and the held-out figure
//! measured on the drive that step gives (n more measurements of one
//! figure). So a preset costs (k + 2) × n figure measurements, where a
//! full refit per figure would cost n Nelder–Mead runs. Left out: the
//! figures' own uncertainty (their tolerances are not weights), and a
//! second Gauss–Newton step (the held-out drive is one step from the
//! preset).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::params::Param;
use super::refine::{refine, sensitivity_at, RefineOptions, Target, Values};
use super::report::{param_table, ParamFit};
use super::FitError;
use crate::spec::DriveSpec;
use crate::study::figures::{measure, Figure, FigureSet};

/// Ridge weight of the leave-one-out steps, per squared ln unit: moving a
/// parameter by a factor e costs what a figure 10% off costs.
pub const RIDGE: f64 = 0.01;

/// A preset's figures, measured on candidates.
pub struct FiguresTarget<'a> {
    /// The figures.
    pub figures: Vec<Figure>,
    /// Whether to measure as `validate --quick` does.
    pub quick: bool,
    /// Figure measurements run.
    pub evals: &'a AtomicUsize,
}

impl FiguresTarget<'_> {
    /// Each figure on each (drive, figure) pair, in parallel.
    fn measure_pairs(&self, pairs: &[(&DriveSpec, usize)]) -> Vec<Result<f64, FitError>> {
        self.evals.fetch_add(pairs.len(), Ordering::Relaxed);
        super::replay::parallel_map(pairs, |&(spec, i)| {
            let model = spec.build(&spec.name).map_err(|e| FitError::Candidate(e.to_string()))?;
            let fig = &self.figures[i];
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| measure(&model, fig, self.quick)))
                .map_err(|_| FitError::Candidate(format!("the simulator stopped measuring `{}`", fig.name)))?
                .map(|v| v.simulated)
                .map_err(|e| FitError::Replay(e.to_string()))
        })
    }
}

impl Target for FiguresTarget<'_> {
    fn count(&self) -> usize {
        self.figures.len()
    }

    fn label(&self, i: usize) -> String {
        self.figures[i].name.clone()
    }

    fn measured(&self, i: usize) -> f64 {
        let (lo, hi) = self.figures[i].published.bounds();
        match (lo.is_finite(), hi.is_finite()) {
            (true, true) => (lo + hi) / 2.0,
            (true, false) => lo,
            _ => hi,
        }
    }

    fn log_error(&self, i: usize, twin: f64) -> f64 {
        let (lo, hi) = self.figures[i].published.bounds();
        if twin < lo {
            (twin / lo).ln()
        } else if twin > hi {
            (twin / hi).ln()
        } else {
            0.0
        }
    }

    fn predict(&self, specs: &[DriveSpec]) -> Vec<Result<Values, FitError>> {
        let n = self.figures.len();
        let pairs: Vec<(&DriveSpec, usize)> = specs.iter().flat_map(|s| (0..n).map(move |i| (s, i))).collect();
        let mut results = self.measure_pairs(&pairs).into_iter();
        specs
            .iter()
            .map(|_| {
                // A figure a candidate cannot give (its writes never slow
                // down, say) is no value, not a failed candidate.
                Ok(results.by_ref().take(n).map(|r| r.ok()).collect())
            })
            .collect()
    }
}

/// validate's error of a simulated value: the relative distance from the
/// published range, 0 inside it.
pub fn figure_error(fig: &Figure, simulated: f64) -> f64 {
    let (lo, hi) = fig.published.bounds();
    if simulated < lo {
        (lo - simulated) / lo
    } else if simulated > hi {
        (simulated - hi) / hi
    } else {
        0.0
    }
}

/// One figure before and after the refit.
#[derive(Debug, Clone)]
pub struct FigureRow {
    /// The figure.
    pub figure: Figure,
    /// The preset's value and error (`None`: it gave none).
    pub before: Option<(f64, f64)>,
    /// The refitted drive's value and error.
    pub after: Option<(f64, f64)>,
}

/// A preset refitted to its figures.
#[derive(Debug, Clone)]
pub struct FigureFit {
    /// The refitted drive.
    pub spec: DriveSpec,
    /// Each figure.
    pub rows: Vec<FigureRow>,
    /// Each parameter.
    pub params: Vec<ParamFit>,
    /// What the figures leave undetermined.
    pub notes: Vec<String>,
    /// Figure measurements run.
    pub evaluations: usize,
    /// Wall time, s.
    pub wall_s: f64,
}

fn pair(fig: &Figure, v: Option<f64>) -> Option<(f64, f64)> {
    v.map(|v| (v, figure_error(fig, v)))
}

/// Refit `spec`'s parameters to `set`'s figures (measured as `validate
/// --quick` does when `quick`) (the refinement stage,
/// at most `iterations` Nelder–Mead iterations; the die count kept: it
/// is the preset's sourced structure).
pub fn fit_figures(spec: &DriveSpec, set: &FigureSet, iterations: u64, quick: bool) -> Result<FigureFit, FitError> {
    let start = Instant::now();
    spec.build(&spec.name).map_err(|e| FitError::Base(e.to_string()))?;
    let evals = AtomicUsize::new(0);
    let target = FiguresTarget { figures: set.figures.clone(), quick, evals: &evals };
    let before = target.predict(std::slice::from_ref(spec)).pop().expect("one drive")?;
    let opts = RefineOptions { params: free_params(), dies: false, iterations, prior: Vec::new() };
    let r = refine(&target, spec, &opts)?;
    let mut notes = r.notes.clone();
    for p in &r.undetermined {
        notes.push(format!("{}: not determined by the figures; the preset's value kept", p.field().0));
    }
    let rows: Vec<FigureRow> = set
        .figures
        .iter()
        .enumerate()
        .map(|(i, f)| FigureRow { figure: f.clone(), before: pair(f, before[i]), after: pair(f, r.values[i]) })
        .collect();
    let labels: Vec<String> = set.figures.iter().map(|f| f.name.clone()).collect();
    let errs: Vec<f64> = (0..target.count()).filter_map(|i| r.values[i].map(|v| target.log_error(i, v))).collect();
    let rms = (errs.iter().map(|e| e * e).sum::<f64>() / errs.len().max(1) as f64).sqrt();
    let params = param_table(spec, &r.spec, &r.determined, &r.jac, &labels, rms.max(0.03));
    Ok(FigureFit {
        spec: r.spec,
        rows,
        params,
        notes,
        evaluations: evals.load(Ordering::Relaxed),
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The parameters a preset's figures refit: all of the fit's but the map
/// cache's memory, which a preset takes from its datasheet or a teardown
/// (the 660p's 256 MB of DRAM, the RC100's 38 MB host memory buffer), as
/// it does the die count.
fn free_params() -> Vec<Param> {
    Param::ALL.into_iter().filter(|&p| p != Param::MapMemory && p != Param::IdleFoldRoom).collect()
}

/// One figure's leave-one-out result.
#[derive(Debug, Clone)]
pub struct CvRow {
    /// The figure.
    pub figure: Figure,
    /// The preset's value and error.
    pub preset: Option<(f64, f64)>,
    /// The value and error on the drive fitted to the other figures.
    pub held_out: Option<(f64, f64)>,
}

/// Leave-one-out over `set`'s figures (see the module doc); the rows, the
/// parameters free to move, and the figure measurements run.
pub fn cross_validate(
    spec: &DriveSpec,
    set: &FigureSet,
    quick: bool,
) -> Result<(Vec<CvRow>, Vec<Param>, usize), FitError> {
    spec.build(&spec.name).map_err(|e| FitError::Base(e.to_string()))?;
    let evals = AtomicUsize::new(0);
    let target = FiguresTarget { figures: set.figures.clone(), quick, evals: &evals };
    let params: Vec<Param> = free_params().into_iter().filter(|p| p.get(spec).is_some()).collect();
    let (at, jac) = sensitivity_at(&target, spec, &params)?;
    let n = set.figures.len();
    let k = params.len();
    let drives: Vec<DriveSpec> = (0..n)
        .map(|out| {
            // Normal equations of the others: (JᵀJ + λI) x = −Jᵀe.
            let mut a = vec![vec![0.0; k + 1]; k];
            for (r, row) in jac.iter().enumerate() {
                let Some(v) = at[r].filter(|_| r != out) else { continue };
                let e = target.log_error(r, v);
                for x in 0..k {
                    for y in 0..k {
                        a[x][y] += row[x] * row[y];
                    }
                    a[x][k] -= row[x] * e;
                }
            }
            for (x, row) in a.iter_mut().enumerate() {
                row[x] += RIDGE;
            }
            let step = solve(a);
            let mut s = spec.clone();
            for (&p, dx) in params.iter().zip(step) {
                let v0 = p.get(spec).expect("present");
                let (lo, hi) = p.bounds(v0);
                p.set(&mut s, (v0 * dx.exp()).clamp(lo, hi));
            }
            if s.build(&s.name).is_err() {
                s = spec.clone();
            }
            s
        })
        .collect();
    let pairs: Vec<(&DriveSpec, usize)> = drives.iter().enumerate().map(|(i, d)| (d, i)).collect();
    let held = target.measure_pairs(&pairs);
    let rows = set
        .figures
        .iter()
        .enumerate()
        .zip(held)
        .map(|((i, f), h)| CvRow { figure: f.clone(), preset: pair(f, at[i]), held_out: pair(f, h.ok()) })
        .collect();
    Ok((rows, params, evals.load(Ordering::Relaxed)))
}

/// The solution of the augmented system `a` (k rows of k + 1), by
/// Gauss–Jordan with partial pivoting (ridge-regularised: never singular).
fn solve(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let k = a.len();
    super::report::gauss_jordan(&mut a);
    a.iter().map(|r| r[k]).collect()
}
