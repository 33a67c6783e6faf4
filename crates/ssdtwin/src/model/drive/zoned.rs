//! The zone commands of a drive with a zoned namespace (`[zns]`): the
//! checks every read, write and deallocate goes through before it reaches
//! the FTL, Zone Append, and Zone Management Send and Receive. The zone
//! rules and states are [`crate::model::ftl::zones`], the placement
//! [`crate::model::ftl::zns`].
//!
//! Timing: a refused command costs its controller time only; a Zone
//! Management Send costs a controller core's command overhead, and a reset
//! completes when the zone's blocks are erased (dies in parallel, each
//! erasing its blocks of the zone one after another, after the work already
//! booked on it), a finish when its padding program is done. Report Zones
//! is a read of the controller's zone table, timed as a command's
//! overhead. The namespace is formatted with 4 KiB LBAs: commands must be
//! aligned to them.

use super::{Command, Drive, IoError, IoKind};
use crate::model::ftl::zones::{ZoneAction, ZoneDescriptor, ZoneState, ZoneStatus};
use crate::model::nand::SECTOR_BYTES;

const SECTOR: u64 = SECTOR_BYTES as u64;

impl Drive {
    /// Whether the drive has a zoned namespace.
    #[inline]
    pub fn is_zoned(&self) -> bool {
        self.model.zns.is_some()
    }

    /// A zoned namespace's check of a host command (`append`: a Zone
    /// Append, whose LBA the drive picks and writes into `cmd.offset`).
    /// Writes and appends move the zone's write pointer. `Err`: the NVMe
    /// status refusing it (the command then does nothing). Inlined into
    /// the submission for reads; writes, appends and deallocates take
    /// [`Drive::zone_update`].
    #[inline]
    pub(super) fn zone_check(&mut self, cmd: &mut Command, append: bool) -> Result<(), ZoneStatus> {
        if (cmd.offset | cmd.len as u64) % SECTOR != 0 || cmd.len == 0 {
            return Err(ZoneStatus::InvalidField);
        }
        let first = cmd.offset / SECTOR;
        if first > u32::MAX as u64 {
            return Err(ZoneStatus::LbaOutOfRange);
        }
        let (first, n) = (first as u32, cmd.len / SECTOR_BYTES);
        match cmd.kind {
            IoKind::Read => self.ftl.zone_check_read(first, n),
            _ => self.zone_update(cmd, first, n, append),
        }
    }

    /// [`Drive::zone_check`] of a write, append or deallocate of `n`
    /// pages at page `first`.
    #[inline(never)]
    fn zone_update(&mut self, cmd: &mut Command, first: u32, n: u32, append: bool) -> Result<(), ZoneStatus> {
        match (cmd.kind, append) {
            (IoKind::Write, true) => {
                let at = self.ftl.zone_append(first, n)?;
                cmd.offset = at as u64 * SECTOR;
                Ok(())
            }
            (IoKind::Write, false) => self.ftl.zone_write(first, n),
            (IoKind::Read, _) => self.ftl.zone_check_read(first, n),
            (IoKind::Trim, _) => self.ftl.zone_check_trim(first, n),
        }
    }

    /// Submit a Zone Append of `cmd.len` bytes to the zone starting at
    /// byte `cmd.offset` at time `t`: the drive writes the data at the
    /// zone's write pointer. Returns its completion time and the byte
    /// offset it was written at (see [`Drive::last_error`] for whether it
    /// succeeded; the offset is `cmd.offset` when it failed).
    pub fn submit_append(&mut self, cmd: Command, t: u64) -> (u64, u64) {
        let mut cmd = cmd;
        let done = self.submit_inner(&mut cmd, t, true);
        (done, cmd.offset)
    }

    /// Zone Management Send at time `t`: `action` on the zone starting at
    /// byte `zslba` (`None`: Select All). Returns its completion time; a
    /// refused command sets [`Drive::last_error`].
    pub fn zone_send(&mut self, action: ZoneAction, zslba: Option<u64>, t: u64) -> u64 {
        self.last_error = None;
        self.last_t = t;
        let entered = self.host.admit(t);
        let ready = self.cores.process(entered);
        let lba = match zslba {
            Some(b) if b % SECTOR != 0 || b / SECTOR > u32::MAX as u64 => Err(ZoneStatus::InvalidField),
            Some(b) => Ok(Some((b / SECTOR) as u32)),
            None => Ok(None),
        };
        let done = match lba.and_then(|lba| self.ftl.zone_send(action, lba)) {
            Err(s) => {
                self.last_error = Some(IoError::Zone(s));
                ready
            }
            Ok(dropped) => {
                self.buffer.discard(dropped as u64 * SECTOR);
                self.erase_done = 0;
                let (programmed, _) = self.schedule_ops(ready, ready);
                ready.max(programmed).max(self.erase_done)
            }
        };
        self.host.occupy_until(done);
        self.power.busy(t, done);
        done
    }

    /// Turn zone `z` read-only or offline, as a drive does itself when
    /// the zone's media fails (fault injection for tests and what-if
    /// studies; nothing in the model does it on its own).
    pub fn set_zone_condition(&mut self, z: u32, state: ZoneState) -> Result<(), ZoneStatus> {
        self.ftl.set_zone_condition(z, state)
    }

    /// Zone Management Receive (Report Zones): every zone's descriptor, in
    /// 4 KiB pages (empty for a conventional namespace).
    pub fn report_zones(&self) -> Vec<ZoneDescriptor> {
        match self.ftl.zoned() {
            Some(z) => (0..z.zones().model().zones).map(|i| z.zones().descriptor(i)).collect(),
            None => Vec::new(),
        }
    }
}
