//! The blocks a full drive holds back from its user data, fitted jointly:
//! the **spare area** (blocks per plane, so the raw capacity) and the
//! **static pSLC pool** (`slc_cache.static_bytes`), which the SLC model
//! (`model/ftl/slc.rs`) tells apart from the dynamic cache: static blocks
//! are reserved for SLC use and never given to GC, while the dynamic cache
//! borrows free native blocks, only those above GC's background target on
//! a full drive.
//!
//! Two measurements, two parameters:
//! - what the random writes (`randwrite`) wrote before GC started
//!   ([`super::measure::gc_knee`]): the free room, the blocks beyond the
//!   user data, the reserves and the static pool, linear in the blocks
//!   per plane (0.1 GB a block on the fit test's 660p-like drive, 19% of
//!   the knee there) and the same on a replay as in the battery (within
//!   0.2% at the truth's parameters). The late rate it replaced is GC's
//!   floor broken by bursts on a drive with a static pool, not monotone
//!   in the spare (on that drive 1,264 IOPS at 179 blocks per plane, 199
//!   at 181, 1,459 at 183);
//! - what the write after the long idle (`idle-long-write`) wrote before
//!   its knee: the cache a full, folded drive keeps, `min(curve at full,
//!   static + free blocks above GC's target)`.
//!
//! The spare stage runs first, with the identified pool; then the pool by
//! root finding on the long idle write's knee **with the spare held** (the
//! blocks per plane move by as many blocks per die as the pool, so GC's
//! blocks stay) and the cache's size held (the fill fitted it). Held so,
//! the knee grows one for one with the pool until it reaches the curve's
//! full-drive point (below a few percent of the cache it does not: the
//! free blocks above GC's target then carry a larger dynamic cache). When
//! the pool moved, the spare is searched again with it in place. When the free blocks above GC's target already hold
//! the whole cache a full drive may have, the knee does not move with the
//! pool at all: no measurement of the battery tells static from dynamic
//! there (drive 1 of the prediction check: every battery number within
//! 0.7% from no pool to all of the cache), and the pool is reported not
//! determined, the identification's value kept (all of what the full drive
//! keeps). The spare and the pool were once fitted side by side from the
//! fill's drive and combined; the pool then read the dynamic part as
//! static whenever the fill's spare differed from the truth's.
//!
//! A base without a static pool (the SM2260's dynamic-only cache) keeps
//! none ([`super::identify::has_static_pool`]): what its full drive keeps
//! after the long idle is its dynamic cache, a check of the spare.

use std::collections::HashMap;
use std::sync::Mutex;

use super::battery::Unit;
use super::identify::{self, measured};
use super::measure::Quantity;
use super::params::{dies, Param};
use super::replay::Plan;
use super::root::{match_one, Reach, Root};
use super::search::{self, log_error, Ctx, MISSING};
use super::FitError;
use crate::spec::DriveSpec;

