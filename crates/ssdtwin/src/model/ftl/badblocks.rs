//! Bad-block management: factory bad blocks, program and erase failures
//! that retire blocks, the spare pool they consume, read-only mode at end
//! of life, and the relocation of a block's data after an uncorrectable
//! read.
//!
//! - **Factory bad blocks**: `factory_per_die` blocks of every die, drawn
//!   with the drive's seed, never enter the pool (they stay bad across
//!   secure erases and formats).
//! - **Program failure**: a program operation fails with a probability
//!   that grows as `(PE / rated)^fail_exponent` (PE: the block's
//!   native-equivalent erases), scaled so that the drive file's fraction
//!   of blocks has failed by the rated cycles
//!   ([`BadBlockModel::fail_probability`], shared by the program
//!   operations that fill a block once). The controller still holds the data it
//!   programmed, so nothing is lost: the block is closed and every valid
//!   page it holds (the failed unit's included) is rewritten elsewhere by
//!   the GC move machinery before the FTL takes its next host page, then
//!   the block retires without an erase.
//! - **Erase failure**: an erase fails with its own probability of the
//!   same form; the block (already empty) retires instead of returning to
//!   the free list.
//! - **Spare**: each die sets aside `spare_blocks_per_die` blocks to
//!   replace grown bad blocks (as over-provisioning until needed). The
//!   health log's available spare is the least spare left on any die, in
//!   percent; below `spare_threshold_percent` the drive warns and turns
//!   read-only (NVMe critical warning bits 0 and 3), and stops its
//!   background work.
//!
//! Left out: failures of map-cache translation blocks and of the
//! statistical steady-state construction (neither draws failures), die or
//! plane failures, and the time a failed operation's status check takes.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::blocks::BlockState;
use super::pool::BlockPool;
use super::streams::StreamId;
use super::{FtlCore, NandOp};
use crate::model::media::BadBlockModel;
use crate::model::nand::{CellMode, Geometry, NONE};

/// Bad-block counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BadBlockCounters {
    /// Program operations that failed.
    pub program_failures: u64,
    /// Erases that failed.
    pub erase_failures: u64,
    /// Blocks retired since the factory (grown bad blocks).
    pub grown_bad_blocks: u64,
    /// Blocks bad from the factory.
    pub factory_bad_blocks: u64,
}

/// The state of bad-block management.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BadBlocks {
    model: BadBlockModel,
    rng: Pcg64Mcg,
    /// Every bad block (factory and grown), kept across secure erases.
    bad: Vec<u32>,
    grown_per_die: Vec<u32>,
    /// Blocks whose program failed, waiting to be relocated and retired.
    pending: Vec<u32>,
    /// Blocks whose program failed (retired at their next erase if GC
    /// takes them before the relocation does).
    failed: Vec<bool>,
    /// Counters.
    pub counters: BadBlockCounters,
}

impl BadBlocks {
    /// Draw the factory bad blocks of a drive.
    pub fn new(model: &BadBlockModel, geo: &Geometry) -> BadBlocks {
        let mut rng = Pcg64Mcg::seed_from_u64(model.seed);
        let mut bad = Vec::new();
        let per_die = geo.blocks_per_die;
        for die in 0..geo.dies {
            // A partial Fisher–Yates shuffle of the die's blocks.
            let mut ids: Vec<u32> = (0..per_die).collect();
            for i in 0..model.factory_per_die.min(per_die) {
                let j = rng.random_range(i..per_die);
                ids.swap(i as usize, j as usize);
                bad.push(die * per_die + ids[i as usize]);
            }
        }
        BadBlocks {
            counters: BadBlockCounters { factory_bad_blocks: bad.len() as u64, ..Default::default() },
            model: model.clone(),
            rng,
            bad,
            grown_per_die: vec![0; geo.dies as usize],
            pending: Vec::new(),
            failed: vec![false; geo.total_blocks as usize],
        }
    }

    /// Every bad block (factory and grown).
    pub fn bad_blocks(&self) -> &[u32] {
        &self.bad
    }

    /// Available spare, % (NVMe Available Spare): the least spare left on
    /// any die.
    pub fn available_spare_percent(&self) -> u32 {
        let spare = self.model.spare_blocks_per_die;
        let worst = self.grown_per_die.iter().copied().max().unwrap_or(0);
        (spare.saturating_sub(worst) * 100 / spare).min(100)
    }

