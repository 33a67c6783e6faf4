//! Block manager: per-block metadata in flat arrays, free lists per die,
//! and the victim index that makes greedy selection O(1) amortised.
//!
//! A block is `Free`, `Open` (a write stream is filling it), `Sealed`
//! (full; a GC candidate) or being collected. Blocks of a static SLC cache
//! are set aside at construction and always return to their own free
//! list. Sealed blocks sit in per-die, per-mode buckets keyed by
//! valid-slot count (intrusive doubly linked lists
//! through `prev`/`next`), so invalidating a slot moves its block one
//! bucket down in O(1) and the greedy victim is the first block of the
//! lowest non-empty bucket. Among equals, native blocks are taken newest
//! first (a block is linked at its bucket's head) and SLC blocks oldest
//! first (linked at the tail): lazy folding evicts the data that has sat
//! in the cache longest, so after a sequential fill the last-written data
//! is what is left in SLC. (For native GC the tie-break moves no figure
//! the presets are calibrated on, and is kept.) Free blocks are handed out oldest-freed first,
//! which spreads erases over the blocks of a die (simple dynamic wear
//! levelling; static wear levelling is left to the wear issue).

use std::collections::VecDeque;

use crate::model::nand::{CellMode, Geometry, NONE};

/// Life-cycle state of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum BlockState {
    /// Erased, in its die's free list.
    Free = 0,
    /// Being filled by a write stream.
    Open = 1,
    /// Full, a GC candidate.
    Sealed = 2,
    /// Chosen by GC; its valid data is being moved.
    Collecting = 3,
    /// Reserved for the translation pages of a cached map (never data).
    Map = 4,
    /// Bad (from the factory, or retired after a program or erase
    /// failure): never used again.
    Bad = 5,
}

/// Per-block metadata of the whole drive.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BlockTable {
    /// Valid slots per block.
    pub valid: Vec<u32>,
    /// Slots handed out (write pointer) per block.
    pub wp: Vec<u32>,
    /// Slots whose program operation has been issued, per block.
    pub programmed: Vec<u32>,
    /// State per block.
    pub state: Vec<BlockState>,
    /// Cell mode per block (meaningful while not free).
    pub mode: Vec<CellMode>,
    /// Erases per block in each cell mode (`[native, SLC]`, indexed by
    /// `CellMode as usize`): a block's wear is counted in the mode it was
    /// used in, since a pSLC erase wears it far less than a native one.
    pub erase_count: [Vec<u32>; 2],
    /// Logical sequence number at which the block was sealed (age for
    /// FIFO and cost-benefit; logical, so that timing never changes which
    /// block GC picks).
    pub sealed_seq: Vec<u64>,
    /// Whether a block belongs to the static SLC pool.
    pub is_static: Vec<bool>,
    /// Drive time (ns since the drive's life began) at which each block
    /// was opened for programming: the start of its data's retention.
    pub programmed_at: Vec<u64>,
    /// Reads of each block since its erase (read disturb).
    pub reads: Vec<u32>,
    /// The drive's time now, ns (set by the drive; stamps
    /// `programmed_at`).
    pub clock_ns: u64,
    free: Vec<VecDeque<u32>>,
    free_static: Vec<VecDeque<u32>>,
    /// Blocks in SLC mode that are not free (static and dynamic).
    pub slc_in_use: u32,
    dies: u32,
    // Victim buckets: head[((mode * dies + die) * (max_valid + 1) + valid].
    head: Vec<u32>,
    tail: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    min_bucket: Vec<u32>,
    sealed_count: Vec<u32>,
    empty_count: Vec<u32>,
    buckets_per_die: u32,
    blocks_per_die: u32,
}

