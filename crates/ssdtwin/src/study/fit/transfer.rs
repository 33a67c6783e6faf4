//! The channel rate from the transfer: the battery's 16 KiB and 4 KiB
//! random reads at QD1 over the whole drive (`randread-16k-qd1`,
//! `randread-qd1`) read one page each, so they share tR, the command
//! overhead, the map misses and the ECC's fixed part; their mean
//! latencies differ by the time to move 12 KiB more from the die to the
//! host — over one channel, then the link. The channel rate is found by
//! root finding (argmin's Brent) on that difference alone, which tR does
//! not move, before the read simplex goes on over tR (and the map
//! memory) with the channel and the command overhead held.
//!
//! Why: on a drive whose dies are held through the transfer (plain page
//! reads, `nand.read_cache = false`: the 660p presets) the other read
//! numbers see tR and the transfer only as their sum in a die's read
//! cycle, and the read simplex traded one against the other: drive 4 of
//! the prediction check (QLC, 4 dies) fitted 357 MT/s against the truth's
//! 576 with tR −6%, every battery read within 5.4%.
//!
//! Left out: the link's share of the difference is the base's (the link
//! is kept from the base); where the channel hardly moves the difference
//! (a link much slower than a channel) the channel is reported not
//! determined by it and the simplex keeps fitting it as before.

use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
use argmin::solver::brent::BrentRoot;

use super::battery::Unit;
use super::identify::measured;
use super::measure::Quantity;
use super::params::Param;
use super::replay::Plan;
use super::search::{flatten, Ctx, MISSING};
use super::FitError;
use crate::spec::DriveSpec;

/// The 4 KiB and the 16 KiB QD1 reads over the whole drive.
pub(super) const JOBS: [&str; 2] = ["randread-qd1", "randread-16k-qd1"];

/// ln(twin's latency difference / measured one) as ln channel rate varies.
struct Gap<'c, 'a> {
    ctx: &'c Ctx<'a>,
    spec: DriveSpec,
    plan: Plan<'a>,
    /// The measured difference, µs.
    target: f64,
}

impl Gap<'_, '_> {
    fn at(&self, x: f64) -> DriveSpec {
        let mut s = self.spec.clone();
        Param::ChannelMts.set(&mut s, x.exp());
        s
    }

    /// The log errors at each of `xs`, replayed side by side.
    fn eval(&self, xs: &[f64]) -> Vec<f64> {
        let tasks: Vec<(DriveSpec, Plan)> = xs.iter().map(|&x| (self.at(x), self.plan.clone())).collect();
        self.ctx
            .run(&tasks)
            .into_iter()
            .map(|r| match flatten(vec![r]).ok().and_then(|obs| difference(&obs)) {
                Some(d) => (d.max(1e-3) / self.target).ln(),
                // A candidate that cannot run reads slower than any.
                None => MISSING,
            })
            .collect()
    }
}

impl CostFunction for Gap<'_, '_> {
    type Param = f64;
    type Output = f64;

    fn cost(&self, x: &f64) -> Result<f64, ArgminError> {
        Ok(self.eval(&[*x])[0])
    }
}

/// The 16 KiB reads' mean latency less the 4 KiB reads', µs.
fn difference(obs: &[super::replay::Observation]) -> Option<f64> {
    let lat = |job: &str| obs.iter().find(|o| o.job == job && o.quantity == Quantity::ReadLatUs).map(|o| o.value);
    Some(lat(JOBS[1])? - lat(JOBS[0])?)
}

/// The channel rate of `spec` from the two QD1 reads' difference; whether
/// it was fitted (else a note says why not, and the read simplex keeps
/// fitting it).
pub(super) fn stage(ctx: &Ctx, spec: &mut DriveSpec, notes: &mut Vec<String>) -> Result<bool, FitError> {
    let lat = |job: &str| measured(&ctx.measured, job, Quantity::ReadLatUs);
    let (Some(small), Some(large), Some(plan)) =
        (lat(JOBS[0]), lat(JOBS[1]), ctx.plan(Unit::ReadLow, Some(&JOBS), None))
    else {
        return Ok(false);
    };
    let (field, _) = Param::ChannelMts.field();
    let target = large - small;
    if target <= 0.0 {
        notes.push(format!(
            "{field}: {} read no slower than {} ({large:.1} against {small:.1} µs): the transfer's share not \
             measured; fitted with the other reads",
            JOBS[1], JOBS[0]
        ));
        return Ok(false);
    }
    let Some(v0) = Param::ChannelMts.get(spec) else { return Ok(false) };
    let (b_lo, b_hi) = Param::ChannelMts.bounds(v0);
    // From a third to three times the read stage's rate.
    let (lo, hi) = ((v0 / 3.0).max(b_lo).ln(), (v0 * 3.0).min(b_hi).ln());
    let gap = Gap { ctx, spec: spec.clone(), plan, target };
    let ends = gap.eval(&[lo, hi]);
    if (ends[0] - ends[1]).abs() < 0.1 {
        notes.push(format!(
            "{field}: the 12 KiB more that {} moves hardly depends on it (another part, e.g. the link, carries \
             the difference): fitted with the other reads",
            JOBS[1]
        ));
        return Ok(false);
    }
    let x = if ends[0].signum() == ends[1].signum() {
        notes.push(format!(
            "{field}: {} less {} ({target:.1} µs) not reached between a third and three times {v0:.0} MT/s; \
             the nearer end taken",
            JOBS[1], JOBS[0]
        ));
        if ends[0].abs() < ends[1].abs() {
            lo
        } else {
            hi
        }
    } else {
        let res = Executor::new(gap, BrentRoot::new(lo, hi, 0.01))
            .configure(|s| s.max_iters(12))
            .run()
            .map_err(|e| FitError::Replay(e.to_string()))?;
        res.state().get_best_param().copied().unwrap_or(v0.ln())
    };
    Param::ChannelMts.set(spec, x.exp());
    Ok(spec.build(&spec.name).is_ok() || {
        Param::ChannelMts.set(spec, v0);
        false
    })
}
