//! The cached mapping table in a drive file (`[ftl.map_cache]`) and where
//! it lives: controller DRAM, the host memory buffer (NVMe HMB) of a
//! DRAM-less drive, or the controller's SRAM.
//!
//! Without `[ftl.map_cache]` the whole map is held for free, as before
//! (every calibration made that way stands). With it, the map lives in
//! translation pages on flash and the controller caches whole translation
//! pages (see `model::ftl::mapcache`).

use serde::{Deserialize, Serialize};

use super::{DriveSpec, MappingScheme};
use crate::error::SpecError;
use crate::model::nand::{CellMode, Geometry};

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
}

/// Translation area on flash per map size: room for every translation
/// page plus a quarter for the copies not yet cleaned.
const AREA_PER_MAP: f64 = 1.25;

/// Resolve `[ftl.map_cache]` for a drive (`None` when absent); `bad` makes
/// the error for a field.
pub fn resolve(
    spec: &DriveSpec,
    geo: &Geometry,
    user_lpns: u64,
    has_pslc: bool,
    bad: impl Fn(&str, String) -> SpecError,
) -> Result<Option<MapCacheModel>, SpecError> {
    let Some(m) = &spec.ftl.map_cache else { return Ok(None) };
    if spec.ftl.mapping != MappingScheme::Page {
        return Err(bad("ftl.map_cache", "a cached map needs mapping = \"page\"".into()));
    }
    if !(1..=16).contains(&m.entry_bytes) {
        return Err(bad("ftl.map_cache.entry_bytes", format!("{} is not 1–16 bytes", m.entry_bytes)));
    }
    if m.page_bytes < 512 || m.page_bytes > 65536 || m.page_bytes % m.entry_bytes != 0 {
        return Err(bad(
            "ftl.map_cache.page_bytes",
            format!("{} must be 512–65536 bytes and a multiple of entry_bytes", m.page_bytes),
        ));
    }
    if m.page_bytes > 4096 {
        return Err(bad("ftl.map_cache.page_bytes", "a translation page must fit one 4 KiB flash slot".into()));
    }
    if m.checkpoint_updates == Some(0) {
        return Err(bad("ftl.map_cache.checkpoint_updates", "0 updates between checkpoints: give at least 1".into()));
    }
    if !(m.dram_share > 0.0 && m.dram_share <= 1.0) {
        return Err(bad("ftl.map_cache.dram_share", format!("{} is not in (0, 1]", m.dram_share)));
    }
    let c = &spec.controller;
    let h = &spec.host;
    let (location, bytes, access_ns) = match c.dram_bytes {
        None => {
            return Err(bad(
                "ftl.map_cache",
                "needs controller.dram_bytes (0 for a DRAM-less drive, then host.hmb_bytes or controller.sram_bytes)"
                    .into(),
            ))
        }
        Some(d) if d > 0 => (MapCacheLocation::Dram, d as f64 * m.dram_share, 0),
        Some(_) => match h.hmb_bytes.filter(|&b| b > 0) {
            Some(hmb) => {
                let ns = h
                    .hmb_access_ns
                    .ok_or_else(|| bad("host.hmb_access_ns", "a host memory buffer needs its access latency".into()))?;
                (MapCacheLocation::Hmb, hmb as f64 * m.dram_share, ns)
            }
            None => match c.sram_bytes {
                Some(s) if s > 0 => (MapCacheLocation::Sram, s as f64 * m.dram_share, 0),
                _ => {
                    return Err(bad(
                        "controller.sram_bytes",
                        "a DRAM-less drive without a host memory buffer caches its map in SRAM: give sram_bytes".into(),
                    ))
                }
            },
        },
    };
    let entries_per_page = m.page_bytes / m.entry_bytes;
    let map_pages = user_lpns.div_ceil(entries_per_page as u64) as u32;
    let capacity_pages = ((bytes / m.page_bytes as f64) as u64).min(map_pages as u64) as u32;
    if capacity_pages == 0 {
        return Err(bad("ftl.map_cache", format!("{bytes:.0} bytes of cache hold no {}-byte page", m.page_bytes)));
    }
    let mode = if has_pslc { CellMode::Slc } else { CellMode::Native };
    let per_die = map_pages.div_ceil(geo.dies) as f64 * AREA_PER_MAP;
    let blocks_per_die = ((per_die / geo.slots_in_mode(mode) as f64).ceil() as u32 + 1).max(2);
    Ok(Some(MapCacheModel {
        entries_per_page,
        map_pages,
        capacity_pages,
        policy: m.policy,
        prefetch_pages: m.prefetch_pages,
        location,
        access_ns,
        blocks_per_die,
        mode,
        checkpoint_updates: m.checkpoint_updates.unwrap_or(0),
    }))
}
