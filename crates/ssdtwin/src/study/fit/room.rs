//! Idle folding's room (`slc_cache.idle_fold_room_bytes`): a drive that
//! keeps its data in SLC folds in idle time only until the cache has this
//! much room (the 660p presets: their static part, after Intel's "small
//! static part ... always available"), where another folds all it holds.
//!
//! The battery's idle pauses on the full drive cannot tell the room from
//! the static pool: there the cache is at its smallest (the curve at
//! full), and a room at or above it looks like no room, one below it like
//! a smaller pool. So the battery pauses half-way through the fill
//! (`idle-fill-write`), where the cache is full and at its largest: a
//! pause long enough folds the room, and the write after it writes the
//! room at the cache's rate before its knee. The room is found by root
//! finding on that knee, from 2% of the cache to all of it (all of it
//! folds everything: a drive without a room), replaying the fill's first
//! half, the pause and the write on each candidate.
//!
//! Not determined (the base's kept, a note says why) where the knee does
//! not move with the room: a pause too short to fold the room (the knee
//! is then what folding won back), or a drive that does not fold in idle.

use std::collections::HashMap;
use std::sync::Mutex;

use super::battery::Unit;
use super::identify::measured;
use super::measure::Quantity;
use super::params::Param;
use super::root::{Reach, Root};
use super::search::{Ctx, MISSING};
use super::FitError;
use crate::spec::DriveSpec;

/// The battery job whose knee gives the room.
pub(super) const JOB: &str = "idle-fill-write";

/// Fit the room on `spec` (after the fill's stage: the cache's size and
/// the program times that set the folding rate); whether it was fitted.
pub(super) fn stage(ctx: &Ctx, spec: &mut DriveSpec, notes: &mut Vec<String>) -> Result<bool, FitError> {
    let Some(plan) = ctx.plan(Unit::FillIdle, None, None) else { return Ok(false) };
    let (field, _) = Param::IdleFoldRoom.field();
    let Some(cache) = spec.slc_cache.as_ref().filter(|c| c.idle_fold) else {
        notes.push(format!("{field}: the base does not fold in idle time: {JOB} is a check, not fitted"));
        return Ok(false);
    };
    let had_room = cache.idle_fold_room_bytes.is_some();
    let (Some(target), Some(max)) = (measured(&ctx.measured, JOB, Quantity::CacheGb), Param::CacheMax.get(spec)) else {
        return Ok(false);
    };
    if measured(&ctx.measured, JOB, Quantity::PostCacheMbps).is_none() {
        notes.push(format!(
            "{field}: {JOB} wrote all it wrote at one rate (no knee): the room is at least {target:.3} GB, not \
             determined; the base's kept"
        ));
        return Ok(false);
    }
    let root = Root {
        ctx,
        spec: spec.clone(),
        param: Param::IdleFoldRoom,
        plan,
        job: JOB,
        quantity: Quantity::CacheGb,
        target,
        invalid: MISSING,
        hold: None,
        // From 2% of the cache to all of it a room the pause folds moves
        // the knee far more than 10%; less is what the pause could fold.
        flat_below: 0.1,
        memo: Mutex::new(HashMap::new()),
    };
    let (lo, hi) = ((max * 0.02).ln(), max.ln());
    let (x, reach) = root.solve(lo, hi)?;
    match reach {
        Reach::Flat => {
            notes.push(format!(
                "{field}: not determined: what {JOB} writes before its knee (measured {target:.3} GB) moves by less \
                 than 10% on the twin from a room of 2% of the cache to all of it (the pause folds less than the \
                 room); the base's kept"
            ));
            Ok(false)
        }
        Reach::Bound if x >= hi && !had_room => {
            notes.push(format!(
                "{field}: {JOB} wrote before its knee ({target:.3} GB) at least what a drive that folds all its \
                 cache in the pause writes: no room, as the base"
            ));
            Ok(false)
        }
        _ => {
            let mut s = spec.clone();
            Param::IdleFoldRoom.set(&mut s, x.exp());
            if s.build(&s.name).is_err() {
                notes.push(format!("{field}: the room matching {JOB}'s knee is not a valid drive: the base's kept"));
                return Ok(false);
            }
            if reach == Reach::Bound {
                notes.push(format!(
                    "{field}: {JOB} written before the knee ({target:.3} GB) not reached between 2% of the cache \
                     and all of it; the nearer end taken"
                ));
            }
            *spec = s;
            Ok(reach == Reach::Root)
        }
    }
}
