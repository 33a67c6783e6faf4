//! Flash translation layer: mapping, allocation, SLC cache, GC.
//!
//! The FTL is purely logical: it decides where every 4 KiB goes and which
//! NAND operations that takes, and hands those operations to the drive
//! ([`Ftl::take_ops`]), which gives them times (see `model::drive` and
//! `model::flash`). No decision depends on time, so the fast
//! preconditioning path (which runs the same code and drops the
//! operations) leaves exactly the state that simulating the writes leaves.
//!
//! Layout of the parts:
//! - [`Ftl`]: the narrow API the drive uses (write, read, trim, flush,
//!   background work, secure erase, the operations), over
//! - [`FtlCore`]: the state every part shares — the map (`l2p`: logical
//!   page → slot, of a zoned drive's conventional zones only, see [`zns`];
//!   `p2l`: slot → logical page, flat `u32` arrays, plus optional version
//!   stamps), the blocks, the write streams, the
//!   collections in progress, the operations and the counters — private to
//!   this module;
//! - [`mapping`]: the mapping scheme behind a trait: page-level
//!   ([`mapping::PageMapping`]) or hybrid log-block ([`hybrid`]);
//! - [`pool`]: the block pool the block policies act on, implemented by
//!   [`FtlCore`] and by the statistical steady-state builder, so that each
//!   policy exists once:
//!   - [`streams`]: write streams (host, GC, fold) each with an open block
//!     per die, striping program units over dies channel first, and which
//!     block a stream opens;
//!   - [`slc`]: the SLC cache — which mode a new host block gets, how large
//!     the cache may be, when to fold;
//!   - [`gc`]: victim selection, reclaiming by GC or folding, pacing, and
//!     the FTL's collection mechanism and idle-time work;
//! - [`blocks`]: block metadata, free lists and the victim index;
//! - [`badblocks`]: factory and grown bad blocks, the spare pool and
//!   read-only end of life, relocation after uncorrectable reads;
//! - [`install`]: installing a whole state built elsewhere;
//! - [`zones`], [`zns`]: a zoned namespace's zone state machine and the
//!   mapping scheme that gives each sequential zone blocks of its own;
//! - [`fdp`]: flexible data placement (a host stream per placement
//!   handle, GC isolation) and [`fdp_events`], its event logs.
//!
//! The map cache of DRAM-less drives is [`mapcache`]; wear leveling is in
//! [`gc`] and [`blocks`].

pub mod badblocks;
pub mod blocks;
pub mod extrapolate;
mod facade;
pub mod fdp;
pub mod fdp_events;
pub mod gc;
pub mod hybrid;
pub mod install;
pub mod journal;
pub mod mapcache;
pub mod mapjournal;
pub mod mapping;
pub mod pool;
pub mod slc;
pub mod streams;
pub mod zns;
pub mod zones;

use crate::mem::HugeVec;
use crate::model::nand::{CellMode, Geometry, Slot, NONE};
use crate::model::params::{DriveModel, GcMode, GcPolicy, SlcModel, WearLevelingModel};
use blocks::{BlockState, BlockTable};
use gc::VictimSelector;
use journal::Relocation;
use mapping::Scheme;
use pool::{BlockPool, Paced};
use streams::{Stream, StreamId};

/// Why a NAND operation is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Purpose {
    /// Programming host data from the write buffer.
    HostWrite,
    /// Moving valid data out of a native GC victim.
    Gc,
    /// Folding SLC data into native blocks.
    Fold,
    /// Merging log blocks into data blocks (hybrid mapping).
    Merge,
    /// Loading a translation page of a cached map for a lookup.
    MapLoad,
    /// Writing translation pages back (and cleaning their blocks).
    MapStore,
    /// Erasing a zone's blocks on a Zone Reset (zoned namespaces).
    ZoneReset,
}

/// A NAND operation the FTL needs, before it has a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
pub(crate) const PREFETCH_AHEAD: u32 = 16;

/// Hint the CPU to load `v[i]`'s cache line (a no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch(v: &[u32], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = v.get(i) {
        // SAFETY: prefetching a valid reference has no observable effect.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((p as *const u32).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

