//! Hybrid log-block mapping (the BAST / FAST family of older controllers).
//!
//! The drive's logical pages are grouped into **logical blocks** of one
//! erase block's worth of pages (with ganged channels, a superblock's).
//! By default (`layout = "striped"`) a logical block is striped like the
//! page FTL's host stream: consecutive program units of the address space
//! go to consecutive dies, so a logical block's pages are every `dies`-th
//! unit and all of them live on one die; a write of several units touches
//! a logical block on each die it reaches (`stripe_bytes` widens the run
//! of consecutive addresses a die takes from one unit to several). With `layout =
//! "contiguous"` a logical block is a contiguous range of logical pages,
//! as in the BAST (Kim et al. 2002), FAST (Lee et al. 2007) and superblock
//! (Kang et al. 2006) papers, and consecutive logical blocks go to
//! consecutive dies: a write within one block's worth of addresses touches
//! one logical block. Each logical block has at most one **data block**,
//! which holds every page at its fixed offset. Host writes never go to
//! data blocks: they go to **log blocks**, mapped per page:
//! - `association = "block"` (BAST): a log block belongs to one logical
//!   block; when a die needs a log block and has none left, the victim's
//!   logical block is merged; a log block that fills up is merged at once;
//! - `association = "full"` (FAST): one *sequential* log block per die takes
//!   writes that start a logical block (offset 0) and continue it in order;
//!   the other log blocks of the die are *random* logs shared by every
//!   logical block of the die and appended in write order; merging a random
//!   log block means a full merge of every logical block with a valid page
//!   in it.
//!
//! Merges (counted by kind in [`super::FtlCounters`]):
//! - **switch**: the log block holds the whole logical block in order; it
//!   becomes the data block and the old data block is erased;
//! - **partial**: the log block holds an in-order prefix; the remaining
//!   valid pages are copied after it, it becomes the data block, the old one
//!   is erased;
//! - **full**: every valid page of the logical block is read from wherever
//!   it is and programmed in order into a free block; the old data block and
//!   (BAST) the log block are erased.
//!
//! With `whole_block_merge` (block-level firmware that keeps no per-page
//! validity), full and partial merges read and program every page of the
//! logical block, written or not, and erase the old data block, which a
//! logical block never merged is taken to have from the format on (a free
//! block of its die, erased). With `merge_batch` > 1 a die that runs out of
//! log blocks merges that many victims in one go.
//!
//! The merge's cost is only the NAND operations it appends to
//! the FTL's operations (with [`Purpose::Merge`], which the drive schedules
//! one after another on the die, as firmware that copies page by page
//! through the controller does). The map stays the FTL's `l2p`/`p2l`,
//! so reads are one lookup wherever the page is. Programs stay in order
//! within every block; a partially filled program unit is padded when the
//! host moves to another block, so at most one unit waits in the buffer.
//!
//! Left out: data blocks freed when all their pages are trimmed, wear
//! levelling of data blocks, and merging in idle time.

use std::collections::VecDeque;

use super::mapping::{MappingScheme, OpTiming, SchemeTiming};
use super::{FtlCore, NandOp, Purpose};
use crate::model::nand::{CellMode, Geometry, Slot, NONE};
use crate::model::params::{HybridModel, LogAssociation, MergePolicy};

/// State of the hybrid FTL.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Hybrid {
    model: HybridModel,
    geo: Geometry,
    /// Data block per logical block (`NONE`: none yet).
    data: Vec<u32>,
    /// BAST: log block per logical block (`NONE`: none).
    log_of: Vec<u32>,
    /// Logical block a log block serves (BAST) or its sequential log
    /// belongs to (FAST), per physical block.
    owner: Vec<u32>,
    /// Log blocks in use per die (BAST: all; FAST: random logs), in victim
    /// order (front = next victim).
    logs: Vec<VecDeque<u32>>,
    /// FAST: the sequential log block per die (`NONE`: none).
    seq_log: Vec<u32>,
    /// The block whose last program unit is partially filled (`NONE`).
    pending: u32,
}

/// Kind of a merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MergeKind {
    /// The log block becomes the data block.
    Switch,
    /// The log block's prefix is completed from elsewhere.
    Partial,
    /// Everything copied into a new block.
    Full,
}

impl Hybrid {
    /// Empty state for a drive.
    pub fn new(model: &HybridModel, geo: &Geometry) -> Hybrid {
        let (dies, total_blocks) = (geo.dies, geo.total_blocks);
        let lbs = (model.logical_blocks_per_die * dies) as usize;
        Hybrid {
            model: model.clone(),
            geo: *geo,
            data: vec![NONE; lbs],
            log_of: vec![NONE; lbs],
            owner: vec![NONE; total_blocks as usize],
            logs: vec![VecDeque::new(); dies as usize],
            seq_log: vec![NONE; dies as usize],
            pending: NONE,
        }
    }

