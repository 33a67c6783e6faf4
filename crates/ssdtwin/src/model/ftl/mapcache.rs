//! The mapping table cached in limited memory (DFTL-style).
//!
//! The map lives in **translation pages** on flash, each holding
//! `entries_per_page` consecutive entries; the controller caches whole
//! translation pages in the memory the drive file gives it (DRAM, the
//! host memory buffer, or SRAM; `spec::mapcache`). Whole pages rather than
//! single entries: that is the unit a miss reads from flash anyway, the
//! bookkeeping is one slot per page instead of per 4 KiB, and sequential
//! access then hits the page it just loaded (firmware caches map segments
//! for the same reasons).
//!
//! Every access to the map goes through here: host reads and writes,
//! trims, and the map updates of GC and folding. A miss reads the page
//! from flash (a NAND read on the die that holds it, queued like any
//! other) unless it was never written (the drive's directory knows the
//! range is unmapped); when the cache is full the policy's victim is
//! dropped, and written back first if dirty. Write-backs append to a
//! circular log of reserved **translation blocks** per die (pSLC where the
//! NAND has it) and are programmed a program unit at a time; a page still
//! waiting for its unit is served from the controller. When the log comes
//! round to its oldest block, the current translation pages still in that
//! block are read, the block is erased, and they are written again ahead
//! of the new ones (the map's own garbage collection). The area holds 1.25
//! times the map, so most of an old block is stale when the log returns.
//!
//! With `checkpoint_updates`, every that many map updates the firmware
//! writes all dirty cached pages in one go (a map checkpoint, which bounds
//! what a power loss can lose): a burst of translation-page programs on
//! every die that holds the host's data behind it.
//!
//! With `journal_entries`, map updates go to a journal
//! ([`super::mapjournal`]) instead of dirtying their pages: cached pages
//! stay clean, and translation pages are written back in batches when the
//! journal is full (read first unless cached): all at once, or, with
//! `journal_pace = "segmented"`, one page at a time between later updates
//! (`MapCache::flush_segment`'s pace). Host reads look in the journal
//! before the cache.
//!
//! With a limit on dirty pages (`hmb_read_cache`: the host memory buffer
//! is a read cache of the map and updates are made in the controller's
//! SRAM), a page that becomes dirty beyond the limit writes back the page
//! dirtied longest ago, which stays cached, clean.
//!
//! Left out: the directory (global translation directory) is held in full;
//! the map is not flushed at power loss.

use super::mapjournal::{JournalCounters, MapJournal};
use super::{NandOp, Purpose};
use crate::model::nand::{CellMode, Geometry, NONE};
use crate::model::params::{JournalPace, MapCacheModel, MapCachePolicy};

const RESIDENT: u8 = 1;
const DIRTY: u8 = 2;
/// Written to flash at least once (else a miss needs no read).
const ON_FLASH: u8 = 4;

/// Event counters of the map cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MapCacheCounters {
    /// Accesses that found their page cached.
    pub hits: u64,
    /// Accesses that did not.
    pub misses: u64,
    /// Translation pages read from flash (misses, prefetch, map GC).
    pub pages_read: u64,
    /// Translation pages programmed (write-backs and map GC).
    pub pages_programmed: u64,
    /// Map checkpoints (every dirty cached page written in one go).
    pub checkpoints: u64,
    /// Pages written back because the controller's SRAM held as many
    /// dirty pages as it can (`hmb_read_cache`).
    #[serde(default)]
    pub dirty_limit_write_backs: u64,
    /// The map journal's, when there is one.
    #[serde(default)]
    pub journal: JournalCounters,
}

