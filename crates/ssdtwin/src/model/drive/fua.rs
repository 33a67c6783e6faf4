//! Writes with Force Unit Access (NVMe Write with FUA set, the FUA bit of
//! ATA WRITE FPDMA QUEUED): the drive completes the write only once its
//! data is on non-volatile media. Linux sends every direct write of a
//! file opened with O_SYNC or O_DSYNC with FUA (block/fops.c
//! `dio_bio_write_op`); fio's `sync` option opens it so.
//!
//! On a write-back drive the twin acknowledges a FUA write as it does a
//! Flush issued the instant the write's data is in the buffer
//! ([`Drive::flush`] without a command of its own: no second admission,
//! no second command overhead): the host stream's partial program unit is
//! programmed (padded), and the write completes when every buffered write
//! before it has left the buffer. On a write-through drive a write is
//! durable when acknowledged already, so FUA changes nothing.
//! Left out: a drive that commits only the FUA write's own pages (the
//! twin's buffer drains in order, so earlier writes go first anyway) and
//! FUA reads (a read with FUA may not be served from the write buffer).

use super::{Command, Drive, IoKind};

impl Drive {
    /// [`Drive::submit`] of a command with FUA set (a read or trim ignores
    /// it); returns its completion time.
    pub fn submit_fua(&mut self, cmd: Command, t: u64) -> u64 {
        let ack = self.submit(cmd, t);
        if cmd.kind != IoKind::Write || self.model.write_through || self.last_error.is_some() {
            return ack;
        }
        self.ftl.flush_host();
        let (last, _) = self.schedule_ops(ack, ack);
        let done = last.max(self.buffer.drained_at(ack));
        self.host.occupy_until(done);
        self.power.busy(t, done);
        done
    }
}
