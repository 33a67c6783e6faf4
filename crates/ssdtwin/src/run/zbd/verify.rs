//! fio's `zonemode=zbd` rules for a job that verifies (`verify` other
//! than `none`), as fio 3.42's zbd.c has them: nothing the job will read
//! back may be overwritten, so
//!
//! - before a write job's first write, and before each loop's, the zones
//!   of its range that hold data are reset (`zbd_file_reset` →
//!   `zbd_reset_zones`), unless writes are still to be read back;
//! - a zone with less than a block left is never taken as a write zone
//!   (`zbd_write_zone_get`), so a full zone is not reset and rewritten;
//!   a random job whose write zones all have less than a block left ends
//!   rather than finish one (`zbd_convert_to_write_zone`);
//! - a write that `zone_reset_frequency` would have reset a zone for is
//!   replaced by a read-back of the oldest write not yet verified while
//!   there is one (`get_next_verify` in `zbd_adjust_block`;
//!   [`super::Next::VerifyFirst`]), the zone's reset kept due until the
//!   log is empty (fio's `reset_zone`).
//!
//! The read-backs themselves are [`crate::run::source`]'s verify phase:
//! fio sends verify reads where they were written (`zbd_adjust_block`
//! accepts reads while `TD_VERIFYING`).

use super::{ZbdJob, W};
use crate::model::drive::Drive;
use crate::model::ftl::zones::{ZoneAction, Zones};

impl ZbdJob {
    /// Whether a verifying job must leave zone `z` alone as a write zone:
    /// a sequential zone without a block's room left (fio's
    /// `zbd_zone_full`).
    pub(super) fn verify_keeps(&self, z: u32, zones: &Zones) -> bool {
        z >= self.conventional && self.remainder(z, zones) < self.min_bs[W]
    }

    /// Reset every zone of the range that holds data before the job
    /// writes (fio's `zbd_reset_zones`; each leaves the write zones).
    /// The resets are sent before the job's next command is chosen.
    pub(super) fn reset_range(&mut self, zones: &Zones) {
        for z in self.min_zone.max(self.conventional)..self.max_zone {
            let data = self.fio_wp(z, zones);
            if data == 0 {
                continue;
            }
            self.ops.push((ZoneAction::Reset, self.zone_start(z)));
            self.valid -= data.min(self.valid);
            self.resets += 1;
            self.finished[(z - self.min_zone) as usize] = false;
            self.write_zones.retain(|&x| x != z);
        }
    }

    /// A verifying job's next loop begins on `drive`, its writes read
    /// back: fio's `fio_file_reset` (positions back to the range's start,
    /// the reset count drawn again, the zones with data reset).
    pub fn new_loop(&mut self, drive: &Drive) {
        self.pos = [self.start; 3];
        self.range_over = false;
        self.wrote = false;
        self.reset_write_cnt();
        if let Some(zones) = super::zones_of(drive) {
            self.reset_range(zones);
        }
    }

    /// Whether zone management commands are due before the job's next
    /// command is even chosen (a verifying job's resets of its range).
    #[inline]
    pub fn setup_due(&self) -> bool {
        self.verify && self.has_ops()
    }
}
