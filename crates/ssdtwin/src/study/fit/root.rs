//! Root finding on one parameter: the stages that match one measurement
//! with one parameter (the program times, the command overhead, the
//! spare area, the static SLC pool) search ln(value) with argmin's Brent
//! for the root of ln(twin / measured), replaying the measured jobs on
//! each candidate ([`super::replay`]), the bracket's two ends side by
//! side. A search that holds other parameters while its own moves (the
//! static pool holds the spare area and the cache's size) gives a
//! [`Hold`]. Whether the root was reached, or the measurement lay beyond
//! the bracket, or did not move with the parameter at all, is a
//! [`Reach`], which the stages turn into notes.

use std::collections::HashMap;
use std::sync::Mutex;

use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
use argmin::solver::brent::BrentRoot;

use super::measure::Quantity;
use super::params::Param;
use super::replay::Plan;
use super::search::{log_error, missing_log_error, Ctx, MISSING};
use super::FitError;
use crate::spec::DriveSpec;

/// What a search holds while its parameter moves: called with the drive
/// the search started from and the candidate (its parameter already set),
/// it puts the held parameters back.
pub(super) type Hold = fn(&DriveSpec, &mut DriveSpec);

/// A monotone function of one parameter whose root argmin's Brent finds:
/// ln(twin / measured) of one measurement as the parameter's ln varies;
/// evaluations are remembered (Brent asks again for the bracket's ends).
pub(super) struct Root<'c, 'a> {
    pub(super) ctx: &'c Ctx<'a>,
    /// The drive the search starts from.
    pub(super) spec: DriveSpec,
    pub(super) param: Param,
    pub(super) plan: Plan<'a>,
    pub(super) job: &'static str,
    pub(super) quantity: Quantity,
    pub(super) target: f64,
    /// Value when the candidate cannot be built (beyond the low end).
    pub(super) invalid: f64,
    /// What the search holds (`None`: nothing but the drive's other fields).
    pub(super) hold: Option<Hold>,
    /// The measurement counts as not moving with the parameter when its
    /// log error differs by less than this between the bracket's ends
    /// (a root found there would be the measurement's noise).
    pub(super) flat_below: f64,
    pub(super) memo: Mutex<HashMap<u64, f64>>,
}

impl Root<'_, '_> {
    /// The candidate at ln value `x`.
    pub(super) fn at(&self, x: f64) -> DriveSpec {
        let mut s = self.spec.clone();
        self.param.set(&mut s, x.exp());
        if let Some(hold) = self.hold {
            hold(&self.spec, &mut s);
        }
        s
    }

    pub(super) fn eval_many(&self, xs: &[f64]) -> Vec<f64> {
        let todo: Vec<f64> =
            xs.iter().copied().filter(|x| !self.memo.lock().expect("memo").contains_key(&x.to_bits())).collect();
        let tasks: Vec<(DriveSpec, Plan)> = todo.iter().map(|&x| (self.at(x), self.plan.clone())).collect();
        for (x, r) in todo.iter().zip(self.ctx.run(&tasks)) {
            let v = match r {
                Ok(obs) => {
                    log_error(&obs, self.job, self.quantity, self.target).unwrap_or(missing_log_error(self.quantity))
                }
                Err(_) => self.invalid,
            };
            self.memo.lock().expect("memo").insert(x.to_bits(), v);
        }
        xs.iter().map(|x| self.memo.lock().expect("memo")[&x.to_bits()]).collect()
    }

    /// The root within ln bounds `[lo, hi]`, both ends evaluated in
    /// parallel first: `Reach::Flat` when the measurement moves by less
    /// than [`Root::flat_below`] across the bracket (something else limits
    /// it); else, when the ends have the same sign, `Reach::Bound` with
    /// the end nearer zero.
    pub(super) fn solve(self, lo: f64, hi: f64) -> Result<(f64, Reach), FitError> {
        let ends = self.eval_many(&[lo, hi]);
        if (ends[0] - ends[1]).abs() < self.flat_below {
            return Ok(((lo + hi) / 2.0, Reach::Flat));
        }
        if ends[0].signum() == ends[1].signum() {
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
pub(super) enum Reach {
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
pub(super) fn match_one(
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
        hold: None,
        flat_below: 0.05,
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
