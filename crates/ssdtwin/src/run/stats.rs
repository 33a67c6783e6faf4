//! Measurements of a run: latency histograms per direction, a per-second
//! time series, and the drive's counters.
//!
//! Latency is measured as fio's completion latency: from the moment the
//! workload submits a command (including any wait for a free slot in the
//! drive's queue) to its completion. Histograms are HDR histograms with 3
//! significant digits from 1 ns to one hour; the mean and maximum are
//! exact.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::model::drive::Drive;

/// Latency and volume of one direction (read, write or trim).
#[derive(Debug, Clone)]
pub struct DirStats {
    /// Completed commands.
    pub ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Latency histogram, ns.
    pub hist: Histogram<u64>,
    /// Exact sum of latencies, ns.
    pub lat_sum_ns: u128,
    /// Exact minimum latency, ns.
    pub lat_min_ns: u64,
    /// Exact maximum latency, ns.
    pub lat_max_ns: u64,
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats {
            ios: 0,
            bytes: 0,
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds"),
            lat_sum_ns: 0,
            lat_min_ns: u64::MAX,
            lat_max_ns: 0,
        }
    }
}

impl DirStats {
    /// Record one completed command.
    #[inline]
    pub fn record(&mut self, bytes: u64, lat_ns: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.hist.saturating_record(lat_ns.max(1));
        self.lat_sum_ns += lat_ns as u128;
        self.lat_min_ns = self.lat_min_ns.min(lat_ns);
        self.lat_max_ns = self.lat_max_ns.max(lat_ns);
    }

    /// Add another direction's measurements (for totals over phases).
    pub fn merge(&mut self, other: &DirStats) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.hist.add(&other.hist).expect("histograms have equal bounds");
        self.lat_sum_ns += other.lat_sum_ns;
        self.lat_min_ns = self.lat_min_ns.min(other.lat_min_ns);
        self.lat_max_ns = self.lat_max_ns.max(other.lat_max_ns);
    }

    /// Mean latency, ns.
    pub fn mean_ns(&self) -> f64 {
        if self.ios == 0 {
            0.0
        } else {
            self.lat_sum_ns as f64 / self.ios as f64
        }
    }

    /// Latency at percentile `p` (0–100), ns.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        if self.ios == 0 {
            0
        } else {
            self.hist.value_at_percentile(p)
        }
    }
}

/// One second of a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the phase started.
    pub t_s: u32,
    /// Reads completed in this second.
    pub read_ios: u32,
    /// Writes completed.
    pub write_ios: u32,
    /// Trims completed.
    pub trim_ios: u32,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Mean latency of the commands completed, ns.
    pub mean_lat_ns: u64,
    /// Maximum latency, ns.
    pub max_lat_ns: u64,
    /// Free blocks in the drive when the second began.
    pub free_blocks: u64,
    /// Cumulative write amplification when the second began.
    pub waf: f64,
    /// SLC cache capacity when the second began, bytes.
    pub slc_cache_bytes: u64,
    /// Bytes of SLC blocks in use when the second began.
    pub slc_used_bytes: u64,
    /// Valid data waiting in SLC to be folded when the second began, bytes.
    pub fold_backlog_bytes: u64,
    /// NAND programs in native mode issued during the second.
    pub nand_programs_native: u64,
    /// NAND programs in SLC mode issued during the second.
    pub nand_programs_slc: u64,
    /// Mean power drawn during the second, W (`None`: no power model).
    pub power_w: Option<f64>,
    /// Composite temperature when the second began, °C (drives with a
    /// thermal model only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temp_c: Option<f64>,
    /// Throttle level when the second began: 0 none, 1 warning, 2
    /// critical (drives with a thermal model only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle: Option<u8>,
    #[serde(skip)]
    lat_sum_ns: u128,
    /// Energy drawn from the clock's start to the second's start, J.
    #[serde(skip)]
    energy_j: Option<f64>,
}

impl Second {
    /// Commands completed in this second.
    pub fn ios(&self) -> u64 {
        self.read_ios as u64 + self.write_ios as u64 + self.trim_ios as u64
    }
}

/// Per-second time series of a phase.
#[derive(Debug, Clone, Default)]
pub struct TimeSeries {
    /// Virtual time at which the phase (and its first second) began, ns.
    pub start_ns: u64,
    /// Seconds, from the phase's start.
    pub seconds: Vec<Second>,
}