/// FTL event counters (in 4 KiB slots unless stated).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// Static wear leveling: blocks of cold data moved off young blocks.
    pub wl_blocks: u64,
    /// Static wear leveling: slots moved (also counted in `gc_slots_moved`).
    pub wl_slots_moved: u64,
    /// Blocks whose data was relocated after an uncorrectable read.
    pub relocated_blocks: u64,
}

/// The flash translation layer: a mapping scheme ([`mapping`]) over the
/// shared state ([`FtlCore`]) and block policies ([`pool`]). The drive
/// talks to it through this narrow API: host writes, reads and trims,
/// flushes, background work, secure erase; the NAND operations they need
/// come out of [`Ftl::take_ops`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Ftl {
    core: FtlCore,
    scheme: Scheme,
}

/// The FTL's per-page arrays, the bulk of a drive's memory: logical page
/// → slot, slot → logical page, and the version stamps of each (empty
/// when stamps are off).
#[derive(Debug, Default)]
pub struct PageArrays(pub [HugeVec<u32>; 4]);

/// The FTL's state that its mapping schemes and block policies share: the
/// map, the blocks, the write streams, the collections in progress, the
/// operations produced and the counters. Its fields are private to the
/// `ftl` module; everything outside goes through [`Ftl`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FtlCore {
    /// Geometry.
    geo: Geometry,
    /// Logical page → slot (`NONE` when unmapped); on a zoned drive, of
    /// the conventional zones only (a sequential zone's map is its block
    /// list, [`zns::ZonedMapping::lookup`]).
    l2p: HugeVec<Slot>,
    /// Slot → logical page (`NONE` when invalid or unwritten).
    p2l: HugeVec<u32>,
    /// Last version written per logical page (if stamps are on).
    lpn_version: HugeVec<u32>,
    /// Version held by each slot (the "data" on flash, if stamps are on).
    slot_version: HugeVec<u32>,
    /// Block metadata.
    blocks: BlockTable,
    streams: [Stream; 3],
    victims: VictimSelector,
    gc_low: u32,
    gc_high: u32,
    /// `ftl.gc_mode = "paced"` (else GC in one go).
    gc_paced: bool,
    seq: u64,
    /// The SLC cache, if the drive has one.
    slc: Option<SlcModel>,
    /// Logical pages currently mapped (how full the drive is).
    mapped_lpns: u64,
    /// Valid slots held in SLC blocks (the folding backlog).
    slc_valid_slots: u64,
    fold_die: u32,
    bg: Vec<Option<Paced>>,
    /// NAND operations produced by the last calls, in order.
    ops: Vec<NandOp>,
    /// Whether to record operations (off on the fast preconditioning path).
    emit_ops: bool,
    /// Counters.
    counters: FtlCounters,
    /// Relocation journal, when a caller keeps data (see [`journal`]).
    journal: Option<Vec<Relocation>>,
    /// The map cache, when the map is cached in limited memory.
    map: Option<mapcache::MapCache>,
    /// Wear leveling by erase count.
    wear: WearLevelingModel,
    /// A static wear-leveling move is in progress (no nested one).
    leveling: bool,
    /// Bad-block management (`None`: every block good forever).
    bad: Option<badblocks::BadBlocks>,
    /// Native erases one pSLC erase is worth (rated native / SLC cycles).
    slc_wear_ratio: f64,
    /// Flexible data placement (`None`: no `[fdp]`).
    #[serde(default)]
    fdp: Option<Box<fdp::Fdp>>,
}

