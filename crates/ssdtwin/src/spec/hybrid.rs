//! `[ftl.hybrid]`'s validation: the log-block FTL needs its table (and only
//! with `mapping = "hybrid"`), log blocks spread evenly over the dies
//! (two per die at least with full association: one sequential, one
//! random), a merge batch a die can hold, a merge page that divides the
//! row, a stripe of whole program units that divides the block, and room
//! on every die for its data blocks, its log blocks and one block to merge
//! into. Derives the model in the FTL's units.

use super::{DriveSpec, HybridLayout, LogAssociation, MappingScheme};
use crate::error::SpecError;
use crate::model::nand::SECTOR_BYTES;
use crate::model::params::HybridModel;

/// What validation knows of the flash when it checks `[ftl.hybrid]`.
pub(super) struct Flash {
    /// The FTL's dies (gangs with ganged channels).
    pub dies: u32,
    /// 4 KiB slots per (multi-plane, ganged) block.
    pub slots_per_block: u32,
    /// 4 KiB slots per native program unit.
    pub unit_slots: u32,
    /// The user capacity in 4 KiB slots.
    pub user_slots: u64,
}

/// The hybrid FTL of `spec` (`None`: page mapping), or the first invalid
/// field. `flash` describes the dies it runs on.
pub(super) fn resolve(spec: &DriveSpec, origin: &str, flash: &Flash) -> Result<Option<HybridModel>, SpecError> {
    let bad = |field: &str, reason: String| SpecError::Invalid {
        origin: origin.to_string(),
        field: field.to_string(),
        reason,
    };
    let (g, f) = (&spec.geometry, &spec.ftl);
    let Flash { dies, slots_per_block, unit_slots, user_slots } = *flash;
    let hs = match (f.mapping, &f.hybrid) {
        (MappingScheme::Page, None) => return Ok(None),
        (MappingScheme::Page, Some(_)) => return Err(bad("ftl.hybrid", "only for mapping = \"hybrid\"".into())),
        (MappingScheme::Hybrid, None) => {
            return Err(bad("ftl.hybrid", "mapping = \"hybrid\" needs an [ftl.hybrid] table".into()))
        }
        (MappingScheme::Hybrid, Some(hs)) => hs,
    };
    if spec.slc_cache.is_some() {
        return Err(bad("slc_cache", "is not supported with mapping = \"hybrid\"".into()));
    }
    if hs.log_blocks == 0 || hs.log_blocks % dies != 0 {
        return Err(bad(
            "ftl.hybrid.log_blocks",
            format!("{} is not a positive multiple of the die count ({dies})", hs.log_blocks),
        ));
    }
    let per_die = hs.log_blocks / dies;
    if hs.association == LogAssociation::Full && per_die < 2 {
        return Err(bad(
            "ftl.hybrid.log_blocks",
            format!(
                "full association needs at least 2 log blocks per die (one sequential, one random); \
                 {} over {dies} dies gives {per_die}",
                hs.log_blocks
            ),
        ));
    }
    if hs.merge_batch == 0 {
        return Err(bad("ftl.hybrid.merge_batch", "must be at least 1".into()));
    }
    // A die merges at most the log blocks it has.
    let batch_limit = match hs.association {
        LogAssociation::Block => per_die,
        LogAssociation::Full => per_die - 1,
    };
    let merge_batch = hs.merge_batch.min(batch_limit);
    let unit_bytes = g.page_bytes as u64 * g.planes_per_die as u64;
    let merge_parts = match hs.merge_page_bytes {
        0 => 1,
        b if b >= 512 && unit_bytes % b as u64 == 0 => (unit_bytes / b as u64) as u32,
        b => {
            return Err(bad(
                "ftl.hybrid.merge_page_bytes",
                format!(
                "{b} is not 0 or at least 512 and a divisor of the {unit_bytes}-byte row (page_bytes × planes_per_die)"
            ),
            ))
        }
    };
    let stripe_slots = stripe_slots(hs.layout, hs.stripe_bytes, slots_per_block, unit_slots)
        .map_err(|reason| bad("ftl.hybrid.stripe_bytes", reason))?;
    let lbs_per_die = user_slots.div_ceil(dies as u64 * slots_per_block as u64) as u32;
    // Data blocks, log blocks and one block to merge into.
    let needed = lbs_per_die as u64 + per_die as u64 + 1;
    if needed > g.blocks_per_plane as u64 {
        return Err(bad(
            "ftl.hybrid.log_blocks",
            format!(
                "{per_die} log blocks per die, {lbs_per_die} data blocks per die and one merge block \
                 exceed the {} blocks of a die",
                g.blocks_per_plane
            ),
        ));
    }
    Ok(Some(HybridModel {
        log_blocks_per_die: per_die,
        association: hs.association,
        merge_policy: hs.merge_policy,
        merge_holds_core: hs.merge_holds_core,
        whole_block_merge: hs.whole_block_merge,
        merge_batch,
        merge_parts,
        layout: hs.layout,
        stripe_slots,
        logical_blocks_per_die: lbs_per_die,
    }))
}

/// Slots of consecutive addresses a logical block takes before the next
/// die's logical block continues the address space: `stripe_bytes` with
/// the striped layout (a whole number of program units that divides the
/// block; default one program unit), the whole block with the contiguous
/// one (which takes no `stripe_bytes`). Err: why `stripe_bytes` is wrong.
fn stripe_slots(
    layout: HybridLayout,
    stripe_bytes: Option<u64>,
    slots_per_block: u32,
    unit_slots: u32,
) -> Result<u32, String> {
    let slot = SECTOR_BYTES as u64;
    match (layout, stripe_bytes) {
        (HybridLayout::Contiguous, None) => Ok(slots_per_block),
        (HybridLayout::Contiguous, Some(_)) => {
            Err("is for layout = \"striped\" (a contiguous logical block is one stripe of a whole block)".into())
        }
        (HybridLayout::Striped, None) => Ok(unit_slots),
        (HybridLayout::Striped, Some(b)) => {
            let (unit, block) = (unit_slots as u64 * slot, slots_per_block as u64 * slot);
            if b == 0 || b % unit != 0 || block % b != 0 {
                Err(format!(
                    "{b} is not a positive multiple of the {unit}-byte program unit that divides the \
                     {block}-byte block"
                ))
            } else {
                Ok((b / slot) as u32)
            }
        }
    }
}