    /// The available spare threshold, %.
    pub fn threshold_percent(&self) -> u32 {
        self.model.spare_threshold_percent
    }

    /// Whether spare is below the threshold: the drive is read-only.
    pub fn read_only(&self) -> bool {
        self.available_spare_percent() < self.model.spare_threshold_percent
    }

    /// Draw whether `block` fails (an erase or a program) somewhere over
    /// the cycles from `pe_before` to `pe_after` (native-equivalent
    /// erases) that were not simulated one by one: the per-cycle
    /// probabilities summed over them, `by_rated · ((pe_after/N)^(k+1) −
    /// (pe_before/N)^(k+1))`. A block drawn to fail retires at its next
    /// erase (as after a failed program whose relocation GC overtook).
    pub(super) fn fails_over(&mut self, block: u32, pe_before: f64, pe_after: f64, rng: &mut impl rand::Rng) -> bool {
        if self.failed[block as usize] {
            return false;
        }
        let m = &self.model;
        let cumulative = |pe: f64| (pe / m.rated_pe).powf(m.fail_exponent + 1.0);
        let (erase, program) = (m.erase_failed_by_rated, m.program_failed_by_rated);
        let expected = (erase + program) * (cumulative(pe_after) - cumulative(pe_before)).max(0.0);
        if rng.random::<f64>() >= 1.0 - (-expected).exp() {
            return false;
        }
        self.failed[block as usize] = true;
        if rng.random::<f64>() * (erase + program) < erase {
            self.counters.erase_failures += 1;
        } else {
            self.counters.program_failures += 1;
        }
        true
    }

    fn draw(&mut self, by_rated: f64, pe: f64) -> bool {
        let p = self.model.fail_probability(by_rated, pe);
        p > 0.0 && self.rng.random::<f64>() < p
    }
}

/// A block's wear in native erases (a pSLC erase wears it by the ratio of
/// the modes' rated cycles; without an SLC rating, as a native one).
pub(super) fn native_equivalent(core: &FtlCore, block: u32) -> f64 {
    let b = block as usize;
    let e = &core.blocks.erase_count;
    e[0][b] as f64 + e[1][b] as f64 * core.slc_wear_ratio
}

impl FtlCore {
    /// Whether the drive has turned read-only (spare exhausted).
    pub(super) fn read_only(&self) -> bool {
        self.bad.as_ref().is_some_and(BadBlocks::read_only)
    }

    /// After a program of `block` was issued: draw whether it failed, and
    /// if so queue the block for relocation.
    #[inline]
    pub(super) fn check_program(&mut self, block: u32) {
        let Some(bad) = &self.bad else { return };
        let pe = native_equivalent(self, block);
        let mode = self.blocks.mode[block as usize];
        // The probability per cycle is shared by the block's programs.
        let programs = (self.geo.slots_in_mode(mode) / self.geo.unit_slots(mode)).max(1) as f64;
        let by_rated = bad.model.program_failed_by_rated / programs;
        let bad = self.bad.as_mut().expect("checked");
        if bad.draw(by_rated, pe) {
            bad.counters.program_failures += 1;
            if !bad.failed[block as usize] {
                bad.failed[block as usize] = true;
                bad.pending.push(block);
            }
        }
    }

    /// Whether erasing `block` fails (or the block failed a program
    /// earlier): it must retire instead of returning to the pool.
    pub(super) fn erase_fails(&mut self, block: u32) -> bool {
        let Some(bad) = &self.bad else { return false };
        let pe = native_equivalent(self, block);
        let by_rated = bad.model.erase_failed_by_rated;
        let bad = self.bad.as_mut().expect("checked");
        if bad.failed[block as usize] {
            return true;
        }
        let fails = bad.draw(by_rated, pe);
        if fails {
            bad.counters.erase_failures += 1;
        }
        fails
    }

    /// Count `block` as a grown bad block.
    pub(super) fn count_retired(&mut self, block: u32) {
        let die = self.geo.die_of_block(block) as usize;
        let bad = self.bad.as_mut().expect("only with bad-block management");
        bad.failed[block as usize] = false;
        bad.bad.push(block);
        bad.grown_per_die[die] += 1;
        bad.counters.grown_bad_blocks += 1;
    }

