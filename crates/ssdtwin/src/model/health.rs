//! The drive's health log, as NVMe's SMART / Health Information page
//! reports it: data units read and written by the host, P/E cycles used per
//! cell mode, and the percentage of rated endurance used.
//!
//! Wear is counted per block in the mode the block was used in
//! (`BlockTable::erase_count`): a pSLC erase of a QLC block wears it far less
//! than a native one, so each mode has its own rated cycles
//! (`nand.native.pe_cycles`, `nand.slc.pe_cycles`) and a block's wear is
//! `native erases / native cycles + SLC erases / SLC cycles`. The
//! percentage used is the mean wear over all blocks × 100 (vendors compute
//! it in their own ways; the mean is what a perfectly wear-levelled drive
//! reports). With a thermal model the log also carries the composite
//! temperature and the minutes spent above the warning and critical
//! thresholds ([`crate::model::thermal`]). With a media model
//! ([`crate::model::media`]) it counts media errors (uncorrectable host
//! reads), and with bad-block management
//! ([`crate::model::ftl::badblocks`]) it reports the available spare, its
//! threshold and the critical warning bits NVMe defines for them (bit 0:
//! spare below threshold; bit 3: media read-only).

use serde::{Deserialize, Serialize};

use crate::model::drive::Drive;
use crate::model::nand::CellMode;

/// What the drive reports about its life so far (preconditioning included).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Health {
    /// NVMe data units read: thousands of 512-byte units, rounded up.
    pub data_units_read: u64,
    /// NVMe data units written: thousands of 512-byte units, rounded up.
    pub data_units_written: u64,
    /// Bytes the host wrote.
    pub host_bytes_written: u64,
    /// Bytes programmed into the NAND (host data, GC and fold moves, padding).
    pub nand_bytes_written: u64,
    /// Mean erases per block in native mode.
    pub pe_cycles_native_mean: f64,
    /// Most erases of one block in native mode.
    pub pe_cycles_native_max: u32,
    /// Mean erases per block in SLC mode.
    pub pe_cycles_slc_mean: f64,
    /// Most erases of one block in SLC mode.
    pub pe_cycles_slc_max: u32,
    /// Spread of wear over the blocks: the most erases of one block minus
    /// the fewest (both modes counted), what wear leveling keeps small.
    pub erase_count_spread: u32,
    /// Rated endurance used, % (`None`: the drive file rates no cycles).
    pub percentage_used: Option<f64>,
    /// Media and Data Integrity Errors: host reads that failed
    /// uncorrectable.
    pub media_errors: u64,
    /// Critical Warning bits: 0x01 available spare below threshold, 0x08
    /// media placed in read-only mode.
    pub critical_warning: u8,
    /// Available Spare, % (drives with `[nand.bad_blocks]` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_spare: Option<u32>,
    /// Available Spare Threshold, %.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_spare_threshold: Option<u32>,
    /// Bad blocks: from the factory and grown since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bad_blocks: Option<u64>,
    /// Composite temperature, °C (drives with `[thermal]` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub composite_temp_c: Option<f64>,
    /// Warning Composite Temperature Time: minutes at or above the warning
    /// threshold and below the critical one (NVMe counts whole minutes;
    /// drives with `[thermal]` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning_temp_time_min: Option<u64>,
    /// Critical Composite Temperature Time, minutes at or above the
    /// critical threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_temp_time_min: Option<u64>,
    /// Host Controlled Thermal Management (drives whose host set TMT1 and
    /// TMT2): Thermal Management Temperature 1 and 2 Transition Counts and
    /// Total Times (NVMe counts whole seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hctm: Option<HctmLog>,
}

/// The health log's four HCTM fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HctmLog {
    /// Times the drive entered the light throttle for TMT1.
    pub tmt1_transition_count: u64,
    /// Times it entered the heavy throttle for TMT2.
    pub tmt2_transition_count: u64,
    /// Seconds throttled for TMT1.
    pub tmt1_total_time_s: u64,
    /// Seconds throttled for TMT2.
    pub tmt2_total_time_s: u64,
}

