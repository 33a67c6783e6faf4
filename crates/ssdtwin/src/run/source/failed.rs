//! A job's command that the drive failed, as fio treats it
//! ([`crate::run::io_errors`]): it is not counted in the job's
//! statistics; a non-fatal error (`continue_on_error`, `ignore_error`)
//! adds to the job's error count and the job goes on, any other ends
//! the job with the error number.
//!
//! With `zonemode=zbd` and `recover_zbd_write_error`, a failed write is
//! followed by fio's recovery (zbd.c `zbd_recover_write_error`, as
//! `zbd_queue_io` runs it for a synchronous engine): the job reads the
//! zone's write pointer (Zone Management Receive) and, when the pointer
//! lies at or before the failed write's end, writes what lies between
//! them (`zbd_move_zone_wp`: a plain write outside the job's statistics)
//! and waits for it. A refused recovery write ends the job ("move wp
//! failed"). The twin's zbd jobs place writes at the drive's write
//! pointers, which is fio's view after a failed write with a
//! synchronous engine (its pointer moves only on success); an
//! asynchronous engine's pointer, moved when the write was queued, is
//! not modelled, nor the wait for the zone's other writes in flight.

use super::Source;
use crate::model::drive::{Command, IoError, IoKind};
use crate::model::ftl::zones::ZoneState;
use crate::run::device::{Completion, Device};
use crate::run::io_errors::{errno_of, ErrorClass};

/// The NVMe status code (type and code) of `e`.
fn status_code(e: IoError) -> u16 {
    match e {
        // Media and Data Integrity Errors, Unrecovered Read Error.
        IoError::Media => 0x281,
        // Generic, Namespace is Write Protected.
        IoError::ReadOnly => 0x020,
        IoError::Zone(s) => s.code(),
    }
}

/// A job's error count when it goes on after errors (fio's
/// `total_err_count` and `first_error`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorCount {
    /// Errors the job went on after (and the one that ended it).
    pub total: u64,
    /// The first error's number.
    pub first: i32,
}

impl Source {
    /// Command `c` of the job failed with `e`.
    #[cold]
    pub(super) fn on_failed(&mut self, c: &Completion, e: IoError) {
        let errno = errno_of(e);
        let dir = ["read", "write", "trim"][c.cmd.kind as usize];
        let class = ErrorClass::of(c.cmd.kind == IoKind::Read, errno);
        let on_error = &self.spec.on_error;
        let counted = on_error.any();
        if counted {
            self.errors.total += 1;
            if self.errors.total == 1 {
                self.errors.first = errno;
            }
        }
        if c.cmd.kind == IoKind::Write && self.zbd.as_ref().is_some_and(|z| z.recovers_write_errors()) {
            self.zbd_retry = Some(c.cmd);
        }
        if !on_error.non_fatal(class, errno) {
            let why = format!(
                "{} (NVMe status {:#05x}) on {dir} of {} bytes at offset {}",
                e.name(),
                status_code(e),
                c.cmd.len,
                c.cmd.offset
            );
            self.fail(errno, why);
        }
    }

    /// After a failed zbd write with `recover_zbd_write_error`: move the
    /// zone's write pointer to the failed write's end, and wait for it.
    #[cold]
    pub(super) fn zbd_recover(&mut self, dev: &mut Device, failed: Command) {
        let z = self.zbd.as_ref().expect("a zbd job");
        let Some(zone) = z.zone_with_wp(failed.offset, dev.drive()) else { return };
        let (start, wp) = (zone.start, zone.wp);
        let end = failed.offset + failed.len as u64;
        if wp < start || wp >= end || zone.state == ZoneState::Full {
            // fio: "unexpected write pointer position" (or nothing to move).
            return;
        }
        let retry = Command { offset: wp, len: (end - wp) as u32, ..failed };
        let done = dev.write_outside_jobs(retry);
        if let Some(e) = dev.drive().last_error() {
            self.fail(errno_of(e), format!("move wp failed: writing {} bytes at offset {wp}: {}", retry.len, e.name()));
            return;
        }
        // The job's next submission waits for it (`zbd_command`).
        self.zbd_blocked_until = self.zbd_blocked_until.max(done);
    }
}