impl BlockTable {
    /// All blocks free and erased; the last `static_per_die` blocks of
    /// each die form the static SLC pool.
    pub fn new(geo: &Geometry, static_per_die: u32) -> BlockTable {
        let n = geo.total_blocks as usize;
        let buckets_per_die = geo.slots_per_block + 1;
        let mut t = BlockTable {
            valid: vec![0; n],
            wp: vec![0; n],
            programmed: vec![0; n],
            state: vec![BlockState::Free; n],
            mode: vec![CellMode::Native; n],
            erase_count: [vec![0; n], vec![0; n]],
            sealed_seq: vec![0; n],
            is_static: vec![false; n],
            programmed_at: vec![0; n],
            reads: vec![0; n],
            clock_ns: 0,
            free: vec![VecDeque::with_capacity(geo.blocks_per_die as usize); geo.dies as usize],
            free_static: vec![VecDeque::new(); geo.dies as usize],
            slc_in_use: 0,
            dies: geo.dies,
            head: vec![NONE; (buckets_per_die * geo.dies * 2) as usize],
            tail: vec![NONE; (buckets_per_die * geo.dies * 2) as usize],
            prev: vec![NONE; n],
            next: vec![NONE; n],
            min_bucket: vec![0; 2 * geo.dies as usize],
            sealed_count: vec![0; 2 * geo.dies as usize],
            empty_count: vec![0; 2 * geo.dies as usize],
            buckets_per_die,
            blocks_per_die: geo.blocks_per_die,
        };
        for b in 0..geo.total_blocks {
            let die = b / geo.blocks_per_die;
            if b % geo.blocks_per_die >= geo.blocks_per_die - static_per_die {
                t.is_static[b as usize] = true;
                t.free_static[die as usize].push_back(b);
            } else {
                t.free[die as usize].push_back(b);
            }
        }
        t
    }

    /// Take the last `per_die` non-static blocks of every die out of the
    /// data pool for a cached map's translation pages, in `mode`. Returns
    /// them die-major.
    pub fn reserve_map_blocks(&mut self, per_die: u32, mode: CellMode) -> Vec<u32> {
        let mut out = Vec::with_capacity((per_die * self.dies) as usize);
        for die in 0..self.dies as usize {
            let free = &mut self.free[die];
            let first = free.len() - per_die as usize;
            out.extend(free.drain(first..));
        }
        for &b in &out {
            self.state[b as usize] = BlockState::Map;
            self.mode[b as usize] = mode;
        }
        out
    }

    /// Free blocks of a die's static SLC pool.
    #[inline]
    pub fn static_free_count(&self, die: u32) -> u32 {
        self.free_static[die as usize].len() as u32
    }

    /// Take a block of the die's static SLC pool and open it in SLC mode.
    pub fn take_static(&mut self, die: u32) -> Option<u32> {
        let b = self.free_static[die as usize].pop_front()?;
        self.open(b, CellMode::Slc);
        Some(b)
    }

    fn open(&mut self, b: u32, mode: CellMode) {
        let i = b as usize;
        self.state[i] = BlockState::Open;
        self.mode[i] = mode;
        self.wp[i] = 0;
        self.programmed[i] = 0;
        self.valid[i] = 0;
        self.programmed_at[i] = self.clock_ns;
        self.reads[i] = 0;
        if mode == CellMode::Slc {
            self.slc_in_use += 1;
        }
    }

    /// Take factory bad blocks out of the pool (before any is used).
    pub fn mark_factory_bad(&mut self, bad: &[u32]) {
        for &b in bad {
            self.state[b as usize] = BlockState::Bad;
        }
        for list in self.free.iter_mut().chain(self.free_static.iter_mut()) {
            list.retain(|&b| self.state[b as usize] != BlockState::Bad);
        }
    }

    /// Retire a block that failed (it holds no valid data): it is counted
    /// as erased once more if `erased`, and never used again.
    pub fn retire(&mut self, block: u32, erased: bool) {
        let i = block as usize;
        debug_assert_eq!(self.valid[i], 0);
        if erased {
            self.erase_count[self.mode[i] as usize][i] += 1;
        }
        if self.mode[i] == CellMode::Slc {
            self.slc_in_use -= 1;
        }
        self.state[i] = BlockState::Bad;
        self.wp[i] = 0;
        self.programmed[i] = 0;
    }

    /// Free blocks on a die.
    #[inline]
    pub fn free_count(&self, die: u32) -> u32 {
        self.free[die as usize].len() as u32
    }

    /// Sealed (GC-candidate) blocks of a mode on a die.
    #[inline]
    pub fn sealed_count(&self, die: u32, mode: CellMode) -> u32 {
        self.sealed_count[self.group(die, mode)]
    }

    /// Sealed blocks of a mode on a die that hold no valid data (free for
    /// the price of an erase).
    #[inline]
    pub fn empty_count(&self, die: u32, mode: CellMode) -> u32 {
        self.empty_count[self.group(die, mode)]
    }