/// The spare and the static pool, in that order, on `spec` (the fill's
/// drive); the parameters fitted and notes.
pub(super) fn stages(
    ctx: &Ctx,
    spec: &mut DriveSpec,
    room_fitted: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Param>, FitError> {
    let mut fitted = Vec::new();
    match spare(ctx, spec.clone())? {
        Some((s, note)) => {
            spec.geometry.blocks_per_plane = s.geometry.blocks_per_plane;
            match note {
                None => fitted.push(Param::BlocksPerPlane),
                Some(n) => notes.push(n),
            }
        }
        None => notes.push("spare area: no random-write log measured; the base's blocks per plane kept".into()),
    }
    if static_pool(ctx, spec, room_fitted, notes)? {
        fitted.push(Param::CacheStatic);
        // The pool moved with GC's blocks held, but the random writes see
        // more than GC's blocks (a drive deep in GC: the fit test's
        // 660p-like drive, whose pool found 0.2316 → 0.2516 GB, wrote 25%
        // faster with the spare held): the spare again, with the pool.
        if fitted.contains(&Param::BlocksPerPlane) {
            if let Some((s, None)) = spare(ctx, spec.clone())? {
                spec.geometry.blocks_per_plane = s.geometry.blocks_per_plane;
            }
        }
    }
    Ok(fitted)
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

/// What the static pool's search holds while the pool moves from `from`'s:
/// the cache's largest size (the fill's knee fitted it; setting the pool
/// moves the curve's points at the old pool with it) and the spare GC
/// gets (the blocks per plane move by the pool's blocks per die).
pub(super) fn hold_cache_and_spare(from: &DriveSpec, s: &mut DriveSpec) {
    if let Some(max) = Param::CacheMax.get(from) {
        Param::CacheMax.set(s, max);
    }
    let bpp = from.geometry.blocks_per_plane + static_blocks_per_die(s);
    s.geometry.blocks_per_plane = bpp.saturating_sub(static_blocks_per_die(from)).max(1);
}

/// A knee of the random writes within this log error of the measured one
/// matches it: the battery's noise (the fit's measurement error floor,
/// [`super::report`]).
const SPARE_NOISE: f64 = 0.03;

/// [`hold_cache_and_spare`], and idle folding's room as `from` has it.
fn hold_cache_spare_and_room(from: &DriveSpec, s: &mut DriveSpec) {
    hold_cache_and_spare(from, s);
    if let (Some(f), Some(c)) = (from.slc_cache.as_ref(), s.slc_cache.as_mut()) {
        c.idle_fold_room_bytes = f.idle_fold_room_bytes;
    }
}

/// The spare stage: blocks per plane from what the random writes wrote
/// before GC started ([`free_room`]), or, where the measured writes never
/// started GC, from their late rate; a note when not reached; `None` when
/// not measured.
fn spare(ctx: &Ctx, mut spec: DriveSpec) -> Result<Option<(DriveSpec, Option<String>)>, FitError> {
    let Some(plan) = ctx.plan(Unit::RandomWrite, Some(&["randwrite"][..]), None) else { return Ok(None) };
    if let Some(target) = measured(&ctx.measured, "randwrite", Quantity::FreeGb) {
        let note = free_room(ctx, &mut spec, &plan, target)?;
        return Ok(Some((spec, note)));
    }
    let Some(target) = measured(&ctx.measured, "randwrite", Quantity::LateWriteIops) else { return Ok(None) };
    // The starting spare (the base's, for the die count found) is kept
    // when it already matches the late rate within the measurements'
    // noise: the rate saturates once the free blocks last the whole job
    // (GC barely starts), and a root on that plateau is the noise's. Drive 5 of the prediction check (RC100-like)
    // wrote within 1.6% the same late rate from 374 to 485 blocks per
    // plane (the battery on its fitted drive), and the search, sent up by
    // 0.1% of noise, ended at 485 against the truth's 389: the steady
    // random writes with 20% unused +125%.
    let here = search::flatten(ctx.run(&[(spec.clone(), plan.clone())]));
    if let Some(e) = here.ok().and_then(|obs| log_error(&obs, "randwrite", Quantity::LateWriteIops, target)) {
        if e.abs() <= SPARE_NOISE {
            let note = format!(
                "geometry.blocks_per_plane: the starting {} (the base's, for the die count found) already \
                 matches randwrite's late rate ({target:.0} IOPS) within the measurements' {:.0}% noise \
                 ({:+.1}%): kept (where the rate saturates, as when GC barely starts within the job, a root \
                 would be the noise's)",
                spec.geometry.blocks_per_plane,
                SPARE_NOISE * 100.0,
                e * 100.0
            );
            return Ok(Some((spec, Some(note))));
        }
    }
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

/// Rounds of [`free_room`]'s search.
const FREE_ROOM_ROUNDS: usize = 6;

/// Blocks per plane from what the random writes wrote before GC started
/// ([`super::measure::gc_knee`]): the free room, which grows by one block
/// per plane of every plane of the drive for each block per plane (0.1 GB
/// a block on the fit test's 660p-like drive: 0.236, 0.333, 0.433, 0.537,
/// 0.638, 0.738, 0.837 and 0.938 GB written before GC at 179 to 186
/// blocks per plane, where the late rate it replaced, the last quarter's
/// mean, was 1,264, 208, 199, 309, 1,459, 1,536, 1,569 and 1,567 IOPS:
/// GC's floor broken by bursts of the static pool's cache, and a burst
/// fell in the last 13.5 s or not).
///
/// Blocks per plane are whole, and on a drive with a few percent of
/// spare one block moves the knee by 10–40%, so the search is on whole
/// blocks: a Newton step from the count's knee (the slope one block's
/// bytes across the drive, then the slope measured), the count and its
/// two neighbours replayed side by side, until the measured knee lies
/// between the neighbours; the nearest of the three is kept (Brent's root
/// finding on ln blocks, which this replaced, stopped within 1% of the
/// value: up to two blocks off, 40% on that drive). Within 8% fewer to
/// 26% more blocks than the start; a note when the knee is not reached.
fn free_room(ctx: &Ctx, spec: &mut DriveSpec, plan: &Plan, target: f64) -> Result<Option<String>, FitError> {
    let g = &spec.geometry;
    let b0 = g.blocks_per_plane;
    let per_block = (dies(spec) * g.planes_per_die) as f64 * (g.pages_per_block * g.page_bytes) as f64 / 1e9;
    let (lo, hi) = (((b0 as f64) * 0.92).floor().max(1.0) as u32, ((b0 as f64) * 1.26).ceil() as u32);
    let at = |b: u32| {
        let mut s = spec.clone();
        s.geometry.blocks_per_plane = b;
        s
    };
    // Knee in GB per count: +∞ when GC did not start (more room than any
    // knee), −∞ for a drive that cannot be built or replayed.
    let mut memo: HashMap<u32, f64> = HashMap::new();
    let eval = |bs: &[u32], memo: &mut HashMap<u32, f64>| {
        let todo: Vec<u32> = bs.iter().copied().filter(|b| !memo.contains_key(b)).collect();
        let tasks: Vec<(DriveSpec, Plan)> = todo.iter().map(|&b| (at(b), plan.clone())).collect();
        for (&b, r) in todo.iter().zip(ctx.run(&tasks)) {
            let v = match r {
                Ok(obs) => obs
                    .iter()
                    .find(|o| o.job == "randwrite" && o.quantity == Quantity::FreeGb)
                    .map_or(f64::INFINITY, |o| o.value),
                Err(_) => f64::NEG_INFINITY,
            };
            memo.insert(b, v);
        }
    };
    let err = |v: f64| if v.is_finite() && v > 0.0 { (v / target).ln().abs() } else { f64::INFINITY };
    let mut b = b0.clamp(lo, hi);
    for _ in 0..FREE_ROOM_ROUNDS {
        let around = [b.saturating_sub(1).max(lo), b, (b + 1).min(hi)];
        eval(&around, &mut memo);
        let (below, above) = (memo[&around[0]], memo[&around[2]]);
        let bracketed = below <= target && target <= above;
        let at_end = (b == lo && target < below) || (b == hi && target > above);
        if bracketed || at_end {
            break;
        }
        // The slope between the neighbours where both are finite and
        // apart, else one block's bytes.
        let slope =
            if below.is_finite() && above.is_finite() && above > below { (above - below) / 2.0 } else { per_block };
        let here = memo[&b];
        let step = if here.is_finite() {
            ((target - here) / slope).round()
        } else if here > 0.0 {
            -((b - lo) as f64 / 2.0).ceil()
        } else {
            ((hi - b) as f64 / 2.0).ceil()
        };
        let next = (b as f64 + step).clamp(lo as f64, hi as f64) as u32;
        if next == b {
            break;
        }
        b = next;
    }
    let (best, v) = memo
        .iter()
        .map(|(&b, &v)| (b, v))
        .min_by(|x, y| err(x.1).total_cmp(&err(y.1)).then(x.0.cmp(&y.0)))
        .expect("evaluated");
    *spec = at(best);
    let field = Param::BlocksPerPlane.field().0;
    Ok(if !v.is_finite() {
        Some(format!(
            "{field}: what randwrite wrote before GC started ({target:.3} GB) not reached from {lo} to {hi} \
             blocks per plane; {best} kept"
        ))
    } else if err(v) > 0.5 && (best == lo || best == hi) {
        Some(format!(
            "{field}: what randwrite wrote before GC started ({target:.3} GB) not reached from {lo} to {hi} \
             blocks per plane ({v:.3} GB at {best}, the nearer end)"
        ))
    } else {
        None
    })
}

/// The static pool: root finding on what the write after the long idle
/// wrote before its knee, from 2% of the cache's size to all of it, the
/// spare and the cache's size held ([`hold_cache_and_spare`]). Whether it
/// was fitted; notes say when it was not determined or not reached.
fn static_pool(ctx: &Ctx, spec: &mut DriveSpec, room_fitted: bool, notes: &mut Vec<String>) -> Result<bool, FitError> {
    // A room fitted from the pause in the fill stays as the pool moves
    // (else a base that ties it to the pool moves it along).
    let hold: super::root::Hold = if room_fitted { hold_cache_spare_and_room } else { hold_cache_and_spare };
    const JOB: &str = "idle-long-write";
    let (Some(target), Some(plan)) = (
        measured(&ctx.measured, JOB, Quantity::PostCacheMbps).and(measured(&ctx.measured, JOB, Quantity::CacheGb)),
        ctx.plan(Unit::Idle, None, None),
    ) else {
        return Ok(false);
    };
    let Some(max) = Param::CacheMax.get(spec) else { return Ok(false) };
    if !identify::has_static_pool(spec) {
        notes.push(format!(
            "static cache: the base's cache is dynamic only (no static pool), so the {target:.2} GB the write \
             after the long idle wrote before its knee is the dynamic cache a full drive keeps on its free \
             blocks, set by the spare area: a check of the spare stage, not fitted (a base with a static pool \
             would read it as one)"
        ));
        return Ok(false);
    }
    let root = Root {
        ctx,
        spec: spec.clone(),
        param: Param::CacheStatic,
        plan,
        job: JOB,
        quantity: Quantity::CacheGb,
        target,
        // A pool the raw capacity cannot hold is beyond the high end.
        invalid: MISSING,
        hold: Some(hold),
        // From 2% of the cache static to all of it, a knee the pool sets
        // moves far more than 10%; less is the knee's noise (drive 1 of
        // the prediction check, whose knee does not depend on the pool:
        // a "root" at 11% of the cache, the truth's pool being half of it).
        flat_below: 0.1,
        memo: Mutex::new(HashMap::new()),
    };
    let start = spec.clone();
    let candidate = |x: f64| {
        let mut s = start.clone();
        Param::CacheStatic.set(&mut s, x.exp());
        hold(&start, &mut s);
        Some(s).filter(|s| s.build(&s.name).is_ok())
    };
    // The range: from 2% of the cache to all of it, each end moved in
    // (by factors of 2) to the nearest pool whose drive is valid with the
    // spare held (a smaller pool gives back blocks the cache's floor may
    // need): an invalid end would read as a knee beyond the measured one
    // and send the search to the other end.
    let (mut lo, mut hi) = ((max * 0.02).ln(), max.ln());
    while lo < hi && candidate(lo).is_none() {
        lo += std::f64::consts::LN_2;
    }
    while hi > lo && candidate(hi).is_none() {
        hi -= std::f64::consts::LN_2;
    }
    if hi <= lo {
        return Ok(false);
    }
    let (field, _) = Param::CacheStatic.field();
    // The identified pool as well as the ends (side by side): where the
    // ends do not bracket the knee (an end whose replay fails counts as
    // beyond it), the identified pool is kept if it matches better than
    // either end.
    let x0 = Param::CacheStatic.get(spec).unwrap_or(max).max(max * 0.02).min(max).ln();
    let e = root.eval_many(&[lo, hi, x0]);
    let flat = (e[0] - e[1]).abs() < root.flat_below;
    // The knee is not monotonic in the pool: at the smallest pools the
    // full drive's free blocks above GC's target carry a dynamic cache
    // larger than the pool (the fit test's 660p-like drive: 0.46 GB before
    // the knee at 2% of the cache static, 0.08 GB at 6%, then one for one
    // with the pool). Where the identified pool lies on the other side of
    // the knee from both ends, the root is between that pool and the high
    // end, where the knee follows the pool.
    if !flat && e[0].signum() == e[1].signum() && e[2].signum() != e[1].signum() && x0 < hi {
        lo = x0;
    } else if !flat && e[0].signum() == e[1].signum() && e[2].abs() < e[0].abs().min(e[1].abs()) {
        if e[2].abs() >= 0.05 {
            notes.push(format!(
                "{field}: {JOB} written before the knee ({target:.4} GB) not bracketed between 2% of the cache \
                 and all of it; the identified pool kept, the nearest match"
            ));
        }
        return Ok(e[2].abs() < 0.05);
    }
    let (x, reach) = root.solve(lo, hi)?;
    if reach == Reach::Flat {
        notes.push(format!(
            "{field}: not determined: what {JOB} writes before its knee (measured {target:.3} GB) moves by \
             less than 10% on the twin from 2% of the cache static to all of it, the spare held: the full \
             drive's free blocks above GC's target hold the whole dynamic part, so no battery measurement \
             tells a static pool from dynamic blocks on this drive; the identification's pool kept (all of \
             what the full drive keeps, up to the cache's size)"
        ));
        return Ok(false);
    }
    let Some(s) = candidate(x) else {
        notes.push(format!("{field}: the pool matching {JOB}'s knee is not a valid drive: the identified pool kept"));
        return Ok(false);
    };
    if reach == Reach::Bound {
        notes.push(format!(
            "{field}: {JOB} written before the knee ({target:.4} GB) not reached between 2% of the cache and \
             all of it; the nearer end taken"
        ));
    }
    *spec = s;
    Ok(true)
}