/// The cached map's state.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MapCache {
    entries_per_page: u32,
    capacity: u32,
    policy: MapCachePolicy,
    prefetch: u32,
    access_ns: u64,
    mode: CellMode,
    geo: Geometry,
    /// Pages kept by a block clean (reused buffer).
    keep: Vec<u32>,
    // Per translation page.
    flags: Vec<u8>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Sequence number of the page's current copy in its die's log.
    seq: Vec<u64>,
    /// Most and least recently used cached pages.
    mru: u32,
    lru: u32,
    resident: u32,
    /// The page each lane (host accesses, moves by GC and folding) touched
    /// last: touching it again needs no list update.
    last: [u32; 2],
    // Per die: the translation log.
    dies: u32,
    slots_per_block: u32,
    unit: u32,
    blocks_per_die: u32,
    /// Translation blocks, die-major.
    blocks: Vec<u32>,
    /// Page held at each log position (die-major), `NONE` if none.
    owner: Vec<u32>,
    /// Map updates between checkpoints (0: none) and since the last.
    checkpoint_every: u64,
    updates: u64,
    /// Next sequence number to write, per die.
    written: Vec<u64>,
    /// Sequence numbers below this are programmed, per die.
    programmed: Vec<u64>,
    /// The map journal, if updates are journalled.
    journal: Option<Box<MapJournal>>,
    /// Pages a journal flush writes back, with their entry counts: all at
    /// once (a reused buffer), or, segmented, the flush in progress.
    flushing: Vec<(u32, u32)>,
    /// Segmented pace: the next page of `flushing` to write back, and the
    /// entries of the flush not yet written back (still in memory).
    #[serde(default)]
    segmented: bool,
    #[serde(default)]
    flush_next: usize,
    #[serde(default)]
    flush_entries: u64,
    /// Most pages dirty at once (0: no limit), and the pages in the order
    /// they became dirty, each with the stamp it had then (an entry whose
    /// page was cleaned since, and perhaps dirtied again, is stale).
    #[serde(default)]
    dirty_limit: u32,
    #[serde(default)]
    dirty_order: std::collections::VecDeque<(u32, u32)>,
    #[serde(default)]
    dirty_stamp: Vec<u32>,
    #[serde(default)]
    stamp: u32,
    /// Counters.
    pub counters: MapCacheCounters,
}

impl MapCache {
    /// An empty cache whose translation log uses `blocks` (die-major,
    /// `m.blocks_per_die` per die), none written yet.
    pub fn new(m: &MapCacheModel, geo: &Geometry, blocks: Vec<u32>) -> MapCache {
        let n = m.map_pages as usize;
        let slots_per_block = geo.slots_in_mode(m.mode);
        MapCache {
            entries_per_page: m.entries_per_page,
            capacity: m.capacity_pages,
            policy: m.policy,
            prefetch: m.prefetch_pages,
            access_ns: m.access_ns,
            mode: m.mode,
            geo: *geo,
            keep: Vec::with_capacity(slots_per_block as usize),
            flags: vec![0; n],
            prev: vec![NONE; n],
            next: vec![NONE; n],
            seq: vec![0; n],
            mru: NONE,
            lru: NONE,
            resident: 0,
            last: [NONE; 2],
            dies: geo.dies,
            slots_per_block,
            unit: geo.unit_slots(m.mode),
            blocks_per_die: m.blocks_per_die,
            owner: vec![NONE; blocks.len() * slots_per_block as usize],
            blocks,
            checkpoint_every: m.checkpoint_updates,
            updates: 0,
            written: vec![0; geo.dies as usize],
            programmed: vec![0; geo.dies as usize],
            journal: (m.journal_entries > 0).then(|| {
                Box::new(MapJournal::new(m.journal_entries, m.journal_flush, m.map_pages, m.entries_per_page))
            }),
            flushing: Vec::new(),
            segmented: m.journal_pace == JournalPace::Segmented,
            flush_next: 0,
            flush_entries: 0,
            dirty_limit: m.dirty_limit_pages,
            dirty_order: std::collections::VecDeque::with_capacity(m.dirty_limit_pages as usize + 1),
            dirty_stamp: if m.dirty_limit_pages > 0 { vec![0; n] } else { Vec::new() },
            stamp: 0,
            counters: MapCacheCounters::default(),
        }
    }

    /// The translation blocks (die-major).
    pub fn blocks(&self) -> &[u32] {
        &self.blocks
    }

    /// Cell mode of the translation blocks.
    pub fn mode(&self) -> CellMode {
        self.mode
    }

    /// Cost of one lookup in the cache's memory, ns.
    #[inline]
    pub fn access_ns(&self) -> u64 {
        self.access_ns
    }

    /// Forget everything (secure erase): nothing cached, nothing on flash.
    pub fn reset(&mut self) {
        self.flags.fill(0);
        self.prev.fill(NONE);
        self.next.fill(NONE);
        self.seq.fill(0);
        self.owner.fill(NONE);
        self.written.fill(0);
        self.programmed.fill(0);
        (self.mru, self.lru, self.resident, self.last) = (NONE, NONE, 0, [NONE; 2]);
        self.updates = 0;
        if let Some(j) = &mut self.journal {
            j.reset();
        }
        self.flushing.clear();
        (self.flush_next, self.flush_entries) = (0, 0);
        self.dirty_order.clear();
    }

