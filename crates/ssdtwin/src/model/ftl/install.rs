//! Installing a block-level state built outside the FTL (the statistical
//! steady state of [`crate::run::state::steady`]): block contents as valid
//! counts, logical pages assigned to valid slots by a seeded permutation.
//!
//! Blocks may be installed sealed, open (a write stream's current block,
//! its written slots programmed up to the last whole program unit) or
//! being collected (a victim of collection paced by host writes).
//!
//! Leaves out: version stamps.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::streams::StreamId;
use super::{Ftl, FtlCore, FtlCounters};
use crate::model::nand::CellMode;
use crate::perm::Permutation;

/// What an installed block is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Full and a GC candidate.
    Sealed,
    /// The open block of a write stream on its die.
    Open(StreamId),
    /// A paced collection victim on its die: valid slots when collection
    /// began, and the remainder of the pace division.
    Collecting(u32, u64),
}

/// One block of an installed state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstalledBlock {
    /// What it is doing.
    pub role: Role,
    /// Physical block.
    pub block: u32,
    /// Cell mode it was programmed in.
    pub mode: CellMode,
    /// Slots written with data (the rest of the block is padding).
    pub written: u32,
    /// Valid slots among the written ones.
    pub valid: u32,
    /// Seal order (age for FIFO and cost-benefit).
    pub seq: u64,
}

impl Ftl {
    /// Replace the whole state of a page-mapped FTL (see
    /// [`FtlCore::install`]); the statistical steady state uses it.
    ///
    /// # Panics
    /// If the drive does not use page mapping.
    pub fn install(
        &mut self,
        blocks: &[InstalledBlock],
        mapped: u32,
        erase_counts: &[Vec<u32>; 2],
        counters: FtlCounters,
        seed: u64,
    ) {
        assert!(self.hybrid().is_none(), "a state can be installed only into a page-mapped FTL");
        self.core.install(blocks, mapped, erase_counts, counters, seed);
    }
}

impl FtlCore {
    /// Replace the whole state: secure erase, then `blocks` sealed with
    /// their valid counts, every other block free, logical pages
    /// `0..mapped` spread over the valid slots (a uniformly random subset
    /// of each block's written slots) in a random order seeded by `seed`.
    /// The valid counts must add up to `mapped`.
    fn install(
        &mut self,
        blocks: &[InstalledBlock],
        mapped: u32,
        erase_counts: &[Vec<u32>; 2],
        counters: FtlCounters,
        seed: u64,
    ) {
        assert_eq!(blocks.iter().map(|b| b.valid as u64).sum::<u64>(), mapped as u64, "valid slots = mapped pages");
        self.secure_erase();
        let modes = [self.geo.slots_in_mode(CellMode::Native), self.geo.slots_in_mode(CellMode::Slc)];
        let sealed: Vec<_> = blocks.iter().map(|b| (b.block, b.mode, b.valid, b.seq)).collect();
        self.blocks.install_sealed(&sealed, modes, erase_counts);
        if let Some(m) = &mut self.map {
            // A drive in use holds every translation page on flash.
            m.install_all_on_flash();
        }
        let mut by_age: Vec<&InstalledBlock> = blocks.iter().collect();
        by_age.sort_by_key(|b| b.seq);
        for b in &by_age {
            self.victims.on_seal(b.block, b.mode, &self.geo);
        }
        self.seq = by_age.last().map_or(0, |b| b.seq);
        for b in blocks {
            let die = self.geo.die_of_block(b.block);
            match b.role {
                Role::Sealed => {}
                Role::Open(stream) => {
                    self.blocks.begin_collect(b.block);
                    self.victims.on_collect(b.block, b.mode);
                    let unit = self.geo.unit_slots(b.mode);
                    self.blocks.reopen(b.block, b.written, b.written - b.written % unit);
                    let at = self.stream_base(stream) + die;
                    self.streams[stream as usize].open[at as usize] = b.block;
                }
                Role::Collecting(valid_at_start, carry) => {
                    self.blocks.begin_collect(b.block);
                    self.victims.on_collect(b.block, b.mode);
                    self.bg[die as usize] =
                        Some(super::pool::Paced { carry, ..super::pool::Paced::new(b.block, b.mode, valid_at_start) });
                }
            }
        }
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut perm = Permutation::new(mapped as u64, &mut rng);
        let mut by_block: Vec<&InstalledBlock> = blocks.iter().collect();
        by_block.sort_by_key(|b| b.block);
        for b in by_block {
            let first = self.geo.first_slot(b.block);
            // Selection sampling: each written slot is kept with
            // probability (still needed) / (still to see).
            let mut need = b.valid;
            for off in 0..b.written {
                if need == 0 {
                    break;
                }
                if rng.random_range(0..b.written - off) < need {
                    let lpn = perm.next() as u32;
                    let slot = first + off;
                    self.p2l[slot as usize] = lpn;
                    self.l2p[lpn as usize] = slot;
                    need -= 1;
                }
            }
            if b.mode == CellMode::Slc {
                self.slc_valid_slots += b.valid as u64;
            }
        }
        self.mapped_lpns = mapped as u64;
        self.counters = counters;
    }
}
