//! A `zonemode=zbd` job's commands, as [`crate::run::zbd`] places them,
//! and the zone management commands fio sends itself before some of them
//! (resets and finishes): as fio does, the job first waits for its
//! commands in flight to complete (`io_u_quiesce`), then sends them and
//! waits for them (fio's synchronous `blkzoned_reset_wp` and
//! `blkzoned_finish_zone`), then goes on. Left out: fio's wait for
//! the other jobs' writes to a zone it locks.

use super::{Source, EIO};
use crate::model::drive::{Command, IoKind};
use crate::run::device::Device;
use crate::run::driver::{Timer, TimerKind};
use crate::run::workload::generator::LOOKAHEAD;
use crate::run::zbd::Next;

/// How a zbd job's command reaches the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZbdSubmit {
    /// As it is (a read, a write, a trim of a conventional zone).
    Plain,
    /// A write as a Zone Append.
    Append,
    /// A trim as the reset of its zone.
    ZoneReset,
    /// A trim of a zone with nothing written: fio completes it without a
    /// command to the drive.
    AtOnce,
}

impl ZbdSubmit {
    fn of(cmd: Command, append: bool) -> ZbdSubmit {
        if append && cmd.kind == IoKind::Write {
            ZbdSubmit::Append
        } else {
            ZbdSubmit::Plain
        }
    }
}

impl Source {
    /// The next command of a zbd job and how it is submitted
    /// (`None`: nothing submitted now — the job waits for its commands in
    /// flight or for its zone management commands (a timer set), or has
    /// nothing left and stops).
    #[cold]
    pub(super) fn zbd_command(&mut self, dev: &mut Device, me: u32) -> Option<(Command, ZbdSubmit)> {
        if self.zbd_quiesce {
            return None;
        }
        let now = dev.now();
        if now < self.zbd_blocked_until {
            self.pending += 1;
            Timer { source: me, kind: TimerKind::Submit }.set(dev, self.zbd_blocked_until);
            return None;
        }
        let z = self.zbd.as_mut().expect("a zbd job");
        let append = z.appends();
        if let Some(c) = self.zbd_ready.take() {
            return Some((c, ZbdSubmit::of(c, append)));
        }
        if z.setup_due() {
            // A verifying job's zones are reset before it writes.
            if self.outstanding > 0 {
                self.zbd_quiesce = true;
                return None;
            }
            self.zbd_manage(dev, me);
            if self.error != 0 || dev.now() < self.zbd_blocked_until {
                return None;
            }
        }
        let z = self.zbd.as_mut().expect("a zbd job");
        let raw = self.gen.next_command();
        // The submission warms the map line of the generator's command 16
        // ahead; a read the zbd fold will move elsewhere warms that line
        // too (reads over conventional zones: a sequential zone has no
        // page map entry).
        if z.folds_ahead() {
            let ahead = self.gen.ahead(LOOKAHEAD);
            let moved = z.ahead_hint(ahead, dev.drive());
            if moved.offset != ahead.offset {
                dev.drive().prefetch_map(moved);
            }
        }
        let left = self.byte_limit.saturating_sub(self.issued);
        let logged = self.verify.as_ref().is_some_and(|v| v.has_logged());
        match z.next(raw, dev.drive(), left, logged) {
            Next::Eof => {
                // A zone finished on the way to the end is finished all
                // the same.
                if z.has_ops() {
                    if let Err(why) = z.manage(dev) {
                        self.fail(EIO, why);
                    }
                }
                if self.verify.is_some() {
                    // The files are done (not the job stopped): the
                    // writes end here and their read-back follows.
                    self.byte_limit = self.issued;
                } else {
                    self.stop = true;
                }
                None
            }
            Next::VerifyFirst => {
                // The offset drawn is spent (fio marks it in its random
                // map before zbd_adjust_block turns the write into a
                // read-back).
                self.issued += raw.len as u64;
                self.read_back_now(dev, me);
                None
            }
            Next::Io { cmd, manage } => {
                if manage {
                    self.zbd_ready = Some(cmd);
                    if self.outstanding > 0 {
                        self.zbd_quiesce = true;
                        return None;
                    }
                    self.zbd_manage(dev, me);
                    let c = self.zbd_ready.filter(|_| dev.now() >= self.zbd_blocked_until)?;
                    self.zbd_ready = None;
                    return Some((c, ZbdSubmit::of(c, append)));
                }
                Some((cmd, ZbdSubmit::of(cmd, append)))
            }
            Next::ZoneReset { cmd, reset } => Some((cmd, if reset { ZbdSubmit::ZoneReset } else { ZbdSubmit::AtOnce })),
        }
    }

    /// Submit the Zone Append `cmd` now; a verifying job logs it where
    /// the drive wrote it. Returns when it completes.
    #[cold]
    #[inline(never)]
    pub(super) fn submit_append(&mut self, dev: &mut Device, cmd: Command, tag: u32) -> u64 {
        let (done, at) = dev.submit_append(cmd, tag);
        if let Some(v) = self.verify.as_mut() {
            v.written(Command { offset: at, ..cmd });
        }
        done
    }

    /// Send the zone management commands now and wait for them (a timer
    /// when they take time); a refusal ends the job.
    fn zbd_manage(&mut self, dev: &mut Device, me: u32) {
        let now = dev.now();
        match self.zbd.as_mut().expect("a zbd job").manage(dev) {
            Err(why) => {
                self.zbd_ready = None;
                self.fail(EIO, why);
            }
            Ok(done) if done > now => {
                self.zbd_blocked_until = done;
                self.pending += 1;
                Timer { source: me, kind: TimerKind::Submit }.set(dev, done);
            }
            Ok(_) => {}
        }
    }

    /// Its last command in flight completed while it waited to send zone
    /// management commands: send them and fill the queue again.
    #[cold]
    pub(super) fn zbd_quiesced(&mut self, dev: &mut Device, me: u32) {
        self.zbd_quiesce = false;
        self.zbd_manage(dev, me);
        self.fill(dev, me);
    }
}
