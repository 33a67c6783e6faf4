//! The cached mapping table in a drive file (`[ftl.map_cache]`) and where
//! it lives: controller DRAM, the host memory buffer (NVMe HMB) of a
//! DRAM-less drive, or the controller's SRAM.
//!
//! Without `[ftl.map_cache]` the whole map is held for free, as before
//! (every calibration made that way stands). With it, the map lives in
//! translation pages on flash and the controller caches whole translation
//! pages (see `model::ftl::mapcache`).

use super::{DriveSpec, MappingScheme};
use crate::error::SpecError;
use crate::model::nand::{CellMode, Geometry};
pub use crate::model::params::{
    JournalFlush, JournalPace, MapCacheLocation, MapCacheModel, MapCachePolicy, MapCacheSpec,
};

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
    let journal_entries = m.journal_entries.unwrap_or(0);
    if m.journal_entries == Some(0) {
        return Err(bad(
            "ftl.map_cache.journal_entries",
            "a journal of 0 entries: give at least 1, or leave it out".into(),
        ));
    }
    if journal_entries > 0 && m.checkpoint_updates.is_some() {
        return Err(bad(
            "ftl.map_cache.journal_entries",
            "a map journal and checkpoint_updates are two ways of batching write-backs: give one".into(),
        ));
    }
    if !(1..=64).contains(&m.journal_entry_bytes) {
        return Err(bad("ftl.map_cache.journal_entry_bytes", format!("{} is not 1–64 bytes", m.journal_entry_bytes)));
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
    // The journal lives in the cache's memory.
    let journal_bytes = journal_entries as f64 * m.journal_entry_bytes as f64;
    if journal_bytes >= bytes {
        return Err(bad(
            "ftl.map_cache.journal_entries",
            format!("{journal_entries} entries take {journal_bytes:.0} bytes, all of the cache's {bytes:.0}"),
        ));
    }
    let bytes = bytes - journal_bytes;
    let entries_per_page = m.page_bytes / m.entry_bytes;
    let map_pages = user_lpns.div_ceil(entries_per_page as u64) as u32;
    let capacity_pages = ((bytes / m.page_bytes as f64) as u64).min(map_pages as u64) as u32;
    if capacity_pages == 0 {
        return Err(bad("ftl.map_cache", format!("{bytes:.0} bytes of cache hold no {}-byte page", m.page_bytes)));
    }
    let dirty_limit_pages = if m.hmb_read_cache {
        let sram = c.sram_bytes.filter(|&s| s > 0).ok_or_else(|| {
            bad(
                "ftl.map_cache.hmb_read_cache",
                "updates are made in the controller's SRAM: give controller.sram_bytes".into(),
            )
        })?;
        if location != MapCacheLocation::Hmb {
            return Err(bad(
                "ftl.map_cache.hmb_read_cache",
                "the map is not cached in a host memory buffer (needs dram_bytes = 0 and host.hmb_bytes)".into(),
            ));
        }
        let pages = (sram as f64 * m.dram_share / m.page_bytes as f64) as u32;
        if pages == 0 {
            return Err(bad(
                "ftl.map_cache.hmb_read_cache",
                format!("controller.sram_bytes × dram_share holds no {}-byte translation page", m.page_bytes),
            ));
        }
        pages.min(capacity_pages)
    } else {
        0
    };
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
        journal_entries,
        journal_flush: m.journal_flush,
        journal_pace: m.journal_pace,
        dirty_limit_pages,
    }))
}
