//! The map journal: recent map updates logged in the controller's memory
//! and applied to their translation pages in batches.
//!
//! Without a journal every map update dirties its cached translation
//! page, and every dirty eviction writes a whole page back for the few
//! entries that changed. Firmware instead logs updates (logical page →
//! new flash address) and writes a translation page back only when it
//! must, with all the updates pending for it at once:
//! - DFTL's *batch updates* (Gupta, Kim, Urgaonkar, "DFTL: a flash
//!   translation layer employing demand-based selective caching of
//!   page-level address mappings", ASPLOS 2009): when a dirty entry is
//!   evicted, every dirty cached entry of the same translation page is
//!   written with it; TPFTL (Zhou et al., "An efficient page-level FTL to
//!   optimize address translation in flash memory", EuroSys 2015) evicts
//!   by translation page for the same reason ("batch-update replacement").
//! - Silicon Motion's controllers (US 11,036,646 B2, "Data storage device
//!   and method of writing logical-to-physical mapping table thereof",
//!   filed 2019; US 12,306,765 B2): host data is written with a
//!   flash-to-host table of the block in RAM while the translation page
//!   (a "group-mapping table") is not loaded; once the count of such
//!   *unsaved* data blocks reaches a threshold (half of what can be
//!   rebuilt at power-on within the ready time), the updates of all of
//!   them are applied, each group-mapping table they touch read, updated
//!   and programmed once.
//!
//! What is modelled: the journal's size in entries (each update one
//! entry, repeats of a page included), its memory taken from the cache's
//! (`spec::mapcache`), and which pages a full journal writes back
//! ([`JournalFlush`]): the page with the most pending updates (greedy, one
//! page per flush) or every page with a pending update (Silicon Motion's
//! scheme). A write-back reads the page from flash unless it is cached
//! (the map cache's job, `super::mapcache`). Host reads find a logged
//! entry without its page. Updates need no lookup: the old location is
//! resolved when the page is written back (the Silicon Motion scheme
//! keeps the page unloaded during the write).
//!
//! When a flush's pages are written back is the map cache's
//! (`journal_pace`): all at once, or in segments between later updates as
//! Silicon Motion's patent does ("updates mapping relationships ... in
//! segments", US 11,036,646 B2), the flushed entries held until their
//! page is written ([`MapJournal::forget`]).
//!
//! Left out: the journal's own persistence (its entries travel in the
//! data blocks' flash-to-host tables, which the model does not program),
//! and a search cost for logged entries.

use crate::model::nand::NONE;
use crate::model::params::JournalFlush;

/// Journal event counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JournalCounters {
    /// Updates logged.
    pub updates: u64,
    /// Host reads that found their entry in the journal.
    pub hits: u64,
    /// Times the journal was full.
    pub flushes: u64,
    /// Translation pages flushes gave up.
    pub pages_flushed: u64,
    /// Of them, those written back (all of them at once; one by one with
    /// the segmented pace).
    #[serde(default)]
    pub pages_written_back: u64,
}

/// The journal's state: pending updates per translation page.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MapJournal {
    capacity: u32,
    policy: JournalFlush,
    entries_per_page: u32,
    /// Entries held.
    len: u32,
    /// Pending updates per translation page.
    pending: Vec<u32>,
    /// Pages with pending updates, by count (most-pending): a doubly
    /// linked list per count, oldest first (a page joins its count's list
    /// at the tail).
    head: Vec<u32>,
    tail: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Largest count with a non-empty list (most-pending).
    max: u32,
    /// Pages with pending updates in the order first logged (all).
    touched: Vec<u32>,
    /// Logical pages with a logged update (one bit each).
    logged: Vec<u64>,
    /// Counters.
    pub counters: JournalCounters,
}

impl MapJournal {
    /// An empty journal of `capacity` entries over `map_pages`
    /// translation pages of `entries_per_page` entries.
    pub fn new(capacity: u32, policy: JournalFlush, map_pages: u32, entries_per_page: u32) -> MapJournal {
        let n = map_pages as usize;
        let most = policy == JournalFlush::MostPending;
        let lpns = n * entries_per_page as usize;
        MapJournal {
            capacity,
            policy,
            entries_per_page,
            len: 0,
            pending: vec![0; n],
            head: if most { vec![NONE; capacity as usize + 2] } else { Vec::new() },
            tail: if most { vec![NONE; capacity as usize + 2] } else { Vec::new() },
            prev: if most { vec![NONE; n] } else { Vec::new() },
            next: if most { vec![NONE; n] } else { Vec::new() },
            max: 0,
            touched: Vec::with_capacity(if most { 0 } else { (capacity as usize).min(n) }),
            logged: vec![0; lpns.div_ceil(64)],
            counters: JournalCounters::default(),
        }
    }

