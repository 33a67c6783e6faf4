//! The drive file's media-reliability sections and their validation:
//! `[nand.native.errors]` / `[nand.slc.errors]` (raw bit error rate of a
//! cell mode), `[controller.ecc]` (the decoder's strength and read retry)
//! and `[nand.bad_blocks]` (factory and grown bad blocks, the spare pool).
//! Every section is optional; without them the flash never errs. The
//! model they feed is [`crate::model::media`].

use super::{DriveSpec, MappingScheme};
use crate::error::SpecError;
use crate::model::media::{BadBlockModel, EccModel, MediaModel, RberModel};
use crate::model::nand::SECTOR_BYTES;

/// The media model of `spec` (`None`: no error model and no bad blocks),
/// or the first invalid field.
pub(super) fn resolve(spec: &DriveSpec, origin: &str) -> Result<Option<MediaModel>, SpecError> {
    let bad = |field: &str, reason: String| SpecError::Invalid {
        origin: origin.to_string(),
        field: field.to_string(),
        reason,
    };
    let n = &spec.nand;
    let mut rber = [None, None];
    for (i, (name, timing)) in [("native", Some(&n.native)), ("slc", n.slc.as_ref())].into_iter().enumerate() {
        let Some(t) = timing else { continue };
        let Some(e) = &t.errors else { continue };
        let field = |f: &str| format!("nand.{name}.errors.{f}");
        let Some(rated) = t.pe_cycles else {
            return Err(bad(&field("at_rated_pe"), format!("needs nand.{name}.pe_cycles (the rated cycles)")));
        };
        for (f, v) in [("fresh", e.fresh), ("at_rated_pe", e.at_rated_pe)] {
            if !(0.0..0.5).contains(&v) {
                return Err(bad(&field(f), format!("{v} is not a bit error rate in [0, 0.5)")));
            }
        }
        for (f, v) in [
            ("wear_exponent", e.wear_exponent),
            ("retention_per_year", e.retention_per_year),
            ("retention_exponent", e.retention_exponent),
            ("disturb_per_million_reads", e.disturb_per_million_reads),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(&field(f), format!("{v} must be a finite number ≥ 0")));
            }
        }
        rber[i] = Some(RberModel {
            fresh: e.fresh,
            at_rated_pe: e.at_rated_pe,
            wear_exponent: e.wear_exponent,
            rated_pe: rated as f64,
            retention_per_year: e.retention_per_year,
            retention_exponent: e.retention_exponent,
            disturb_per_million_reads: e.disturb_per_million_reads,
        });
    }
    let ecc = match (&spec.controller.ecc, rber.iter().any(Option::is_some)) {
        (None, true) => {
            return Err(bad("controller.ecc", "nand errors need an [controller.ecc] to correct them".into()))
        }
        (None, false) => None,
        (Some(_), false) => {
            return Err(bad("controller.ecc", "needs [nand.native.errors] (the errors it corrects)".into()));
        }
        (Some(c), true) => {
            if c.codeword_bytes == 0 || SECTOR_BYTES % c.codeword_bytes != 0 {
                return Err(bad("controller.ecc.codeword_bytes", format!("{} does not divide 4096", c.codeword_bytes)));
            }
            if c.soft_bits < c.hard_bits {
                return Err(bad("controller.ecc.soft_bits", format!("{} is below hard_bits", c.soft_bits)));
            }
            if !(c.retry_rber_factor > 0.0 && c.retry_rber_factor <= 1.0) {
                return Err(bad(
                    "controller.ecc.retry_rber_factor",
                    format!("{} is not in (0, 1]", c.retry_rber_factor),
                ));
            }
            Some(EccModel {
                codeword_bits: c.codeword_bytes * 8,
                codewords_per_slot: SECTOR_BYTES / c.codeword_bytes,
                hard_bits: c.hard_bits,
                read_retry_steps: c.read_retry_steps,
                retry_rber_factor: c.retry_rber_factor,
                soft_bits: c.soft_bits,
                soft_reads: c.soft_reads,
                soft_decode_ns: c.soft_decode_ns,
                seed: c.seed,
            })
        }
    };
    if rber[0].is_none() && rber[1].is_some() {
        return Err(bad("nand.native.errors", "needed when nand.slc.errors is given".into()));
    }
    let bad_blocks = match &n.bad_blocks {
        None => None,
        Some(b) => {
            if spec.ftl.mapping != MappingScheme::Page {
                return Err(bad("nand.bad_blocks", "bad-block management needs mapping = \"page\"".into()));
            }
            let Some(rated) = n.native.pe_cycles else {
                return Err(bad("nand.bad_blocks", "needs nand.native.pe_cycles (the rated cycles)".into()));
            };
            for (f, v) in [
                ("factory_fraction", b.factory_fraction),
                ("erase_failed_by_rated_pe", b.erase_failed_by_rated_pe),
                ("program_failed_by_rated_pe", b.program_failed_by_rated_pe),
            ] {
                if !(0.0..0.5).contains(&v) {
                    return Err(bad(&format!("nand.bad_blocks.{f}"), format!("{v} is not a probability in [0, 0.5)")));
                }
            }
            if !(b.fail_exponent.is_finite() && b.fail_exponent >= 0.0) {
                return Err(bad("nand.bad_blocks.fail_exponent", format!("{} must be ≥ 0", b.fail_exponent)));
            }
            if b.spare_blocks_per_die == 0 {
                return Err(bad("nand.bad_blocks.spare_blocks_per_die", "must be at least 1".into()));
            }
            if b.spare_threshold_percent > 100 {
                return Err(bad("nand.bad_blocks.spare_threshold_percent", "must be at most 100".into()));
            }
            let blocks = spec.geometry.blocks_per_plane;
            Some(BadBlockModel {
                factory_per_die: (b.factory_fraction * blocks as f64).round() as u32,
                erase_failed_by_rated: b.erase_failed_by_rated_pe,
                program_failed_by_rated: b.program_failed_by_rated_pe,
                fail_exponent: b.fail_exponent,
                rated_pe: rated as f64,
                spare_blocks_per_die: b.spare_blocks_per_die,
                spare_threshold_percent: b.spare_threshold_percent,
                seed: b.seed,
            })
        }
    };
    if ecc.is_none() && bad_blocks.is_none() {
        return Ok(None);
    }
    Ok(Some(MediaModel { rber, ecc, bad_blocks }))
}
