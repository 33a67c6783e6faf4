//! The FTL's narrow API to the drive ([`Ftl`]'s methods): host writes,
//! reads and trims through the mapping scheme, flushes, background work,
//! secure erase, relocation after an uncorrectable read, the NAND
//! operations produced, and read-only views for statistics, states and
//! tests. Only delegation: the decisions are the scheme's ([`super::mapping`])
//! and the shared state's ([`FtlCore`]).

use super::blocks::BlockTable;
use super::mapping::{MappingScheme, Scheme};
use super::{badblocks, hybrid, mapcache, mapping, zns, Ftl, FtlCore, FtlCounters, NandOp, PageArrays};
use crate::model::nand::{CellMode, Geometry, Slot};
use crate::model::params::{DriveModel, GcPolicy};

impl Ftl {
    /// A freshly secure-erased FTL for a drive, with the drive's mapping
    /// scheme.
    pub fn new(model: &DriveModel) -> Ftl {
        let core = FtlCore::new(model);
        let scheme = match (&model.hybrid, &model.zns) {
            (Some(h), _) => Scheme::Hybrid(Box::new(hybrid::Hybrid::new(h, &core.geo))),
            (None, Some(z)) => Scheme::Zoned(Box::new(zns::ZonedMapping::new(z, &core.geo))),
            (None, None) => Scheme::Page(mapping::PageMapping),
        };
        Ftl { core, scheme }
    }

    /// Write one logical page from the host. Returns its new slot.
    #[inline]
    pub fn write(&mut self, lpn: u32) -> Slot {
        self.core.unmap_for(lpn, true);
        let slot = self.scheme.write(&mut self.core, lpn);
        self.core.stamp(lpn, slot);
        self.core.counters.host_slots_written += 1;
        if self.core.bad.is_some() {
            self.core.handle_program_failures();
        }
        slot
    }

    /// Write `n` logical pages from `first` on, as [`Ftl::write`] does
    /// page by page, for a host command that has passed the zone rules
    /// (on a zoned drive, [`Ftl::zone_write`] or [`Ftl::zone_append`]
    /// moved the write pointer over these pages). A sequential zone's pages
    /// at its write pointer are unmapped (a reset unmaps the zone) and
    /// placed a program unit's worth at a time
    /// ([`zns::ZonedMapping::write_run`]); every other write goes page by
    /// page.
    #[inline(always)]
    pub fn write_run(&mut self, first: u32, n: u32) {
        if let Scheme::Zoned(z) = &mut self.scheme {
            if z.write_run(&mut self.core, first, n) {
                self.core.counters.host_slots_written += n as u64;
                if self.core.bad.is_some() {
                    self.core.handle_program_failures();
                }
                return;
            }
        }
        for lpn in first..first + n {
            self.write(lpn);
        }
    }

    /// Where a host read of `lpn` finds its data: the slot (`NONE` when
    /// unmapped). A scheme that must first load map entries appends those
    /// NAND reads to the operations ([`Ftl::take_ops`]), which the drive
    /// runs before the data read.
    #[inline]
    pub fn read(&mut self, lpn: u32) -> Slot {
        self.scheme.read(&mut self.core, lpn)
    }

    /// Deallocate (TRIM) one logical page.
    #[inline]
    pub fn trim(&mut self, lpn: u32) {
        if self.core.unmap(lpn) {
            self.core.counters.trimmed_slots += 1;
        }
    }

    /// Program the host's partially filled unit now, padding the rest
    /// (write-through and flush commands).
    pub fn flush_host(&mut self) {
        if self.core.fdp.is_some() {
            self.fdp_flush();
        } else {
            self.scheme.flush(&mut self.core);
        }
        if self.core.bad.is_some() {
            self.core.handle_program_failures();
        }
    }

    /// Host slots written but not yet sent to NAND (in the write buffer).
    pub fn host_pending_slots(&self) -> u32 {
        self.scheme.pending_slots(&self.core)
    }

    /// Move the per-page arrays (map, reverse map, version stamps) out,
    /// leaving them empty: the rest of the FTL can then be cloned cheaply
    /// ([`crate::model::snapshot`]). Put them back before using the FTL.
    pub fn take_page_arrays(&mut self) -> PageArrays {
        let c = &mut self.core;
        PageArrays([c.l2p.take(), c.p2l.take(), c.lpn_version.take(), c.slot_version.take()])
    }

    /// Put back what [`Ftl::take_page_arrays`] took (or arrays restored
    /// from a snapshot of this FTL).
    pub fn put_page_arrays(&mut self, arrays: PageArrays) {
        let c = &mut self.core;
        [c.l2p, c.p2l, c.lpn_version, c.slot_version] = arrays.0;
    }

