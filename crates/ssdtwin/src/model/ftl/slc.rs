//! SLC cache: pSLC blocks in front of the native (TLC/QLC) array.
//!
//! Host writes land in blocks programmed one bit per cell and are later
//! **folded** — read back and programmed, one whole wordline at a time,
//! into native blocks by the fold stream. The cache has two parts:
//! - a **static** pool of blocks reserved for SLC use (set aside in
//!   [`super::blocks::BlockTable`]);
//! - a **dynamic** part that borrows free native blocks. Its size is the
//!   drive file's capacity curve at the current fill (mapped pages / user
//!   pages), but never more than the free blocks above the background-GC
//!   target (and the blocks left without valid data, which only need an
//!   erase) allow, so it shrinks as the drive fills and grows back when
//!   data is trimmed.
//!
//! When a host block is needed and the cache is full (or its free space is
//! below the fold threshold), the write policy decides: `always-slc` folds
//! SLC blocks first (the host waits: Intel 660p/600p), `native-when-full`
//! opens a native block instead. Folding is otherwise lazy: data stays in
//! SLC until the cache or native capacity needs the room, or until idle
//! time lets the drive fold in the background down to a target — or,
//! with a room target (`idle_fold_room_bytes`), only until the cache has
//! that much free room, so that on a mostly empty drive the data stays
//! in SLC.
//!
//! Fold victims are chosen by the GC policy among sealed SLC blocks, so
//! data overwritten while still in SLC is never folded; among equally
//! valid blocks the one sealed first goes first (the victim buckets keep
//! SLC blocks oldest first), so lazy folding evicts the data that has sat
//! in the cache longest and a sequential fill leaves its last-written data
//! in SLC. Not modelled:
//! SLC-to-SLC compaction and per-die cache balancing beyond round-robin.
//!
//! The policies are generic over [`BlockPool`], shared by the FTL and the
//! statistical steady-state builder.

use super::gc::collect_one;
use super::pool::BlockPool;
use super::FtlCore;
use crate::model::nand::{CellMode, SECTOR_BYTES};
use crate::model::params::{SlcModel, SlcWritePolicy};

impl FtlCore {
    /// Fill fraction: mapped logical pages / user pages.
    pub fn fill_fraction(&self) -> f64 {
        self.mapped_lpns as f64 / self.l2p.len() as f64
    }

    /// SLC blocks the cache may hold now (whole drive).
    pub fn slc_limit_blocks(&self) -> u32 {
        slc_limit_blocks(self) as u32
    }

    /// Current SLC cache capacity in bytes (what the drive would report).
    pub fn slc_cache_bytes(&self) -> u64 {
        self.slc
            .as_ref()
            .map_or(0, |s| self.slc_limit_blocks() as u64 * s.slots_per_slc_block as u64 * SECTOR_BYTES as u64)
    }

    /// Bytes of SLC blocks in use (open or full, valid or not).
    pub fn slc_used_bytes(&self) -> u64 {
        self.slc
            .as_ref()
            .map_or(0, |s| self.blocks.slc_in_use as u64 * s.slots_per_slc_block as u64 * SECTOR_BYTES as u64)
    }

    /// Bytes of valid data waiting in SLC to be folded.
    pub fn fold_backlog_bytes(&self) -> u64 {
        self.slc_valid_slots * SECTOR_BYTES as u64
    }

    /// Whether idle time should fold: the drive folds when idle, holds
    /// more than its idle target in SLC, and (with `idle_fold_room_bytes`)
    /// has less free room in the cache than that.
    pub(super) fn idle_fold_wanted(&self, slc: &SlcModel) -> bool {
        if !slc.idle_fold || self.slc_valid_slots <= slc.idle_fold_target_slots {
            return false;
        }
        match slc.idle_fold_room_blocks {
            None => true,
            Some(room) => slc_limit_blocks(self) - (self.blocks.slc_in_use as f64) < room,
        }
    }
}

/// SLC blocks the cache may hold now: the capacity curve at the pool's
/// fill, but never more than the blocks in use plus the free static
/// blocks, the free native blocks above the background-GC target and the
/// native blocks emptied by overwrites or TRIM (free for an erase).
pub fn slc_limit_blocks<P: BlockPool>(pool: &P) -> f64 {
    if pool.slc_model().is_none() {
        return 0.0;
    }
    let high = pool.high_watermark();
    let mut available = pool.slc_in_use() as u64;
    for die in 0..pool.pool_dies() {
        available += pool.static_free_count(die) as u64;
        available += pool.free_count(die).saturating_sub(high) as u64;
        available += pool.empty_native_count(die) as u64;
    }
    pool.slc_curve_blocks().min(available as f64)
}

/// Mode of the next host block on `die`: SLC while the cache has more room
/// than the fold threshold; otherwise fold in the foreground to make room
/// (the host waits) — or, with `native-when-full`, write natively once the
/// cache is full.
pub fn host_mode<P: BlockPool>(pool: &mut P, die: u32) -> CellMode {
    let Some(slc) = pool.slc_model() else { return CellMode::Native };
    let policy = slc.write_policy;
    let threshold = pool.fold_threshold_blocks();
    loop {
        let room = slc_limit_blocks(pool) - pool.slc_in_use() as f64;
        if room > threshold {
            return CellMode::Slc;
        }
        if policy == SlcWritePolicy::NativeWhenFull && room <= 0.0 {
            return CellMode::Native;
        }
        if !fold_one(pool, die) {
            return if room > 0.0 || policy == SlcWritePolicy::AlwaysSlc { CellMode::Slc } else { CellMode::Native };
        }
    }
}

/// Open an SLC block on `die`: from the static pool if it has one, else a
/// free native block borrowed by the dynamic cache (reclaiming space first
/// if the die is at its low watermark).
pub fn take_slc_block<P: BlockPool>(pool: &mut P, die: u32) -> Option<u32> {
    if let Some(b) = pool.take_static(die) {
        return Some(b);
    }
    super::gc::reclaim_until_low(pool, die);
    pool.take_free(die, CellMode::Slc, super::streams::StreamId::Host)
}

/// Fold one sealed SLC block, preferring `die`, else the next die (round
/// robin) that has one. Returns false if no SLC block can be folded.
pub fn fold_one<P: BlockPool>(pool: &mut P, die: u32) -> bool {
    if pool.sealed_count(die, CellMode::Slc) > 0 {
        return collect_one(pool, die, CellMode::Slc);
    }
    let dies = pool.pool_dies();
    let start = pool.fold_cursor();
    for i in 0..dies {
        let d = (start + i) % dies;
        if pool.sealed_count(d, CellMode::Slc) > 0 {
            pool.set_fold_cursor((d + 1) % dies);
            return collect_one(pool, d, CellMode::Slc);
        }
    }
    false
}
