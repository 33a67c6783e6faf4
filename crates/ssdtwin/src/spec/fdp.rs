//! `[fdp]`'s validation: handles and reclaim groups a drive can have, a
//! write buffer that holds a partial program unit per placement
//! identifier, and the open blocks every handle keeps (one per die of its
//! group, twice when persistently isolated) taken out of the space for
//! data. Features that would move a handle's data out of its reclaim
//! units are refused by name.

use super::{DriveSpec, MappingScheme};
use crate::error::SpecError;
use crate::model::nand::SECTOR_BYTES;
use crate::model::params::{FdpIsolation, FdpModel};

/// The FDP configuration of `spec` (`None`: no `[fdp]`) and the blocks per
/// die its handles keep open beyond the FTL's own, or the first invalid
/// field. `dies`, `slots_per_block` and `unit_slots` describe the flash.
pub(super) fn resolve(
    spec: &DriveSpec,
    origin: &str,
    dies: u32,
    slots_per_block: u32,
    unit_slots: u32,
) -> Result<(Option<FdpModel>, u64), SpecError> {
    let Some(f) = &spec.fdp else { return Ok((None, 0)) };
    let bad = |field: &str, reason: String| SpecError::Invalid {
        origin: origin.to_string(),
        field: field.to_string(),
        reason,
    };
    let persistent = f.isolation == FdpIsolation::Persistently;
    let refused: [(&str, bool, &str); 5] = [
        ("zns", spec.zns.is_some(), "a namespace is zoned or has placement handles, not both"),
        (
            "slc_cache",
            spec.slc_cache.is_some(),
            "folding from an SLC cache would mix the handles (not modelled with [fdp])",
        ),
        ("ftl.mapping", spec.ftl.mapping != MappingScheme::Page, "placement handles need page mapping"),
        (
            "ftl.wear_leveling.static_threshold",
            persistent && spec.ftl.wear_leveling.as_ref().is_some_and(|w| w.static_threshold.is_some()),
            "static wear leveling moves data without its handle (not modelled with persistent isolation)",
        ),
        (
            "nand.bad_blocks",
            persistent && spec.nand.bad_blocks.is_some(),
            "relocating a failing block's data ignores its handle (not modelled with persistent isolation)",
        ),
    ];
    if let Some((field, _, why)) = refused.iter().find(|r| r.1) {
        return Err(bad(field, why.to_string()));
    }
    if f.reclaim_unit_handles == 0 || f.reclaim_unit_handles > 128 {
        return Err(bad("fdp.reclaim_unit_handles", format!("{} is not between 1 and 128", f.reclaim_unit_handles)));
    }
    if f.reclaim_groups == 0 || dies % f.reclaim_groups != 0 {
        return Err(bad(
            "fdp.reclaim_groups",
            format!("{} does not split the {dies} dies into equal groups", f.reclaim_groups),
        ));
    }
    let placements = f.reclaim_unit_handles as u64 * f.reclaim_groups as u64;
    let unit_bytes = unit_slots as u64 * SECTOR_BYTES as u64;
    let need = placements * unit_bytes + SECTOR_BYTES as u64;
    let have = spec.controller.write_buffer_bytes;
    if spec.controller.write_cache == super::WriteCachePolicy::WriteBack && have < need {
        return Err(bad(
            "fdp.reclaim_unit_handles",
            format!(
                "{placements} placement identifiers need a write buffer of at least {need} bytes (a partial \
                 program unit of {unit_bytes} bytes each); controller.write_buffer_bytes is {have}"
            ),
        ));
    }
    let dies_per_group = dies / f.reclaim_groups;
    // Each further handle keeps an open block on every die of its group
    // (and a GC block when persistently isolated); every die is in one
    // group.
    let extra = (f.reclaim_unit_handles as u64 - 1) * if persistent { 2 } else { 1 };
    Ok((
        Some(FdpModel {
            handles: f.reclaim_unit_handles,
            groups: f.reclaim_groups,
            dies_per_group,
            persistent,
            ru_bytes: dies_per_group as u64 * slots_per_block as u64 * SECTOR_BYTES as u64,
        }),
        extra,
    ))
}
