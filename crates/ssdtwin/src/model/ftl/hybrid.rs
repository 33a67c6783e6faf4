//! Hybrid log-block mapping (the BAST / FAST family of older controllers).
//!
//! The drive's logical pages are grouped into **logical blocks** of one
//! erase block's worth of pages. A logical block is striped like the page
//! FTL's host stream: consecutive program units of the address space go to
//! consecutive dies, so a logical block's pages are every `dies`-th unit and
//! all of them live on one die. Each logical block has at most one **data
//! block**, which holds every page at its fixed offset. Host writes never go
//! to data blocks: they go to **log blocks**, mapped per page:
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
//! The merge's cost is only the NAND operations it appends to
//! [`super::Ftl::ops`] (with [`Purpose::Merge`], which the drive schedules
//! one after another on the die, as firmware that copies page by page
//! through the controller does). The map stays the page FTL's `l2p`/`p2l`,
//! so reads are one lookup wherever the page is. Programs stay in order
//! within every block; a partially filled program unit is padded when the
//! host moves to another block, so at most one unit waits in the buffer.
//!
//! Left out: data blocks freed when all their pages are trimmed, wear
//! levelling of data blocks, and merging in idle time.

use std::collections::VecDeque;

use super::{Ftl, NandOp, Purpose};
use crate::model::nand::{CellMode, Slot, NONE};
use crate::spec::{HybridModel, LogAssociation, MergePolicy};

