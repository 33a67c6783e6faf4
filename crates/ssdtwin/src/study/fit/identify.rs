//! Identification: the parameters read straight off the measurements,
//! before any candidate is simulated — the user capacity (the fill writes
//! the whole device), and first guesses of the SLC cache's sizes (the
//! bytes written before the fill's and the long idle write's knees).
//! The optimisation then corrects the guesses by replaying the jobs
//! ([`super::optimise`]): a knee on the twin lies where its cache ends,
//! which is not exactly where the guess put it (folding may start before
//! the cache is full, and the cache shrinks as the drive fills).

use super::measure::{JobRecord, Quantity};
use super::params::Param;
use super::Measurement;
use crate::spec::DriveSpec;

/// The value measured for (`job`, `quantity`).
pub fn measured(ms: &[Measurement], job: &str, quantity: Quantity) -> Option<f64> {
    ms.iter().find(|m| m.job == job && m.quantity == quantity).map(|m| m.value)
}

/// Fewer blocks per plane than this after scaling the capacity: smaller
/// blocks instead (see [`capacity`]).
const MIN_BLOCKS_PER_PLANE: f64 = 64.0;

/// The battery's jobs after `fill` that write the rest of the drive in
/// the same sequential pass (its pause half-way, then the rest).
const FILL_PARTS: [&str; 2] = ["idle-fill-write", "fill-rest"];

/// Set the user capacity from the fill (`size=100%` writes the whole
/// device to within its last block, partial or rounded up): unless the
/// base's capacity is within one block of what was written, either side
/// (then the base, or `--set`, is the more exact), the capacity becomes the bytes written, and the raw
/// capacity (blocks per plane) and the SLC cache sizes scale with it, so
/// that the base's over-provisioning is the starting point.
pub fn capacity(spec: &mut DriveSpec, jobs: &[JobRecord], notes: &mut Vec<String>) {
    let Some(fill) = jobs.iter().find(|j| j.name == "fill") else {
        notes.push("capacity: no fill in the results; the base's (or --set's) user capacity is kept".into());
        return;
    };
    // A fill in parts (the battery's: its first half, the write after
    // the pause, the rest) wrote the drive once across them.
    let parts = [fill].into_iter().chain(FILL_PARTS.iter().filter_map(|p| jobs.iter().find(|j| j.name == *p)));
    let whole = fill.option("size").is_none_or(|s| s == "100%");
    if !whole && parts.clone().count() < 1 + FILL_PARTS.len() {
        notes.push(format!(
            "capacity: the fill ran in parts ({} and {}) and not every part is in the results; the base's (or \
             --set's) user capacity is kept",
            "fill",
            FILL_PARTS.join(", ")
        ));
        return;
    }
    let written: u64 = if whole { fill.dirs[1].bytes } else { parts.map(|j| j.dirs[1].bytes).sum() };
    let bs = 128 * 1024;
    // Each part's start and size are shares of the drive rounded to whole
    // blocks, so the parts may overlap by up to a block each (a 16 GB drive:
    // 221,184 bytes more than its capacity in all).
    let tolerance = if whole { bs } else { bs * (1 + FILL_PARTS.len() as u64) };
    let cap = spec.ftl.user_capacity_bytes;
    if written == 0 || cap.abs_diff(written) < tolerance {
        return;
    }
    let new = written / 4096 * 4096;
    let ratio = new as f64 / cap as f64;
    notes.push(format!(
        "capacity: {:.3} GB from the fill's bytes (the base has {:.3} GB); raw capacity and SLC cache sizes \
         scaled by {ratio:.4} as a start",
        new as f64 / 1e9,
        cap as f64 / 1e9
    ));
    spec.ftl.user_capacity_bytes = new;
    let mut bpp = spec.geometry.blocks_per_plane as f64 * ratio;
    // A drive far smaller than the base (a few GB against hundreds) would
    // keep a handful of blocks per plane, fewer than GC's reserves: it gets
    // smaller blocks instead (halved while they keep whole wordlines and
    // at least 128 pages), as `params::shrink` makes small twins.
    let scaled_bpp = bpp;
    let g = &mut spec.geometry;
    let ppb_before = g.pages_per_block;
    while bpp < MIN_BLOCKS_PER_PLANE
        && g.pages_per_block % 2 == 0
        && (g.pages_per_block / 2) % g.bits_per_cell == 0
        && g.pages_per_block / 2 >= 128
    {
        g.pages_per_block /= 2;
        bpp *= 2.0;
    }
    if g.pages_per_block != ppb_before {
        notes.push(format!(
            "capacity: {:.0} blocks per plane would be too few for GC's reserves: pages per block {ppb_before} → {} \
             (the fit does not identify the block size)",
            scaled_bpp, g.pages_per_block
        ));
    }
    Param::BlocksPerPlane.set(spec, bpp.ceil());
    for p in [Param::CacheStatic, Param::CacheMax] {
        if let Some(v) = p.get(spec) {
            p.set(spec, v * ratio);
        }
    }
}

