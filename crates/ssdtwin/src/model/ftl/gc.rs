//! Garbage-collection victim selection.
//!
//! - **greedy**: the sealed block with the fewest valid slots, O(1)
//!   amortised from the valid-count buckets of [`BlockTable`];
//! - **fifo**: the block sealed longest ago (a queue per die, O(1)); for
//!   uniform random writes its write amplification has the closed form of
//!   Hu et al. (2009) / Desnoyers (2012), see [`crate::study::analytic`];
//! - **cost-benefit**: maximises `(1 − u) · age / (1 + u)` with `u` the
//!   valid fraction and `age` the number of blocks sealed since (Rosenblum
//!   and Ousterhout's LFS cleaner); a scan over the die's sealed blocks,
//!   which is O(blocks per die) once per reclaimed block.
//!
//! Age is counted in sealed blocks, not nanoseconds, so that victim choice
//! never depends on timing.
//!
//! Collection, written once over [`BlockPool`] for the FTL and the
//! statistical steady-state builder:
//! - [`reclaim_mode`]: native GC or folding a borrowed SLC block, whichever
//!   returns more native space per move;
//! - [`pace_collection`]: below the background target, every host program
//!   unit moves its share of a victim, so free space comes back as fast as
//!   the host uses it (with `ftl.gc_mode = "one-go"` the shares are owed
//!   until they cover the victim, which is then collected whole at once);
//! - [`reclaim_until_low`]: at the low watermark the host waits for whole
//!   victims;
//! - [`collect_one`], [`begin_stepwise`], [`step_collection`]: one victim at
//!   once or a step at a time.
//!
//! The FTL's own mechanism (moving slots and their map entries, emitting
//! the reads, programs and erases) and its idle-time work are here too.

use std::collections::VecDeque;

use super::blocks::{BlockState, BlockTable};
use super::journal::Relocation;
use super::pool::{BlockPool, Paced};
use super::streams::StreamId;
use super::{prefetch, FtlCore, NandOp, Purpose, PREFETCH_AHEAD};
use crate::model::nand::{CellMode, Geometry, NONE};
use crate::model::params::GcPolicy;

/// Picks GC victims according to a policy.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VictimSelector {
    policy: GcPolicy,
    // FIFO queues per (mode, die).
    fifo: Vec<VecDeque<u32>>,
    blocks_per_die: u32,
    dies: u32,
}

impl VictimSelector {
    /// A selector for `dies` dies.
    pub fn new(policy: GcPolicy, dies: u32) -> VictimSelector {
        VictimSelector {
            policy,
            fifo: if policy == GcPolicy::Fifo { vec![VecDeque::new(); 2 * dies as usize] } else { Vec::new() },
            blocks_per_die: 0,
            dies,
        }
    }

    /// The policy.
    pub fn policy(&self) -> GcPolicy {
        self.policy
    }

    /// Forget all sealed blocks.
    pub fn reset(&mut self) {
        for q in &mut self.fifo {
            q.clear();
        }
    }

    fn queue(&self, die: u32, mode: CellMode) -> usize {
        (mode as u32 * self.dies + die) as usize
    }

    /// A block was sealed.
    pub fn on_seal(&mut self, block: u32, mode: CellMode, geo: &Geometry) {
        self.blocks_per_die = geo.blocks_per_die;
        if self.policy == GcPolicy::Fifo {
            let q = self.queue(geo.die_of_block(block), mode);
            self.fifo[q].push_back(block);
        }
    }

    /// A block was chosen and taken out of the sealed set.
    pub fn on_collect(&mut self, block: u32, mode: CellMode) {
        if self.policy == GcPolicy::Fifo {
            let q = self.queue(block / self.blocks_per_die, mode);
            let q = &mut self.fifo[q];
            if q.front() == Some(&block) {
                q.pop_front();
            } else if let Some(i) = q.iter().position(|&b| b == block) {
                q.remove(i);
            }
        }
    }

    /// Whether `die` has a sealed block of `mode` with an invalid slot.
    pub fn has_candidate(&self, blocks: &BlockTable, die: u32, mode: CellMode) -> bool {
        blocks.peek_min_valid(die, mode).is_some_and(|b| blocks.valid[b as usize] < blocks.wp[b as usize])
    }

