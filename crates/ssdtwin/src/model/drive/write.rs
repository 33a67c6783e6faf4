//! The write path of [`Drive`]: a write command's data admitted into the
//! write buffer in chunks (write-back) or programmed before it completes
//! (write-through); with ganged channels the member pages of a program
//! unit leaving the buffer for their dies' page registers; trim.

use super::{Command, Drive, IoError};
use crate::model::nand::SECTOR_BYTES;

impl Drive {
    /// A write command arriving at `t`; returns when it completes.
    pub(super) fn write(&mut self, cmd: Command, t: u64) -> u64 {
        if self.ftl.read_only() {
            self.counters.write_errors += 1;
            self.last_error = Some(IoError::ReadOnly);
            return t;
        }
        let (first, end) = self.lpn_range(cmd);
        if self.model.write_through {
            let link_done = self.host.to_device(t, cmd.len as u64);
            let mut done = link_done;
            self.ftl.write_run(first, end - first);
            self.ftl.flush_host();
            done = done.max(self.schedule_ops(t, link_done).0);
            return done;
        }
        // Write-back: admit in chunks that always fit beside one partially
        // filled program unit (one per active zone and one for the
        // conventional stream on a zoned drive, one per placement
        // identifier with FDP).
        let unit_bytes = self.model.buffered_unit_bytes();
        let partial_units = self.model.partial_units();
        let max_chunk = ((self.buffer.capacity() - partial_units * unit_bytes) / SECTOR_BYTES as u64 + 1) as u32;
        let ganged = self.model.spec.geometry.gang > 1;
        let mut at = t;
        let mut ack = t;
        let mut lpn = first;
        let mut link_left = cmd.len as u64;
        while lpn < end {
            let n = (end - lpn).min(max_chunk);
            let chunk_bytes = n as u64 * SECTOR_BYTES as u64;
            at = self.buffer.admit(at, chunk_bytes);
            let link_bytes = if lpn + n == end { link_left } else { chunk_bytes.min(link_left) };
            link_left -= link_bytes;
            let arrived = self.host.to_device(at, link_bytes.max(1));
            self.ftl.write_run(lpn, n);
            self.schedule_ops(at, arrived);
            if ganged {
                self.release_member_pages(arrived, lpn + n - 1);
            }
            ack = arrived;
            lpn += n;
        }
        ack
    }

    /// Ganged channels: the complete member pages of the host's partially
    /// filled program unit (whose last page written is `last_lpn`) leave
    /// the write buffer for their dies' page registers, streaming onto
    /// their channels, once the data has `arrived` and the registers are
    /// free (the gang's previous program has started). Their channel time
    /// is booked with the unit's program, which then releases only the
    /// rest of the unit.
    fn release_member_pages(&mut self, arrived: u64, last_lpn: u32) {
        let member = self.model.member_row_slots() * self.model.geometry.program_rows;
        let complete = (self.ftl.host_pending_slots() / member * member) as u64 * SECTOR_BYTES as u64;
        if complete > self.gang_released {
            let geo = &self.model.geometry;
            let die = geo.die_of_block(geo.block_of(self.ftl.lookup(last_lpn)));
            let at = arrived.max(self.flash.registers_free_at(die));
            self.buffer.release_at(at, complete - self.gang_released);
            self.gang_released = complete;
        }
    }

    /// A trim (deallocate) of the command's whole 4 KiB pages.
    pub(super) fn trim(&mut self, cmd: Command, t: u64) -> u64 {
        if self.ftl.read_only() {
            self.counters.write_errors += 1;
            self.last_error = Some(IoError::ReadOnly);
            return t;
        }
        // Only whole 4 KiB pages can be deallocated.
        let first = cmd.offset.div_ceil(SECTOR_BYTES as u64) as u32;
        let end = ((cmd.offset + cmd.len as u64) / SECTOR_BYTES as u64) as u32;
        for lpn in first..end {
            self.ftl.trim(lpn);
        }
        t
    }
}