    /// Forget everything (secure erase).
    pub fn reset(&mut self) {
        self.data.fill(NONE);
        self.log_of.fill(NONE);
        self.owner.fill(NONE);
        for l in &mut self.logs {
            l.clear();
        }
        self.seq_log.fill(NONE);
        self.pending = NONE;
    }

    /// Data block of a logical block.
    pub fn data_block(&self, lb: u32) -> u32 {
        self.data[lb as usize]
    }
}

impl Hybrid {
    /// Logical block and offset of a logical page: the address space is
    /// cut into stripes of `stripe_slots` consecutive pages that go to
    /// consecutive dies, and a die's logical block is its next
    /// `slots_per_block / stripe_slots` stripes (the contiguous layout:
    /// one stripe of a whole block).
    #[inline]
    pub fn locate(&self, lpn: u32) -> (u32, u32) {
        let spb = self.geo.slots_per_block;
        let s = self.model.stripe_slots;
        if s == spb {
            return (lpn / spb, lpn % spb);
        }
        let d = self.geo.dies;
        let stripes = spb / s;
        let stripe = lpn / s;
        let die = stripe % d;
        let k = stripe / d;
        ((k / stripes) * d + die, (k % stripes) * s + lpn % s)
    }

    /// Logical page at `off` of logical block `lb` (may be past the user
    /// capacity in the last logical blocks).
    #[inline]
    pub fn lpn_at(&self, lb: u32, off: u32) -> u64 {
        let spb = self.geo.slots_per_block as u64;
        let s = self.model.stripe_slots as u64;
        let (lb, off) = (lb as u64, off as u64);
        if s == spb {
            return lb * spb + off;
        }
        let d = self.geo.dies as u64;
        let k = (lb / d) * (spb / s) + off / s;
        (k * d + lb % d) * s + off % s
    }

    /// Die of a logical block.
    #[inline]
    fn lb_die(&self, lb: u32) -> u32 {
        lb % self.geo.dies
    }

    /// Place a host write of `lpn` (already unmapped) and map it.
    fn hybrid_write(&mut self, c: &mut FtlCore, lpn: u32) -> Slot {
        let (lb, off) = self.locate(lpn);
        let die = self.lb_die(lb);
        match self.model.association {
            LogAssociation::Block => {
                let mut log = self.log_of[lb as usize];
                if log != NONE && c.blocks.wp[log as usize] == self.geo.slots_per_block {
                    // Filled up by padding when the host moved on.
                    self.merge_lb(c, lb);
                    log = NONE;
                }
                if log == NONE {
                    log = self.alloc_log(c, die);
                    self.log_of[lb as usize] = log;
                    self.owner[log as usize] = lb;
                } else {
                    self.touch_log(die, log);
                }
                let slot = self.log_append(c, log, lpn);
                if c.blocks.wp[log as usize] == self.geo.slots_per_block {
                    self.merge_lb(c, lb);
                }
                slot
            }
            LogAssociation::Full => {
                let sw = self.seq_log[die as usize];
                let continues =
                    sw != NONE && self.owner[sw as usize] == lb && c.blocks.wp[sw as usize] == off && off > 0;
                if off == 0 || continues {
                    let sw = if continues {
                        sw
                    } else {
                        if sw != NONE {
                            self.merge_lb(c, self.owner[sw as usize]);
                        }
                        let b = self.take_block(c, die);
                        self.seq_log[die as usize] = b;
                        self.owner[b as usize] = lb;
                        b
                    };
                    let slot = self.log_append(c, sw, lpn);
                    if c.blocks.wp[sw as usize] == self.geo.slots_per_block {
                        self.merge_lb(c, lb);
                    }
                    slot
                } else {
                    let rw = match self.logs[die as usize].back() {
                        Some(&b) if c.blocks.wp[b as usize] < self.geo.slots_per_block => b,
                        _ => self.alloc_log(c, die),
                    };
                    self.log_append(c, rw, lpn)
                }
            }
        }
    }

    /// A free block on `die` for a log or a merge.
    fn take_block(&mut self, c: &mut FtlCore, die: u32) -> u32 {
        c.blocks.take_free(die, CellMode::Native).expect("validation leaves a block per die beyond data and log blocks")
    }

