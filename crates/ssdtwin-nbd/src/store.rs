//! The data store: the bytes of every 4 KiB slot of simulated flash that
//! holds client data, addressed by the *physical* slot the FTL chose.
//!
//! Because data is kept where the FTL put it, not by logical address, a
//! read returns the right bytes only if the FTL's map, its GC moves, its
//! SLC folding and its hybrid merges are right: the store follows the
//! FTL's relocation journal ([`Relocation`]) — a page moves when GC moves
//! it and disappears when its block is erased.
//!
//! Layout: a two-level table. One entry per FTL block (a few bytes each,
//! allocated up front), pointing, once the block holds data, at a table
//! of page indices for its slots; pages (4 KiB each) live in a pool with a
//! free list, so an erased block's pages are reused. Memory grows with the
//! data held, not with the drive's capacity. An all-zero page is not
//! stored (a slot without a page reads as zeros), so zero-filled writes
//! cost no memory.
//!
//! Saved and loaded with the drive by [`crate::image`].

use ssdtwin::model::ftl::journal::Relocation;
use ssdtwin::model::nand::{Geometry, Slot, NONE};

/// Bytes per slot.
pub const PAGE: usize = 4096;

/// Pages per pool chunk (1 MiB): pages are allocated a chunk at a time,
/// not one allocation each.
const CHUNK_PAGES: usize = 256;

/// A 4 KiB page of zeros.
pub static ZERO_PAGE: [u8; PAGE] = [0; PAGE];

/// Pages of client data by physical slot.
#[derive(Debug)]
pub struct DataStore {
    slots_per_block: u32,
    /// Per block: page index per slot (`NONE`: no data), once used.
    blocks: Vec<Option<Box<[u32]>>>,
    /// Page pool, in chunks of [`CHUNK_PAGES`] pages.
    chunks: Vec<Box<[u8]>>,
    /// Pages handed out of the pool so far.
    allocated: u32,
    free: Vec<u32>,
    live: u64,
}

impl DataStore {
    /// An empty store for a drive's geometry.
    pub fn new(geo: &Geometry) -> DataStore {
        DataStore {
            slots_per_block: geo.slots_per_block,
            blocks: (0..geo.total_blocks).map(|_| None).collect(),
            chunks: Vec::new(),
            allocated: 0,
            free: Vec::new(),
            live: 0,
        }
    }

    #[inline]
    fn locate(&self, slot: Slot) -> (usize, usize) {
        ((slot / self.slots_per_block) as usize, (slot % self.slots_per_block) as usize)
    }

    /// The data of `slot` (`None`: zeros).
    #[inline]
    pub fn get(&self, slot: Slot) -> Option<&[u8; PAGE]> {
        if slot == NONE {
            return None;
        }
        let (b, o) = self.locate(slot);
        let idx = self.blocks.get(b)?.as_ref()?[o];
        (idx != NONE).then(|| self.page(idx))
    }

    #[inline]
    fn page(&self, idx: u32) -> &[u8; PAGE] {
        let (c, o) = (idx as usize / CHUNK_PAGES, idx as usize % CHUNK_PAGES * PAGE);
        self.chunks[c][o..o + PAGE].try_into().expect("a page")
    }

    #[inline]
    fn page_mut(&mut self, idx: u32) -> &mut [u8] {
        let (c, o) = (idx as usize / CHUNK_PAGES, idx as usize % CHUNK_PAGES * PAGE);
        &mut self.chunks[c][o..o + PAGE]
    }

    fn new_page(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        if self.allocated as usize == self.chunks.len() * CHUNK_PAGES {
            self.chunks.push(vec![0u8; CHUNK_PAGES * PAGE].into_boxed_slice());
        }
        self.allocated += 1;
        self.allocated - 1
    }

    /// Store `data` (4 KiB) in `slot`; all zeros stores nothing.
    pub fn put(&mut self, slot: Slot, data: &[u8]) {
        assert_eq!(data.len(), PAGE, "a slot holds 4 KiB");
        if data.iter().all(|&b| b == 0) {
            self.remove(slot);
            return;
        }
        let (b, o) = self.locate(slot);
        let spb = self.slots_per_block as usize;
        let mut idx = self.blocks[b].get_or_insert_with(|| vec![NONE; spb].into_boxed_slice())[o];
        if idx == NONE {
            idx = self.new_page();
            self.blocks[b].as_mut().expect("inserted")[o] = idx;
            self.live += 1;
        }
        self.page_mut(idx).copy_from_slice(data);
    }