impl FtlCore {
    fn new(model: &DriveModel) -> FtlCore {
        let geo = model.geometry;
        let stamps = model.spec.ftl.version_stamps;
        let mut blocks = BlockTable::new(&geo, model.slc.as_ref().map_or(0, |s| s.static_blocks_per_die));
        let bad = model.media.as_ref().and_then(|m| m.bad_blocks.as_ref()).map(|b| badblocks::BadBlocks::new(b, &geo));
        if let Some(b) = &bad {
            blocks.mark_factory_bad(b.bad_blocks());
        }
        let nand = &model.spec.nand;
        let slc_wear_ratio = match (nand.native.pe_cycles, nand.slc.as_ref().and_then(|s| s.pe_cycles)) {
            (Some(n), Some(s)) => n as f64 / s as f64,
            _ => 1.0,
        };
        let map = model.map_cache.as_ref().map(|m| {
            let reserved = blocks.reserve_map_blocks(m.blocks_per_die, m.mode);
            mapcache::MapCache::new(m, &geo, reserved)
        });
        let mut streams =
            [Stream::new(StreamId::Host, &geo), Stream::new(StreamId::Gc, &geo), Stream::new(StreamId::Fold, &geo)];
        let fdp = model.fdp.as_ref().map(|f| Box::new(fdp::Fdp::new(f, &geo, &mut streams)));
        let paged = model.zns.as_ref().map_or(model.user_lpns, |z| z.conventional * z.zone_lpns);
        FtlCore {
            l2p: HugeVec::filled(paged as usize, NONE),
            p2l: HugeVec::filled(geo.total_slots as usize, NONE),
            lpn_version: HugeVec::filled(if stamps { model.user_lpns as usize } else { 0 }, 0),
            slot_version: HugeVec::filled(if stamps { geo.total_slots as usize } else { 0 }, 0),
            blocks,
            streams,
            victims: VictimSelector::new(model.gc_policy, geo.dies),
            gc_low: model.spec.ftl.gc_low_free_blocks,
            gc_high: model.spec.ftl.gc_high_free_blocks,
            gc_paced: model.spec.ftl.gc_mode == GcMode::Paced,
            seq: 0,
            slc: model.slc.clone(),
            mapped_lpns: 0,
            slc_valid_slots: 0,
            fold_die: 0,
            bg: vec![None; geo.dies as usize],
            ops: Vec::with_capacity(1024),
            emit_ops: true,
            counters: FtlCounters::default(),
            journal: None,
            map,
            wear: model.wear_leveling,
            leveling: false,
            bad,
            slc_wear_ratio,
            fdp,
            geo,
        }
    }

    /// Logical pages the page map covers (all the host can address,
    /// except on a zoned drive: its conventional zones').
    pub fn user_lpns(&self) -> u32 {
        self.l2p.len() as u32
    }

    /// Slot holding a logical page, or `NONE`.
    #[inline]
    pub fn lookup(&self, lpn: u32) -> Slot {
        self.l2p[lpn as usize]
    }

    /// Version stamp returned by reading `lpn` from flash, whose map
    /// entry is `s` (0 when unmapped or stamps are off). Tests compare it
    /// with their own record.
    pub fn read_version(&self, lpn: u32, s: Slot) -> u32 {
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
        // A zoned drive's sequential zones have no page map entry.
        let old = self.l2p.get(lpn as usize).copied().unwrap_or(NONE);
        if old != NONE {
            prefetch(&self.p2l, old as usize);
        }
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
        (0..self.blocks.state.len() as u32)
            .filter(|&b| {
                self.blocks.state[b as usize] != BlockState::Free && self.blocks.state[b as usize] != BlockState::Bad
            })
            .collect()
    }

    /// Secure erase: forget all data, all blocks free (erase counts kept).
    fn secure_erase(&mut self) {
        self.l2p.fill(NONE);
        self.p2l.fill(NONE);
        self.lpn_version.fill(0);
        self.slot_version.fill(0);
        let erase_counts = self.blocks.erase_count.clone();
        let clock = self.blocks.clock_ns;
        self.blocks = BlockTable::new(&self.geo, self.slc.as_ref().map_or(0, |s| s.static_blocks_per_die));
        self.blocks.erase_count = erase_counts;
        self.blocks.clock_ns = clock;
        if let Some(b) = &self.bad {
            self.blocks.mark_factory_bad(b.bad_blocks());
        }
        if let Some(m) = &mut self.map {
            let per_die = m.blocks().len() as u32 / self.geo.dies;
            self.blocks.reserve_map_blocks(per_die, m.mode());
            m.reset();
        }
        self.mapped_lpns = 0;
        self.slc_valid_slots = 0;
        self.bg.fill(None);
        for s in &mut self.streams {
            s.reset();
        }
        if let Some(f) = &mut self.fdp {
            f.reset();
        }
        self.victims.reset();
        self.ops.clear();
        self.journal(Relocation::Reset);
    }