    #[inline]
    fn group(&self, die: u32, mode: CellMode) -> usize {
        (mode as u32 * self.dies + die) as usize
    }

    /// Free blocks in the whole drive.
    pub fn total_free(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }

    /// Take the next free block of a die and open it in `mode`.
    pub fn take_free(&mut self, die: u32, mode: CellMode) -> Option<u32> {
        let b = self.free[die as usize].pop_front()?;
        self.open(b, mode);
        Some(b)
    }

    /// Erases of `block` in both modes.
    #[inline]
    pub fn total_erases(&self, block: u32) -> u32 {
        self.erase_count[0][block as usize] + self.erase_count[1][block as usize]
    }

    /// Like [`Self::take_free`], choosing the free block with the fewest
    /// erases (`most_worn`: the most); ties go to the longest free.
    pub fn take_free_by_wear(&mut self, die: u32, mode: CellMode, most_worn: bool) -> Option<u32> {
        let free = &self.free[die as usize];
        let mut best: Option<(usize, u32)> = None;
        for (i, &b) in free.iter().enumerate() {
            let e = self.erase_count[0][b as usize] + self.erase_count[1][b as usize];
            let better = match best {
                None => true,
                Some((_, be)) => (most_worn && e > be) || (!most_worn && e < be),
            };
            if better {
                best = Some((i, e));
            }
        }
        let b = self.free[die as usize].remove(best?.0)?;
        self.open(b, mode);
        Some(b)
    }

    /// Return an erased block to its die's free list.
    pub fn release(&mut self, block: u32) {
        let i = block as usize;
        debug_assert_eq!(self.valid[i], 0);
        self.state[i] = BlockState::Free;
        self.wp[i] = 0;
        self.programmed[i] = 0;
        self.erase_count[self.mode[i] as usize][i] += 1;
        if self.mode[i] == CellMode::Slc {
            self.slc_in_use -= 1;
        }
        let die = (block / self.blocks_per_die) as usize;
        if self.is_static[i] {
            self.free_static[die].push_back(block);
        } else {
            self.free[die].push_back(block);
        }
    }

    /// Install a state built elsewhere (the statistical steady state):
    /// each `(block, mode, valid, seq)` becomes a full sealed block of
    /// `mode` holding `valid` slots, sealed at `seq`; every other block is
    /// free, in block order. `erase_counts` replaces the erase counts
    /// (per mode).
    pub fn install_sealed(
        &mut self,
        sealed: &[(u32, CellMode, u32, u64)],
        slots_in_mode: [u32; 2],
        erase_counts: &[Vec<u32>; 2],
    ) {
        self.erase_count.clone_from(erase_counts);
        for &(b, mode, valid, seq) in sealed {
            let i = b as usize;
            debug_assert_eq!(self.state[i], BlockState::Free);
            self.open(b, mode);
            self.wp[i] = slots_in_mode[mode as usize];
            self.programmed[i] = self.wp[i];
            self.valid[i] = valid;
            self.seal(b, seq);
        }
        for die in 0..self.dies as usize {
            self.free[die].clear();
            self.free_static[die].clear();
        }
        for b in 0..self.state.len() as u32 {
            let i = b as usize;
            if self.state[i] == BlockState::Free {
                let die = (b / self.blocks_per_die) as usize;
                if self.is_static[i] {
                    self.free_static[die].push_back(b);
                } else {
                    self.free[die].push_back(b);
                }
            }
        }
    }

    /// Make a block taken out of the victim index open again with `wp`
    /// slots handed out, `programmed` of them programmed (installing a
    /// write stream's current block).
    pub fn reopen(&mut self, block: u32, wp: u32, programmed: u32) {
        let i = block as usize;
        self.state[i] = BlockState::Open;
        self.wp[i] = wp;
        self.programmed[i] = programmed;
    }

    /// Mark a full open block sealed and make it a GC candidate.
    pub fn seal(&mut self, block: u32, seq: u64) {
        let i = block as usize;
        self.state[i] = BlockState::Sealed;
        self.sealed_seq[i] = seq;
        self.link(block);
    }

