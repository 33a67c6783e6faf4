//! What a [`Source`] does with the events the loop
//! ([`crate::run::driver`]'s fio jobs) hands it: its start, a completion
//! (the plain fast path and the general one), its submit and burst
//! timers, and the end of its I/O (a burst's idle gap or the job's end).
//! The decisions of what to submit and when are in [`super`].

use super::{Source, ETIMEDOUT};
use crate::model::drive::Drive;
use crate::run::control::LatAction;
use crate::run::device::{Completion, Device};
use crate::run::driver::{Timer, TimerKind};
use crate::run::workload::RwPattern;
use crate::run::zbd::ZbdJob;

/// What a source does with the events the loop hands it
/// ([`crate::run::driver`]'s fio jobs). `me` is the source's index: the
/// tag of its commands and the source of its timers.
impl Source {
    /// Start now: begin the job and fill its queue. `false`: it had
    /// nothing to do and has finished.
    pub(crate) fn start(&mut self, dev: &mut Device, me: u32) -> bool {
        self.begin(dev.now());
        // On a zoned drive, zone errors end a job (its completions are
        // looked at one by one) and zbd writes wait for their resets; a
        // zbd job that only reads written data does neither.
        let zbd_reads = self.spec.zbd.as_ref().is_some_and(|z| !z.read_beyond_wp)
            && matches!(self.spec.rw, RwPattern::Read | RwPattern::RandRead);
        if dev.drive().is_zoned() && !zbd_reads {
            self.plain = false;
        }
        if let (Some(p), Some(f)) = (&self.spec.placement, dev.drive().ftl().fdp()) {
            let chooser = crate::run::plids::Placements::new(p, f.model().placements(), self.spec.randseed);
            self.placement = Some(Box::new(chooser));
        }
        if let Some(opts) = &self.spec.zbd {
            match ZbdJob::new(&self.spec, opts, dev.drive()) {
                Ok(z) => self.zbd = Some(Box::new(z)),
                Err((errno, why)) => self.fail(errno, why),
            }
        }
        self.fill(dev, me);
        if self.outstanding == 0 && self.pending == 0 {
            self.finished = true;
            return false;
        }
        true
    }

    /// A plain source's ([`Source::plain`]) command completed at `now`:
    /// submit the next. `true`: nothing is outstanding and it finished.
    #[inline]
    pub(crate) fn on_plain_completion(&mut self, dev: &mut Device, now: u64) -> bool {
        self.outstanding -= 1;
        self.completions += 1;
        if self.can_issue(now) {
            self.submit(dev, 0);
        }
        if self.outstanding == 0 {
            self.end_ns = now;
            self.finished = true;
            return true;
        }
        false
    }

    /// One of its commands completed: record it. Returns whether its
    /// steady-state tracker reached steady state with it (the loop then
    /// tells the reporting group).
    #[inline]
    pub(crate) fn on_completion(&mut self, c: &Completion, drive: &Drive) -> bool {
        self.outstanding -= 1;
        self.completions += 1;
        self.record(c, drive)
    }

    /// After [`Source::on_completion`] (and the group's steady state) at
    /// `now`: run the job's controllers and issue what may follow. `true`:
    /// nothing is left outstanding or pending.
    #[inline]
    pub(crate) fn after_completion(&mut self, dev: &mut Device, c: &Completion, me: u32, now: u64) -> bool {
        if let Some(failed) = self.zbd_retry.take() {
            self.zbd_recover(dev, failed);
        }
        if let Some(max) = self.spec.max_latency_ns.filter(|&m| c.latency_ns() > m) {
            self.lat_fatal(c, max);
        }
        let mut raised = false;
        if let Some(l) = &mut self.lat {
            match l.on_completion(c.latency_ns(), now, self.completions, c.submitted_ns >= self.ramp_end) {
                LatAction::Go => raised = true,
                LatAction::Drain => {}
                LatAction::Fatal => {
                    let target = self.spec.latency_target.map_or(0, |t| t.target_ns);
                    self.lat_fatal(c, target);
                }
                LatAction::Done => self.stop = true,
            }
        }
        if self.can_issue(now) && self.outstanding + self.pending < self.limit() {
            let think = self.spec.thinktime_ns > 0 && self.completions % self.spec.thinktime_blocks as u64 == 0;
            self.issue_or_wait(dev, me, think);
        }
        if raised {
            self.fill(dev, me);
        }
        if self.outstanding == 0 && self.pending == 0 && self.draining() {
            self.drain_over(dev, me);
        }
        if self.extras && self.outstanding == 0 {
            if self.flow.is_some() {
                self.flow_quiesced(dev, me);
            }
            self.rate_quiesced(dev, me);
        }
        if self.zbd_quiesce && self.outstanding == 0 {
            self.zbd_quiesced(dev, me);
        }
        self.close_if_idle(now)
    }

