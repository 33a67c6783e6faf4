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
//! time lets the drive fold in the background down to a target.
//!
//! Fold victims are chosen by the GC policy among sealed SLC blocks, so
//! data overwritten while still in SLC is never folded. Not modelled:
//! SLC-to-SLC compaction and per-die cache balancing beyond round-robin.

use super::Ftl;
use crate::model::nand::{CellMode, SECTOR_BYTES};
use crate::spec::SlcWritePolicy;

impl Ftl {
    /// Fill fraction: mapped logical pages / user pages.
    pub fn fill_fraction(&self) -> f64 {
        self.mapped_lpns as f64 / self.l2p.len() as f64
    }

    /// SLC blocks the cache may hold now (whole drive).
    pub fn slc_limit_blocks(&self) -> u32 {
        let Some(slc) = &self.slc else { return 0 };
        let curve = slc.curve_blocks(self.fill_fraction()).floor() as u64;
        let mut available = self.blocks.slc_in_use as u64;
        for die in 0..self.geo.dies {
            available += self.blocks.static_free_count(die) as u64;
            available += self.blocks.free_count(die).saturating_sub(self.gc_high) as u64;
            // Blocks emptied by overwrites or TRIM are free for an erase.
            available += self.blocks.empty_count(die, CellMode::Native) as u64;
        }
        curve.min(available) as u32
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

    /// Mode of the next host block on `die`, folding first if the policy
    /// says so.
    pub(super) fn host_mode(&mut self, die: u32) -> CellMode {
        let Some(slc) = &self.slc else { return CellMode::Native };
        let (policy, threshold) = (slc.write_policy, slc.fold_threshold_blocks as i64);
        loop {
            let room = self.slc_limit_blocks() as i64 - self.blocks.slc_in_use as i64;
            if room > threshold {
                return CellMode::Slc;
            }
            if policy == SlcWritePolicy::NativeWhenFull && room <= 0 {
                return CellMode::Native;
            }
            // Fold in the foreground to make room (the host waits).
            if !self.fold_one(die) {
                return if room > 0 || policy == SlcWritePolicy::AlwaysSlc { CellMode::Slc } else { CellMode::Native };
            }
        }
    }

    /// Open an SLC block on `die`: from the static pool if it has one,
    /// else a free native block borrowed by the dynamic cache.
    pub(super) fn take_slc_block(&mut self, die: u32) -> Option<u32> {
        if let Some(b) = self.blocks.take_static(die) {
            return Some(b);
        }
        self.reclaim_until_low_watermark(die);
        self.blocks.take_free(die, CellMode::Slc)
    }

    /// Fold one sealed SLC block, preferring `die`, else the next die
    /// that has one. Returns false if no SLC block can be folded.
    pub(super) fn fold_one(&mut self, die: u32) -> bool {
        let dies = self.geo.dies;
        if self.blocks.sealed_count(die, CellMode::Slc) > 0 {
            return self.collect_one(die, CellMode::Slc);
        }
        for i in 0..dies {
            let d = (self.fold_die + i) % dies;
            if self.blocks.sealed_count(d, CellMode::Slc) > 0 {
                self.fold_die = (d + 1) % dies;
                return self.collect_one(d, CellMode::Slc);
            }
        }
        false
    }
}