impl TimeSeries {
    /// Make sure the second holding `rel_ns` exists; returns its index.
    #[inline]
    pub fn touch(&mut self, rel_ns: u64, drive: &Drive) -> usize {
        let idx = (rel_ns / 1_000_000_000) as usize;
        while self.seconds.len() <= idx {
            // Programs are stored cumulatively here and turned into
            // per-second counts by `finish`.
            let p = &drive.flash.counters.programs;
            let began = self.start_ns + self.seconds.len() as u64 * 1_000_000_000;
            let temps = drive.temperatures();
            self.seconds.push(Second {
                temp_c: temps.map(|t| (t.composite_c * 100.0).round() / 100.0),
                throttle: temps.map(|t| t.throttle),
                energy_j: drive.energy_j(began),
                t_s: self.seconds.len() as u32,
                free_blocks: drive.ftl.blocks().total_free(),
                waf: drive.waf(),
                slc_cache_bytes: drive.ftl.slc_cache_bytes(),
                slc_used_bytes: drive.ftl.slc_used_bytes(),
                fold_backlog_bytes: drive.ftl.fold_backlog_bytes(),
                nand_programs_native: p[0],
                nand_programs_slc: p[1],
                ..Second::default()
            });
        }
        idx
    }

    /// Record a completion `rel_ns` after the phase start.
    #[inline]
    pub fn record(&mut self, rel_ns: u64, kind: usize, bytes: u64, lat_ns: u64, drive: &Drive) {
        let i = self.touch(rel_ns, drive);
        let s = &mut self.seconds[i];
        match kind {
            0 => {
                s.read_ios += 1;
                s.read_bytes += bytes;
            }
            1 => {
                s.write_ios += 1;
                s.write_bytes += bytes;
            }
            _ => s.trim_ios += 1,
        }
        s.lat_sum_ns += lat_ns as u128;
        s.max_lat_ns = s.max_lat_ns.max(lat_ns);
    }

    /// Compute per-second means and counts (call once at the end of the
    /// phase, at `end_ns`, with the drive as it is then).
    pub fn finish(&mut self, drive: &Drive, end_ns: u64) {
        let end = drive.flash.counters.programs;
        let end_energy = drive.energy_j(end_ns);
        for i in 0..self.seconds.len() {
            let (next_native, next_slc) = match self.seconds.get(i + 1) {
                Some(n) => (n.nand_programs_native, n.nand_programs_slc),
                None => (end[0], end[1]),
            };
            let began = self.start_ns + i as u64 * 1_000_000_000;
            let (next_energy, len_ns) = match self.seconds.get(i + 1) {
                Some(n) => (n.energy_j, 1_000_000_000),
                None => (end_energy, end_ns.saturating_sub(began).min(1_000_000_000)),
            };
            let s = &mut self.seconds[i];
            s.power_w = match (s.energy_j, next_energy) {
                (Some(a), Some(b)) if len_ns > 0 => Some((b - a) / (len_ns as f64 * 1e-9)),
                _ => None,
            };
            s.nand_programs_native = next_native - s.nand_programs_native;
            s.nand_programs_slc = next_slc - s.nand_programs_slc;
            let n = s.ios();
            s.mean_lat_ns = if n == 0 { 0 } else { (s.lat_sum_ns / n as u128) as u64 };
        }
    }
}

