//! The drive parameters a fit sets, each read from and written into a
//! [`DriveSpec`] field: the continuous ones ([`Param`]) and the die
//! count ([`set_dies`]), a structural one. A parameter stands for a
//! family of fields where the measurements cannot tell them apart: the
//! native tR of every page type is scaled together (their ratios kept
//! from the base: the battery's random reads see their mean), as are the
//! program times of a multi-step program.
//!
//! Not fitted, kept from the base: the channel count (only the product of
//! channels and channel rate shows in sequential rates), planes (reads
//! are booked per die; more planes act as a longer program unit, which the
//! program time absorbs), the controller's cores (their count and the
//! command overhead trade off exactly at saturation), ECC and buffer
//! times (they add to the command overhead at QD1), erase time, how the
//! map cache's memory is shared out (`ftl.map_cache.dram_share`: only the
//! memory's product with it shows, and [`Param::MapMemory`] is fitted),
//! power and thermal models, and the SLC cache's shape (the fills at
//! which it shrinks: one fill sees one point of it).

use crate::spec::DriveSpec;

/// A continuous parameter of the fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Param {
    /// Mean native tR over the page types, ns (`nand.native.tr_ns`, scaled
    /// together).
    NativeTr,
    /// `controller.cmd_overhead_ns`.
    CmdOverhead,
    /// `nand.channel_mts`.
    ChannelMts,
    /// Mean pSLC program time, ns (`nand.slc.tprog_ns`, scaled together).
    SlcTprog,
    /// Mean native program time, ns (`nand.native.tprog_ns`).
    NativeTprog,
    /// `geometry.blocks_per_plane`: the raw capacity, and with the user
    /// capacity the spare area (over-provisioning).
    BlocksPerPlane,
    /// Largest SLC cache, bytes (the `slc_cache.capacity_curve` scaled).
    CacheMax,
    /// `slc_cache.static_bytes` (with the curve's floor, and the idle
    /// folding's room target where the base ties it to the static part).
    CacheStatic,
    /// `slc_cache.idle_fold_room_bytes`: idle folding stops once the
    /// cache has this much room (`None` on a drive that folds everything).
    IdleFoldRoom,
    /// The memory that caches the map (`controller.dram_bytes`, or on a
    /// DRAM-less drive `host.hmb_bytes`, else `controller.sram_bytes`),
    /// bytes, with the map journal that lives in it scaled alike (as
    /// [`shrink`] scales both): how much of the map the cache holds, so
    /// how far the drive reads without map misses. Only drives with
    /// `[ftl.map_cache]` have it.
    MapMemory,
}

impl Param {
    /// Every parameter, in the order they are reported.
    pub const ALL: [Param; 10] = [
        Param::NativeTr,
        Param::CmdOverhead,
        Param::ChannelMts,
        Param::SlcTprog,
        Param::NativeTprog,
        Param::BlocksPerPlane,
        Param::CacheMax,
        Param::CacheStatic,
        Param::IdleFoldRoom,
        Param::MapMemory,
    ];

    /// The drive file's field, and the unit of [`Param::get`].
    pub fn field(self) -> (&'static str, &'static str) {
        match self {
            Param::NativeTr => ("nand.native.tr_ns (mean)", "µs"),
            Param::CmdOverhead => ("controller.cmd_overhead_ns", "µs"),
            Param::ChannelMts => ("nand.channel_mts", "MT/s"),
            Param::SlcTprog => ("nand.slc.tprog_ns (mean)", "µs"),
            Param::NativeTprog => ("nand.native.tprog_ns (mean)", "µs"),
            Param::BlocksPerPlane => ("geometry.blocks_per_plane", "blocks"),
            Param::CacheMax => ("slc_cache.capacity_curve (max)", "GB"),
            Param::CacheStatic => ("slc_cache.static_bytes", "GB"),
            Param::IdleFoldRoom => ("slc_cache.idle_fold_room_bytes", "GB"),
            Param::MapMemory => ("map cache memory (DRAM, else HMB)", "MB"),
        }
    }

    /// The value in the unit printed ([`Param::field`]).
    pub fn display(self, v: f64) -> f64 {
        match self {
            Param::NativeTr | Param::CmdOverhead | Param::SlcTprog | Param::NativeTprog => v / 1e3,
            Param::CacheMax | Param::CacheStatic | Param::IdleFoldRoom => v / 1e9,
            Param::MapMemory => v / 1e6,
            Param::ChannelMts | Param::BlocksPerPlane => v,
        }
    }