    /// Choose a victim of `mode` on `die`; `seq` is the current seal
    /// sequence number.
    pub fn select(&mut self, blocks: &mut BlockTable, die: u32, mode: CellMode, seq: u64) -> Option<u32> {
        match self.policy {
            GcPolicy::Greedy => blocks.min_valid(die, mode),
            GcPolicy::Fifo => self.fifo.get(self.queue(die, mode)).and_then(|q| q.front().copied()),
            GcPolicy::CostBenefit => {
                let mut best = NONE;
                let mut best_score = -1.0f64;
                blocks.for_each_sealed(die, mode, |b| {
                    let i = b as usize;
                    let u = blocks.valid[i] as f64 / blocks.wp[i] as f64;
                    let score = cost_benefit_score(u, seq - blocks.sealed_seq[i]);
                    if score > best_score || (score == best_score && b < best) {
                        best_score = score;
                        best = b;
                    }
                });
                (best != NONE).then_some(best)
            }
        }
    }
}

/// Cost-benefit's score of a block with valid fraction `u`, sealed `age`
/// seals ago: `(1 − u) · (age + 1) / (1 + u)`.
#[inline]
pub fn cost_benefit_score(u: f64, age: u64) -> f64 {
    (1.0 - u) * (age as f64 + 1.0) / (1.0 + u)
}

/// Native slots' worth of a block that `slots` slots of `mode` use up.
#[inline]
pub fn native_slots_used(geo: &Geometry, mode: CellMode, slots: u32) -> u64 {
    slots as u64 * geo.slots_per_block as u64 / geo.slots_in_mode(mode) as u64
}

/// Whether `die` has a sealed native block holding invalid data.
pub fn has_native_candidate<P: BlockPool>(pool: &P, die: u32) -> bool {
    let s = pool.geometry().slots_per_block as f64;
    pool.least_valid(die, CellMode::Native).is_some_and(|(_, v)| v < s - 0.5)
}

/// Where to reclaim native space on `die`: the mode whose best victim
/// returns more free slots for the moves it costs. A native victim holding
/// `V` of `S` slots returns `S − V`; folding a borrowed (dynamic) SLC block
/// holding `V` returns a whole block for `V` native slots, also `S − V`,
/// and is usually the better deal on a nearly full drive whose native
/// blocks are almost all valid. Folding a static SLC block returns nothing
/// native, so it is chosen only when no native block holds invalid data.
/// `None` when nothing can be reclaimed.
pub fn reclaim_mode<P: BlockPool>(pool: &P, die: u32) -> Option<CellMode> {
    let s = pool.geometry().slots_per_block as f64;
    let native = pool.least_valid(die, CellMode::Native).filter(|&(_, v)| v < s - 0.5);
    let slc = pool.least_valid(die, CellMode::Slc);
    let slc_gain = slc.filter(|&(b, _)| !pool.is_static(b)).map(|(_, v)| s - v);
    match (native, slc_gain) {
        (Some((_, n)), Some(f)) if f > s - n => Some(CellMode::Slc),
        (Some(_), _) => Some(CellMode::Native),
        (None, _) if slc.is_some() => Some(CellMode::Slc),
        (None, _) => None,
    }
}

/// Choose a victim of `mode` on `die` and take it out of the index. A fully
/// valid native victim frees nothing: FIFO and cost-benefit may still pick
/// one (and rotate it to the back) while other blocks hold invalid data;
/// when none does, the die is full of valid data and `None` is returned. A
/// fully valid SLC block is worth folding: its data needs 1/bits of a
/// native block.
///
/// A die below its low watermark folds an SLC block borrowed from the
/// native pool, not the policy's pick if that is a static block: folding
/// a static block consumes native space (its data needs 1/bits of a native
/// block) and returns none, so a die short of blocks that kept doing so
/// would run out; a borrowed block's erase gives the die a block back.
pub fn begin_collection<P: BlockPool>(pool: &mut P, die: u32, mode: CellMode) -> Option<u32> {
    let short = mode == CellMode::Slc && pool.free_count(die) < pool.low_watermark();
    let victim = match short.then(|| pool.dynamic_slc_victim(die)).flatten() {
        Some(b) => b,
        None => pool.choose_victim(die, mode)?,
    };
    if mode == CellMode::Native
        && pool.valid_slots(victim) >= pool.geometry().slots_in_mode(mode)
        && !has_native_candidate(pool, die)
    {
        return None;
    }
    pool.start_collecting(victim, mode);
    Some(victim)
}