    /// Whether `die` has fewer free blocks than the background-GC target
    /// and a native block worth collecting (page GC; see
    /// [`Ftl::wants_background_gc`]).
    fn wants_page_gc(&self, die: u32) -> bool {
        self.blocks.free_count(die) < self.gc_high && self.victims.has_candidate(&self.blocks, die, CellMode::Native)
    }

    /// Give `lpn` a new version stamp in `slot` (when stamps are on).
    #[inline]
    fn stamp(&mut self, lpn: u32, slot: Slot) {
        if !self.lpn_version.is_empty() {
            let v = self.lpn_version[lpn as usize].wrapping_add(1).max(1);
            self.lpn_version[lpn as usize] = v;
            self.slot_version[slot as usize] = v;
        }
    }

    /// Host slots of the host stream not yet programmed.
    fn host_pending_slots(&self) -> u32 {
        self.streams[StreamId::Host as usize].pending_slots(&self.blocks, &self.geo)
    }

    /// Remove the mapping of `lpn` (a trim); true if it was mapped.
    #[inline(always)]
    pub(super) fn unmap(&mut self, lpn: u32) -> bool {
        self.unmap_for(lpn, false)
    }

    /// Remove the mapping of `lpn` before a host write maps it anew
    /// (`write`) or for a trim; true if it was mapped.
    #[inline(always)]
    pub(super) fn unmap_for(&mut self, lpn: u32, write: bool) -> bool {
        // Past the page map: a sequential zone's page, which a write finds
        // unmapped (its zone's reset unmapped it).
        let Some(&old) = self.l2p.get(lpn as usize) else { return false };
        if let Some(m) = &mut self.map {
            m.unmap(lpn, (old != NONE, write), &mut self.ops, self.emit_ops, &mut self.blocks.erase_count);
        }
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
    #[inline(always)]
    pub(super) fn append(&mut self, id: StreamId, lpn: u32) -> Slot {
        let die = self.streams[id as usize].die;
        let mut block = self.streams[id as usize].open[die as usize];
        if block == NONE {
            block = self.open_for_append(id, die);
        }
        let slot = self.map_next_slot(block, lpn);
        if self.blocks.mode[block as usize] == CellMode::Slc {
            self.slc_valid_slots += 1;
            if id == StreamId::Host {
                self.counters.host_slots_to_slc += 1;
            }
        }
        self.mapped_lpns += 1;
        if let Some(m) = &mut self.map {
            let lane = (id != StreamId::Host) as usize;
            m.update(lpn, lane, &mut self.ops, self.emit_ops, &mut self.blocks.erase_count);
        }
        self.after_append(id, block);
        slot
    }

    /// Map `lpn` to the next slot of `block` (at its write pointer, which
    /// moves on; the slot counts as valid). Returns the slot.
    #[inline(always)]
    pub(super) fn map_next_slot(&mut self, block: u32, lpn: u32) -> Slot {
        let slot = self.place_next_slot(block, lpn);
        self.l2p[lpn as usize] = slot;
        slot
    }

    /// Put `lpn` in the next slot of `block` as [`FtlCore::map_next_slot`]
    /// does, without a page map entry: a sequential zone's page, which
    /// the zone map finds ([`zns::ZonedMapping::lookup`]).
    #[inline(always)]
    pub(super) fn place_next_slot(&mut self, block: u32, lpn: u32) -> Slot {
        let b = block as usize;
        let slot = self.geo.first_slot(block) + self.blocks.wp[b];
        self.blocks.wp[b] += 1;
        self.blocks.valid[b] += 1;
        self.p2l[slot as usize] = lpn;
        slot
    }

    /// Access `lpn`'s map entry through the map cache, if the map is
    /// cached (`dirty`: the access changes it; `lane` 0 for the host, 1 for
    /// GC and folding). Misses and write-backs append their NAND
    /// operations.
    #[inline]
    fn touch_map(&mut self, lpn: u32, dirty: bool, lane: usize) {
        if let Some(m) = &mut self.map {
            m.access(lpn, dirty, lane, &mut self.ops, self.emit_ops, &mut self.blocks.erase_count);
        }
    }

    /// A host read's lookup of `lpn`: through the map cache, then the map.
    #[inline]
    pub(super) fn map_read(&mut self, lpn: u32) -> Slot {
        self.touch_map(lpn, false, 0);
        self.l2p[lpn as usize]
    }

    /// After a slot was handed out: when that completed a unit, issue its
    /// program (see [`FtlCore::unit_written`]).
    #[inline(always)]
    fn after_append(&mut self, id: StreamId, block: u32) {
        let b = block as usize;
        let unit = self.geo.unit_slots(self.blocks.mode[b]);
        // Programs are issued a whole unit at a time (padding included),
        // so a unit is full when a unit's worth is written but unissued.
        if self.blocks.wp[b] - self.blocks.programmed[b] == unit {
            self.unit_written(id, block, unit);
        }
    }

    /// A unit of `block` is written: issue its program (moving the stream
    /// to its next die, sealing a full block) and, for the host, pace
    /// collection. Once per unit, so kept out of the per-slot path.
    #[inline(never)]
    fn unit_written(&mut self, id: StreamId, block: u32, unit: u32) {
        self.issue_program(id, block, unit);
        if id == StreamId::Host {
            let mode = self.blocks.mode[block as usize];
            let used = gc::native_slots_used(&self.geo, mode, unit);
            gc::pace_collection(self, self.geo.die_of_block(block), used);
        }
    }

    fn issue_program(&mut self, id: StreamId, block: u32, slots: u32) {
        let b = block as usize;
        let wp = self.blocks.wp[b];
        let first = wp - slots;
        self.blocks.programmed[b] = wp;
        if self.emit_ops {
            self.ops.push(NandOp::Program { purpose: id.purpose(), block, row: self.geo.row_of(first), slots });
        }
        if let Some(f) = &mut self.fdp {
            f.on_program(block, slots);
        }
        if self.bad.is_some() {
            self.check_program(block);
        }
        let mode = self.blocks.mode[b];
        if wp == self.geo.slots_in_mode(mode) {
            self.seal_block(block);
            let die = self.geo.die_of_block(block);
            self.streams[id as usize].open[die as usize] = NONE;
        }
        self.streams[id as usize].advance(&self.geo, slots);
    }

    /// Seal `block` (full, or closed early by a Reclaim Unit Handle
    /// Update with its programs issued): it joins the GC victim index.
    fn seal_block(&mut self, block: u32) {
        self.seq += 1;
        self.blocks.seal(block, self.seq);
        self.victims.on_seal(block, self.blocks.mode[block as usize], &self.geo);
    }

    pub(super) fn flush_stream(&mut self, id: StreamId) {
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

    /// Check internal consistency (tests): the maps are inverse and every
    /// block's valid count matches its slots.
    fn check_consistency(&self) -> Result<(), String> {
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
                    // Pages past the page map are a zoned drive's
                    // sequential zones', which its scheme checks.
                    if self.l2p.get(lpn as usize).is_some_and(|&s| s != (first + i) as u32) {
                        return Err(format!("p2l[{}] = {lpn} but l2p[{lpn}] differs", first + i));
                    }
                    valid += 1;
                }
            }
            if valid != self.blocks.valid[b as usize] {
                return Err(format!("block {b}: {valid} valid slots, count says {}", self.blocks.valid[b as usize]));
            }
        }
        Ok(())
    }

    /// The GC policy in use.
    pub fn gc_policy(&self) -> GcPolicy {
        self.victims.policy()
    }
}

