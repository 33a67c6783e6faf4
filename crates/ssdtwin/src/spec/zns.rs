//! `[zns]`'s validation: the zones must tile the namespace, a zone's
//! capacity must fill whole native program units, the open and active
//! limits must be ones a controller can keep (one partially filled
//! program unit per active zone in the write buffer), and every
//! sequential zone's erase blocks must fit the dies beside the
//! conventional zones and the FTL's reserve. A zoned drive writes natively
//! through a page map held whole, with power-loss-protected write-back:
//! the features this model does not combine with zones are refused by
//! name.

use super::{DriveSpec, MappingScheme, WriteCachePolicy};
use crate::error::SpecError;
use crate::model::nand::SECTOR_BYTES;
use crate::model::params::ZnsModel;

/// What validation knows of the flash when it checks `[zns]`.
pub(super) struct Flash {
    /// Dies.
    pub dies: u32,
    /// 4 KiB slots per (multi-plane) block.
    pub slots_per_block: u32,
    /// 4 KiB slots per native program unit.
    pub unit_slots: u32,
    /// Blocks per die the FTL keeps for itself (GC reserve, open blocks).
    pub reserved_blocks_per_die: u64,
}

/// The zoned namespace of `spec` (`None`: no `[zns]`), or the first
/// invalid field. `flash` describes the dies it is laid on.
pub(super) fn resolve(spec: &DriveSpec, origin: &str, flash: &Flash) -> Result<Option<ZnsModel>, SpecError> {
    let Some(z) = &spec.zns else { return Ok(None) };
    let bad = |field: &str, reason: String| SpecError::Invalid {
        origin: origin.to_string(),
        field: field.to_string(),
        reason,
    };
    // What the zoned FTL does not model.
    let refused: [(&str, bool, &str); 6] = [
        ("slc_cache", spec.slc_cache.is_some(), "zones are written natively (an SLC cache is not modelled with [zns])"),
        (
            "ftl.mapping",
            spec.ftl.mapping != MappingScheme::Page,
            "a zoned drive maps pages (hybrid log-block mapping is not modelled with [zns])",
        ),
        ("ftl.map_cache", spec.ftl.map_cache.is_some(), "a zoned drive's map is held whole (no map cache with [zns])"),
        (
            "nand.bad_blocks",
            spec.nand.bad_blocks.is_some(),
            "bad blocks in zones (zones going read-only or offline) are not modelled with [zns]",
        ),
        (
            "ftl.wear_leveling.static_threshold",
            spec.ftl.wear_leveling.as_ref().is_some_and(|w| w.static_threshold.is_some()),
            "static wear leveling would move a zone's data (not modelled with [zns])",
        ),
        (
            "controller.write_cache",
            spec.controller.write_cache == WriteCachePolicy::WriteThrough,
            "a zoned drive holds each zone's partial program unit in a power-safe write-back buffer (write-through is not modelled with [zns])",
        ),
    ];
    if let Some((field, _, why)) = refused.iter().find(|r| r.1) {
        return Err(bad(field, why.to_string()));
    }
    let sector = SECTOR_BYTES as u64;
    let unit_bytes = flash.unit_slots as u64 * sector;
    if z.zone_size_bytes == 0 || z.zone_size_bytes % sector != 0 {
        return Err(bad("zns.zone_size_bytes", format!("{} is not a positive multiple of 4096", z.zone_size_bytes)));
    }
    if z.zone_capacity_bytes == 0 || z.zone_capacity_bytes > z.zone_size_bytes {
        return Err(bad(
            "zns.zone_capacity_bytes",
            format!("{} is not between 1 and the zone size ({})", z.zone_capacity_bytes, z.zone_size_bytes),
        ));
    }
    if z.zone_capacity_bytes % unit_bytes != 0 {
        return Err(bad(
            "zns.zone_capacity_bytes",
            format!(
                "{} is not a whole number of native program units ({unit_bytes} bytes): a zone fills its \
                 program units exactly",
                z.zone_capacity_bytes
            ),
        ));
    }
    let capacity = spec.ftl.user_capacity_bytes;
    if capacity % z.zone_size_bytes != 0 {
        return Err(bad(
            "ftl.user_capacity_bytes",
            format!("{capacity} is not a whole number of zones of {} bytes (zns.zone_size_bytes)", z.zone_size_bytes),
        ));
    }
    let zones = capacity / z.zone_size_bytes;
    if zones > u32::MAX as u64 || capacity / sector > u32::MAX as u64 {
        return Err(bad("ftl.user_capacity_bytes", format!("{capacity} bytes is too many 4 KiB pages to address")));
    }
    let zones = zones as u32;
    if z.conventional_zones >= zones {
        return Err(bad(
            "zns.conventional_zones",
            format!("{} leaves no sequential zone ({zones} zones)", z.conventional_zones),
        ));
    }
    if z.max_open_zones == 0 {
        return Err(bad("zns.max_open_zones", "must be at least 1".into()));
    }
    if z.max_active_zones < z.max_open_zones {
        return Err(bad(
            "zns.max_active_zones",
            format!("{} is below max_open_zones ({}): an open zone is active", z.max_active_zones, z.max_open_zones),
        ));
    }
    // Each active zone may hold a partly written program unit in the
    // buffer, the conventional stream one more, and a command needs room
    // for at least one more slot.
    let need = (z.max_active_zones as u64 + 1) * unit_bytes + sector;
    let have = spec.controller.write_buffer_bytes;
    if have < need {
        return Err(bad(
            "zns.max_active_zones",
            format!(
                "{} active zones need a write buffer of at least {need} bytes (a partial program unit of \
                 {unit_bytes} bytes per active zone and one for the conventional zones); \
                 controller.write_buffer_bytes is {have}",
                z.max_active_zones
            ),
        ));
    }
    let zone_lpns = (z.zone_size_bytes / sector) as u32;
    let zone_cap_lpns = (z.zone_capacity_bytes / sector) as u32;
    // A zone's program units go round the dies; the die given the most
    // units holds ⌈units / dies⌉ of them.
    let units = (zone_cap_lpns / flash.unit_slots) as u64;
    let units_per_die = units.div_ceil(flash.dies as u64);
    let blocks_per_die = (units_per_die * flash.unit_slots as u64).div_ceil(flash.slots_per_block as u64);
    let seq = (zones - z.conventional_zones) as u64;
    let conventional_slots = z.conventional_zones as u64 * zone_lpns as u64;
    let conventional_blocks = conventional_slots.div_ceil(flash.dies as u64 * flash.slots_per_block as u64);
    let needed = seq * blocks_per_die + conventional_blocks + flash.reserved_blocks_per_die;
    let per_die = spec.geometry.blocks_per_plane as u64;
    if needed > per_die {
        return Err(bad(
            "ftl.user_capacity_bytes",
            format!(
                "{zones} zones need {needed} blocks per die ({seq} sequential zones × {blocks_per_die}, \
                 {conventional_blocks} for the conventional zones, {} reserved), the dies have {per_die}",
                flash.reserved_blocks_per_die
            ),
        ));
    }
    Ok(Some(ZnsModel {
        zones,
        conventional: z.conventional_zones,
        zone_lpns,
        zone_cap_lpns,
        max_open: z.max_open_zones,
        max_active: z.max_active_zones,
        blocks_per_die: blocks_per_die as u32,
    }))
}
