//! Everything the drive counts, as one snapshot ([`Counters`]): host
//! traffic, NAND operations by cell mode, FTL moves (GC, folds, merges,
//! wear leveling), the map cache, ECC and bad blocks, and write
//! amplification computed from them. Gathered from the parts' own
//! counters when asked; keeps no state of its own. Leaves out time:
//! rates and latencies are the run's statistics (`run/stats.rs`).

use serde::{Deserialize, Serialize};

use crate::model::drive::Drive;

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
        let f = &drive.flash().counters;
        let t = &drive.ftl.counters();
        let m = drive.ftl.map_counters().unwrap_or_default();
        let e = drive.media().map(|m| m.counters).unwrap_or_default();
        let b = drive.ftl.bad_blocks().map(|b| b.counters).unwrap_or_default();
        Counters {
            host_slots_read: drive.counters().host_slots_read,
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
            buffer_read_hits: drive.counters().buffer_read_hits,
            unmapped_reads: drive.counters().unmapped_reads,
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
            write_errors: drive.counters().write_errors,
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