    /// Its think time or rate wait is over at `now`: submit. `true`:
    /// nothing is left outstanding or pending.
    #[inline]
    pub(crate) fn on_submit_timer(&mut self, dev: &mut Device, me: u32, now: u64) -> bool {
        self.pending -= 1;
        if self.rate.is_some() {
            self.on_rate_timer(dev, me, now);
            return self.outstanding == 0 && self.pending == 0;
        }
        if self.can_issue(now) && self.outstanding + self.pending < self.limit() {
            self.submit(dev, me);
            // A zbd job may have submitted nothing (it stopped).
            return self.outstanding == 0 && self.pending == 0;
        } else if self.outstanding == 0 && self.pending == 0 {
            if self.draining() {
                self.drain_over(dev, me);
            }
            return self.outstanding == 0 && self.pending == 0;
        }
        false
    }

    /// Nothing is outstanding or pending at `now`: a burst ends (idle for
    /// the duty cycle, then the next burst; `single`: the only source, so
    /// the device may idle right here), or the source is done. `true`: it
    /// has finished.
    pub(crate) fn on_idle(&mut self, dev: &mut Device, me: u32, now: u64, single: bool) -> bool {
        match self.spec.burst {
            Some(burst) if self.error == 0 => {
                // End of a burst: idle so that busy / (busy + idle) is
                // the duty cycle, then start the next burst.
                let busy = now - self.seg_start;
                let idle = (busy as f64 * (1.0 - burst.duty_cycle) / burst.duty_cycle).round() as u64;
                if single {
                    dev.idle_until(now + idle);
                    self.end_ns = dev.now();
                    !self.restart_burst(dev, me)
                } else {
                    self.pending += 1;
                    Timer { source: me, kind: TimerKind::Burst }.set(dev, now + idle);
                    false
                }
            }
            _ => {
                if self.extras && self.extras_at_end(dev, me, now) {
                    return false;
                }
                self.finished = true;
                true
            }
        }
    }

    /// Its idle gap between bursts is over at `now`. `false`: its limits
    /// are reached and it has finished.
    pub(crate) fn on_burst_timer(&mut self, dev: &mut Device, me: u32, now: u64) -> bool {
        self.pending -= 1;
        self.end_ns = now;
        self.restart_burst(dev, me)
    }

    /// After a burst's idle gap: start the next burst; false (and the
    /// source finished) when its limits are reached.
    fn restart_burst(&mut self, dev: &mut Device, me: u32) -> bool {
        let t = dev.now();
        if self.stop
            || self.issued >= self.byte_limit
            || self.issued_ios >= self.ios_limit
            || self.deadline.is_some_and(|dl| t >= dl)
        {
            self.finished = true;
            return false;
        }
        self.seg_start = t;
        self.seg_issued = 0;
        self.bursts += 1;
        self.fill(dev, me);
        if self.outstanding == 0 && self.pending == 0 {
            self.finished = true;
            return false;
        }
        true
    }

    /// A command slower than `max_ns` ends the job with ETIMEDOUT and
    /// fio's message (io_u.c's `lat_fatal`).
    fn lat_fatal(&mut self, c: &Completion, max_ns: u64) {
        let dir = ["read", "write", "trim"][c.cmd.kind as usize];
        let why = format!(
            "latency of {} nsec exceeds specified max ({max_ns} nsec): {dir} {} {}",
            c.latency_ns(),
            c.cmd.offset,
            c.cmd.len
        );
        self.fail(ETIMEDOUT, why);
    }

    /// How far the job is at `now`, 0–1, by its byte limit or its
    /// deadline (the further of the two); `None` with neither.
    pub(crate) fn progress(&self, now: u64) -> Option<f64> {
        let by_bytes = (self.byte_limit != u64::MAX).then(|| self.issued as f64 / self.byte_limit as f64);
        let by_time = self.deadline.map(|d| (now - self.start) as f64 / (d - self.start).max(1) as f64);
        let fraction = match (by_bytes, by_time) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        fraction.map(|f| f.min(1.0))
    }

    /// As the tracker of its reporting group (`group_reporting` with
    /// `ss`): a member's completion `c`, past the member's ramp, counts
    /// while this source runs and is past its own ramp. `true`: the group
    /// reached steady state (this source stops issuing).
    pub(crate) fn count_member_completion(&mut self, c: &Completion) -> bool {
        let mut reached = false;
        if !self.finished && c.done_ns >= self.ramp_end {
            if let Some(ss) = &mut self.ss {
                reached = ss.on_completion(c.done_ns - self.ramp_end, c.cmd.len as u64, c.latency_ns());
            }
        }
        if reached {
            self.stop = true;
        }
        reached
    }
}