/// Collect one victim of `mode` on `die` at once: move its valid slots (to
/// the GC stream for native blocks, folded into native blocks for SLC
/// blocks) and erase it. Returns false if nothing could be collected.
pub fn collect_one<P: BlockPool>(pool: &mut P, die: u32, mode: CellMode) -> bool {
    let Some(victim) = begin_collection(pool, die, mode) else { return false };
    pool.move_valid(victim, mode, 0, u32::MAX);
    pool.finish_collection(victim, mode);
    true
}

/// Choose a victim of `mode` on `die` to collect a step at a time.
pub fn begin_stepwise<P: BlockPool>(pool: &mut P, die: u32, mode: CellMode) -> Option<Paced> {
    let victim = begin_collection(pool, die, mode)?;
    let valid = pool.valid_slots(victim);
    Some(Paced::new(victim, mode, valid))
}

/// Move up to `max_moves` slots of the collection `paced` on `die`; erase
/// the victim when it is empty, else keep it in progress.
pub fn step_collection<P: BlockPool>(pool: &mut P, die: u32, paced: Paced, max_moves: u32) {
    let (progress, done) = pool.move_valid(paced.victim, paced.mode, paced.progress, max_moves);
    if done {
        pool.finish_collection(paced.victim, paced.mode);
        pool.set_paced(die, None);
    } else {
        pool.set_paced(die, Some(Paced { progress, ..paced }));
    }
}

/// Foreground GC paced by host writes. While `die` has fewer free blocks
/// than the background target, every host program unit on it moves a
/// share of a victim's valid data: a victim holding `V` valid of `S` slots
/// returns `S − V` slots once its `V` are moved, so `used` native slots of
/// new data cost `used · V / (S − V)` moves. Free space then comes back as
/// fast as the host uses it, in small steps between host programs, instead
/// of whole victims at once when the reserve runs out (which
/// [`reclaim_until_low`] still does if the pace falls behind). The victim
/// is chosen by [`reclaim_mode`].
pub fn pace_collection<P: BlockPool>(pool: &mut P, die: u32, used: u64) {
    if pool.free_count(die) >= pool.high_watermark() {
        return;
    }
    if pool.paced(die).is_none() {
        let begun = reclaim_mode(pool, die).and_then(|mode| begin_stepwise(pool, die, mode));
        pool.set_paced(die, begun);
    }
    let Some(mut paced) = pool.paced(die) else { return };
    let s = pool.geometry().slots_per_block as u64;
    let v = paced.valid_at_start as u64;
    let owed = used * v + paced.carry;
    let gain = s.saturating_sub(v).max(1);
    if !pool.paced_gc() {
        // In one go: the moves are owed until they cover the whole victim
        // (the host has used what it will return), then it is collected
        // at once while the host waits.
        if owed / gain < v {
            pool.set_paced(die, Some(Paced { carry: owed, ..paced }));
        } else {
            step_collection(pool, die, Paced { carry: 0, ..paced }, u32::MAX);
        }
        return;
    }
    let moves = (owed / gain).min(u32::MAX as u64) as u32;
    paced.carry = owed % gain;
    step_collection(pool, die, paced, moves);
}

/// Free blocks on `die` up to the low watermark: finish the die's
/// collection in progress, then native GC where native blocks hold invalid
/// data, else fold SLC blocks (the native capacity is needed, so lazily
/// cached data must move). The host waits for all of it.
pub fn reclaim_until_low<P: BlockPool>(pool: &mut P, die: u32) {
    if pool.free_count(die) < pool.low_watermark() {
        if let Some(paced) = pool.paced(die) {
            pool.set_paced(die, None);
            pool.move_valid(paced.victim, paced.mode, paced.progress, u32::MAX);
            pool.finish_collection(paced.victim, paced.mode);
        }
    }
    while pool.free_count(die) < pool.low_watermark() {
        let Some(mode) = reclaim_mode(pool, die) else { break };
        if !collect_one(pool, die, mode) {
            break;
        }
    }
}