/// State of the hybrid FTL.
#[derive(Debug, Clone)]
pub struct Hybrid {
    model: HybridModel,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    pub fn new(model: &HybridModel, dies: u32, total_blocks: u32) -> Hybrid {
        let lbs = (model.logical_blocks_per_die * dies) as usize;
        Hybrid {
            model: model.clone(),
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

impl Ftl {
    fn hy(&self) -> &Hybrid {
        self.hybrid.as_ref().expect("hybrid FTL")
    }

    fn hy_mut(&mut self) -> &mut Hybrid {
        self.hybrid.as_mut().expect("hybrid FTL")
    }

    /// Logical block and offset of a logical page.
    #[inline]
    pub fn hybrid_locate(&self, lpn: u32) -> (u32, u32) {
        let u = self.geo.unit_slots(CellMode::Native);
        let d = self.geo.dies;
        let units = self.geo.slots_per_block / u;
        let stripe = lpn / u;
        let die = stripe % d;
        let k = stripe / d;
        ((k / units) * d + die, (k % units) * u + lpn % u)
    }

    /// Logical page at `off` of logical block `lb` (may be past the user
    /// capacity in the last logical blocks).
    #[inline]
    pub fn hybrid_lpn(&self, lb: u32, off: u32) -> u64 {
        let u = self.geo.unit_slots(CellMode::Native) as u64;
        let d = self.geo.dies as u64;
        let units = (self.geo.slots_per_block as u64) / u;
        let (lb, off) = (lb as u64, off as u64);
        let k = (lb / d) * units + off / u;
        (k * d + lb % d) * u + off % u
    }

    /// Die of a logical block.
    #[inline]
    fn lb_die(&self, lb: u32) -> u32 {
        lb % self.geo.dies
    }

    /// Place a host write of `lpn` (already unmapped) and map it.
    pub(super) fn hybrid_write(&mut self, lpn: u32) -> Slot {
        let (lb, off) = self.hybrid_locate(lpn);
        let die = self.lb_die(lb);
        match self.hy().model.association {
            LogAssociation::Block => {
                let mut log = self.hy().log_of[lb as usize];
                if log != NONE && self.blocks.wp[log as usize] == self.geo.slots_per_block {
                    // Filled up by padding when the host moved on.
                    self.merge_lb(lb);
                    log = NONE;
                }
                if log == NONE {
                    log = self.alloc_log(die);
                    let h = self.hy_mut();
                    h.log_of[lb as usize] = log;
                    h.owner[log as usize] = lb;
                } else {
                    self.touch_log(die, log);
                }
                let slot = self.log_append(log, lpn);
                if self.blocks.wp[log as usize] == self.geo.slots_per_block {
                    self.merge_lb(lb);
                }
                slot
            }
            LogAssociation::Full => {
                let sw = self.hy().seq_log[die as usize];
                let continues =
                    sw != NONE && self.hy().owner[sw as usize] == lb && self.blocks.wp[sw as usize] == off && off > 0;
                if off == 0 || continues {
                    let sw = if continues {
                        sw
                    } else {
                        if sw != NONE {
                            self.merge_lb(self.hy().owner[sw as usize]);
                        }
                        let b = self.take_block(die);
                        let h = self.hy_mut();
                        h.seq_log[die as usize] = b;
                        h.owner[b as usize] = lb;
                        b
                    };
                    let slot = self.log_append(sw, lpn);
                    if self.blocks.wp[sw as usize] == self.geo.slots_per_block {
                        self.merge_lb(lb);
                    }
                    slot
                } else {
                    let rw = match self.hy().logs[die as usize].back() {
                        Some(&b) if self.blocks.wp[b as usize] < self.geo.slots_per_block => b,
                        _ => self.alloc_log(die),
                    };
                    self.log_append(rw, lpn)
                }
            }
        }
    }

    /// A free block on `die` for a log or a merge.
    fn take_block(&mut self, die: u32) -> u32 {
        self.blocks
            .take_free(die, CellMode::Native)
            .expect("validation leaves a block per die beyond data and log blocks")
    }

    /// Record a write to log block `log` (for LRU victim order).
    fn touch_log(&mut self, die: u32, log: u32) {
        let h = self.hy_mut();
        if h.model.merge_policy == MergePolicy::Lru {
            let q = &mut h.logs[die as usize];
            if let Some(i) = q.iter().position(|&b| b == log) {
                q.remove(i);
                q.push_back(log);
            }
        }
    }

    /// A new log block on `die` (BAST log or FAST random log), merging a
    /// victim first if the die has used all its log blocks.
    fn alloc_log(&mut self, die: u32) -> u32 {
        let limit = match self.hy().model.association {
            LogAssociation::Block => self.hy().model.log_blocks_per_die,
            LogAssociation::Full => self.hy().model.log_blocks_per_die - 1,
        };
        if self.hy().logs[die as usize].len() as u32 >= limit {
            let victim = self.hy().logs[die as usize][0];
            match self.hy().model.association {
                LogAssociation::Block => self.merge_lb(self.hy().owner[victim as usize]),
                LogAssociation::Full => self.merge_random_log(die, victim),
            }
        }
        let b = self.take_block(die);
        self.hy_mut().logs[die as usize].push_back(b);
        b
    }

    /// FAST: full-merge every logical block with a valid page in random log
    /// `victim`, then erase it.
    fn merge_random_log(&mut self, die: u32, victim: u32) {
        self.flush_pending();
        let first = self.geo.first_slot(victim);
        let mut lbs: Vec<u32> = Vec::new();
        for off in 0..self.blocks.wp[victim as usize] {
            let lpn = self.p2l[(first + off) as usize];
            if lpn != NONE {
                let (lb, _) = self.hybrid_locate(lpn);
                if !lbs.contains(&lb) {
                    lbs.push(lb);
                }
            }
        }
        for lb in lbs {
            self.full_merge(lb);
        }
        let q = &mut self.hy_mut().logs[die as usize];
        if let Some(i) = q.iter().position(|&b| b == victim) {
            q.remove(i);
        }
        self.erase_block(victim);
    }

    /// Append `lpn` to `block` at its write pointer (padding the pending
    /// unit of another block first). Returns the slot.
    fn log_append(&mut self, block: u32, lpn: u32) -> Slot {
        let pending = self.hy().pending;
        if pending != NONE && pending != block {
            self.flush_pending();
        }
        let b = block as usize;
        let slot = self.geo.first_slot(block) + self.blocks.wp[b];
        self.blocks.wp[b] += 1;
        self.blocks.valid[b] += 1;
        self.l2p[lpn as usize] = slot;
        self.p2l[slot as usize] = lpn;
        self.mapped_lpns += 1;
        let unit = self.geo.unit_slots(CellMode::Native);
        if self.blocks.wp[b] % unit == 0 {
            self.program_unit(block, Purpose::HostWrite);
            self.hy_mut().pending = NONE;
        } else {
            self.hy_mut().pending = block;
        }
        slot
    }

    /// Issue the program of the unit that ends at `block`'s write pointer.
    fn program_unit(&mut self, block: u32, purpose: Purpose) {
        let b = block as usize;
        let unit = self.geo.unit_slots(CellMode::Native);
        let wp = self.blocks.wp[b];
        self.blocks.programmed[b] = wp;
        if self.emit_ops {
            self.ops.push(NandOp::Program { purpose, block, row: self.geo.row_of(wp - unit), slots: unit });
        }
    }

    /// Program the partially filled host unit now, padding the rest.
    pub(super) fn flush_pending(&mut self) {
        let block = self.hy().pending;
        if block == NONE {
            return;
        }
        let b = block as usize;
        let unit = self.geo.unit_slots(CellMode::Native);
        let pad = (unit - self.blocks.wp[b] % unit) % unit;
        self.blocks.wp[b] += pad;
        self.counters.padding_slots += pad as u64;
        self.program_unit(block, Purpose::HostWrite);
        self.hy_mut().pending = NONE;
    }

    /// Slots of the host's partially filled unit.
    pub(super) fn hybrid_pending_slots(&self) -> u32 {
        let b = self.hy().pending;
        if b == NONE {
            0
        } else {
            self.blocks.wp[b as usize] - self.blocks.programmed[b as usize]
        }
    }

    fn erase_block(&mut self, block: u32) {
        debug_assert_eq!(self.blocks.valid[block as usize], 0, "erasing a block with valid data");
        self.journal(super::journal::Relocation::Erased { block });
        if self.emit_ops {
            self.ops.push(NandOp::Erase { purpose: Purpose::Merge, block });
        }
        self.hy_mut().owner[block as usize] = NONE;
        self.blocks.release(block);
    }

    /// Whether slots `0..end` of `block` hold offsets `0..end` of `lb`, all
    /// valid.
    fn holds_in_order(&self, block: u32, lb: u32, end: u32) -> bool {
        let first = self.geo.first_slot(block);
        (0..end).all(|off| self.p2l[(first + off) as usize] as u64 == self.hybrid_lpn(lb, off))
    }

    /// Merge the log block of `lb` (BAST: its log; FAST: the die's
    /// sequential log, which belongs to `lb`) into its data block.
    fn merge_lb(&mut self, lb: u32) {
        self.flush_pending();
        let die = self.lb_die(lb);
        let log = match self.hy().model.association {
            LogAssociation::Block => self.hy().log_of[lb as usize],
            LogAssociation::Full => self.hy().seq_log[die as usize],
        };
        debug_assert!(log != NONE && self.hy().owner[log as usize] == lb);
        let spb = self.geo.slots_per_block;
        let wp = self.blocks.wp[log as usize];
        let kind = if wp == spb && self.holds_in_order(log, lb, spb) {
            MergeKind::Switch
        } else if self.holds_in_order(log, lb, wp) {
            MergeKind::Partial
        } else {
            MergeKind::Full
        };
        // Detach the log block from the log structures.
        {
            let h = self.hy_mut();
            match h.model.association {
                LogAssociation::Block => {
                    h.log_of[lb as usize] = NONE;
                    let q = &mut h.logs[die as usize];
                    if let Some(i) = q.iter().position(|&b| b == log) {
                        q.remove(i);
                    }
                }
                LogAssociation::Full => h.seq_log[die as usize] = NONE,
            }
        }
        match kind {
            MergeKind::Switch | MergeKind::Partial => {
                if kind == MergeKind::Partial {
                    self.fill_block(lb, log, wp);
                    self.counters.partial_merges += 1;
                } else {
                    self.counters.switch_merges += 1;
                }
                let old = std::mem::replace(&mut self.hy_mut().data[lb as usize], log);
                self.hy_mut().owner[log as usize] = NONE;
                if old != NONE {
                    self.erase_block(old);
                }
            }
            MergeKind::Full => {
                self.full_merge(lb);
                if self.blocks.valid[log as usize] == 0 {
                    self.erase_block(log);
                }
            }
        }
    }

    /// Copy every valid page of `lb` into a new block, in order; it becomes
    /// the data block and the old data block is erased. (The caller erases
    /// log blocks.) The sequential log of FAST is erased here if it belongs
    /// to `lb`.
    fn full_merge(&mut self, lb: u32) {
        let die = self.lb_die(lb);
        let new = self.take_block(die);
        self.fill_block(lb, new, 0);
        self.counters.full_merges += 1;
        let old = std::mem::replace(&mut self.hy_mut().data[lb as usize], new);
        if old != NONE {
            self.erase_block(old);
        }
        let sw = self.hy().seq_log[die as usize];
        if sw != NONE && self.hy().owner[sw as usize] == lb {
            self.hy_mut().seq_log[die as usize] = NONE;
            self.erase_block(sw);
        }
    }

    /// Program offsets `from..` of `lb` into `dest` (whose write pointer is
    /// `from`, unit aligned), copying each mapped page from where it is and
    /// padding unmapped offsets, up to the unit of the last mapped page.
    fn fill_block(&mut self, lb: u32, dest: u32, from: u32) {
        let spb = self.geo.slots_per_block;
        let unit = self.geo.unit_slots(CellMode::Native);
        debug_assert_eq!(from % unit, 0);
        let user = self.l2p.len() as u64;
        let mapped = |ftl: &Ftl, off: u32| {
            let lpn = ftl.hybrid_lpn(lb, off);
            lpn < user && ftl.l2p[lpn as usize] != NONE
        };
        let Some(last) = (from..spb).rev().find(|&off| mapped(self, off)) else {
            return;
        };
        let end = (last / unit + 1) * unit;
        let dest_first = self.geo.first_slot(dest);
        let mut copied = 0u64;
        for start in (from..end).step_by(unit as usize) {
            let (mut rblock, mut rrow, mut rslots) = (NONE, NONE, 0u32);
            for off in start..start + unit {
                let lpn = self.hybrid_lpn(lb, off);
                if lpn >= user || self.l2p[lpn as usize] == NONE {
                    self.counters.padding_slots += 1;
                    continue;
                }
                let lpn = lpn as u32;
                let src = self.l2p[lpn as usize];
                let sb = self.geo.block_of(src);
                let row = self.geo.row_of(self.geo.offset_in_block(src));
                if (sb, row) != (rblock, rrow) {
                    if rslots > 0 && self.emit_ops {
                        self.ops.push(NandOp::Read {
                            purpose: Purpose::Merge,
                            block: rblock,
                            row: rrow,
                            slots: rslots,
                        });
                    }
                    (rblock, rrow, rslots) = (sb, row, 0);
                }
                rslots += 1;
                // Move the page.
                self.p2l[src as usize] = NONE;
                self.blocks.invalidate(sb);
                let new = dest_first + off;
                self.p2l[new as usize] = lpn;
                self.l2p[lpn as usize] = new;
                self.blocks.valid[dest as usize] += 1;
                self.journal(super::journal::Relocation::Moved { from: src, to: new });
                if !self.slot_version.is_empty() {
                    self.slot_version[new as usize] = self.slot_version[src as usize];
                }
                copied += 1;
            }
            if rslots > 0 && self.emit_ops {
                self.ops.push(NandOp::Read { purpose: Purpose::Merge, block: rblock, row: rrow, slots: rslots });
            }
            self.blocks.wp[dest as usize] = start + unit;
            self.program_unit(dest, Purpose::Merge);
        }
        self.counters.merge_slots_copied += copied;
    }

    /// Hybrid invariants (tests): every mapped page sits in its logical
    /// block's data block at its offset, or in one of its die's log blocks.
    pub(super) fn hybrid_check(&self) -> Result<(), String> {
        let h = self.hy();
        for (lpn, &s) in self.l2p.iter().enumerate() {
            if s == NONE {
                continue;
            }
            let (lb, off) = self.hybrid_locate(lpn as u32);
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