/// Everything the drive counts, as one snapshot.
macro_rules! counters {
    ($($(#[doc = $doc:literal])* $field:ident),* $(,)?) => {
        /// Everything the drive counts, as one snapshot.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
        pub struct Counters {
            $($(#[doc = $doc])* pub $field: u64,)*
        }

        impl Counters {
            /// Counts since `earlier`.
            pub fn since(&self, earlier: &Counters) -> Counters {
                Counters { $($field: self.$field - earlier.$field,)* }
            }

            /// Sum of two sets of counts.
            pub fn plus(&self, other: &Counters) -> Counters {
                Counters { $($field: self.$field + other.$field,)* }
            }
        }
    };
}

counters! {
    /// Host slots (4 KiB) read.
    host_slots_read,
    /// Host slots (4 KiB) written to the FTL.
    host_slots_written,
    /// NAND page reads (multi-plane operations) in native mode.
    nand_reads_native,
    /// NAND page reads in SLC mode.
    nand_reads_slc,
    /// NAND program operations in native mode.
    nand_programs_native,
    /// NAND program operations in SLC mode.
    nand_programs_slc,
    /// Block erases in native mode.
    nand_erases_native,
    /// Block erases in SLC mode.
    nand_erases_slc,
    /// 4 KiB slots programmed (all modes, including padding).
    nand_slots_programmed,
    /// 4 KiB slots read from the array.
    nand_slots_read,
    /// Slots moved by GC.
    gc_slots_moved,
    /// Blocks reclaimed by GC.
    gc_blocks,
    /// Slots programmed as padding.
    padding_slots,
    /// Slots folded from SLC into native blocks.
    fold_slots_moved,
    /// SLC blocks folded.
    fold_blocks,
    /// Host slots written into SLC.
    host_slots_to_slc,
    /// Slots trimmed that held data.
    trimmed_slots,
    /// 4 KiB reads served from the write buffer.
    buffer_read_hits,
    /// 4 KiB reads of unmapped pages.
    unmapped_reads,
    /// Time host writes waited for write-buffer space, ns.
    buffer_blocked_ns,
    /// Hybrid mapping: switch merges (a log block became a data block).
    switch_merges,
    /// Hybrid mapping: partial merges (a log block's in-order prefix
    /// completed by copying the rest).
    partial_merges,
    /// Hybrid mapping: full merges (every valid page copied to a new block).
    full_merges,
    /// Hybrid mapping: 4 KiB slots copied by merges.
    merge_slots_copied,
    /// Static wear leveling: blocks of cold data moved off young blocks.
    wl_blocks,
    /// Static wear leveling: slots moved (included in `gc_slots_moved`).
    wl_slots_moved,
    /// Map cache: lookups that found their translation page cached.
    map_hits,
    /// Map cache: lookups that did not.
    map_misses,
    /// Map cache: translation pages read from flash.
    map_pages_read,
    /// Map cache: translation pages programmed (write-backs, map GC).
    map_pages_programmed,
    /// ECC: bit errors corrected in host reads.
    corrected_bits,
    /// ECC: host page reads decoded by the error model.
    decoded_reads,
    /// ECC: read-retry steps (each an extra NAND read).
    read_retries,
    /// ECC: soft decodes (after every retry step failed).
    soft_decodes,
    /// ECC: host reads no decode corrected (media errors).
    uncorrectable_reads,
    /// Blocks whose data was relocated after an uncorrectable read.
    relocated_blocks,
    /// Program operations that failed (their data rewritten elsewhere).
    program_failures,
    /// Erases that failed.
    erase_failures,
    /// Blocks retired after a failure (grown bad blocks).
    grown_bad_blocks,
    /// Host writes and trims refused because the drive is read-only.
    write_errors,
}

impl Counters {
    /// Snapshot of a drive's counters.
    pub fn of(drive: &Drive) -> Counters {
        let f = &drive.flash.counters;
        let t = &drive.ftl.counters();
        let m = drive.ftl.map_counters().unwrap_or_default();
        let e = drive.media.as_ref().map(|m| m.counters).unwrap_or_default();
        let b = drive.ftl.bad_blocks().map(|b| b.counters).unwrap_or_default();
        Counters {
            host_slots_read: drive.counters.host_slots_read,
            host_slots_written: t.host_slots_written,
            nand_reads_native: f.reads[0],
            nand_reads_slc: f.reads[1],
            nand_programs_native: f.programs[0],
            nand_programs_slc: f.programs[1],
            nand_erases_native: f.erases[0],
            nand_erases_slc: f.erases[1],
            nand_slots_programmed: f.slots_programmed[0] + f.slots_programmed[1],
            nand_slots_read: f.slots_read[0] + f.slots_read[1],
            gc_slots_moved: t.gc_slots_moved,
            gc_blocks: t.gc_blocks,
            padding_slots: t.padding_slots,
            fold_slots_moved: t.fold_slots_moved,
            fold_blocks: t.fold_blocks,
            host_slots_to_slc: t.host_slots_to_slc,
            trimmed_slots: t.trimmed_slots,
            buffer_read_hits: drive.counters.buffer_read_hits,
            unmapped_reads: drive.counters.unmapped_reads,
            buffer_blocked_ns: drive.buffer.blocked_ns,
            switch_merges: t.switch_merges,
            partial_merges: t.partial_merges,
            full_merges: t.full_merges,
            merge_slots_copied: t.merge_slots_copied,
            wl_blocks: t.wl_blocks,
            wl_slots_moved: t.wl_slots_moved,
            map_hits: m.hits,
            map_misses: m.misses,
            map_pages_read: m.pages_read,
            map_pages_programmed: m.pages_programmed,
            corrected_bits: e.corrected_bits,
            decoded_reads: e.decoded_reads,
            read_retries: e.read_retries,
            soft_decodes: e.soft_decodes,
            uncorrectable_reads: e.uncorrectable_reads,
            relocated_blocks: t.relocated_blocks,
            program_failures: b.program_failures,
            erase_failures: b.erase_failures,
            grown_bad_blocks: b.grown_bad_blocks,
            write_errors: drive.counters.write_errors,
        }
    }

    /// Slots the FTL had programmed: host data, GC and fold moves, merge
    /// copies, padding and translation pages (counted by the FTL, so
    /// untimed preconditioning counts too).
    pub fn ftl_slots_programmed(&self) -> u64 {
        self.host_slots_written
            + self.gc_slots_moved
            + self.fold_slots_moved
            + self.merge_slots_copied
            + self.padding_slots
            + self.map_pages_programmed
    }

    /// Share of map lookups that found their translation page cached
    /// (`None` without lookups: no cache, or no I/O).
    pub fn map_hit_rate(&self) -> Option<f64> {
        let n = self.map_hits + self.map_misses;
        (n > 0).then(|| self.map_hits as f64 / n as f64)
    }

    /// Write amplification: slots programmed / host slots written.
    pub fn waf(&self) -> f64 {
        if self.host_slots_written == 0 {
            0.0
        } else {
            self.ftl_slots_programmed() as f64 / self.host_slots_written as f64
        }
    }
}