/// The FTL's collection mechanism and idle-time work.
impl FtlCore {
    /// Move the valid slots of a victim being collected, from offset
    /// `from`, stopping after `max_moves` moves. Returns the offset to
    /// continue from (the block's write pointer when all are moved).
    pub(super) fn move_slots(&mut self, victim: u32, mode: CellMode, from: u32, max_moves: u32) -> u32 {
        let dest = if mode == CellMode::Slc { StreamId::Fold } else { StreamId::Gc };
        let purpose = dest.purpose();
        let v = victim as usize;
        let die = self.geo.die_of_block(victim);
        let first = self.geo.first_slot(victim);
        let end = self.blocks.wp[v];
        let mut read_row = NONE;
        let mut read_slots = 0;
        // Offsets of the current read row, [row_start, row_end).
        let per_row = self.geo.slots_per_row;
        let (mut row_start, mut row_end) = (0u32, 0u32);
        self.streams[dest as usize].die = die;
        // The destination's open block and how many more slots it takes
        // without completing a program unit: those are placed directly
        // (for them `append` would do nothing more); a slot that completes
        // a unit or opens a block goes through `append`.
        let (mut dest_block, mut dest_room) = (NONE, 0u32);
        let mut moved = 0u32;
        let mut off = from;
        while off < end && moved < max_moves {
            let slot = first + off;
            off += 1;
            // The map entries of the slots ahead are random accesses into a
            // large array: ask for them early.
            if off + PREFETCH_AHEAD < end {
                let ahead = self.p2l[(slot + PREFETCH_AHEAD) as usize];
                if ahead != NONE {
                    prefetch(&self.l2p, ahead as usize);
                }
            }
            let lpn = self.p2l[slot as usize];
            if lpn == NONE {
                continue;
            }
            let o = off - 1;
            if o >= row_end || o < row_start {
                let row = self.geo.row_of(o);
                (row_start, row_end) = (row * per_row, row * per_row + per_row);
                if read_slots > 0 && self.emit_ops {
                    self.ops.push(NandOp::Read { purpose, block: victim, row: read_row, slots: read_slots });
                }
                read_row = row;
                read_slots = 0;
            }
            read_slots += 1;
            // Move the slot: the old copy stops being valid, the new one is.
            self.p2l[slot as usize] = NONE;
            self.blocks.valid[v] -= 1;
            if mode == CellMode::Slc {
                self.slc_valid_slots -= 1;
            }
            let new = if dest_room > 0 {
                dest_room -= 1;
                self.place(dest_block, lpn)
            } else {
                // `append` maps the page again.
                self.mapped_lpns -= 1;
                let new = self.append(dest, lpn);
                (dest_block, dest_room) = self.unit_room(dest, die);
                new
            };
            self.journal(Relocation::Moved { from: slot, to: new });
            if !self.slot_version.is_empty() {
                self.slot_version[new as usize] = self.slot_version[slot as usize];
            }
            moved += 1;
        }
        if read_slots > 0 && self.emit_ops {
            self.ops.push(NandOp::Read { purpose, block: victim, row: read_row, slots: read_slots });
        }
        if mode == CellMode::Slc {
            self.counters.fold_slots_moved += moved as u64;
        } else {
            self.counters.gc_slots_moved += moved as u64;
        }
        // Skip trailing invalid slots so that "done" is visible at once.
        while off < end && self.p2l[(first + off) as usize] == NONE {
            off += 1;
        }
        off
    }

    /// Map `lpn`, moved by GC or folding, to the next slot of `block`, an
    /// open native block whose current program unit this slot does not
    /// complete: all that [`FtlCore::append`] does in that case (the mapped
    /// count is unchanged, the page having been mapped before).
    #[inline(always)]
    fn place(&mut self, block: u32, lpn: u32) -> u32 {
        let slot = self.map_next_slot(block, lpn);
        if let Some(m) = &mut self.map {
            m.update(lpn, 1, &mut self.ops, self.emit_ops, &mut self.blocks.erase_count);
        }
        slot
    }

    /// The open block of stream `id` on `die` and how many slots
    /// [`FtlCore::place`] may put in it before one must complete its
    /// program unit through [`FtlCore::append`]; none when the block is
    /// not open or not native.
    #[inline]
    fn unit_room(&self, id: StreamId, die: u32) -> (u32, u32) {
        let b = self.streams[id as usize].open[die as usize];
        if b == NONE || self.blocks.mode[b as usize] != CellMode::Native {
            return (NONE, 0);
        }
        let pending = self.blocks.wp[b as usize] - self.blocks.programmed[b as usize];
        (b, self.geo.unit_slots(CellMode::Native) - pending - 1)
    }

