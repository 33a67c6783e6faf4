//! The SLC cache's parameters: the drive file's `[slc_cache]` table as
//! serde reads it ([`SlcCacheSpec`], [`SlcWritePolicy`]) and what
//! validation derives from it in the FTL's units ([`SlcModel`]). What the
//! cache does with them is `crate::model::ftl::slc`'s; what each field
//! means is in `docs/drive-file.md`. Leaves out the checks that turn the
//! one into the other (`crate::spec`).

use serde::{Deserialize, Serialize};

/// SLC cache: host writes land in blocks programmed one bit per cell
/// (pSLC) and are later folded into native blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlcCacheSpec {
    /// SLC capacity of the static part: blocks reserved for SLC use only,
    /// in bytes of SLC data (each block holds 1/bits_per_cell of its
    /// native capacity).
    pub static_bytes: u64,
    /// Total cache capacity (static + dynamic) as a piecewise-linear
    /// function of how full the drive is: `[fill fraction, bytes]` points,
    /// fill fractions rising from 0 to 1. The dynamic part borrows free
    /// native blocks, so the cache is also never larger than the free
    /// blocks allow. `[[0, 12e9]]` alone means a static-only cache.
    pub capacity_curve: Vec<[f64; 2]>,
    /// `"always-slc"`: every host write goes through SLC, also when the
    /// cache is full (the drive folds first; Intel 660p/600p).
    /// `"native-when-full"`: host writes go straight to native blocks once
    /// the cache is full.
    pub write_policy: SlcWritePolicy,
    /// Foreground folding starts when free cache space falls below this
    /// many bytes (0: fold only when the cache is full — lazy folding).
    #[serde(default)]
    pub fold_threshold_bytes: u64,
    /// Fold during host idle time (after `ftl.idle_threshold_ns`).
    pub idle_fold: bool,
    /// Idle folding stops when this many bytes of data remain in SLC.
    #[serde(default)]
    pub idle_fold_target_bytes: u64,
    /// Idle folding runs only while the cache has less free room than
    /// this many bytes (its capacity at the current fill less the SLC
    /// blocks in use), and stops once it has that much: the drive keeps
    /// its data in SLC and folds in idle time only what it needs to take
    /// this many bytes of host writes at SLC speed. Absent: idle folding
    /// runs down to `idle_fold_target_bytes` whatever the room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_fold_room_bytes: Option<u64>,
}

/// Where host writes go when the SLC cache is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlcWritePolicy {
    /// Through SLC always; fold to make room first.
    AlwaysSlc,
    /// Directly to native blocks.
    NativeWhenFull,
}

/// The SLC cache in the FTL's units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlcModel {
    /// Blocks per die reserved for SLC use.
    pub static_blocks_per_die: u32,
    /// Capacity curve: (fill fraction, SLC blocks in the whole drive).
    pub curve: Vec<(f64, f64)>,
    /// Where host writes go when the cache is full.
    pub write_policy: SlcWritePolicy,
    /// Fold in the foreground when free cache space is below this, blocks.
    pub fold_threshold_blocks: u32,
    /// Fold during idle.
    pub idle_fold: bool,
    /// Idle folding stops at this many slots of data in SLC.
    pub idle_fold_target_slots: u64,
    /// Idle folding runs only while the cache's free room is below this
    /// many SLC blocks (whole drive); `None`: whatever the room.
    pub idle_fold_room_blocks: Option<f64>,
    /// 4 KiB slots of one SLC block.
    pub slots_per_slc_block: u32,
}

impl SlcModel {
    /// Cache capacity in SLC blocks (whole drive) at a fill fraction.
    pub fn curve_blocks(&self, fill: f64) -> f64 {
        let c = &self.curve;
        if fill <= c[0].0 {
            return c[0].1;
        }
        for w in c.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            if fill <= x1 {
                return if x1 == x0 { y1 } else { y0 + (y1 - y0) * (fill - x0) / (x1 - x0) };
            }
        }
        c[c.len() - 1].1
    }
}
