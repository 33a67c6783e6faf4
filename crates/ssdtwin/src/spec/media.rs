//! The drive file's media-reliability sections and their validation:
//! `[nand.native.errors]` / `[nand.slc.errors]` (raw bit error rate of a
//! cell mode), `[controller.ecc]` (the decoder's strength and read retry)
//! and `[nand.bad_blocks]` (factory and grown bad blocks, the spare pool).
//! Every section is optional; without them the flash never errs. The
//! model they feed is [`crate::model::media`].

use serde::{Deserialize, Serialize};

use super::{DriveSpec, MappingScheme};
use crate::error::SpecError;
use crate::model::media::{BadBlockModel, EccModel, MediaModel, RberModel};
use crate::model::nand::SECTOR_BYTES;

/// `[nand.native.errors]`, `[nand.slc.errors]`: raw bit error rate of a
/// page read in this cell mode,
///
/// ```text
/// RBER = r0(PE) · (1 + retention_per_year · years^retention_exponent
///                    + disturb_per_million_reads · reads / 10⁶)
/// r0(PE) = fresh + (at_rated_pe − fresh) · (PE / pe_cycles)^wear_exponent
/// ```
///
/// with PE the block's erases in this mode, `years` the time since the
/// block was programmed (simulated drive time, powered or not) and `reads`
/// the reads of the block since its erase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RberSpec {
    /// RBER of a block just programmed, never cycled.
    pub fresh: f64,
    /// RBER of a block just programmed at its rated P/E cycles
    /// (`pe_cycles` of the mode).
    pub at_rated_pe: f64,
    /// Exponent of the power law in P/E cycles.
    pub wear_exponent: f64,
    /// Retention: relative RBER increase after one year since program.
    pub retention_per_year: f64,
    /// Exponent of the retention time (years).
    pub retention_exponent: f64,
    /// Read disturb: relative RBER increase per million reads of the block
    /// since its erase.
    pub disturb_per_million_reads: f64,
}

/// `[controller.ecc]`: the decoder. A read is hard-decoded within
/// `ecc_decode_ns`; a codeword with more bit errors than `hard_bits`
/// makes the controller re-read the page with shifted read references
/// (up to `read_retry_steps` times, each an extra NAND read and hard
/// decode, the k-th seeing the RBER × `retry_rber_factor`^k), then try a
/// soft decode (`soft_reads` extra sensing reads, `soft_decode_ns`,
/// correcting up to `soft_bits`); beyond that the read is uncorrectable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EccSpec {
    /// Data bytes per ECC codeword (divides 4096).
    pub codeword_bytes: u32,
    /// Bit errors per codeword a hard decode corrects.
    pub hard_bits: u32,
    /// Read-retry steps before soft decoding.
    pub read_retry_steps: u32,
    /// RBER factor of each retry step (0 < f ≤ 1).
    pub retry_rber_factor: f64,
    /// Bit errors per codeword a soft decode corrects (≥ `hard_bits`).
    pub soft_bits: u32,
    /// Extra NAND reads a soft decode senses.
    pub soft_reads: u32,
    /// Soft decode time, ns.
    pub soft_decode_ns: u64,
    /// Seed of the bit-error draws (default 1).
    #[serde(default = "default_seed")]
    pub seed: u64,
}

/// `[nand.bad_blocks]`: factory bad blocks, program and erase failures
/// that grow with wear, and the spare pool they consume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BadBlockSpec {
    /// Fraction of each die's blocks bad from the factory.
    #[serde(default)]
    pub factory_fraction: f64,
    /// Fraction of blocks whose erase has failed by the time they reach
    /// the rated native P/E cycles (the per-erase probability grows as
    /// `(PE / pe_cycles)^fail_exponent`).
    pub erase_failed_by_rated_pe: f64,
    /// Fraction of blocks that have failed a program by the rated cycles.
    pub program_failed_by_rated_pe: f64,
    /// Exponent of the per-operation failure probability in P/E cycles.
    pub fail_exponent: f64,
    /// Blocks per die set aside to replace grown bad blocks (the 100% of
    /// the health log's available spare).
    pub spare_blocks_per_die: u32,
    /// Available spare (%) below which the drive warns and turns
    /// read-only (NVMe's Available Spare Threshold; default 10).
    #[serde(default = "default_threshold")]
    pub spare_threshold_percent: u32,
    /// Seed of the factory map and the failure draws (default 1).
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn default_seed() -> u64 {
    1
}

fn default_threshold() -> u32 {
    10
}

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