    /// Secure erase: forget all data, all blocks free (erase counts kept).
    pub fn secure_erase(&mut self) {
        self.core.secure_erase();
        self.scheme.reset();
    }

    /// Count an erase of `block` in `mode` done outside the FTL's own
    /// operations (a format's user-data erase).
    pub fn count_erase(&mut self, block: u32, mode: CellMode) {
        self.core.blocks.erase_count[mode as usize][block as usize] += 1;
    }

    /// Whether `die` has fewer free blocks than the background-GC target
    /// and a native block worth collecting. Schemes that reclaim space by
    /// merges (hybrid) never collect pages.
    pub fn wants_background_gc(&self, die: u32) -> bool {
        self.scheme.reclaims_by_page_gc() && self.core.wants_page_gc(die)
    }

    /// One step of background work while the host is idle (see
    /// [`FtlCore::background_step`]). Returns false when there is nothing
    /// to do.
    pub fn background_step(&mut self) -> bool {
        if !self.scheme.reclaims_by_page_gc() || self.core.read_only() {
            return false;
        }
        let worked = self.core.background_step();
        if self.core.bad.is_some() {
            self.core.handle_program_failures();
        }
        worked
    }

    /// Whether the drive has turned read-only: its spare fell below the
    /// threshold (see [`badblocks`]). Host writes must then fail.
    #[inline]
    pub fn read_only(&self) -> bool {
        self.core.read_only()
    }

    /// Bad-block management's state (`None`: no `[nand.bad_blocks]`).
    pub fn bad_blocks(&self) -> Option<&badblocks::BadBlocks> {
        self.core.bad.as_ref()
    }

    /// Relocate the valid data of `block` and erase it (after an
    /// uncorrectable read; see [`FtlCore::relocate`]). The operations are
    /// appended for the drive to time. Returns whether it did.
    pub fn relocate(&mut self, block: u32) -> bool {
        // A sequential zone's data stays in its blocks until a reset.
        let zoned = matches!(&self.scheme, Scheme::Zoned(z) if z.owns(block));
        self.scheme.reclaims_by_page_gc() && !zoned && self.core.relocate(block)
    }

    /// Set the drive's time, ns since its life began: blocks opened from
    /// now on start their retention here.
    #[inline]
    pub fn set_clock(&mut self, now_ns: u64) {
        self.core.blocks.clock_ns = now_ns;
    }

    /// The drive's time as last set, ns.
    pub fn clock(&self) -> u64 {
        self.core.blocks.clock_ns
    }

    /// Count a read of `block` (read disturb) and return what its errors
    /// depend on: (erases in its mode, when it was programmed, its reads
    /// since erase, this one included).
    #[inline]
    pub fn note_block_read(&mut self, block: u32) -> (u32, u64, u32) {
        let b = block as usize;
        let t = &mut self.core.blocks;
        t.reads[b] = t.reads[b].saturating_add(1);
        (t.erase_count[t.mode[b] as usize][b], t.programmed_at[b], t.reads[b])
    }

    /// Set every block's erase counts, as if the drive had already been
    /// cycled so often (a drive taken from the field; tests of aged
    /// drives). Changes no data.
    pub fn set_erase_counts(&mut self, native: u32, slc: u32) {
        self.core.blocks.erase_count[0].fill(native);
        self.core.blocks.erase_count[1].fill(slc);
    }

    /// Check internal consistency (tests): the maps are inverse, every
    /// block's valid count matches its slots, and the scheme's own
    /// invariants hold.
    pub fn check_consistency(&self) -> Result<(), String> {
        self.core.check_consistency()?;
        self.scheme.check(&self.core)
    }

    /// The NAND operations produced since the last call, in order. Give the
    /// vector back with [`Ftl::recycle_ops`] so that no call allocates.
    #[inline]
    pub fn take_ops(&mut self) -> Vec<NandOp> {
        std::mem::take(&mut self.core.ops)
    }

    /// Return an emptied operation vector (keeps its capacity).
    #[inline]
    pub fn recycle_ops(&mut self, mut ops: Vec<NandOp>) {
        ops.clear();
        if self.core.ops.is_empty() {
            self.core.ops = ops;
        }
    }

    /// Whether operations are waiting to be taken.
    #[inline]
    pub fn has_ops(&self) -> bool {
        !self.core.ops.is_empty()
    }

    /// Record NAND operations (on), or only change state (off: the fast
    /// preconditioning path). Turning it off drops waiting operations.
    pub fn set_emit_ops(&mut self, on: bool) {
        self.core.emit_ops = on;
        if !on {
            self.core.ops.clear();
        }
    }

    /// Whether NAND operations are recorded (see [`Ftl::set_emit_ops`]).
    pub fn emits_ops(&self) -> bool {
        self.core.emit_ops
    }