impl Health {
    /// The health log of `drive` now.
    pub fn of(drive: &Drive) -> Health {
        let nand = &drive.model.spec.nand;
        let counts = &drive.ftl.blocks().erase_count;
        let blocks = counts[0].len().max(1) as f64;
        let mean = |m: CellMode| counts[m as usize].iter().map(|&e| e as f64).sum::<f64>() / blocks;
        let max = |m: CellMode| counts[m as usize].iter().copied().max().unwrap_or(0);
        let rated = [nand.native.pe_cycles, nand.slc.as_ref().and_then(|s| s.pe_cycles)];
        let percentage_used = rated[0].map(|native| {
            let slc = rated[1].unwrap_or(native) as f64;
            100.0 * (mean(CellMode::Native) / native as f64 + mean(CellMode::Slc) / slc)
        });
        let total = |b: usize| counts[0][b] + counts[1][b];
        let (lo, hi) = (0..counts[0].len()).fold((u32::MAX, 0), |(lo, hi), b| (lo.min(total(b)), hi.max(total(b))));
        let c = super::counters::Counters::of(drive);
        let units = |slots: u64| (slots * 8).div_ceil(1000);
        let bad = drive.ftl.bad_blocks();
        let spare = bad.map(|b| b.available_spare_percent());
        let threshold = bad.map(|b| b.threshold_percent());
        let low_spare = bad.is_some_and(|b| b.read_only());
        let critical_warning = if low_spare { 0x01 | 0x08 } else { 0 };
        Health {
            media_errors: drive.counters().media_errors,
            critical_warning,
            available_spare: spare,
            available_spare_threshold: threshold,
            bad_blocks: bad.map(|b| b.counters.factory_bad_blocks + b.counters.grown_bad_blocks),
            data_units_read: units(c.host_slots_read),
            data_units_written: units(c.host_slots_written),
            host_bytes_written: c.host_slots_written * 4096,
            nand_bytes_written: c.ftl_slots_programmed() * 4096,
            pe_cycles_native_mean: mean(CellMode::Native),
            pe_cycles_native_max: max(CellMode::Native),
            pe_cycles_slc_mean: mean(CellMode::Slc),
            pe_cycles_slc_max: max(CellMode::Slc),
            erase_count_spread: hi.saturating_sub(lo),
            percentage_used,
            composite_temp_c: drive.thermal.as_ref().map(|t| (t.composite_c() * 10.0).round() / 10.0),
            warning_temp_time_min: drive.thermal.as_ref().map(|t| t.counters.warning_temp_ns / 60_000_000_000),
            critical_temp_time_min: drive.thermal.as_ref().map(|t| t.counters.critical_temp_ns / 60_000_000_000),
            hctm: drive.thermal.as_ref().filter(|t| t.model.host_tmt_c.is_some()).map(|t| HctmLog {
                tmt1_transition_count: t.counters.tmt1_transitions,
                tmt2_transition_count: t.counters.tmt2_transitions,
                tmt1_total_time_s: t.counters.tmt1_ns / 1_000_000_000,
                tmt2_total_time_s: t.counters.tmt2_ns / 1_000_000_000,
            }),
        }
    }

    /// One line for a run summary.
    pub fn summary(&self) -> String {
        let used = self.percentage_used.map_or(String::new(), |p| format!("{p:.2}% of rated endurance used; "));
        let slc = if self.pe_cycles_slc_max > 0 {
            format!(", SLC {:.1} / {}", self.pe_cycles_slc_mean, self.pe_cycles_slc_max)
        } else {
            String::new()
        };
        let temp = match (self.composite_temp_c, self.warning_temp_time_min, self.critical_temp_time_min) {
            (Some(c), Some(w), Some(k)) => {
                format!("health: composite temperature {c:.1} °C; {w} min above warning, {k} min above critical\n")
            }
            _ => String::new(),
        };
        let temp = match self.hctm {
            Some(h) => {
                temp + &format!(
                    "health: host thermal management: {} s at TMT1 ({} transitions), {} s at TMT2 ({} transitions)\n",
                    h.tmt1_total_time_s, h.tmt1_transition_count, h.tmt2_total_time_s, h.tmt2_transition_count
                )
            }
            None => temp,
        };
        let spare = match (self.available_spare, self.available_spare_threshold) {
            (Some(s), Some(t)) => format!(
                "health: available spare {s}% (threshold {t}%), {} bad blocks, {} media errors{}\n",
                self.bad_blocks.unwrap_or(0),
                self.media_errors,
                if self.critical_warning & 0x08 != 0 { "; READ-ONLY (critical warning)" } else { "" }
            ),
            _ if self.media_errors > 0 => format!("health: {} media errors\n", self.media_errors),
            _ => String::new(),
        };
        temp + &spare
            + &format!(
                "health: {used}P/E cycles native {:.1} mean / {} max{slc}{}; host wrote {:.1} GB, NAND {:.1} GB\n",
                self.pe_cycles_native_mean,
                self.pe_cycles_native_max,
                if self.percentage_used.is_none() { " (cycles not rated)" } else { "" },
                self.host_bytes_written as f64 / 1e9,
                self.nand_bytes_written as f64 / 1e9
            )
    }
}