    /// The parameter's value in `spec` (ns, MT/s, blocks or bytes);
    /// `None` when the drive has no such part (no SLC cache).
    pub fn get(self, spec: &DriveSpec) -> Option<f64> {
        let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
        Some(match self {
            Param::NativeTr => mean(&spec.nand.native.tr_ns),
            Param::CmdOverhead => spec.controller.cmd_overhead_ns as f64,
            Param::ChannelMts => spec.nand.channel_mts as f64,
            Param::SlcTprog => mean(&spec.nand.slc.as_ref()?.tprog_ns),
            Param::NativeTprog => mean(&spec.nand.native.tprog_ns),
            Param::BlocksPerPlane => spec.geometry.blocks_per_plane as f64,
            Param::CacheMax => spec.slc_cache.as_ref()?.capacity_curve.iter().map(|p| p[1]).fold(0.0, f64::max),
            Param::CacheStatic => spec.slc_cache.as_ref()?.static_bytes as f64,
            Param::IdleFoldRoom => spec.slc_cache.as_ref()?.idle_fold_room_bytes? as f64,
            Param::MapMemory => {
                spec.ftl.map_cache.as_ref()?;
                let c = &spec.controller;
                [c.dram_bytes, spec.host.hmb_bytes, c.sram_bytes].into_iter().flatten().find(|&b| b > 0)? as f64
            }
        })
    }

    /// Set the parameter to `v` (rounded to the field's integer unit).
    pub fn set(self, spec: &mut DriveSpec, v: f64) {
        let scale = |xs: &mut Vec<u64>, v: f64| {
            let mean = xs.iter().sum::<u64>() as f64 / xs.len().max(1) as f64;
            for x in xs.iter_mut() {
                *x = ((*x as f64) * v / mean).round().max(1.0) as u64;
            }
        };
        match self {
            Param::NativeTr => scale(&mut spec.nand.native.tr_ns, v),
            Param::CmdOverhead => spec.controller.cmd_overhead_ns = v.round().max(0.0) as u64,
            Param::ChannelMts => spec.nand.channel_mts = v.round().max(1.0) as u32,
            Param::SlcTprog => {
                if let Some(s) = spec.nand.slc.as_mut() {
                    scale(&mut s.tprog_ns, v);
                }
            }
            Param::NativeTprog => scale(&mut spec.nand.native.tprog_ns, v),
            Param::BlocksPerPlane => spec.geometry.blocks_per_plane = v.round().max(1.0) as u32,
            Param::IdleFoldRoom => {
                if let Some(c) = spec.slc_cache.as_mut() {
                    c.idle_fold_room_bytes = Some(v.round().max(1.0) as u64);
                }
            }
            Param::CacheMax => {
                if let Some(c) = spec.slc_cache.as_mut() {
                    let max = c.capacity_curve.iter().map(|p| p[1]).fold(0.0, f64::max);
                    let floor = c.static_bytes as f64;
                    for p in &mut c.capacity_curve {
                        p[1] = if max > 0.0 { (p[1] * v / max).round().max(floor) } else { v.round() };
                    }
                }
            }
            Param::MapMemory => {
                if spec.ftl.map_cache.is_none() {
                    return;
                }
                let Some(m) = map_memory(spec) else { return };
                let old = *m as f64;
                *m = v.round().max(1.0) as u64;
                let f = *m as f64 / old.max(1.0);
                if let Some(j) = spec.ftl.map_cache.as_mut().and_then(|c| c.journal_entries.as_mut()) {
                    *j = ((*j as f64 * f).round() as u32).max(1);
                }
            }
            Param::CacheStatic => {
                if let Some(c) = spec.slc_cache.as_mut() {
                    let old = c.static_bytes as f64;
                    let new = v.round().max(0.0);
                    c.static_bytes = new as u64;
                    // A room target the base ties to the static part (the
                    // 660p: "a small static part ... is always available")
                    // follows it.
                    if c.idle_fold_room_bytes == Some(old as u64) {
                        c.idle_fold_room_bytes = Some(new as u64);
                    }
                    // The curve's floor (its points at the old static size)
                    // follows; no point may lie below the static part.
                    for p in &mut c.capacity_curve {
                        if p[1] <= old {
                            p[1] = new;
                        }
                        p[1] = p[1].max(new);
                    }
                }
            }
        }
    }

    /// `v` of this parameter on a drive of `from` bytes of user capacity,
    /// as it is on a drive of `to` bytes that [`shrink`] relates to it:
    /// the map cache's memory scales with the capacity, the rest stays.
    pub fn rescaled(self, v: f64, from: f64, to: f64) -> f64 {
        match self {
            Param::MapMemory => v * to / from,
            _ => v,
        }
    }

    /// The range searched, around the base's value `v`.
    pub fn bounds(self, v: f64) -> (f64, f64) {
        match self {
            Param::BlocksPerPlane => (v * 0.8, v * 1.5),
            Param::CacheMax | Param::CacheStatic | Param::IdleFoldRoom => (v * 0.05, v * 20.0),
            _ => (v / 8.0, v * 8.0),
        }
    }
}