    /// Record a write to log block `log` (for LRU victim order).
    fn touch_log(&mut self, die: u32, log: u32) {
        if self.model.merge_policy == MergePolicy::Lru {
            let q = &mut self.logs[die as usize];
            if let Some(i) = q.iter().position(|&b| b == log) {
                q.remove(i);
                q.push_back(log);
            }
        }
    }

    /// A new log block on `die` (BAST log or FAST random log), merging a
    /// victim first if the die has used all its log blocks.
    fn alloc_log(&mut self, c: &mut FtlCore, die: u32) -> u32 {
        let limit = match self.model.association {
            LogAssociation::Block => self.model.log_blocks_per_die,
            LogAssociation::Full => self.model.log_blocks_per_die - 1,
        };
        if self.logs[die as usize].len() as u32 >= limit {
            // The pool is exhausted: merge `merge_batch` victims in one go.
            for _ in 0..self.model.merge_batch {
                let Some(&victim) = self.logs[die as usize].front() else {
                    break;
                };
                match self.model.association {
                    LogAssociation::Block => self.merge_lb(c, self.owner[victim as usize]),
                    LogAssociation::Full => self.merge_random_log(c, die, victim),
                }
            }
        }
        let b = self.take_block(c, die);
        self.logs[die as usize].push_back(b);
        b
    }

    /// FAST: full-merge every logical block with a valid page in random log
    /// `victim`, then erase it.
    fn merge_random_log(&mut self, c: &mut FtlCore, die: u32, victim: u32) {
        self.flush_pending(c);
        let first = self.geo.first_slot(victim);
        let mut lbs: Vec<u32> = Vec::new();
        for off in 0..c.blocks.wp[victim as usize] {
            let lpn = c.p2l[(first + off) as usize];
            if lpn != NONE {
                let (lb, _) = self.locate(lpn);
                if !lbs.contains(&lb) {
                    lbs.push(lb);
                }
            }
        }
        for lb in lbs {
            self.full_merge(c, lb);
        }
        let q = &mut self.logs[die as usize];
        if let Some(i) = q.iter().position(|&b| b == victim) {
            q.remove(i);
        }
        self.erase_block(c, victim);
    }

    /// Append `lpn` to `block` at its write pointer (padding the pending
    /// unit of another block first). Returns the slot.
    fn log_append(&mut self, c: &mut FtlCore, block: u32, lpn: u32) -> Slot {
        let pending = self.pending;
        if pending != NONE && pending != block {
            self.flush_pending(c);
        }
        let b = block as usize;
        let slot = c.map_next_slot(block, lpn);
        c.mapped_lpns += 1;
        let unit = self.geo.unit_slots(CellMode::Native);
        if c.blocks.wp[b] % unit == 0 {
            self.program_unit(c, block, Purpose::HostWrite);
            self.pending = NONE;
        } else {
            self.pending = block;
        }
        slot
    }

    /// Issue the program of the unit that ends at `block`'s write pointer.
    fn program_unit(&mut self, c: &mut FtlCore, block: u32, purpose: Purpose) {
        let b = block as usize;
        let unit = self.geo.unit_slots(CellMode::Native);
        let wp = c.blocks.wp[b];
        c.blocks.programmed[b] = wp;
        if c.emit_ops {
            c.ops.push(NandOp::Program { purpose, block, row: self.geo.row_of(wp - unit), slots: unit });
        }
    }

    /// Program the partially filled host unit now, padding the rest.
    fn flush_pending(&mut self, c: &mut FtlCore) {
        let block = self.pending;
        if block == NONE {
            return;
        }
        let b = block as usize;
        let unit = self.geo.unit_slots(CellMode::Native);
        let pad = (unit - c.blocks.wp[b] % unit) % unit;
        c.blocks.wp[b] += pad;
        c.counters.padding_slots += pad as u64;
        self.program_unit(c, block, Purpose::HostWrite);
        self.pending = NONE;
    }

    /// Slots of the host's partially filled unit.
    fn hybrid_pending_slots(&self, c: &FtlCore) -> u32 {
        let b = self.pending;
        if b == NONE {
            0
        } else {
            c.blocks.wp[b as usize] - c.blocks.programmed[b as usize]
        }
    }

    fn erase_block(&mut self, c: &mut FtlCore, block: u32) {
        debug_assert_eq!(c.blocks.valid[block as usize], 0, "erasing a block with valid data");
        c.journal(super::journal::Relocation::Erased { block });
        if c.emit_ops {
            c.ops.push(NandOp::Erase { purpose: Purpose::Merge, block });
        }
        self.owner[block as usize] = NONE;
        c.blocks.release(block);
    }

