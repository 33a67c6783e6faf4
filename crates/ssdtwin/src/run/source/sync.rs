//! A job's flushes at fio's points (`fsync`, `fdatasync`, `end_fsync`,
//! `fsync_on_close`) and its FUA writes (`sync`): what a
//! [`Source`] does with its [`Syncs`].
//!
//! As fio (io_u.c `get_rw_ddir`, ioengines.c `td_io_queue`): once the
//! N-th write has been issued, the next command the job would issue is a
//! sync instead — it takes one of the job's `iodepth` slots and is
//! queued beside the writes still in flight (fio's asynchronous engines
//! do not wait for them; its synchronous ones have none), and a write
//! follows it. The job's byte, command and time limits are the writes'
//! (a sync moves no data), so no sync follows the last write. On a block
//! device the sync is the drive's FLUSH ([`Device::flush`]). Its
//! latency, issue to completion, is the job's `sync` statistics after
//! the ramp (stat.c `add_sync_clat_sample`). With `end_fsync` or
//! `fsync_on_close`, a writing job that ended without error issues one
//! more FLUSH once all its I/O is done (backend.c `do_io`); fio does not
//! account it (its run state is then `TD_FSYNCING`), but the job ends
//! when it completes, so it counts in the job's runtime.
//!
//! Left out: the device core does not count a FLUSH as outstanding (its
//! idle policy may start background work while one is in flight, if the
//! idle threshold passes first); a burst job (`burst_size`, ssdtwin's own)
//! issues no end FLUSH; think time and rate limits apply to writes only.

use super::Source;
use crate::model::drive::Command;
use crate::run::device::Device;
use crate::run::driver::{Timer, TimerKind};
use crate::run::workload::{RwPattern, Syncs};

/// A job's syncs in progress.
#[derive(Debug, Clone)]
pub(crate) struct SyncState {
    spec: Syncs,
    /// Writes issued.
    writes: u64,
    /// The N-th write was the last command issued: a FLUSH comes next.
    due: bool,
    /// The end FLUSH has been issued.
    end_issued: bool,
    /// FLUSHes in flight: (issued, completes, the end FLUSH).
    in_flight: Vec<(u64, u64, bool)>,
}

impl SyncState {
    pub(crate) fn new(spec: Syncs) -> SyncState {
        SyncState { spec, writes: 0, due: false, end_issued: false, in_flight: Vec::new() }
    }
}

impl Source {
    /// Before a submission: the job's flow holds it, or it issues the
    /// FLUSH that is due, or a verify read, instead (`true`).
    #[cold]
    pub(super) fn extra_instead(&mut self, dev: &mut Device, me: u32) -> bool {
        if self.flow.is_some() && self.flow_holds(dev, me) {
            return true;
        }
        if let Some(s) = self.syncs.as_mut().filter(|s| s.due) {
            s.due = false;
            self.submit_flush(dev, me, false);
            return true;
        }
        self.verify.is_some() && self.verify_instead(dev, me)
    }

    /// `cmd` is issued at `now`: its line in the job's iolog and its
    /// bytes in the rate schedule, if any.
    #[cold]
    pub(super) fn log_issue(&mut self, now: u64, cmd: Command) {
        if let Some(l) = self.iolog.as_mut() {
            l.io(now - self.start, cmd);
        }
        if let Some(r) = self.rate.as_mut() {
            r.issued(cmd.kind as usize, cmd.len as u64);
        }
    }

    /// Submit `cmd` of a job with syncs or verify: a write with FUA when
    /// `sync` asks for it, counted toward the next FLUSH and logged for
    /// verification.
    #[cold]
    pub(super) fn submit_extra(&mut self, dev: &mut Device, cmd: Command, me: u32) {
        if cmd.kind != crate::model::drive::IoKind::Write {
            self.submit_with_prio(dev, cmd, me);
            if let Some(v) = self.verify.as_mut() {
                v.issued_other(cmd);
            }
            return;
        }
        match self.syncs.as_mut() {
            Some(s) => {
                let fua = s.spec.fua;
                s.writes += 1;
                s.due = s.spec.due_after(s.writes);
                if fua {
                    match self.prio.as_mut() {
                        Some(p) => {
                            let ioprio = p.next(cmd);
                            dev.submit_prio_fua(cmd, me, ioprio);
                        }
                        None if dev.arbitrated() => {
                            dev.submit_prio_fua(cmd, me, 0);
                        }
                        None => {
                            dev.submit_fua(cmd, me);
                        }
                    }
                } else {
                    self.submit_with_prio(dev, cmd, me);
                }
            }
            None => self.submit_with_prio(dev, cmd, me),
        }
        if let Some(v) = self.verify.as_mut() {
            v.written(cmd);
        }
    }