/// `spec` with each `(param, start)` of `start` set to start × e^x (the
/// optimisers search in ln space); `None` when one leaves its bounds.
pub fn at_log_offsets(spec: &DriveSpec, start: &[(Param, f64)], x: &[f64]) -> Option<DriveSpec> {
    let mut s = spec.clone();
    for (&(p, v0), &xi) in start.iter().zip(x) {
        let v = v0 * xi.exp();
        let (lo, hi) = p.bounds(v0);
        if !(lo..=hi).contains(&v) {
            return None;
        }
        p.set(&mut s, v);
    }
    Some(s)
}

/// The memory the map cache lives in: `controller.dram_bytes` when
/// non-zero, else `host.hmb_bytes` when non-zero, else
/// `controller.sram_bytes` (the model's order, `spec/mapcache.rs`).
fn map_memory(spec: &mut DriveSpec) -> Option<&mut u64> {
    if spec.controller.dram_bytes.is_some_and(|d| d > 0) {
        return spec.controller.dram_bytes.as_mut();
    }
    if spec.host.hmb_bytes.is_some_and(|h| h > 0) {
        return spec.host.hmb_bytes.as_mut();
    }
    spec.controller.sram_bytes.as_mut().filter(|s| **s > 0)
}

/// The die count of `spec`.
pub fn dies(spec: &DriveSpec) -> u32 {
    spec.geometry.dies.unwrap_or(spec.geometry.channels * spec.geometry.dies_per_channel)
}

/// Give `spec` `n` dies on its channels, keeping the raw capacity (the
/// blocks per plane scale inversely).
pub fn set_dies(spec: &mut DriveSpec, n: u32) {
    let old = dies(spec);
    let g = &mut spec.geometry;
    g.dies_per_channel = n.div_ceil(g.channels).max(1);
    g.dies = (n % g.channels != 0).then_some(n);
    g.blocks_per_plane = ((g.blocks_per_plane as f64 * old as f64 / n as f64).round() as u32).max(8);
}

/// `spec` scaled down (or up) to `bytes` of user capacity, for trying the
/// battery and the fit on a small twin of a preset: fewer pages per block
/// (whole wordlines, at least 128 pages) and blocks per plane in
/// proportion, so that the raw / user ratio (the spare area) stays; the
/// SLC cache's sizes (with idle folding's room), the DRAM, the host memory buffer and the map
/// journal scaled by the same factor, so that the cache and the cached map
/// cover the same share of the drive. Dies, planes and every timing stay.
pub fn shrink(spec: &mut DriveSpec, bytes: f64) {
    let f = bytes / spec.ftl.user_capacity_bytes as f64;
    let g = &mut spec.geometry;
    let k = [8, 4, 2, 1]
        .into_iter()
        .find(|&k| {
            g.pages_per_block % k == 0 && (g.pages_per_block / k) % g.bits_per_cell == 0 && g.pages_per_block / k >= 128
        })
        .unwrap_or(1);
    g.pages_per_block /= k;
    g.blocks_per_plane = ((g.blocks_per_plane as f64 * k as f64 * f).round() as u32).max(8);
    spec.ftl.user_capacity_bytes = (bytes / 4096.0).round() as u64 * 4096;
    if let Some(c) = spec.slc_cache.as_mut() {
        let scaled = |b: u64| (b as f64 * f) as u64;
        c.static_bytes = scaled(c.static_bytes);
        for p in &mut c.capacity_curve {
            p[1] = (p[1] * f).round().max(c.static_bytes as f64);
        }
        // The cache's other sizes likewise: the room idle folding makes
        // (the 660p's is its static part, and stays equal to it), the
        // fold threshold and the idle target. Unscaled, a 16 GB twin of
        // the 660p 1 TB kept a 12 GB room, more than its whole cache, and
        // folded all of it in every idle as before issue 33.
        c.idle_fold_room_bytes = c.idle_fold_room_bytes.map(scaled);
        c.fold_threshold_bytes = scaled(c.fold_threshold_bytes);
        c.idle_fold_target_bytes = scaled(c.idle_fold_target_bytes);
    }
    if let Some(d) = spec.controller.dram_bytes.as_mut() {
        *d = (*d as f64 * f) as u64;
    }
    if let Some(h) = spec.host.hmb_bytes.as_mut() {
        *h = (*h as f64 * f) as u64;
    }
    // The SRAM's share of the map (a DRAM-less drive's cache without a
    // buffer, or where an HMB read cache's updates are held) covers the
    // same share of the drive.
    if let Some(s) = spec.controller.sram_bytes.as_mut() {
        *s = (*s as f64 * f) as u64;
    }
    // The map journal lives in that memory and covers the same share.
    if let Some(j) = spec.ftl.map_cache.as_mut().and_then(|m| m.journal_entries.as_mut()) {
        *j = ((*j as f64 * f) as u32).max(1);
    }
}
