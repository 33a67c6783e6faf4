//! fio's `num_range`: a trim of several ranges in one command (fio's
//! io_u.c `fill_multi_range_io_u`: each range the job's next offset and
//! length, as separate trims would have them, until `num_range` ranges
//! or the job's bytes are done; the command's length is their sum). The
//! drive deallocates them in one Dataset Management command
//! ([`crate::model::drive::Drive::submit_trims`]). Left out: fio's
//! refusal of engines without multi-range trim (the twin is the device).

use super::Source;
use crate::model::drive::{Command, IoKind};
use crate::run::device::Device;

/// fio's `MAX_TRIM_RANGE`.
const MAX_RANGES: usize = 256;

impl Source {
    /// Submit trim `first` with the job's next ranges in one command now;
    /// returns the bytes it trims.
    pub(super) fn submit_ranges(&mut self, dev: &mut Device, first: Command, tag: u32) -> u32 {
        let mut ranges = [first; MAX_RANGES];
        let mut n = 1;
        let mut total = first.len as u64;
        let want = (self.spec.num_range as usize).min(MAX_RANGES);
        while n < want && self.issued + total < self.byte_limit {
            let next = self.gen.next_command();
            debug_assert_eq!(next.kind, IoKind::Trim, "num_range > 1 is refused with trimwrite");
            ranges[n] = next;
            total += next.len as u64;
            n += 1;
        }
        dev.submit_trims(&ranges[..n], tag);
        total.min(u32::MAX as u64) as u32
    }
}