    /// How the drive books the mapping scheme's NAND operations.
    pub fn scheme_timing(&self) -> mapping::SchemeTiming {
        self.scheme.timing()
    }

    /// The map cache's counters, when the map is cached.
    pub fn map_counters(&self) -> Option<mapcache::MapCacheCounters> {
        self.core.map.as_ref().map(|m| m.all_counters())
    }

    /// Cost of one host lookup in the map cache's memory, ns (an HMB round
    /// trip; 0 without a cache or in the controller's own memory).
    #[inline]
    pub fn map_access_ns(&self) -> u64 {
        self.core.map.as_ref().map_or(0, |m| m.access_ns())
    }

    /// The hybrid scheme's state, when the drive uses hybrid mapping.
    pub fn hybrid(&self) -> Option<&hybrid::Hybrid> {
        match &self.scheme {
            Scheme::Hybrid(h) => Some(h),
            Scheme::Page(_) | Scheme::Zoned(_) => None,
        }
    }

    /// Logical pages the host can address.
    pub fn user_lpns(&self) -> u32 {
        match &self.scheme {
            Scheme::Zoned(z) => z.zones().model().zones * z.zones().model().zone_lpns,
            _ => self.core.user_lpns(),
        }
    }
    /// The drive's geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.core.geo
    }
    /// Block metadata (valid counts, states, erase counts, free lists).
    pub fn blocks(&self) -> &BlockTable {
        &self.core.blocks
    }
    /// The FTL's event counters.
    pub fn counters(&self) -> FtlCounters {
        self.core.counters
    }
    /// Logical pages currently mapped (how full the drive is).
    pub fn mapped_lpns(&self) -> u64 {
        self.core.mapped_lpns
    }
    /// The logical-to-physical page map (`NONE` where unmapped): every
    /// logical page's, except on a zoned drive, where it covers the
    /// conventional zones (see [`Ftl::lookup`]).
    pub fn l2p(&self) -> &[Slot] {
        &self.core.l2p
    }
    /// The physical-to-logical map (`NONE` where invalid or unwritten).
    pub fn p2l(&self) -> &[u32] {
        &self.core.p2l
    }
    /// Slot holding a logical page, or `NONE` (a look at the map, with no
    /// cost in the model: [`Ftl::read`] is the host's path).
    #[inline]
    pub fn lookup(&self, lpn: u32) -> Slot {
        match &self.scheme {
            Scheme::Zoned(z) => z.lookup(&self.core, lpn),
            _ => self.core.lookup(lpn),
        }
    }
    /// Version stamp a read of `lpn` returns (see [`FtlCore::read_version`]).
    pub fn read_version(&self, lpn: u32) -> u32 {
        self.core.read_version(lpn, self.lookup(lpn))
    }
    /// Whether version stamps are kept.
    pub fn has_versions(&self) -> bool {
        self.core.has_versions()
    }
    /// Warm the cache line of `lpn`'s map entry. A hint only.
    #[inline]
    pub fn prefetch_lookup(&self, lpn: u32) {
        self.core.prefetch_lookup(lpn)
    }
    /// Warm the cache lines a coming [`Ftl::write`] of `lpn` will touch.
    #[inline]
    pub fn prefetch_write(&self, lpn: u32) {
        self.core.prefetch_write(lpn)
    }
    /// Whether a slot's data is still in the controller (its program
    /// operation has not been issued).
    #[inline]
    pub fn is_unprogrammed(&self, slot: Slot) -> bool {
        self.core.is_unprogrammed(slot)
    }
    /// Cell mode of a block.
    #[inline]
    pub fn mode_of(&self, block: u32) -> CellMode {
        self.core.mode_of(block)
    }
    /// Blocks a user-data erase must erase (every block not free).
    pub fn blocks_to_erase(&self) -> Vec<u32> {
        self.core.blocks_to_erase()
    }
    /// The GC policy in use.
    pub fn gc_policy(&self) -> GcPolicy {
        self.core.gc_policy()
    }
    /// Fill fraction: mapped logical pages / user pages.
    pub fn fill_fraction(&self) -> f64 {
        self.core.fill_fraction()
    }
    /// SLC blocks the cache may hold now (whole drive).
    pub fn slc_limit_blocks(&self) -> u32 {
        self.core.slc_limit_blocks()
    }
    /// Current SLC cache capacity in bytes (what the drive would report).
    pub fn slc_cache_bytes(&self) -> u64 {
        self.core.slc_cache_bytes()
    }
    /// Bytes of SLC blocks in use (open or full, valid or not).
    pub fn slc_used_bytes(&self) -> u64 {
        self.core.slc_used_bytes()
    }
    /// Bytes of valid data waiting in SLC to be folded.
    pub fn fold_backlog_bytes(&self) -> u64 {
        self.core.fold_backlog_bytes()
    }
}
