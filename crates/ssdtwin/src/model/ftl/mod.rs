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
//! - [`pagemap`]: the page map's lookups, unmapping, placing a page in a
//!   block's next slot, version stamps;
//! - [`mapping`]: the mapping scheme behind a trait: page-level
//!   ([`mapping::PageMapping`]) or hybrid log-block ([`hybrid`]);
//! - [`pool`]: the block pool the block policies act on, implemented by
//!   [`FtlCore`] (at the end of `pool.rs`) and by the statistical
//!   steady-state builder, so that each policy exists once:
//!   - [`streams`]: write streams (host, GC, fold) each with an open block
//!     per die, striping program units over dies channel first, which
//!     block a stream opens, and the program of each unit as it fills;
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
pub mod pagemap;
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
use pool::Paced;
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

    /// Host slots of the host stream not yet programmed.
    fn host_pending_slots(&self) -> u32 {
        self.streams[StreamId::Host as usize].pending_slots(&self.blocks, &self.geo)
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
