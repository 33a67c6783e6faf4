//! Flash translation layer: page-level mapping, allocation, GC.
//!
//! The FTL is purely logical: it decides where every 4 KiB goes and which
//! NAND operations that takes, and appends those operations to
//! [`Ftl::ops`]; the controller gives them times (see `controller`). No
//! decision depends on time, so the fast preconditioning path (which runs
//! the same code and drops the operations) leaves exactly the state that
//! simulating the writes leaves.
//!
//! Layout of the parts:
//! - mapping: `l2p` (logical page → slot) and `p2l` (slot → logical
//!   page), flat `u32` arrays, plus optional version stamps;
//! - allocation ([`streams`]): write streams (host, GC, fold) each with an
//!   open block per die, striping program units over dies channel first;
//! - [`blocks`]: block metadata, free lists and the victim index;
//! - [`gc`]: victim selection; collection is [`Ftl::collect_one`]: GC of a
//!   native block stays native, GC of an SLC block folds it;
//! - the SLC cache ([`slc`]): which mode a new host block gets, how large
//!   the cache may be, when to fold.
//!
//! - the hybrid log-block scheme ([`hybrid`]), an alternative placement
//!   and merge policy over the same map, block table and operations.
//!
//! Left out here: a mapping cache for DRAM-less drives, static wear levelling and bad blocks (their issues add them
//! behind the same interface).

pub mod blocks;
pub mod gc;
pub mod hybrid;
pub mod install;
pub mod journal;
pub mod slc;
pub mod streams;

use crate::mem::HugeVec;
use crate::model::nand::{CellMode, Geometry, Slot, NONE};
use crate::spec::{DriveModel, GcPolicy, SlcModel};
use blocks::{BlockState, BlockTable};
use gc::VictimSelector;
use journal::Relocation;
use streams::{Stream, StreamId};

/// Why a NAND operation is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Programming host data from the write buffer.
    HostWrite,
    /// Moving valid data out of a native GC victim.
    Gc,
    /// Folding SLC data into native blocks.
    Fold,
    /// Merging log blocks into data blocks (hybrid mapping).
    Merge,
}

/// A NAND operation the FTL needs, before it has a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NandOp {
    /// Read `slots` slots of one row (multi-plane) of `block`.
    Read {
        /// Why.
        purpose: Purpose,
        /// Block.
        block: u32,
        /// Row in the block.
        row: u32,
        /// Slots transferred.
        slots: u32,
    },
    /// Program `slots` slots starting at `row` of `block`.
    Program {
        /// Why.
        purpose: Purpose,
        /// Block.
        block: u32,
        /// First row.
        row: u32,
        /// Slots transferred (including padding).
        slots: u32,
    },
    /// Erase `block`.
    Erase {
        /// Why.
        purpose: Purpose,
        /// Block.
        block: u32,
    },
}

/// How many slots ahead GC asks for map entries.
const PREFETCH_AHEAD: u32 = 16;

