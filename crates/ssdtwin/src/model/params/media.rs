//! The drive file's media-reliability sections as serde reads them:
//! `[nand.native.errors]` / `[nand.slc.errors]` (raw bit error rate of a
//! cell mode), `[controller.ecc]` (the decoder's strength and read retry)
//! and `[nand.bad_blocks]` (factory and grown bad blocks, the spare pool).
//! Leaves out their validation into a [`crate::model::media::MediaModel`]
//! (`crate::spec`'s) and the model itself (`model::media`).

use serde::{Deserialize, Serialize};

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