    /// Submit `cmd` with its priority, when the job sets any or the
    /// host's queues are arbitrated (a job without one waits in the
    /// medium class).
    pub(super) fn submit_with_prio(&mut self, dev: &mut Device, cmd: Command, me: u32) {
        let ioprio = self.prio.as_mut().map(|p| p.next(cmd));
        submit_at(dev, cmd, me, ioprio);
    }

    /// The job's I/O is done at `now`: its end FLUSH, then its verify
    /// phase (`true`: one of them started, the job goes on).
    #[cold]
    pub(super) fn extras_at_end(&mut self, dev: &mut Device, me: u32, now: u64) -> bool {
        if self.end_flush(dev, me) {
            return true;
        }
        self.verify.is_some() && self.verify_at_end(dev, me, now)
    }

    /// Issue a FLUSH now (`end`: the job's final one).
    fn submit_flush(&mut self, dev: &mut Device, me: u32, end: bool) {
        let now = dev.now();
        if let Some(l) = self.iolog.as_mut() {
            l.sync(now - self.start);
        }
        let timer = Timer { source: me, kind: TimerKind::Flush };
        // Under arbitration the FLUSH waits in the job's class (its own
        // ioprio: fio's cmdprio draws are for reads and writes), and
        // completes when the arbiter has let it in (`u64::MAX` until then).
        let done = if dev.arbitrated() {
            let ioprio = self.prio.as_ref().map_or(0, |p| p.job());
            dev.flush_prio(ioprio, timer.token()).unwrap_or(u64::MAX)
        } else {
            let done = dev.flush();
            timer.set(dev, done);
            done
        };
        let s = self.syncs.as_mut().expect("a job with syncs");
        s.in_flight.push((now, done, end));
        if self.outstanding == 0 {
            self.busy_since = now;
            self.progress_ns = now;
        }
        self.outstanding += 1;
    }

    /// The job's I/O is done: issue its end FLUSH if it has one to issue
    /// (`true`: it did, and the job ends when the FLUSH completes).
    fn end_flush(&mut self, dev: &mut Device, me: u32) -> bool {
        let writes =
            !matches!(self.spec.rw, RwPattern::Read | RwPattern::RandRead | RwPattern::Trim | RwPattern::RandTrim);
        let Some(s) = self.syncs.as_mut().filter(|s| s.spec.end && !s.end_issued && writes) else { return false };
        if self.error != 0 {
            return false;
        }
        s.end_issued = true;
        self.submit_flush(dev, me, true);
        true
    }

    /// One of its FLUSHes completed at `now`: record it and issue what may
    /// follow. `true`: nothing is left outstanding or pending.
    pub(crate) fn on_flush_done(&mut self, dev: &mut Device, me: u32, now: u64) -> bool {
        self.outstanding -= 1;
        self.progress_ns = now;
        let s = self.syncs.as_mut().expect("a job with syncs");
        // One that completes now, else the earliest issued of those the
        // arbiter held (a class's queue is served in arrival order).
        let i = s
            .in_flight
            .iter()
            .position(|f| f.1 == now)
            .or_else(|| {
                (0..s.in_flight.len()).filter(|&k| s.in_flight[k].1 == u64::MAX).min_by_key(|&k| s.in_flight[k].0)
            })
            .expect("a FLUSH completes when its timer expires");
        let (issued, _, end) = s.in_flight.swap_remove(i);
        if let Some(sync) = self.stats.as_mut().and_then(|st| st.sync.as_mut()) {
            if !end && issued >= self.ramp_end {
                sync.record(0, now - issued);
            }
        }
        if self.can_issue(now) && self.outstanding + self.pending < self.limit() {
            self.issue_or_wait(dev, me, false);
        }
        if self.outstanding == 0 && self.flow.is_some() {
            self.flow_quiesced(dev, me);
        }
        if self.zbd_quiesce && self.outstanding == 0 {
            self.zbd_quiesced(dev, me);
        }
        self.close_if_idle(now)
    }

    /// With nothing outstanding at `now`: the job's end so far, and its
    /// busy time closed. `true`: nothing is left outstanding or pending.
    #[inline]
    pub(super) fn close_if_idle(&mut self, now: u64) -> bool {
        if self.outstanding != 0 {
            return false;
        }
        self.end_ns = now;
        if let Some(st) = &mut self.stats {
            st.busy_ns += now - self.busy_since;
        }
        self.pending == 0
    }
}

/// Submit `cmd` with priority `ioprio` (`None`: the job sets none, the
/// medium class when the host's queues are arbitrated).
pub(super) fn submit_at(dev: &mut Device, cmd: Command, me: u32, ioprio: Option<u16>) {
    match ioprio {
        Some(v) => {
            dev.submit_prio(cmd, me, v);
        }
        None if dev.arbitrated() => {
            dev.submit_prio(cmd, me, 0);
        }
        None => {
            dev.submit(cmd, me);
        }
    }
}