/// Hint the CPU to load `v[i]`'s cache line (a no-op off x86-64).
#[inline(always)]
fn prefetch(v: &[u32], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = v.get(i) {
        // SAFETY: prefetching a valid reference has no observable effect.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((p as *const u32).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

/// A victim being collected a step at a time: paced by host writes while
/// the die is short of free blocks, or during idle time.
#[derive(Debug, Clone, Copy)]
struct Background {
    victim: u32,
    mode: CellMode,
    next_offset: u32,
    /// Valid slots when collection began (sets the pace).
    valid_at_start: u32,
    /// Remainder of the pace division carried to the next host unit.
    carry: u64,
}

impl Background {
    fn new(victim: u32, mode: CellMode, valid_at_start: u32) -> Background {
        Background { victim, mode, next_offset: 0, valid_at_start, carry: 0 }
    }
}

/// FTL event counters (in 4 KiB slots unless stated).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FtlCounters {
    /// Slots written by the host.
    pub host_slots_written: u64,
    /// Slots moved by GC.
    pub gc_slots_moved: u64,
    /// Slots programmed as padding (partial program units flushed).
    pub padding_slots: u64,
    /// Blocks reclaimed by GC.
    pub gc_blocks: u64,
    /// Slots trimmed that held data.
    pub trimmed_slots: u64,
    /// Slots folded from SLC into native blocks.
    pub fold_slots_moved: u64,
    /// SLC blocks folded (emptied).
    pub fold_blocks: u64,
    /// Host slots that were written into SLC blocks.
    pub host_slots_to_slc: u64,
    /// Hybrid mapping: switch merges (a log block became a data block).
    pub switch_merges: u64,
    /// Hybrid mapping: partial merges.
    pub partial_merges: u64,
    /// Hybrid mapping: full merges.
    pub full_merges: u64,
    /// Hybrid mapping: slots copied by merges.
    pub merge_slots_copied: u64,
}

/// The page-level FTL.
#[derive(Debug, Clone)]
pub struct Ftl {
    /// Geometry.
    pub geo: Geometry,
    /// Logical page → slot (`NONE` when unmapped).
    pub l2p: HugeVec<Slot>,
    /// Slot → logical page (`NONE` when invalid or unwritten).
    pub p2l: HugeVec<u32>,
    /// Last version written per logical page (if stamps are on).
    lpn_version: HugeVec<u32>,
    /// Version held by each slot (the "data" on flash, if stamps are on).
    slot_version: HugeVec<u32>,
    /// Block metadata.
    pub blocks: BlockTable,
    streams: [Stream; 3],
    victims: VictimSelector,
    gc_low: u32,
    gc_high: u32,
    seq: u64,
    /// The SLC cache, if the drive has one.
    pub slc: Option<SlcModel>,
    /// Logical pages currently mapped (how full the drive is).
    pub mapped_lpns: u64,
    /// Valid slots held in SLC blocks (the folding backlog).
    pub slc_valid_slots: u64,
    fold_die: u32,
    bg: Vec<Option<Background>>,
    /// NAND operations produced by the last calls, in order.
    pub ops: Vec<NandOp>,
    /// Whether to record operations (off on the fast preconditioning path).
    pub emit_ops: bool,
    /// Counters.
    pub counters: FtlCounters,
    /// The hybrid log-block scheme, when the drive uses it.
    pub hybrid: Option<Box<hybrid::Hybrid>>,
    /// Relocation journal, when a caller keeps data (see [`journal`]).
    journal: Option<Vec<Relocation>>,
}

impl Ftl {
    /// A freshly secure-erased FTL for a drive.
    pub fn new(model: &DriveModel) -> Ftl {
        let geo = model.geometry;
        let stamps = model.spec.ftl.version_stamps;
        Ftl {
            l2p: HugeVec::filled(model.user_lpns as usize, NONE),
            p2l: HugeVec::filled(geo.total_slots as usize, NONE),
            lpn_version: HugeVec::filled(if stamps { model.user_lpns as usize } else { 0 }, 0),
            slot_version: HugeVec::filled(if stamps { geo.total_slots as usize } else { 0 }, 0),
            blocks: BlockTable::new(&geo, model.slc.as_ref().map_or(0, |s| s.static_blocks_per_die)),
            streams: [
                Stream::new(StreamId::Host, &geo),
                Stream::new(StreamId::Gc, &geo),
                Stream::new(StreamId::Fold, &geo),
            ],
            victims: VictimSelector::new(model.gc_policy, geo.dies),
            gc_low: model.spec.ftl.gc_low_free_blocks,
            gc_high: model.spec.ftl.gc_high_free_blocks,
            seq: 0,
            slc: model.slc.clone(),
            mapped_lpns: 0,
            slc_valid_slots: 0,
            fold_die: 0,
            bg: vec![None; geo.dies as usize],
            ops: Vec::with_capacity(1024),
            emit_ops: true,
            counters: FtlCounters::default(),
            hybrid: model.hybrid.as_ref().map(|h| Box::new(hybrid::Hybrid::new(h, geo.dies, geo.total_blocks))),
            journal: None,
            geo,
        }
    }

    /// Logical pages the host can address.
    pub fn user_lpns(&self) -> u32 {
        self.l2p.len() as u32
    }

    /// Slot holding a logical page, or `NONE`.
    #[inline]
    pub fn lookup(&self, lpn: u32) -> Slot {
        self.l2p[lpn as usize]
    }

    /// Version stamp returned by reading `lpn` from flash (0 when unmapped
    /// or stamps are off). Tests compare it with their own record.
    pub fn read_version(&self, lpn: u32) -> u32 {
        let s = self.l2p[lpn as usize];
        if s == NONE || self.slot_version.is_empty() {
            0
        } else if self.p2l[s as usize] != lpn {
            // The slot's tag (what a drive keeps in the page's spare
            // area) names another page: the map points at foreign data.
            u32::MAX
        } else {
            self.slot_version[s as usize]
        }
    }

    /// Whether version stamps are kept.
    pub fn has_versions(&self) -> bool {
        !self.slot_version.is_empty()
    }

    /// Warm the cache line of `lpn`'s map entry. A hint only.
    #[inline]
    pub fn prefetch_lookup(&self, lpn: u32) {
        prefetch(&self.l2p, lpn as usize);
    }

    /// Warm the cache lines a coming [`Ftl::write`] of `lpn` will touch
    /// (its map entry and, if mapped, the reverse entry of its old slot).
    /// A hint only: it changes no state.
    #[inline]
    pub fn prefetch_write(&self, lpn: u32) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            prefetch(&self.p2l, old as usize);
        }
    }

    /// Write one logical page from the host. Returns its new slot.
    #[inline]
    pub fn write(&mut self, lpn: u32) -> Slot {
        self.unmap(lpn);
        let slot = if self.hybrid.is_some() {
            self.hybrid_write(lpn);
            // A merge triggered by this very write may already have moved
            // the page: its current slot is what the map says.
            self.l2p[lpn as usize]
        } else {
            self.append(StreamId::Host, lpn)
        };
        if !self.lpn_version.is_empty() {
            let v = self.lpn_version[lpn as usize].wrapping_add(1).max(1);
            self.lpn_version[lpn as usize] = v;
            self.slot_version[slot as usize] = v;
        }
        self.counters.host_slots_written += 1;
        slot
    }

    /// Deallocate (TRIM) one logical page.
    #[inline]
    pub fn trim(&mut self, lpn: u32) {
        if self.unmap(lpn) {
            self.counters.trimmed_slots += 1;
        }
    }

    /// Program the host stream's partially filled unit now, padding the
    /// rest (write-through and flush commands).
    pub fn flush_host(&mut self) {
        if self.hybrid.is_some() {
            self.flush_pending();
            return;
        }
        self.flush_stream(StreamId::Host);
    }

    /// Whether the host stream holds written data not yet sent to NAND.
    pub fn host_pending_slots(&self) -> u32 {
        if self.hybrid.is_some() {
            return self.hybrid_pending_slots();
        }
        self.streams[StreamId::Host as usize].pending_slots(&self.blocks, &self.geo)
    }

    /// Whether a slot's data is still in the controller (its program
    /// operation has not been issued).
    #[inline]
    pub fn is_unprogrammed(&self, slot: Slot) -> bool {
        let b = self.geo.block_of(slot);
        self.geo.offset_in_block(slot) >= self.blocks.programmed[b as usize]
    }

    /// Cell mode of the block holding a slot.
    #[inline]
    pub fn mode_of(&self, block: u32) -> CellMode {
        self.blocks.mode[block as usize]
    }

    /// Blocks a user-data erase must erase: every block that is not on a
    /// free list (free blocks were erased when they were released).
    pub fn blocks_to_erase(&self) -> Vec<u32> {
        (0..self.blocks.state.len() as u32).filter(|&b| self.blocks.state[b as usize] != BlockState::Free).collect()
    }

    /// Secure erase: forget all data, all blocks free (erase counts kept).
    pub fn secure_erase(&mut self) {
        self.l2p.fill(NONE);
        self.p2l.fill(NONE);
        self.lpn_version.fill(0);
        self.slot_version.fill(0);
        let erase_counts = self.blocks.erase_count.clone();
        self.blocks = BlockTable::new(&self.geo, self.slc.as_ref().map_or(0, |s| s.static_blocks_per_die));
        self.blocks.erase_count = erase_counts;
        self.mapped_lpns = 0;
        self.slc_valid_slots = 0;
        self.bg.fill(None);
        for s in &mut self.streams {
            s.reset();
        }
        self.victims.reset();
        self.ops.clear();
        if let Some(h) = &mut self.hybrid {
            h.reset();
        }
        self.journal(Relocation::Reset);
    }

    /// Whether `die` has fewer free blocks than the background-GC target
    /// and a native block worth collecting.
    pub fn wants_background_gc(&self, die: u32) -> bool {
        // The hybrid scheme reclaims space by merges, never by page GC.
        self.hybrid.is_none()
            && self.blocks.free_count(die) < self.gc_high
            && self.victims.has_candidate(&self.blocks, die, CellMode::Native)
    }

    /// Remove the mapping of `lpn`; true if it was mapped.
    #[inline]
    fn unmap(&mut self, lpn: u32) -> bool {
        let old = self.l2p[lpn as usize];
        if old == NONE {
            return false;
        }
        self.p2l[old as usize] = NONE;
        let b = self.geo.block_of(old);
        if self.blocks.mode[b as usize] == CellMode::Slc {
            self.slc_valid_slots -= 1;
        }
        self.blocks.invalidate(b);
        self.l2p[lpn as usize] = NONE;
        self.mapped_lpns -= 1;
        true
    }

    /// Hand out the next slot of a stream and map `lpn` to it.
    #[inline]
    fn append(&mut self, id: StreamId, lpn: u32) -> Slot {
        let die = self.streams[id as usize].die;
        let block = self.open_block(id, die);
        let b = block as usize;
        let slot = self.geo.first_slot(block) + self.blocks.wp[b];
        self.blocks.wp[b] += 1;
        self.blocks.valid[b] += 1;
        if self.blocks.mode[b] == CellMode::Slc {
            self.slc_valid_slots += 1;
            if id == StreamId::Host {
                self.counters.host_slots_to_slc += 1;
            }
        }
        self.l2p[lpn as usize] = slot;
        self.p2l[slot as usize] = lpn;
        self.mapped_lpns += 1;
        self.after_append(id, block);
        slot
    }

    /// The stream's open block on `die`, opening a new one if needed.
    #[inline]
    fn open_block(&mut self, id: StreamId, die: u32) -> u32 {
        let b = self.streams[id as usize].open[die as usize];
        if b != NONE {
            return b;
        }
        let b = match id {
            StreamId::Host => {
                if self.host_mode(die) == CellMode::Slc {
                    self.take_slc_block(die)
                } else {
                    self.reclaim_until_low_watermark(die);
                    self.blocks.take_free(die, CellMode::Native)
                }
            }
            StreamId::Fold => {
                // Keep the GC reserve: folding a static SLC block returns
                // nothing to the native free list, so native GC must make
                // the room first (it never consumes more than it frees).
                while self.blocks.free_count(die) < self.gc_low {
                    if !self.collect_one(die, CellMode::Native) {
                        break;
                    }
                }
                self.blocks.take_free(die, CellMode::Native)
            }
            StreamId::Gc => self.blocks.take_free(die, CellMode::Native),
        };
        let b = b.expect("the free-block reserve guarantees a block for GC and folding");
        self.streams[id as usize].open[die as usize] = b;
        b
    }

    /// Free blocks on `die` up to the low watermark: finish the die's
    /// collection in progress, then native GC where native blocks hold
    /// invalid data, else fold SLC blocks (the native capacity is needed,
    /// so lazily cached data must move). The host waits for all of it.
    fn reclaim_until_low_watermark(&mut self, die: u32) {
        if self.blocks.free_count(die) < self.gc_low {
            if let Some(bg) = self.bg[die as usize].take() {
                self.move_valid(bg.victim, bg.mode, bg.next_offset, u32::MAX);
                self.finish_collection(bg.victim, bg.mode);
            }
        }
        while self.blocks.free_count(die) < self.gc_low {
            let Some(mode) = self.reclaim_mode(die) else { break };
            if !self.collect_one(die, mode) {
                break;
            }
        }
    }

    /// Where to reclaim native space on `die`: the mode whose best victim
    /// returns more free slots for the moves it costs. A native victim
    /// holding `V` of `S` slots returns `S − V`; folding a borrowed
    /// (dynamic) SLC block holding `V` returns a whole block for `V` native
    /// slots, also `S − V`, and is usually the better deal on a nearly full
    /// drive whose native blocks are almost all valid. Folding a static SLC
    /// block returns nothing native, so it is chosen only when no native
    /// block holds invalid data. `None` when nothing can be reclaimed.
    fn reclaim_mode(&self, die: u32) -> Option<CellMode> {
        let s = self.geo.slots_per_block;
        let native_gain = if self.victims.has_candidate(&self.blocks, die, CellMode::Native) {
            self.blocks.peek_min_valid(die, CellMode::Native).map(|b| s - self.blocks.valid[b as usize])
        } else {
            None
        };
        let slc = self.blocks.peek_min_valid(die, CellMode::Slc);
        let slc_gain = slc.filter(|&b| !self.blocks.is_static[b as usize]).map(|b| s - self.blocks.valid[b as usize]);
        match (native_gain, slc_gain) {
            (Some(n), Some(f)) if f > n => Some(CellMode::Slc),
            (Some(_), _) => Some(CellMode::Native),
            (None, _) if slc.is_some() => Some(CellMode::Slc),
            (None, _) => None,
        }
    }

    /// After a slot was handed out: issue the program when a unit is full,
    /// move the stream to its next die, seal a full block.
    #[inline]
    fn after_append(&mut self, id: StreamId, block: u32) {
        let b = block as usize;
        let mode = self.blocks.mode[b];
        let unit = self.geo.unit_slots(mode);
        // Programs are issued a whole unit at a time (padding included),
        // so a unit is full when a unit's worth is written but unissued.
        if self.blocks.wp[b] - self.blocks.programmed[b] == unit {
            self.issue_program(id, block, unit);
            if id == StreamId::Host {
                // The unit used up this much of a block, in native slots.
                let used = unit as u64 * self.geo.slots_per_block as u64 / self.geo.slots_in_mode(mode) as u64;
                self.pace_collection(self.geo.die_of_block(block), used);
            }
        }
    }

    /// Foreground GC paced by host writes. While `die` has fewer free
    /// blocks than the background target, every host program unit on it
    /// moves a share of a victim's valid data: a victim holding `V` valid
    /// of `S` slots returns `S − V` slots once its `V` are moved, so `used`
    /// slots of new data cost `used · V / (S − V)` moves. Free space then
    /// comes back as fast as the host uses it, in small steps between host
    /// programs, instead of whole victims at once when the reserve runs
    /// out (which [`Ftl::reclaim_until_low_watermark`] still does if the
    /// pace falls behind). The victim is chosen by [`Ftl::reclaim_mode`]
    /// (an SLC block to fold counts as a whole native block of space, its
    /// data as `V` native slots).
    fn pace_collection(&mut self, die: u32, used: u64) {
        if self.blocks.free_count(die) >= self.gc_high {
            return;
        }
        let d = die as usize;
        if self.bg[d].is_none() {
            self.bg[d] = self.begin_paced_collection(die);
        }
        let Some(mut bg) = self.bg[d] else { return };
        let s = self.geo.slots_per_block as u64;
        let v = bg.valid_at_start as u64;
        let owed = used * v + bg.carry;
        let gain = s.saturating_sub(v).max(1);
        let moves = (owed / gain).min(u32::MAX as u64) as u32;
        bg.carry = owed % gain;
        self.step_collection(d, bg, moves);
    }

    /// Move up to `max_moves` slots of the die's collection in progress
    /// `bg`; erase the victim when it is empty, else keep it in progress.
    fn step_collection(&mut self, d: usize, bg: Background, max_moves: u32) {
        let next = self.move_valid(bg.victim, bg.mode, bg.next_offset, max_moves);
        if next >= self.blocks.wp[bg.victim as usize] {
            self.finish_collection(bg.victim, bg.mode);
            self.bg[d] = None;
        } else {
            self.bg[d] = Some(Background { next_offset: next, ..bg });
        }
    }

    /// Choose the victim of a paced collection on `die` (see
    /// [`Ftl::pace_collection`]).
    fn begin_paced_collection(&mut self, die: u32) -> Option<Background> {
        let mode = self.reclaim_mode(die)?;
        self.begin_stepwise(die, mode)
    }

    /// Choose a victim of `mode` on `die` to collect a step at a time.
    fn begin_stepwise(&mut self, die: u32, mode: CellMode) -> Option<Background> {
        let victim = self.begin_collection(die, mode)?;
        Some(Background::new(victim, mode, self.blocks.valid[victim as usize]))
    }

    fn issue_program(&mut self, id: StreamId, block: u32, slots: u32) {
        let b = block as usize;
        let wp = self.blocks.wp[b];
        let first = wp - slots;
        self.blocks.programmed[b] = wp;
        if self.emit_ops {
            self.ops.push(NandOp::Program { purpose: id.purpose(), block, row: self.geo.row_of(first), slots });
        }
        let mode = self.blocks.mode[b];
        if wp == self.geo.slots_in_mode(mode) {
            self.seq += 1;
            self.blocks.seal(block, self.seq);
            self.victims.on_seal(block, mode, &self.geo);
            let die = self.geo.die_of_block(block);
            self.streams[id as usize].open[die as usize] = NONE;
        }
        self.streams[id as usize].advance(&self.geo);
    }

    fn flush_stream(&mut self, id: StreamId) {
        let die = self.streams[id as usize].die;
        let block = self.streams[id as usize].open[die as usize];
        if block == NONE {
            return;
        }
        let b = block as usize;
        let unit = self.geo.unit_slots(self.blocks.mode[b]);
        let wp = self.blocks.wp[b];
        let fill = wp % unit;
        if fill == 0 {
            return;
        }
        let pad = unit - fill;
        self.blocks.wp[b] += pad;
        self.counters.padding_slots += pad as u64;
        self.issue_program(id, block, unit);
    }

    /// Collect one victim of `mode` on `die`: move its valid slots (to the
    /// GC stream for native blocks, folded into native blocks for SLC
    /// blocks) and erase it. Returns false if nothing could be collected.
    pub fn collect_one(&mut self, die: u32, mode: CellMode) -> bool {
        let Some(victim) = self.begin_collection(die, mode) else { return false };
        self.move_valid(victim, mode, 0, u32::MAX);
        self.finish_collection(victim, mode);
        true
    }

    /// Choose a victim of `mode` on `die` and take it out of the victim
    /// index. `None` if no victim would free space.
    fn begin_collection(&mut self, die: u32, mode: CellMode) -> Option<u32> {
        let victim = self.victims.select(&mut self.blocks, die, mode, self.seq)?;
        let v = victim as usize;
        // A fully valid native victim frees nothing. FIFO and cost-benefit
        // may still pick one (and rotate it to the back) while other blocks
        // hold invalid data; when none does, the die is full of valid data.
        // A fully valid SLC block is worth folding: its data needs 1/bits of
        // a native block.
        if mode == CellMode::Native
            && self.blocks.valid[v] >= self.geo.slots_in_mode(mode)
            && !self.victims.has_candidate(&self.blocks, die, mode)
        {
            return None;
        }
        self.blocks.begin_collect(victim);
        self.victims.on_collect(victim, mode);
        Some(victim)
    }

    /// Move the valid slots of a victim being collected, from offset
    /// `from`, stopping after `max_moves` moves. Returns the offset to
    /// continue from (the block's write pointer when all are moved).
    fn move_valid(&mut self, victim: u32, mode: CellMode, from: u32, max_moves: u32) -> u32 {
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
            // `append` maps the page again.
            self.mapped_lpns -= 1;
            let new = self.append(dest, lpn);
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

    /// Erase a fully moved victim and return it to its free list.
    fn finish_collection(&mut self, victim: u32, mode: CellMode) {
        debug_assert_eq!(self.blocks.valid[victim as usize], 0);
        self.journal(Relocation::Erased { block: victim });
        if self.emit_ops {
            let purpose = if mode == CellMode::Slc { Purpose::Fold } else { Purpose::Gc };
            self.ops.push(NandOp::Erase { purpose, block: victim });
        }
        self.blocks.release(victim);
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
            self.step_collection(d, bg, budget);
        }
        worked
    }

    fn begin_background_work(&mut self, die: u32) -> Option<Background> {
        if let Some(slc) = &self.slc {
            if slc.idle_fold
                && self.slc_valid_slots > slc.idle_fold_target_slots
                && self.blocks.sealed_count(die, CellMode::Slc) > 0
            {
                if let Some(bg) = self.begin_stepwise(die, CellMode::Slc) {
                    return Some(bg);
                }
            }
        }
        if self.wants_background_gc(die) {
            return self.begin_stepwise(die, CellMode::Native);
        }
        None
    }

    /// Check internal consistency (tests): the maps are inverse and every
    /// block's valid count matches its slots.
    pub fn check_consistency(&self) -> Result<(), String> {
        for (lpn, &s) in self.l2p.iter().enumerate() {
            if s != NONE && self.p2l[s as usize] != lpn as u32 {
                return Err(format!("l2p[{lpn}] = {s} but p2l[{s}] = {}", self.p2l[s as usize]));
            }
        }
        for b in 0..self.geo.total_blocks {
            let first = self.geo.first_slot(b) as usize;
            let n = self.geo.slots_per_block as usize;
            let mut valid = 0;
            for (i, &lpn) in self.p2l[first..first + n].iter().enumerate() {
                if lpn != NONE {
                    if self.l2p[lpn as usize] != (first + i) as u32 {
                        return Err(format!("p2l[{}] = {lpn} but l2p[{lpn}] differs", first + i));
                    }
                    valid += 1;
                }
            }
            if valid != self.blocks.valid[b as usize] {
                return Err(format!("block {b}: {valid} valid slots, count says {}", self.blocks.valid[b as usize]));
            }
        }
        if self.hybrid.is_some() {
            self.hybrid_check()?;
        }
        Ok(())
    }

    /// The GC policy in use.
    pub fn gc_policy(&self) -> GcPolicy {
        self.victims.policy()
    }
}