    /// Erase the data block `old` that a merge of `lb` replaced. With
    /// `whole_block_merge`, a logical block without one (never merged) had
    /// one from the format on in the firmware's view: a block of its die
    /// that the model keeps in the free pool, erased now.
    fn erase_old_data(&mut self, c: &mut FtlCore, lb: u32, old: u32) {
        if old != NONE {
            self.erase_block(c, old);
        } else if self.model.whole_block_merge {
            let b = self.take_block(c, self.lb_die(lb));
            self.erase_block(c, b);
        }
    }

    /// Whether slots `0..end` of `block` hold offsets `0..end` of `lb`, all
    /// valid.
    fn holds_in_order(&self, c: &FtlCore, block: u32, lb: u32, end: u32) -> bool {
        let first = self.geo.first_slot(block);
        (0..end).all(|off| c.p2l[(first + off) as usize] as u64 == self.lpn_at(lb, off))
    }

    /// Merge the log block of `lb` (BAST: its log; FAST: the die's
    /// sequential log, which belongs to `lb`) into its data block.
    fn merge_lb(&mut self, c: &mut FtlCore, lb: u32) {
        self.flush_pending(c);
        let die = self.lb_die(lb);
        let log = match self.model.association {
            LogAssociation::Block => self.log_of[lb as usize],
            LogAssociation::Full => self.seq_log[die as usize],
        };
        debug_assert!(log != NONE && self.owner[log as usize] == lb);
        let spb = self.geo.slots_per_block;
        let wp = c.blocks.wp[log as usize];
        let kind = if wp == spb && self.holds_in_order(c, log, lb, spb) {
            MergeKind::Switch
        } else if self.holds_in_order(c, log, lb, wp) {
            MergeKind::Partial
        } else {
            MergeKind::Full
        };
        // Detach the log block from the log structures.
        match self.model.association {
            LogAssociation::Block => {
                self.log_of[lb as usize] = NONE;
                let q = &mut self.logs[die as usize];
                if let Some(i) = q.iter().position(|&b| b == log) {
                    q.remove(i);
                }
            }
            LogAssociation::Full => self.seq_log[die as usize] = NONE,
        }
        match kind {
            MergeKind::Switch | MergeKind::Partial => {
                if kind == MergeKind::Partial {
                    self.fill_block(c, lb, log, wp);
                    c.counters.partial_merges += 1;
                } else {
                    c.counters.switch_merges += 1;
                }
                let old = std::mem::replace(&mut self.data[lb as usize], log);
                self.owner[log as usize] = NONE;
                self.erase_old_data(c, lb, old);
            }
            MergeKind::Full => {
                self.full_merge(c, lb);
                if c.blocks.valid[log as usize] == 0 {
                    self.erase_block(c, log);
                }
            }
        }
    }

    /// Copy every valid page of `lb` into a new block, in order; it becomes
    /// the data block and the old data block is erased. (The caller erases
    /// log blocks.) The sequential log of FAST is erased here if it belongs
    /// to `lb`.
    fn full_merge(&mut self, c: &mut FtlCore, lb: u32) {
        let die = self.lb_die(lb);
        let new = self.take_block(c, die);
        self.fill_block(c, lb, new, 0);
        c.counters.full_merges += 1;
        let old = std::mem::replace(&mut self.data[lb as usize], new);
        self.erase_old_data(c, lb, old);
        let sw = self.seq_log[die as usize];
        if sw != NONE && self.owner[sw as usize] == lb {
            self.seq_log[die as usize] = NONE;
            self.erase_block(c, sw);
        }
    }