    /// After a whole state was installed: every translation page is on
    /// flash, laid out in order in its die's log; nothing is cached.
    pub fn install_all_on_flash(&mut self) {
        self.reset();
        for p in 0..self.flags.len() as u32 {
            let d = p % self.dies;
            let s = self.written[d as usize];
            self.written[d as usize] += 1;
            self.seq[p as usize] = s;
            let i = self.position(d, s);
            self.owner[i] = p;
            self.flags[p as usize] = ON_FLASH;
        }
        self.programmed.clone_from(&self.written);
    }

    /// Access the entry of `lpn` (`dirty`: the access changes it) from
    /// `lane` (0: the host's reads, writes and trims; 1: moves by GC and
    /// folding), loading its page on a miss. NAND operations go to `ops`
    /// when `emit`; erases of translation blocks are counted in
    /// `erase_count`. A lane touching the page it touched last skips the
    /// recency update (the page is among the most recent already), so host
    /// writes interleaved with folding stay cheap.
    #[inline]
    pub fn access(
        &mut self,
        lpn: u32,
        dirty: bool,
        lane: usize,
        ops: &mut Vec<NandOp>,
        emit: bool,
        erase_count: &mut [Vec<u32>; 2],
    ) {
        if let Some(j) = &mut self.journal {
            if dirty {
                let full = j.log(lpn);
                if self.segmented {
                    self.flush_segment(ops, emit, erase_count);
                } else if full {
                    self.flush_journal(ops, emit, erase_count);
                }
                return;
            }
            if j.holds(lpn) {
                j.count_hit();
                return;
            }
        }
        let page = lpn / self.entries_per_page;
        if page == self.last[lane] {
            if dirty {
                self.mark_dirty(page, ops, emit, erase_count);
            }
            self.counters.hits += 1;
            return;
        }
        self.access_page(page, dirty, ops, emit, erase_count);
        self.last[lane] = page;
    }

    /// A host write or trim unmaps `lpn` (`mapped`: it pointed at flash;
    /// `write`: a write's new location follows, through
    /// [`MapCache::update`]). Without a journal: a lookup of the old
    /// location, which dirties the page when mapped. With one, nothing is
    /// looked up (the old location is resolved at write-back) and a trim
    /// of a mapped page is logged; a write is logged once, with its new
    /// location.
    #[inline]
    pub fn unmap(
        &mut self,
        lpn: u32,
        (mapped, write): (bool, bool),
        ops: &mut Vec<NandOp>,
        emit: bool,
        erase: &mut [Vec<u32>; 2],
    ) {
        if self.journal.is_none() || (mapped && !write) {
            self.access(lpn, mapped, 0, ops, emit, erase);
        }
    }

    /// Write back the pages a full journal gives up, all at once.
    fn flush_journal(&mut self, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        let mut pages = std::mem::take(&mut self.flushing);
        pages.clear();
        if let Some(j) = &mut self.journal {
            j.flush(&mut pages, true);
        }
        for &(page, _) in &pages {
            self.write_back_logged(page, ops, emit, erase);
        }
        self.flushing = pages;
    }

    /// The segmented pace, after each logged update: a full journal with
    /// no flush in progress starts one (its pages and entries leave the
    /// journal's count but stay in memory), and the flush's next pages
    /// are written back while its entries and the journal's together
    /// exceed the journal's capacity. A flush of J entries over P pages
    /// thus ends as the next J updates have been logged, one write-back
    /// every J/P updates on average, and memory never holds more than J.
    fn flush_segment(&mut self, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        loop {
            let Some(j) = self.journal.as_deref_mut() else { return };
            if self.flush_next == self.flushing.len() {
                if j.len() < j.capacity() {
                    return;
                }
                self.flushing.clear();
                self.flush_next = 0;
                j.flush(&mut self.flushing, false);
                self.flush_entries = self.flushing.iter().map(|&(_, n)| n as u64).sum();
            }
            if j.len() as u64 + self.flush_entries <= j.capacity() as u64 {
                return;
            }
            let (page, count) = self.flushing[self.flush_next];
            self.flush_next += 1;
            self.flush_entries -= count as u64;
            j.forget(page);
            self.write_back_logged(page, ops, emit, erase);
        }
    }