    /// One slot of `block` became invalid. A sealed block moves one
    /// bucket down the victim index.
    #[inline]
    pub fn invalidate(&mut self, block: u32) {
        let i = block as usize;
        debug_assert!(self.valid[i] > 0);
        if self.state[i] == BlockState::Sealed {
            let (g, h) = self.bucket(block);
            self.list_remove(block, h);
            self.valid[i] -= 1;
            self.list_insert(block, h - 1);
            self.count_in_bucket(g, i);
        } else {
            self.valid[i] -= 1;
        }
    }

    /// Take a sealed block out of the victim index for collection.
    pub fn begin_collect(&mut self, block: u32) {
        debug_assert_eq!(self.state[block as usize], BlockState::Sealed);
        self.unlink(block);
        self.state[block as usize] = BlockState::Collecting;
    }

    /// Sealed block of `die` in `mode` with the fewest valid slots.
    pub fn min_valid(&mut self, die: u32, mode: CellMode) -> Option<u32> {
        let g = self.group(die, mode);
        if self.sealed_count[g] == 0 {
            return None;
        }
        let base = g * self.buckets_per_die as usize;
        let mut v = self.min_bucket[g];
        while self.head[base + v as usize] == NONE {
            v += 1;
        }
        self.min_bucket[g] = v;
        Some(self.head[base + v as usize])
    }

    /// Like [`Self::min_valid`] without updating the search hint.
    pub fn peek_min_valid(&self, die: u32, mode: CellMode) -> Option<u32> {
        let g = self.group(die, mode);
        if self.sealed_count[g] == 0 {
            return None;
        }
        let base = g * self.buckets_per_die as usize;
        let mut v = self.min_bucket[g] as usize;
        while self.head[base + v] == NONE {
            v += 1;
        }
        Some(self.head[base + v])
    }

    /// The sealed SLC block of `die` outside the static pool with the
    /// fewest valid slots (the static blocks are few, so the walk up the
    /// buckets ends soon).
    pub fn min_valid_dynamic_slc(&self, die: u32) -> Option<u32> {
        let g = self.group(die, CellMode::Slc);
        let base = g * self.buckets_per_die as usize;
        for v in self.min_bucket[g] as usize..self.buckets_per_die as usize {
            let mut b = self.head[base + v];
            while b != NONE {
                if !self.is_static[b as usize] {
                    return Some(b);
                }
                b = self.next[b as usize];
            }
        }
        None
    }

    /// Visit every sealed block of `die` in `mode` (for policies that scan).
    pub fn for_each_sealed(&self, die: u32, mode: CellMode, mut f: impl FnMut(u32)) {
        let base = self.group(die, mode) * self.buckets_per_die as usize;
        for v in 0..self.buckets_per_die as usize {
            let mut b = self.head[base + v];
            while b != NONE {
                f(b);
                b = self.next[b as usize];
            }
        }
    }

    /// The victim-index group (die and mode) of `block` and the bucket
    /// its valid count puts it in.
    #[inline(always)]
    fn bucket(&self, block: u32) -> (usize, usize) {
        let i = block as usize;
        let g = self.group(block / self.blocks_per_die, self.mode[i]);
        (g, g * self.buckets_per_die as usize + self.valid[i] as usize)
    }

    /// Link a sealed block into its bucket and count it.
    fn link(&mut self, block: u32) {
        let (g, h) = self.bucket(block);
        self.list_insert(block, h);
        self.sealed_count[g] += 1;
        self.count_in_bucket(g, block as usize);
    }

    /// Count a block of group `g` that entered the bucket of its valid
    /// count: an empty one, and the lowest bucket that may hold blocks.
    #[inline(always)]
    fn count_in_bucket(&mut self, g: usize, i: usize) {
        if self.valid[i] == 0 {
            self.empty_count[g] += 1;
        }
        self.min_bucket[g] = self.min_bucket[g].min(self.valid[i]);
    }

    /// Take a sealed block out of its bucket and the counts.
    fn unlink(&mut self, block: u32) {
        let i = block as usize;
        let (g, h) = self.bucket(block);
        self.list_remove(block, h);
        self.sealed_count[g] -= 1;
        if self.valid[i] == 0 {
            self.empty_count[g] -= 1;
        }
    }