    /// Relocate and retire the blocks whose program failed (a safe point:
    /// no stream is in the middle of handing out a slot).
    pub(super) fn handle_program_failures(&mut self) {
        while let Some(block) = self.bad.as_mut().and_then(|b| b.pending.pop()) {
            let b = block as usize;
            let mode = self.blocks.mode[b];
            match self.blocks.state[b] {
                BlockState::Open => {
                    if let Some(s) = self.close_failed(block) {
                        // The stream's partly filled unit is programmed
                        // (so its data leaves the write buffer) and moves
                        // with the rest.
                        let (wp, done) = (self.blocks.wp[b], self.blocks.programmed[b]);
                        if wp > done {
                            self.blocks.programmed[b] = wp;
                            if self.emit_ops {
                                let row = self.geo.row_of(done);
                                self.ops.push(NandOp::Program { purpose: s.purpose(), block, row, slots: wp - done });
                            }
                        }
                    }
                    self.blocks.state[b] = BlockState::Collecting;
                }
                BlockState::Sealed => self.start_collecting(block, mode),
                // Being collected or already erased: the erase retires it.
                _ => continue,
            }
            let fdp = self.fdp_before_reallocation(block);
            let moved = self.move_slots(block, mode, 0, u32::MAX);
            self.fdp_reallocated(fdp, moved);
            self.journal(super::journal::Relocation::Erased { block });
            self.blocks.retire(block, false);
            self.count_retired(block);
        }
    }

    /// The stream that holds `block` open (its program failed) gives it
    /// up: its next slot on the block's die goes to a new block. With
    /// placements that is any placement's run of the host stream, not only
    /// the current one's (a flush programs every placement's, the current
    /// one last), and the handle goes on in another block before its
    /// reclaim unit was full (an *Implicitly Modified Reclaim Unit Handle*
    /// event for that placement); or a persistently isolated handle's GC
    /// stream, swapped in or kept aside. `None`: no stream holds it.
    #[cold]
    #[inline(never)]
    fn close_failed(&mut self, block: u32) -> Option<StreamId> {
        let die = self.geo.die_of_block(block);
        let dies = self.geo.dies;
        let runs = self.fdp.as_ref().map_or(1, |f| f.model().placements());
        for p in 0..runs {
            let open = &mut self.streams[StreamId::Host as usize].open[(p * dies + die) as usize];
            if *open == block {
                *open = NONE;
                self.fdp_unit_broken(p);
                return Some(StreamId::Host);
            }
        }
        for s in [StreamId::Gc, StreamId::Fold] {
            let open = &mut self.streams[s as usize].open[die as usize];
            if *open == block {
                *open = NONE;
                return Some(s);
            }
        }
        let aside = self.fdp.as_mut().map_or(&mut [][..], |f| f.gc_streams_mut());
        for g in aside {
            let open = &mut g.open[die as usize];
            if *open == block {
                *open = NONE;
                return Some(StreamId::Gc);
            }
        }
        None
    }

    /// Move the valid data of `block` elsewhere and erase it, as firmware
    /// does after an uncorrectable read (page mapping, a sealed block, not
    /// read-only, and room on its die above the low watermark). Returns
    /// whether it did.
    pub(super) fn relocate(&mut self, block: u32) -> bool {
        let b = block as usize;
        let die = self.geo.die_of_block(block);
        if self.blocks.state[b] != BlockState::Sealed
            || self.read_only()
            || self.blocks.free_count(die) <= self.gc_low + 1
        {
            return false;
        }
        let mode = self.blocks.mode[b];
        self.start_collecting(block, mode);
        let fdp = self.fdp_before_reallocation(block);
        let moved = self.move_slots(block, mode, 0, u32::MAX);
        self.fdp_reallocated(fdp, moved);
        self.erase_only(block, mode);
        if mode == CellMode::Slc {
            self.counters.fold_blocks -= 1;
        } else {
            self.counters.gc_blocks -= 1;
        }
        self.counters.relocated_blocks += 1;
        self.handle_program_failures();
        true
    }
}