    /// Write back a page whose logged updates are being applied: read
    /// first unless cached (a cached copy is current and stays cached,
    /// clean), then appended to its die's translation log.
    fn write_back_logged(&mut self, page: u32, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        let p = page as usize;
        if self.flags[p] & RESIDENT == 0 && self.flags[p] & ON_FLASH != 0 {
            let d = page % self.dies;
            if self.seq[p] < self.programmed[d as usize] {
                self.counters.pages_read += 1;
                if emit {
                    let (block, row) = self.location(d, self.seq[p]);
                    ops.push(NandOp::Read { purpose: Purpose::MapStore, block, row, slots: 1 });
                }
            }
        }
        self.write_back(page, ops, emit, erase);
    }

    /// The counters, the journal's included.
    pub fn all_counters(&self) -> MapCacheCounters {
        MapCacheCounters { journal: self.journal.as_ref().map(|j| j.counters).unwrap_or_default(), ..self.counters }
    }

    /// The entry of `lpn` now points at new flash (a host write from lane
    /// 0, or a move by GC or folding from lane 1): a dirtying
    /// [`MapCache::access`], counted towards the next checkpoint, which
    /// runs when due.
    #[inline]
    pub fn update(&mut self, lpn: u32, lane: usize, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        self.access(lpn, true, lane, ops, emit, erase);
        if self.checkpoint_every > 0 {
            self.updates += 1;
            if self.updates >= self.checkpoint_every {
                self.checkpoint(ops, emit, erase);
            }
        }
    }

    /// Write every dirty cached page to flash (most recently used first)
    /// and start counting updates again.
    fn checkpoint(&mut self, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        self.updates = 0;
        self.counters.checkpoints += 1;
        let mut page = self.mru;
        while page != NONE {
            let p = page as usize;
            if self.flags[p] & DIRTY != 0 {
                self.write_back(page, ops, emit, erase);
                self.flags[p] &= !DIRTY;
            }
            page = self.next[p];
        }
    }

    fn access_page(&mut self, page: u32, dirty: bool, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        let p = page as usize;
        if self.flags[p] & RESIDENT != 0 {
            self.counters.hits += 1;
            if self.policy == MapCachePolicy::Lru {
                self.unlink(page);
                self.push_mru(page);
            }
        } else {
            self.counters.misses += 1;
            self.load(page, ops, emit, erase);
            let last = (self.flags.len() as u32).min(page.saturating_add(1 + self.prefetch));
            for q in page + 1..last {
                if self.flags[q as usize] & RESIDENT == 0 {
                    self.load(q, ops, emit, erase);
                }
            }
        }
        if dirty {
            self.mark_dirty(page, ops, emit, erase);
        }
    }

    /// `page` (cached) is changed. With a limit on dirty pages, a page
    /// that becomes dirty joins the order, and beyond the limit the page
    /// dirtied longest ago is written back and stays cached, clean.
    #[inline(always)]
    fn mark_dirty(&mut self, page: u32, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        let p = page as usize;
        if self.flags[p] & DIRTY != 0 {
            return;
        }
        self.flags[p] |= DIRTY;
        if self.dirty_limit > 0 {
            self.limit_dirty(page, ops, emit, erase);
        }
    }

    #[inline(never)]
    fn limit_dirty(&mut self, page: u32, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        self.stamp = self.stamp.wrapping_add(1);
        self.dirty_stamp[page as usize] = self.stamp;
        self.dirty_order.push_back((page, self.stamp));
        while self.dirty_order.len() > self.dirty_limit as usize {
            let Some((q, stamp)) = self.dirty_order.pop_front() else { break };
            let qi = q as usize;
            if self.flags[qi] & DIRTY != 0 && self.dirty_stamp[qi] == stamp {
                self.write_back(q, ops, emit, erase);
                self.flags[qi] &= !DIRTY;
                self.counters.dirty_limit_write_backs += 1;
            }
        }
    }

    /// Bring `page` into the cache (evicting first if full).
    fn load(&mut self, page: u32, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        if self.resident >= self.capacity {
            self.evict(ops, emit, erase);
        }
        let p = page as usize;
        if self.flags[p] & ON_FLASH != 0 {
            let d = page % self.dies;
            // A copy still waiting for its program unit is in the
            // controller: no read.
            if self.seq[p] < self.programmed[d as usize] {
                self.counters.pages_read += 1;
                if emit {
                    let (block, row) = self.location(d, self.seq[p]);
                    ops.push(NandOp::Read { purpose: Purpose::MapLoad, block, row, slots: 1 });
                }
            }
        }
        self.flags[p] |= RESIDENT;
        self.resident += 1;
        self.push_mru(page);
    }

