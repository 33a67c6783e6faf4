//! Media reliability: raw bit errors of page reads, the controller's ECC
//! with read retry and soft decoding, and the probabilities of program and
//! erase failures that grow bad blocks.
//!
//! **Bit errors.** A read of a block in a cell mode sees the raw bit error
//! rate of [`RberModel::rber`]: a power law in the block's P/E cycles
//! (counted in that mode), raised by the time since the block was
//! programmed (retention, in simulated drive time, powered or not) and by
//! the reads of the block since its erase (read disturb). The errors of
//! each ECC codeword are drawn from a Poisson distribution of mean
//! RBER × codeword bits with the drive's seeded generator, so a run is
//! deterministic and a read allocates nothing.
//!
//! **Decoding** ([`Media::decode`]): when every codeword of the page read
//! holds at most `hard_bits` errors the hard decode the controller always
//! runs (`ecc_decode_ns`) corrects them. Otherwise the controller re-reads
//! the page with shifted read references, up to `read_retry_steps` times
//! (each an extra array read and hard decode; step k sees the RBER ×
//! `retry_rber_factor`^k), then senses `soft_reads` more times for a soft
//! decode that corrects up to `soft_bits`; beyond that the read is
//! uncorrectable. The drive times the extra reads on the die like any
//! read ([`crate::model::drive`]).
//!
//! Left out: per-page-type and per-wordline differences, temperature
//! acceleration of retention (the retention term is at the drive's use
//! temperature), the errors of reads by GC, folding and map loads (they
//! count toward read disturb but are not decoded), and error correlation
//! between the codewords of a page.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::model::nand::CellMode;

/// Nanoseconds in a (Julian) year.
pub const NS_PER_YEAR: f64 = 365.25 * 86_400.0 * 1e9;

/// The raw bit error rate of one cell mode (see
/// [`crate::spec::RberSpec`] for the formula).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RberModel {
    /// RBER just programmed, never cycled.
    pub fresh: f64,
    /// RBER just programmed at the rated cycles.
    pub at_rated_pe: f64,
    /// Power-law exponent in P/E cycles.
    pub wear_exponent: f64,
    /// Rated P/E cycles of the mode.
    pub rated_pe: f64,
    /// Relative increase after one year of retention.
    pub retention_per_year: f64,
    /// Exponent of the retention time in years.
    pub retention_exponent: f64,
    /// Relative increase per million reads since erase.
    pub disturb_per_million_reads: f64,
}

impl RberModel {
    /// RBER of a read of a block with `pe` erases in this mode,
    /// programmed `retention_ns` ago and read `reads` times since its
    /// erase (capped at 0.5, a coin toss).
    pub fn rber(&self, pe: u32, retention_ns: u64, reads: u32) -> f64 {
        let x = pe as f64 / self.rated_pe;
        let r0 = self.fresh + (self.at_rated_pe - self.fresh) * x.powf(self.wear_exponent);
        let years = retention_ns as f64 / NS_PER_YEAR;
        let retention = if years > 0.0 { self.retention_per_year * years.powf(self.retention_exponent) } else { 0.0 };
        let disturb = self.disturb_per_million_reads * reads as f64 * 1e-6;
        (r0 * (1.0 + retention + disturb)).min(0.5)
    }
}

/// The controller's decoder in the model's units.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EccModel {
    /// Data bits per codeword.
    pub codeword_bits: u32,
    /// Codewords per 4 KiB slot.
    pub codewords_per_slot: u32,
    /// Errors per codeword a hard decode corrects.
    pub hard_bits: u32,
    /// Read-retry steps before soft decoding.
    pub read_retry_steps: u32,
    /// RBER factor per retry step.
    pub retry_rber_factor: f64,
    /// Errors per codeword a soft decode corrects.
    pub soft_bits: u32,
    /// Extra sensing reads of a soft decode.
    pub soft_reads: u32,
    /// Soft decode time, ns.
    pub soft_decode_ns: u64,
    /// Seed of the error draws.
    pub seed: u64,
}