    /// Forget every entry (secure erase, an installed state).
    pub fn reset(&mut self) {
        self.pending.fill(0);
        self.head.fill(NONE);
        self.tail.fill(NONE);
        self.prev.fill(NONE);
        self.next.fill(NONE);
        self.max = 0;
        self.len = 0;
        self.touched.clear();
        self.logged.fill(0);
    }

    /// Whether `lpn`'s current entry is in the journal.
    #[inline]
    pub fn holds(&self, lpn: u32) -> bool {
        self.logged[lpn as usize / 64] & (1 << (lpn % 64)) != 0
    }

    /// Count a host read served from the journal.
    #[inline]
    pub fn count_hit(&mut self) {
        self.counters.hits += 1;
    }

    /// Log an update of `lpn`; true when the journal is now full (the
    /// caller flushes).
    #[inline]
    pub fn log(&mut self, lpn: u32) -> bool {
        self.counters.updates += 1;
        self.logged[lpn as usize / 64] |= 1 << (lpn % 64);
        let page = lpn / self.entries_per_page;
        let p = page as usize;
        let c = self.pending[p];
        self.pending[p] = c + 1;
        match self.policy {
            JournalFlush::MostPending => {
                if c > 0 {
                    self.unlink(page, c);
                }
                self.push(page, c + 1);
                self.max = self.max.max(c + 1);
            }
            JournalFlush::All => {
                if c == 0 {
                    self.touched.push(page);
                }
            }
        }
        self.len += 1;
        self.len >= self.capacity
    }

    /// Entries held.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the journal holds no entry.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries it can hold.
    #[inline]
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Start a flush: the pages to write back go to `out`, each with the
    /// count of its pending updates, which leave the journal's count.
    /// With `forget`, reads stop finding them at once; otherwise when
    /// [`MapJournal::forget`] is called for the page (its write-back).
    pub fn flush(&mut self, out: &mut Vec<(u32, u32)>, forget: bool) {
        self.counters.flushes += 1;
        match self.policy {
            JournalFlush::MostPending => {
                while self.max > 0 && self.head[self.max as usize] == NONE {
                    self.max -= 1;
                }
                let page = self.head[self.max as usize];
                debug_assert_ne!(page, NONE);
                self.unlink(page, self.max);
                out.push((page, self.take(page, forget)));
            }
            JournalFlush::All => {
                let touched = std::mem::take(&mut self.touched);
                for &page in &touched {
                    out.push((page, self.take(page, forget)));
                }
                self.touched = touched;
                self.touched.clear();
            }
        }
    }

    /// `page` leaves the journal with all its pending updates, whose count
    /// is returned (and their entries, with `forget`).
    fn take(&mut self, page: u32, forget: bool) -> u32 {
        let p = page as usize;
        let count = self.pending[p];
        self.len -= count;
        self.pending[p] = 0;
        self.counters.pages_flushed += 1;
        if forget {
            self.forget(page);
        }
        count
    }

    /// Reads stop finding `page`'s entries in the journal (it has been
    /// written back; entries logged for it since its flush began go too,
    /// a read of one then loads the page).
    pub fn forget(&mut self, page: u32) {
        self.counters.pages_written_back += 1;
        // Its entries' bits: the page's range of logical pages.
        let first = page as usize * self.entries_per_page as usize;
        let end = first + self.entries_per_page as usize;
        let mut i = first;
        while i < end {
            let w = i / 64;
            let lo = i % 64;
            let n = (64 - lo).min(end - i);
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << lo };
            self.logged[w] &= !mask;
            i += n;
        }
    }

    /// Append `page` to the tail of `count`'s list.
    fn push(&mut self, page: u32, count: u32) {
        let p = page as usize;
        let t = self.tail[count as usize];
        self.next[p] = NONE;
        self.prev[p] = t;
        if t != NONE {
            self.next[t as usize] = page;
        } else {
            self.head[count as usize] = page;
        }
        self.tail[count as usize] = page;
    }

    fn unlink(&mut self, page: u32, count: u32) {
        let p = page as usize;
        let (a, b) = (self.prev[p], self.next[p]);
        if a != NONE {
            self.next[a as usize] = b;
        } else {
            self.head[count as usize] = b;
        }
        if b != NONE {
            self.prev[b as usize] = a;
        } else {
            self.tail[count as usize] = a;
        }
        self.prev[p] = NONE;
        self.next[p] = NONE;
    }
}