    /// Drop the least recently used (or first loaded) page, writing it
    /// back if dirty.
    fn evict(&mut self, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        let victim = self.lru;
        debug_assert_ne!(victim, NONE);
        self.unlink(victim);
        self.resident -= 1;
        let v = victim as usize;
        if self.flags[v] & DIRTY != 0 {
            self.write_back(victim, ops, emit, erase);
        }
        self.flags[v] &= !(RESIDENT | DIRTY);
        for l in &mut self.last {
            if *l == victim {
                *l = NONE;
            }
        }
    }

    /// Append `page` to its die's log; program full units; clean the
    /// oldest block when the log reaches it.
    fn write_back(&mut self, page: u32, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        let d = page % self.dies;
        if self.written[d as usize] % self.slots_per_block as u64 == 0 {
            self.clean_next_block(d, ops, emit, erase);
        }
        self.append(d, page, ops, emit);
    }

    fn append(&mut self, d: u32, page: u32, ops: &mut Vec<NandOp>, emit: bool) {
        let di = d as usize;
        let s = self.written[di];
        self.written[di] += 1;
        let i = self.position(d, s);
        self.owner[i] = page;
        self.seq[page as usize] = s;
        self.flags[page as usize] |= ON_FLASH;
        if self.written[di] - self.programmed[di] == self.unit as u64 {
            let first = self.programmed[di];
            self.programmed[di] = self.written[di];
            self.counters.pages_programmed += self.unit as u64;
            if emit {
                let (block, row) = self.location(d, first);
                ops.push(NandOp::Program { purpose: Purpose::MapStore, block, row, slots: self.unit });
            }
        }
    }

    /// The log of die `d` is about to write into its next block: read the
    /// current pages it still holds, erase it, write them again first.
    fn clean_next_block(&mut self, d: u32, ops: &mut Vec<NandOp>, emit: bool, erase: &mut [Vec<u32>; 2]) {
        loop {
            let start = self.written[d as usize];
            let first = self.position(d, start);
            let (block, _) = self.location(d, start);
            let mut keep = std::mem::take(&mut self.keep);
            keep.clear();
            if start >= self.log_slots() {
                let mut row_read = NONE;
                for k in 0..self.slots_per_block {
                    let q = self.owner[first + k as usize];
                    let old = start - self.log_slots() + k as u64;
                    if q != NONE && self.seq[q as usize] == old {
                        keep.push(q);
                        let (_, row) = self.location(d, old);
                        if row != row_read && emit {
                            ops.push(NandOp::Read { purpose: Purpose::MapStore, block, row, slots: 1 });
                        }
                        row_read = row;
                        self.counters.pages_read += 1;
                    }
                }
                if emit {
                    ops.push(NandOp::Erase { purpose: Purpose::MapStore, block });
                }
                erase[self.mode as usize][block as usize] += 1;
            }
            for k in 0..self.slots_per_block as usize {
                self.owner[first + k] = NONE;
            }
            let full = keep.len() as u32 == self.slots_per_block;
            for &q in &keep {
                self.append(d, q, ops, emit);
            }
            self.keep = keep;
            if !full {
                return;
            }
        }
    }

    /// Positions in one die's log.
    #[inline]
    fn log_slots(&self) -> u64 {
        self.blocks_per_die as u64 * self.slots_per_block as u64
    }

    /// Index into `owner` of sequence number `s` of die `d`.
    #[inline]
    fn position(&self, d: u32, s: u64) -> usize {
        d as usize * self.log_slots() as usize + (s % self.log_slots()) as usize
    }

    /// Block and row of sequence number `s` of die `d`.
    fn location(&self, d: u32, s: u64) -> (u32, u32) {
        let pos = s % self.log_slots();
        let k = (pos / self.slots_per_block as u64) as usize;
        let block = self.blocks[d as usize * self.blocks_per_die as usize + k];
        (block, self.geo.row_of((pos % self.slots_per_block as u64) as u32))
    }

    fn push_mru(&mut self, page: u32) {
        let p = page as usize;
        self.prev[p] = NONE;
        self.next[p] = self.mru;
        if self.mru != NONE {
            self.prev[self.mru as usize] = page;
        } else {
            self.lru = page;
        }
        self.mru = page;
    }

    fn unlink(&mut self, page: u32) {
        let p = page as usize;
        let (a, b) = (self.prev[p], self.next[p]);
        if a != NONE {
            self.next[a as usize] = b;
        } else {
            self.mru = b;
        }
        if b != NONE {
            self.prev[b as usize] = a;
        } else {
            self.lru = a;
        }
        self.prev[p] = NONE;
        self.next[p] = NONE;
    }
}