    /// Put `block` in bucket `h`'s list: native blocks at the head
    /// (newest first among equals), SLC blocks at the tail (oldest first).
    #[inline(always)]
    fn list_insert(&mut self, block: u32, h: usize) {
        let i = block as usize;
        if self.mode[i] == CellMode::Slc && self.tail[h] != NONE {
            let last = self.tail[h];
            self.prev[i] = last;
            self.next[i] = NONE;
            self.next[last as usize] = block;
            self.tail[h] = block;
        } else {
            let old = self.head[h];
            self.prev[i] = NONE;
            self.next[i] = old;
            if old != NONE {
                self.prev[old as usize] = block;
            } else {
                self.tail[h] = block;
            }
            self.head[h] = block;
        }
    }

    /// Take `block` out of bucket `h`'s list.
    #[inline(always)]
    fn list_remove(&mut self, block: u32, h: usize) {
        let i = block as usize;
        let (p, n) = (self.prev[i], self.next[i]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            self.head[h] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else {
            self.tail[h] = p;
        }
        self.prev[i] = NONE;
        self.next[i] = NONE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::DriveSpec;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    /// The victim index through random seals, invalidations and
    /// collections, both modes, several dies: after every step each
    /// group's sealed and empty counts match a recount, and the block
    /// `min_valid` names is sealed, in its group, with the fewest valid
    /// slots; among equals, the native block that reached that count last
    /// or the SLC block that reached it first (the order the lists keep).
    #[test]
    fn victim_index_follows_valid_counts() {
        let set = [
            "geometry.blocks_per_plane=100",
            "ftl.user_capacity_bytes=16000000000",
            "slc_cache.static_bytes=500000000",
            "slc_cache.capacity_curve=[[0.0,2e9],[1.0,1e9]]",
        ]
        .map(String::from);
        let model = DriveSpec::load("intel-660p-1tb", &set).unwrap().build("test").unwrap();
        let geo = model.geometry;
        let mut t = BlockTable::new(&geo, 0);
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut seq = 0u64;
        let mut sealed: Vec<u32> = Vec::new();
        // When each block reached its valid count (sealed or invalidated).
        let mut reached = vec![0u64; geo.total_blocks as usize];
        for step in 0..20_000u64 {
            let die = rng.random_range(0..geo.dies);
            let mode = if rng.random_range(0..2u32) == 0 { CellMode::Slc } else { CellMode::Native };
            match rng.random_range(0..10u32) {
                0..=1 => {
                    if let Some(b) = t.take_free(die, mode) {
                        let full = geo.slots_in_mode(mode);
                        t.wp[b as usize] = full;
                        t.programmed[b as usize] = full;
                        t.valid[b as usize] = rng.random_range(0..=full.min(8));
                        seq += 1;
                        t.seal(b, seq);
                        sealed.push(b);
                        reached[b as usize] = step;
                    }
                }
                2 => {
                    if let Some(b) = t.min_valid(die, mode) {
                        t.begin_collect(b);
                        sealed.retain(|&s| s != b);
                        t.valid[b as usize] = 0;
                        t.release(b);
                    }
                }
                _ => {
                    if !sealed.is_empty() {
                        let b = sealed[rng.random_range(0..sealed.len())];
                        if t.valid[b as usize] > 0 {
                            t.invalidate(b);
                            reached[b as usize] = step;
                        }
                    }
                }
            }
            for d in 0..geo.dies {
                for m in [CellMode::Slc, CellMode::Native] {
                    let group: Vec<u32> = sealed
                        .iter()
                        .copied()
                        .filter(|&b| b / geo.blocks_per_die == d && t.mode[b as usize] == m)
                        .collect();
                    let empty = group.iter().filter(|&&b| t.valid[b as usize] == 0).count() as u32;
                    assert_eq!(t.sealed_count(d, m), group.len() as u32, "step {step}");
                    assert_eq!(t.empty_count(d, m), empty, "step {step}");
                    let Some(b) = t.peek_min_valid(d, m) else {
                        assert!(group.is_empty(), "step {step}");
                        continue;
                    };
                    let fewest = group.iter().map(|&g| t.valid[g as usize]).min().unwrap();
                    assert_eq!(t.valid[b as usize], fewest, "step {step}");
                    let equals = group.iter().filter(|&&g| t.valid[g as usize] == fewest);
                    let by_age = equals.map(|&g| reached[g as usize]);
                    let expected = if m == CellMode::Slc { by_age.min() } else { by_age.max() };
                    assert_eq!(Some(reached[b as usize]), expected, "step {step}");
                }
            }
        }
    }
}
