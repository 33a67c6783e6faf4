//! `[ftl.map_cache]` as the drive file states it ([`MapCacheSpec`]) and
//! in the FTL's units ([`MapCacheModel`]): how big the cache of
//! translation pages is, where it lives (DRAM, host memory buffer, SRAM)
//! and how it replaces pages. Leaves out sizing it from the drive (that
//! is `crate::spec::mapcache::resolve`) and the cache itself
//! (`model::ftl::mapcache`).

use serde::{Deserialize, Serialize};

use crate::model::nand::CellMode;

/// `[ftl.map_cache]`: the map cached in limited memory (DFTL-style).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapCacheSpec {
    /// Bytes per map entry (default 4: a 32-bit flash address per 4 KiB,
    /// about 1 GB of map per TB).
    #[serde(default = "default_entry_bytes")]
    pub entry_bytes: u32,
    /// Bytes per translation page, the unit the controller caches, loads
    /// and writes back (default 4096: 1024 entries, 4 MiB of user data).
    #[serde(default = "default_page_bytes")]
    pub page_bytes: u32,
    /// Share of the memory the map cache lives in (the controller's DRAM;
    /// the host memory buffer of a DRAM-less drive; else its SRAM) that
    /// caches translation pages, 0 < x ≤ 1; the rest holds firmware, the
    /// write buffer and other tables.
    pub dram_share: f64,
    /// Which cached page a miss replaces: `"lru"` (least recently used,
    /// default) or `"fifo"` (loaded first).
    #[serde(default)]
    pub policy: MapCachePolicy,
    /// Following translation pages loaded together with a missed one
    /// (sequential prefetch; default 0).
    #[serde(default)]
    pub prefetch_pages: u32,
    /// Map checkpoint: after this many map updates (host writes and moves
    /// by GC and folding) the firmware writes every dirty cached
    /// translation page to flash in one go. Absent: dirty pages are only
    /// written back when evicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_updates: Option<u64>,
    /// Map journal: map updates (host writes, trims, moves by GC and
    /// folding) kept in a log in the cache's memory instead of dirtying
    /// their translation pages; when it holds this many, translation pages
    /// are written back in batches (`journal_flush`), each write-back
    /// covering all the page's pending updates. Absent: no journal, every
    /// update dirties its cached page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_entries: Option<u32>,
    /// Bytes of the cache's memory one journal entry takes (default 8: a
    /// 4-byte logical page number and a 4-byte flash address); the
    /// journal's memory is taken from the cache's.
    #[serde(default = "default_journal_entry_bytes", skip_serializing_if = "is_default_journal_entry_bytes")]
    pub journal_entry_bytes: u32,
    /// Which translation pages a full journal writes back: `"most-pending"`
    /// (default: the page with the most pending updates, one page each
    /// time the journal is full) or `"all"` (every page with a pending
    /// update, emptying the journal).
    #[serde(default, skip_serializing_if = "JournalFlush::is_default")]
    pub journal_flush: JournalFlush,
    /// When a flush's pages are written back: `"at-once"` (default: all
    /// of them by the update that filled the journal) or `"segmented"`
    /// (a page at a time between later updates, as the journal refills).
    #[serde(default, skip_serializing_if = "JournalPace::is_default")]
    pub journal_pace: JournalPace,
    /// The host memory buffer is a read cache of the map (Toshiba's BG
    /// series): translation pages cached there are clean copies, and an
    /// update is made in the controller's SRAM (`controller.sram_bytes` ×
    /// `dram_share`), which holds at most that many dirty pages; dirtying
    /// one more writes back the page dirtied longest ago (it stays in the
    /// buffer, clean). Default false: the buffer holds dirty pages too.
    #[serde(default, skip_serializing_if = "is_false")]
    pub hmb_read_cache: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn default_journal_entry_bytes() -> u32 {
    8
}

fn is_default_journal_entry_bytes(b: &u32) -> bool {
    *b == default_journal_entry_bytes()
}

/// Which translation pages a full map journal writes back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JournalFlush {
    /// The page with the most pending updates, of equals the one that
    /// reached its count first (one page per flush; the journal stays
    /// nearly full).
    #[default]
    MostPending,
    /// Every page with a pending update (the journal empties).
    All,
}

impl JournalFlush {
    fn is_default(&self) -> bool {
        *self == JournalFlush::default()
    }
}

/// When a flush's translation pages are written back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JournalPace {
    /// Every page by the update that filled the journal (its die time
    /// booked at once, ahead of the host's next programs).
    #[default]
    AtOnce,
    /// A page at a time between later updates: the flushed entries stay
    /// in memory until their page is written, and the next page is
    /// written when they and the new entries together would exceed the
    /// journal's capacity (Silicon Motion's "updates ... in segments",
    /// US 11,036,646 B2).
    Segmented,
}

impl JournalPace {
    fn is_default(&self) -> bool {
        *self == JournalPace::default()
    }
}

fn default_entry_bytes() -> u32 {
    4
}

fn default_page_bytes() -> u32 {
    4096
}

/// Replacement policy of the map cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MapCachePolicy {
    /// Replace the least recently used page.
    #[default]
    Lru,
    /// Replace the page loaded first.
    Fifo,
}

/// Where the cached map lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MapCacheLocation {
    /// The controller's DRAM.
    Dram,
    /// The host memory buffer (NVMe HMB): each lookup crosses PCIe.
    Hmb,
    /// The controller's SRAM (DRAM-less without HMB).
    Sram,
}

/// The map cache in the FTL's units.
#[derive(Debug, Clone, PartialEq)]
pub struct MapCacheModel {
    /// Map entries per translation page.
    pub entries_per_page: u32,
    /// Translation pages of the whole map.
    pub map_pages: u32,
    /// Translation pages the cache holds.
    pub capacity_pages: u32,
    /// Replacement policy.
    pub policy: MapCachePolicy,
    /// Pages prefetched after a missed one.
    pub prefetch_pages: u32,
    /// Where the cache lives.
    pub location: MapCacheLocation,
    /// Cost of one lookup in the cache, ns (an HMB round trip; 0 in the
    /// controller's own memory, whose cost is in `cmd_overhead_ns`).
    pub access_ns: u64,
    /// Blocks per die reserved for translation pages.
    pub blocks_per_die: u32,
    /// Mode of the translation blocks (pSLC where the NAND has it, as
    /// firmware keeps metadata).
    pub mode: CellMode,
    /// Map updates between checkpoints of the dirty cached pages (0:
    /// none).
    pub checkpoint_updates: u64,
    /// Map journal: entries (0: none) and which pages a full one writes
    /// back.
    pub journal_entries: u32,
    /// Which pages a full journal writes back.
    pub journal_flush: JournalFlush,
    /// When they are written back.
    pub journal_pace: JournalPace,
    /// Most translation pages that may be dirty at once (0: as many as
    /// are cached): the controller's SRAM share when the host memory
    /// buffer is a read cache (`hmb_read_cache`).
    pub dirty_limit_pages: u32,
}