/// Bad blocks in the model's units.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BadBlockModel {
    /// Factory bad blocks per die.
    pub factory_per_die: u32,
    /// Fraction of blocks whose erase has failed by the rated cycles.
    pub erase_failed_by_rated: f64,
    /// Fraction of blocks that failed a program by the rated cycles.
    pub program_failed_by_rated: f64,
    /// Exponent of the failure probabilities in P/E cycles.
    pub fail_exponent: f64,
    /// Rated native P/E cycles.
    pub rated_pe: f64,
    /// Spare blocks per die (100% available spare).
    pub spare_blocks_per_die: u32,
    /// Available spare threshold, %.
    pub spare_threshold_percent: u32,
    /// Seed of the factory map and failure draws.
    pub seed: u64,
}

impl BadBlockModel {
    /// Probability that one operation fails on a block with `pe`
    /// native-equivalent erases, when a fraction `by_rated` of blocks
    /// fail it by the rated cycles: with one operation per cycle,
    /// `p(PE) = by_rated · (k + 1) / N · (PE / N)^k` sums over the cycles
    /// to `by_rated · (PE / N)^(k+1)` (N: rated cycles, k: the exponent).
    pub fn fail_probability(&self, by_rated: f64, pe: f64) -> f64 {
        let k = self.fail_exponent;
        (by_rated * (k + 1.0) / self.rated_pe * (pe / self.rated_pe).powf(k)).min(1.0)
    }
}

/// The media-reliability parameters of a drive.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaModel {
    /// Bit error rate per cell mode (`[native, SLC]`; `None`: no errors).
    pub rber: [Option<RberModel>; 2],
    /// The decoder (`None`: no error model).
    pub ecc: Option<EccModel>,
    /// Bad blocks (`None`: every block good forever).
    pub bad_blocks: Option<BadBlockModel>,
}

/// Error-correction counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MediaCounters {
    /// Bit errors corrected (in the decode that succeeded).
    pub corrected_bits: u64,
    /// Page reads decoded.
    pub decoded_reads: u64,
    /// Read-retry steps (each an extra NAND read).
    pub read_retries: u64,
    /// Soft decodes attempted.
    pub soft_decodes: u64,
    /// Reads that no decode corrected (media errors).
    pub uncorrectable_reads: u64,
    /// Blocks whose data was relocated after an uncorrectable read.
    pub relocated_blocks: u64,
}

/// What decoding one page read took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeOutcome {
    /// Read-retry steps (extra reads each followed by a hard decode).
    pub retries: u32,
    /// Whether a soft decode was attempted (`soft_reads` extra reads plus
    /// the soft decode time).
    pub soft: bool,
    /// Whether the data could not be corrected.
    pub uncorrectable: bool,
}

/// The error model at run time: parameters, generator and counters.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Media {
    rber: [Option<RberModel>; 2],
    /// The decoder.
    pub ecc: EccModel,
    rng: Pcg64Mcg,
    /// Counters.
    pub counters: MediaCounters,
}

impl Media {
    /// The error model of a drive (`None`: it has no `[controller.ecc]`).
    pub fn new(model: &MediaModel) -> Option<Media> {
        let ecc = model.ecc.clone()?;
        Some(Media {
            rber: model.rber.clone(),
            rng: Pcg64Mcg::seed_from_u64(ecc.seed),
            ecc,
            counters: MediaCounters::default(),
        })
    }