    /// Program offsets `from..` of `lb` into `dest` (whose write pointer is
    /// `from`, unit aligned), copying each mapped page from where it is and
    /// padding unmapped offsets, up to the unit of the last mapped page —
    /// or, with `whole_block_merge`, up to the end of the block, reading
    /// the unmapped offsets too (from the data block; a logical block that
    /// has none yet reads its erased pages from the die, whose block the
    /// model does not track).
    fn fill_block(&mut self, c: &mut FtlCore, lb: u32, dest: u32, from: u32) {
        let spb = self.geo.slots_per_block;
        let unit = self.geo.unit_slots(CellMode::Native);
        debug_assert_eq!(from % unit, 0);
        let user = c.l2p.len() as u64;
        let whole = self.model.whole_block_merge;
        let mapped = |off: u32| {
            let lpn = self.lpn_at(lb, off);
            lpn < user && c.l2p[lpn as usize] != NONE
        };
        let end = if whole {
            if from >= spb {
                return;
            }
            spb
        } else {
            let Some(last) = (from..spb).rev().find(|&off| mapped(off)) else {
                return;
            };
            (last / unit + 1) * unit
        };
        // Where unmapped offsets are read from (whole-block merges).
        let old_data = match self.data[lb as usize] {
            NONE => dest,
            b => b,
        };
        let dest_first = self.geo.first_slot(dest);
        let mut copied = 0u64;
        for start in (from..end).step_by(unit as usize) {
            let (mut rblock, mut rrow, mut rslots) = (NONE, NONE, 0u32);
            for off in start..start + unit {
                let lpn = self.lpn_at(lb, off);
                let src = if lpn < user { c.l2p[lpn as usize] } else { NONE };
                let (sb, row) = if src == NONE {
                    c.counters.padding_slots += 1;
                    if !whole {
                        continue;
                    }
                    (old_data, self.geo.row_of(off))
                } else {
                    (self.geo.block_of(src), self.geo.row_of(self.geo.offset_in_block(src)))
                };
                if (sb, row) != (rblock, rrow) {
                    if rslots > 0 && c.emit_ops {
                        c.ops.push(NandOp::Read { purpose: Purpose::Merge, block: rblock, row: rrow, slots: rslots });
                    }
                    (rblock, rrow, rslots) = (sb, row, 0);
                }
                rslots += 1;
                if src == NONE {
                    continue;
                }
                let lpn = lpn as u32;
                // Move the page.
                c.p2l[src as usize] = NONE;
                c.blocks.invalidate(sb);
                let new = dest_first + off;
                c.p2l[new as usize] = lpn;
                c.l2p[lpn as usize] = new;
                c.blocks.valid[dest as usize] += 1;
                c.journal(super::journal::Relocation::Moved { from: src, to: new });
                if !c.slot_version.is_empty() {
                    c.slot_version[new as usize] = c.slot_version[src as usize];
                }
                copied += 1;
            }
            if rslots > 0 && c.emit_ops {
                c.ops.push(NandOp::Read { purpose: Purpose::Merge, block: rblock, row: rrow, slots: rslots });
            }
            c.blocks.wp[dest as usize] = start + unit;
            self.program_unit(c, dest, Purpose::Merge);
        }
        c.counters.merge_slots_copied += copied;
    }

    /// Hybrid invariants (tests): every mapped page sits in its logical
    /// block's data block at its offset, or in one of its die's log blocks.
    fn hybrid_check(&self, c: &FtlCore) -> Result<(), String> {
        let h = self;
        for (lpn, &s) in c.l2p.iter().enumerate() {
            if s == NONE {
                continue;
            }
            let (lb, off) = self.locate(lpn as u32);
            let b = self.geo.block_of(s);
            let die = self.lb_die(lb);
            if b == h.data[lb as usize] {
                if self.geo.offset_in_block(s) != off {
                    return Err(format!("lpn {lpn} in data block {b} at the wrong offset"));
                }
            } else if !(h.logs[die as usize].contains(&b) || h.seq_log[die as usize] == b) {
                return Err(format!("lpn {lpn} in block {b}, neither its data block nor a log block of die {die}"));
            }
        }
        Ok(())
    }
}

/// Hybrid mapping as the FTL's mapping scheme.
impl MappingScheme for Hybrid {
    fn write(&mut self, c: &mut FtlCore, lpn: u32) -> Slot {
        self.hybrid_write(c, lpn);
        // A merge triggered by this very write may already have moved the
        // page: its current slot is what the map says.
        c.l2p[lpn as usize]
    }
    #[inline]
    fn read(&mut self, c: &mut FtlCore, lpn: u32) -> Slot {
        c.lookup(lpn)
    }
    fn flush(&mut self, c: &mut FtlCore) {
        self.flush_pending(c);
    }
    fn pending_slots(&self, c: &FtlCore) -> u32 {
        self.hybrid_pending_slots(c)
    }
    fn reclaims_by_page_gc(&self) -> bool {
        false
    }
    fn timing(&self) -> SchemeTiming {
        let mut t = SchemeTiming::COMMON;
        // The log block a host write goes to is the one its merges free.
        t.set(Purpose::HostWrite, OpTiming { program_waits: true, ..t.of(Purpose::HostWrite) });
        t.set(Purpose::Merge, OpTiming { program_waits: true, serial: true, parts: self.model.merge_parts });
        t.serial_holds_core = self.model.merge_holds_core;
        t
    }
    fn reset(&mut self) {
        Hybrid::reset(self);
    }
    fn check(&self, c: &FtlCore) -> Result<(), String> {
        self.hybrid_check(c)
    }
}