    /// Forget `slot`'s data.
    pub fn remove(&mut self, slot: Slot) {
        let (b, o) = self.locate(slot);
        if let Some(table) = &mut self.blocks[b] {
            let idx = std::mem::replace(&mut table[o], NONE);
            if idx != NONE {
                self.free.push(idx);
                self.live -= 1;
            }
        }
    }

    /// Follow one record of the FTL's relocation journal.
    pub fn apply(&mut self, r: Relocation) {
        match r {
            Relocation::Moved { from, to } => {
                let (fb, fo) = self.locate(from);
                let idx = match &mut self.blocks[fb] {
                    Some(t) => std::mem::replace(&mut t[fo], NONE),
                    None => NONE,
                };
                self.remove(to);
                if idx != NONE {
                    let (tb, to_off) = self.locate(to);
                    let spb = self.slots_per_block as usize;
                    let table = self.blocks[tb].get_or_insert_with(|| vec![NONE; spb].into_boxed_slice());
                    table[to_off] = idx;
                }
            }
            Relocation::Erased { block } => {
                if let Some(table) = self.blocks[block as usize].take() {
                    for &idx in table.iter().filter(|&&i| i != NONE) {
                        self.free.push(idx);
                        self.live -= 1;
                    }
                }
            }
            Relocation::Reset => {
                for t in &mut self.blocks {
                    *t = None;
                }
                self.free.clear();
                self.chunks.clear();
                self.allocated = 0;
                self.live = 0;
            }
        }
    }

    /// Every page held: `(slot, bytes)`, in slot order.
    pub fn pages(&self) -> impl Iterator<Item = (Slot, &[u8; PAGE])> + '_ {
        let spb = self.slots_per_block;
        self.blocks.iter().enumerate().filter_map(|(b, t)| t.as_ref().map(|t| (b, t))).flat_map(move |(b, t)| {
            t.iter()
                .enumerate()
                .filter(|(_, &idx)| idx != NONE)
                .map(move |(o, &idx)| (b as u32 * spb + o as u32, self.page(idx)))
        })
    }

    /// Slots the store can address (its geometry's).
    pub fn total_slots(&self) -> u64 {
        self.blocks.len() as u64 * self.slots_per_block as u64
    }

    /// Pages holding data now.
    pub fn live_pages(&self) -> u64 {
        self.live
    }

    /// Bytes of memory held for pages (live and pooled for reuse), in
    /// pages handed out (chunks are allocated 1 MiB at a time, their
    /// untouched pages cost no memory until used).
    pub fn pool_bytes(&self) -> u64 {
        self.allocated as u64 * PAGE as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            dies: 1,
            planes: 1,
            blocks_per_die: 4,
            rows_per_block: 4,
            sectors_per_page: 1,
            bits_per_cell: 1,
            page_bytes: 4096,
            slots_per_row: 1,
            slots_per_block: 4,
            program_rows: 1,
            total_blocks: 4,
            total_slots: 16,
        }
    }

    fn page(b: u8) -> Vec<u8> {
        vec![b; PAGE]
    }

    #[test]
    fn put_get_move_erase_reset() {
        let mut s = DataStore::new(&geo());
        assert!(s.get(3).is_none());
        s.put(3, &page(7));
        s.put(5, &page(9));
        assert_eq!(s.get(3).unwrap()[0], 7);
        assert_eq!(s.live_pages(), 2);
        s.apply(Relocation::Moved { from: 3, to: 12 });
        assert!(s.get(3).is_none());
        assert_eq!(s.get(12).unwrap()[100], 7);
        // Moving an empty slot empties the target.
        s.apply(Relocation::Moved { from: 0, to: 12 });
        assert!(s.get(12).is_none());
        assert_eq!(s.live_pages(), 1);
        s.apply(Relocation::Erased { block: 1 });
        assert!(s.get(5).is_none());
        assert_eq!(s.live_pages(), 0);
        // Pages are reused, not reallocated.
        s.put(1, &page(1));
        assert_eq!(s.pool_bytes(), 2 * PAGE as u64);
        s.apply(Relocation::Reset);
        assert!(s.get(1).is_none());
        assert_eq!(s.pool_bytes(), 0);
    }

    #[test]
    fn zero_pages_cost_nothing() {
        let mut s = DataStore::new(&geo());
        s.put(2, &page(4));
        s.put(2, &page(0));
        assert!(s.get(2).is_none());
        assert_eq!(s.live_pages(), 0);
        assert!(s.get(NONE).is_none());
    }
}