    /// Erase a fully moved victim and return it to its free list.
    pub(super) fn erase_victim(&mut self, victim: u32, mode: CellMode) {
        self.erase_only(victim, mode);
        if self.wear.static_threshold.is_some() && !self.leveling {
            self.level_wear(self.geo.die_of_block(victim));
        }
    }

    /// Static wear leveling on `die`, after one of its blocks was erased:
    /// when the most erased block of the die has been erased more than the
    /// threshold more often than the least erased block holding data, that
    /// block's (cold) data moves to the GC stream (onto a worn block with
    /// `dynamic = "least-worn"`) and the young block returns to the free
    /// pool for hot data. Only while the die has room above its low
    /// watermark, and one move per erase.
    fn level_wear(&mut self, die: u32) {
        let Some(threshold) = self.wear.static_threshold else { return };
        if self.blocks.free_count(die) <= self.gc_low + 1 {
            return;
        }
        let first = die * self.geo.blocks_per_die;
        let (mut max, mut coldest) = (0u32, None::<(u32, u32)>);
        for b in first..first + self.geo.blocks_per_die {
            let e = self.blocks.total_erases(b);
            max = max.max(e);
            let i = b as usize;
            if self.blocks.state[i] == BlockState::Sealed
                && self.blocks.mode[i] == CellMode::Native
                && coldest.is_none_or(|(_, ce)| e < ce)
            {
                coldest = Some((b, e));
            }
        }
        let Some((victim, least)) = coldest else { return };
        if max - least <= threshold {
            return;
        }
        self.leveling = true;
        let before = self.counters.gc_slots_moved;
        self.start_collecting(victim, CellMode::Native);
        self.move_slots(victim, CellMode::Native, 0, u32::MAX);
        self.erase_only(victim, CellMode::Native);
        self.counters.gc_blocks -= 1;
        self.counters.wl_blocks += 1;
        self.counters.wl_slots_moved += self.counters.gc_slots_moved - before;
        self.leveling = false;
    }

    /// Erase a fully moved victim and return it to its free list (no wear
    /// leveling).
    pub(super) fn erase_only(&mut self, victim: u32, mode: CellMode) {
        debug_assert_eq!(self.blocks.valid[victim as usize], 0);
        self.journal(Relocation::Erased { block: victim });
        if self.emit_ops {
            let purpose = if mode == CellMode::Slc { Purpose::Fold } else { Purpose::Gc };
            self.ops.push(NandOp::Erase { purpose, block: victim });
        }
        if self.bad.is_some() && self.erase_fails(victim) {
            self.blocks.retire(victim, true);
            self.count_retired(victim);
        } else {
            self.blocks.release(victim);
        }
        if mode == CellMode::Slc {
            self.counters.fold_blocks += 1;
        } else {
            self.counters.gc_blocks += 1;
        }
    }

    /// One step of background work while the host is idle: on every die,
    /// folding (if the drive folds when idle and more than its target is
    /// cached), else GC if the die is below its background target. Work is
    /// done one native program unit per die per step, so that a host
    /// command arriving meanwhile waits for at most one step, as firmware
    /// that checks its queues between operations behaves. Returns false
    /// when there is nothing to do.
    pub fn background_step(&mut self) -> bool {
        let budget = self.geo.unit_slots(CellMode::Native);
        let mut worked = false;
        for die in 0..self.geo.dies {
            let d = die as usize;
            if self.bg[d].is_none() {
                self.bg[d] = self.begin_background_work(die);
            }
            let Some(bg) = self.bg[d] else { continue };
            worked = true;
            step_collection(self, die, bg, budget);
        }
        worked
    }

    fn begin_background_work(&mut self, die: u32) -> Option<Paced> {
        if let Some(slc) = &self.slc {
            if self.idle_fold_wanted(slc) && self.blocks.sealed_count(die, CellMode::Slc) > 0 {
                if let Some(bg) = begin_stepwise(self, die, CellMode::Slc) {
                    return Some(bg);
                }
            }
        }
        if self.wants_page_gc(die) {
            return begin_stepwise(self, die, CellMode::Native);
        }
        None
    }
}