/// The FTL as the block pool its policies act on (exact counts; moves
/// update the map and emit NAND operations).
impl BlockPool for FtlCore {
    #[inline]
    fn geometry(&self) -> &Geometry {
        &self.geo
    }
    #[inline]
    fn pool_dies(&self) -> u32 {
        self.geo.dies
    }
    #[inline]
    fn low_watermark(&self) -> u32 {
        self.gc_low
    }
    #[inline]
    fn high_watermark(&self) -> u32 {
        self.gc_high
    }
    #[inline]
    fn paced_gc(&self) -> bool {
        self.gc_paced
    }
    #[inline]
    fn slc_model(&self) -> Option<&SlcModel> {
        self.slc.as_ref()
    }
    fn slc_curve_blocks(&self) -> f64 {
        self.slc.as_ref().map_or(0.0, |s| s.curve_blocks(self.fill_fraction()).floor())
    }
    fn fold_threshold_blocks(&self) -> f64 {
        self.slc.as_ref().map_or(0.0, |s| s.fold_threshold_blocks as f64)
    }
    #[inline]
    fn free_count(&self, die: u32) -> u32 {
        self.blocks.free_count(die)
    }
    #[inline]
    fn static_free_count(&self, die: u32) -> u32 {
        self.blocks.static_free_count(die)
    }
    #[inline]
    fn empty_native_count(&self, die: u32) -> u32 {
        self.blocks.empty_count(die, CellMode::Native)
    }
    #[inline]
    fn slc_in_use(&self) -> u32 {
        self.blocks.slc_in_use
    }
    #[inline]
    fn sealed_count(&self, die: u32, mode: CellMode) -> u32 {
        self.blocks.sealed_count(die, mode)
    }
    #[inline]
    fn is_static(&self, block: u32) -> bool {
        self.blocks.is_static[block as usize]
    }
    #[inline]
    fn least_valid(&self, die: u32, mode: CellMode) -> Option<(u32, f64)> {
        self.blocks.peek_min_valid(die, mode).map(|b| (b, self.blocks.valid[b as usize] as f64))
    }
    #[inline]
    fn open_block_of(&self, stream: StreamId, die: u32) -> u32 {
        self.streams[stream as usize].open[die as usize]
    }
    #[inline]
    fn set_open_block(&mut self, stream: StreamId, die: u32, block: u32) {
        self.streams[stream as usize].open[die as usize] = block;
        if let Some(f) = &mut self.fdp {
            f.on_open(stream, block, die);
        }
    }
    #[inline]
    fn fold_cursor(&self) -> u32 {
        self.fold_die
    }
    #[inline]
    fn set_fold_cursor(&mut self, die: u32) {
        self.fold_die = die;
    }
    #[inline]
    fn paced(&self, die: u32) -> Option<Paced> {
        self.bg[die as usize]
    }
    #[inline]
    fn set_paced(&mut self, die: u32, paced: Option<Paced>) {
        self.bg[die as usize] = paced;
    }
    #[inline]
    fn take_free(&mut self, die: u32, mode: CellMode, stream: StreamId) -> Option<u32> {
        if self.wear.least_worn {
            // Host data (hot) to the youngest block, moved data (cold) to
            // the most worn.
            self.blocks.take_free_by_wear(die, mode, stream != StreamId::Host)
        } else {
            self.blocks.take_free(die, mode)
        }
    }
    #[inline]
    fn take_static(&mut self, die: u32) -> Option<u32> {
        self.blocks.take_static(die)
    }
    #[inline]
    fn choose_victim(&mut self, die: u32, mode: CellMode) -> Option<u32> {
        self.victims.select(&mut self.blocks, die, mode, self.seq)
    }
    #[inline]
    fn dynamic_slc_victim(&mut self, die: u32) -> Option<u32> {
        self.blocks.min_valid_dynamic_slc(die)
    }
    #[inline]
    fn valid_slots(&mut self, block: u32) -> u32 {
        self.blocks.valid[block as usize]
    }
    #[inline]
    fn start_collecting(&mut self, block: u32, mode: CellMode) {
        self.blocks.begin_collect(block);
        self.victims.on_collect(block, mode);
    }
    #[inline]
    fn move_valid(&mut self, victim: u32, mode: CellMode, progress: u32, max_moves: u32) -> (u32, bool) {
        if self.fdp.is_some() {
            let owner = self.fdp_enter_gc(victim);
            let before = self.counters.gc_slots_moved;
            let next = self.move_slots(victim, mode, progress, max_moves);
            self.fdp_leave_gc(owner, self.counters.gc_slots_moved - before);
            return (next, next >= self.blocks.wp[victim as usize]);
        }
        let next = self.move_slots(victim, mode, progress, max_moves);
        (next, next >= self.blocks.wp[victim as usize])
    }
    #[inline]
    fn finish_collection(&mut self, victim: u32, mode: CellMode) {
        self.erase_victim(victim, mode);
    }
}
