//! The page map on the FTL's core: a logical page's slot (`l2p`) and a
//! slot's logical page (`p2l`, what a real drive keeps in each page's
//! spare area), their lookups and cache warming, unmapping (overwrite,
//! trim), placing a page in a block's next slot, the version stamps the
//! integrity checks read back, and the map cache's accounting of each
//! access. Which block and slot a write gets is the write streams'
//! ([`super::streams`]); a zoned drive's sequential zones have no page map
//! entries ([`super::zns`]).
//!
//! Left out: the map's own persistence on flash (the map cache's
//! write-backs stand for it on DRAM-less drives, [`super::mapcache`]).

use super::{prefetch, FtlCore};
use crate::model::nand::{CellMode, Slot, NONE};

impl FtlCore {
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

    /// Give `lpn` a new version stamp in `slot` (when stamps are on).
    #[inline]
    pub(super) fn stamp(&mut self, lpn: u32, slot: Slot) {
        if !self.lpn_version.is_empty() {
            let v = self.lpn_version[lpn as usize].wrapping_add(1).max(1);
            self.lpn_version[lpn as usize] = v;
            self.slot_version[slot as usize] = v;
        }
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
    pub(super) fn touch_map(&mut self, lpn: u32, dirty: bool, lane: usize) {
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
}