/// First guesses of the SLC cache's sizes: the largest cache is what the
/// fill wrote before its knee (an empty drive has its whole cache), the
/// static part what the write after the long idle wrote before its knee
/// (a full drive keeps only the static part, and the long idle lets
/// folding empty it) — when the base has a static pool: see
/// [`has_static_pool`].
pub fn cache(spec: &mut DriveSpec, ms: &[Measurement], notes: &mut Vec<String>) {
    let knee = |job: &str| {
        measured(ms, job, Quantity::PostCacheMbps).and_then(|_| measured(ms, job, Quantity::CacheGb)).map(|g| g * 1e9)
    };
    if spec.slc_cache.is_none() {
        if let Some(k) = knee("fill") {
            notes.push(format!(
                "SLC cache: the fill's rate drops after {:.1} GB, but the base has no [slc_cache]: the cache \
                 cannot be fitted; choose a base with one",
                k / 1e9
            ));
        }
        return;
    }
    if let Some(k) = knee("fill") {
        Param::CacheMax.set(spec, k);
    } else if measured(ms, "fill", Quantity::CacheGb).is_some() {
        notes.push(
            "SLC cache: the fill's rate never dropped: no cache seen (or one as large as the drive); \
                    the base's cache sizes are kept"
                .into(),
        );
    }
    if let Some(k) = knee("idle-long-write").filter(|_| has_static_pool(spec)) {
        let max = Param::CacheMax.get(spec).unwrap_or(k);
        Param::CacheStatic.set(spec, k.min(max));
    }
}

/// Whether the drive reserves a static pSLC pool (`static_bytes` > 0), a
/// choice of the firmware kept from the base like the write policy. A
/// cache without one is dynamic only: what a full drive keeps after a long
/// idle is then the dynamic cache on the free blocks above GC's target
/// (`model/ftl/slc.rs`), which is the spare area, not a pool: reading it
/// as a static pool would take those blocks from GC.
pub fn has_static_pool(spec: &DriveSpec) -> bool {
    spec.slc_cache.as_ref().is_some_and(|c| c.static_bytes > 0)
}

/// Keep the identified drive valid. A cache read off a knee may need more
/// blocks than the base's spare area leaves beside the user capacity (a
/// static pool, or a dynamic cache's floor, reserved out of the raw
/// capacity); the measured drive had that cache, so it has the raw
/// capacity too: raise the blocks per plane by the least that makes the
/// drive valid (at most to twice the base's) and say so. A drive that no
/// raw capacity makes valid is left for the caller to report.
pub fn keep_valid(spec: &mut DriveSpec, notes: &mut Vec<String>) {
    if spec.build(&spec.name).is_ok() {
        return;
    }
    let base = spec.geometry.blocks_per_plane;
    let valid = |blocks: u32| {
        let mut s = spec.clone();
        Param::BlocksPerPlane.set(&mut s, blocks as f64);
        s.build(&s.name).is_ok()
    };
    // Grow by sixteenths of the base until valid, then bisect back to the
    // least valid count (validity grows with the raw capacity).
    let step = (base / 16).max(1);
    let mut hi = base;
    while !valid(hi) {
        if hi >= base.saturating_mul(2) {
            return;
        }
        hi += step;
    }
    let mut lo = hi - step;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if valid(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    notes.push(format!(
        "spare: the identified cache needs more raw capacity than the base's spare leaves; blocks per plane \
         raised from {base} to {hi} (the spare area is then fitted from there)"
    ));
    Param::BlocksPerPlane.set(spec, hi as f64);
}