    /// Restart the error draws from `seed`.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = Pcg64Mcg::seed_from_u64(seed);
    }

    /// RBER of a read in `mode` (0 when the mode has no error model).
    #[inline]
    pub fn rber(&self, mode: CellMode, pe: u32, retention_ns: u64, reads: u32) -> f64 {
        self.rber[mode as usize].as_ref().map_or(0.0, |m| m.rber(pe, retention_ns, reads))
    }

    /// Decode a read of `slots` slots at raw bit error rate `rber`.
    pub fn decode(&mut self, rber: f64, slots: u32) -> DecodeOutcome {
        let codewords = slots * self.ecc.codewords_per_slot;
        let bits = self.ecc.codeword_bits as f64;
        self.counters.decoded_reads += 1;
        let mut out = DecodeOutcome::default();
        let (mut max, mut sum) = self.draw(rber * bits, codewords);
        let mut lambda = rber * bits;
        while max > self.ecc.hard_bits && out.retries < self.ecc.read_retry_steps {
            out.retries += 1;
            lambda *= self.ecc.retry_rber_factor;
            (max, sum) = self.draw(lambda, codewords);
        }
        self.counters.read_retries += out.retries as u64;
        if max > self.ecc.hard_bits {
            out.soft = true;
            self.counters.soft_decodes += 1;
            if max > self.ecc.soft_bits {
                out.uncorrectable = true;
                self.counters.uncorrectable_reads += 1;
                return out;
            }
        }
        self.counters.corrected_bits += sum;
        out
    }

    /// Errors of `codewords` codewords of mean `lambda` each: (most in one
    /// codeword, total).
    #[inline]
    fn draw(&mut self, lambda: f64, codewords: u32) -> (u32, u64) {
        let (mut max, mut sum) = (0u32, 0u64);
        for _ in 0..codewords {
            let e = self.poisson(lambda);
            max = max.max(e);
            sum += e as u64;
        }
        (max, sum)
    }

    /// A Poisson variate of mean `lambda`: by inversion below 30, by the
    /// normal approximation (continuity-corrected) above.
    #[inline]
    fn poisson(&mut self, lambda: f64) -> u32 {
        if lambda <= 0.0 {
            return 0;
        }
        if lambda < 30.0 {
            let u: f64 = self.rng.random();
            let mut p = (-lambda).exp();
            let mut cdf = p;
            let mut k = 0u32;
            while u > cdf && k < 1000 {
                k += 1;
                p *= lambda / k as f64;
                cdf += p;
            }
            k
        } else {
            let u1: f64 = 1.0 - self.rng.random::<f64>();
            let u2: f64 = self.rng.random();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (lambda + lambda.sqrt() * z + 0.5).max(0.0) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ecc() -> EccModel {
        EccModel {
            codeword_bits: 8192,
            codewords_per_slot: 4,
            hard_bits: 40,
            read_retry_steps: 3,
            retry_rber_factor: 0.5,
            soft_bits: 80,
            soft_reads: 2,
            soft_decode_ns: 10_000,
            seed: 7,
        }
    }

    #[test]
    fn poisson_mean_matches_lambda() {
        let model = MediaModel { rber: [None, None], ecc: Some(ecc()), bad_blocks: None };
        let mut m = Media::new(&model).unwrap();
        for lambda in [0.01, 2.5, 12.0, 45.0] {
            let n = 200_000;
            let sum: u64 = (0..n).map(|_| m.poisson(lambda) as u64).sum();
            let mean = sum as f64 / n as f64;
            let sd = (lambda / n as f64).sqrt();
            assert!((mean - lambda).abs() < 5.0 * sd + 1e-3 * lambda, "λ {lambda}: mean {mean}");
        }
    }

    #[test]
    fn rber_follows_the_formula() {
        let r = RberModel {
            fresh: 1e-6,
            at_rated_pe: 1e-3,
            wear_exponent: 2.0,
            rated_pe: 3000.0,
            retention_per_year: 4.0,
            retention_exponent: 0.5,
            disturb_per_million_reads: 1.0,
        };
        assert_eq!(r.rber(0, 0, 0), 1e-6);
        assert!((r.rber(3000, 0, 0) - 1e-3).abs() < 1e-12);
        let one_year = NS_PER_YEAR as u64;
        assert!((r.rber(3000, one_year, 0) - 5e-3).abs() < 1e-9);
        assert!((r.rber(3000, 0, 1_000_000) - 2e-3).abs() < 1e-9);
    }
}
