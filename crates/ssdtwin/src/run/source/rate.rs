//! fio's rate schedule (`rate`, `rate_iops`, `rate_process`,
//! `rate_ignore_thinktime`), one per direction, as fio 3.33 keeps it
//! (fio's backend.c `usec_for_io`, io_u.c `rate_ddir`, init.c
//! `__setup_rate`, backend.c `handle_thinktime`):
//!
//! - each direction with a limit has a byte rate: `rate`, or `rate_iops`
//!   times the direction's smallest block size;
//! - a direction's next command may go at the time its bytes issued so
//!   far take at that rate (`linear`, the default), in whole µs since the
//!   job's epoch (its start, or the end of its ramp); with
//!   `rate_process=poisson`, every command adds an exponential gap of mean
//!   one over the IOPS (fio's integer µs, truncated as fio does). So
//!   `rate_iops` with `bsrange` or `bssplit` limits the bytes to the IOPS
//!   times the smallest size, fewer commands than asked for, as fio 3.33
//!   does (fio 3.42 counts commands for `bssplit`: its commit 3a0e8ddf,
//!   "backend: correctly handle rate_iops combined with bssplit"; the
//!   twin follows 3.33, the version it reports);
//! - before each command the job draws its direction as usual, then
//!   `rate_ddir` decides: a direction that is due goes now; one ahead of
//!   its schedule gives way to the other direction of a mixed job if that
//!   one is due (so `rate=,1m` on `randrw` sends the reads that the
//!   writes cannot); with both ahead, the job first waits for everything
//!   it has outstanding (fio's `io_u_quiesce`), then sleeps until the
//!   earlier of the two and issues that direction;
//! - after think time, `rate_ignore_thinktime` credits the bytes the
//!   thinking direction would have issued meanwhile, less one block, so
//!   that the job does not catch up afterwards.
//!
//! Left out: fio's direction switch for a job that is not a read/write
//! mix (`trimwrite` gates its trims and writes on the writes' schedule,
//! as fio does; a trim-only job on the trims').

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::Source;
use crate::run::device::Device;
use crate::run::driver::{Timer, TimerKind};
use crate::run::workload::{IoSpec, RwPattern};

/// One job's rate schedule: per direction (read, write, trim) the byte
/// rate, the bytes issued since the epoch and when the next command may
/// go.
#[derive(Debug, Clone)]
pub(crate) struct RateSchedule {
    /// Bytes per second per direction (0: no limit; fio's `rate_bps`).
    bps: [u64; 3],
    /// The direction's smallest block size (fio's `min_bs`).
    min_bs: [u64; 3],
    poisson: Option<[Pcg64Mcg; 3]>,
    ignore_thinktime: bool,
    /// A read/write mix: a direction ahead of its schedule gives way to
    /// the other (fio's `td_rw(td) && rwmix[odir]`).
    switches: bool,
    /// `trimwrite`: trims and writes wait on the writes' schedule.
    trimwrite: bool,
    /// The schedule's zero, ns of the run's clock (fio's `td->epoch`).
    epoch_ns: u64,
    /// Reset once at the end of the ramp (fio's `reset_all_stats`).
    ramp_end_ns: u64,
    /// fio's `rate_io_issue_bytes`.
    issue_bytes: [u64; 3],
    /// fio's `rate_next_io_time`, µs since the epoch.
    next_us: [u64; 3],
    /// fio's `last_usec` (the Poisson schedule), µs.
    last_us: [u64; 3],
    /// The direction of a job that is not a mix (0 read, 1 write, 2
    /// trim; `trimwrite` and a one-sided mix included).
    fixed: usize,
    /// The direction of the last command issued (its think time is
    /// credited to it).
    last_dir: usize,
}

/// What the rate schedule holds a job for (one thing at a time: fio's job
/// is one thread, which sleeps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RateWait {
    /// Nothing: the job issues.
    No,
    /// Its think time (a timer).
    Think,
    /// Everything outstanding to complete, then `us` µs of sleep.
    Quiesce { us: u64 },
    /// The end of its sleep (a timer); the next command's direction is set.
    Sleep,
}

/// What the schedule decided for the next command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Issue direction `d` now.
    Now(usize),
    /// Wait until nothing is outstanding, then sleep `us` µs, then issue
    /// direction `d`.
    Sleep { d: usize, us: u64 },
}

impl RateSchedule {
    /// The schedule of `spec` (`None` without `rate` or `rate_iops`),
    /// starting at `start` with its ramp ending at `ramp_end`.
    pub(crate) fn of(spec: &IoSpec, start: u64, ramp_end: u64) -> Option<RateSchedule> {
        let r = spec.rate?;
        let min_bs: [u64; 3] = std::array::from_fn(|k| match &spec.sizes {
            Some(s) => s[k].choices.iter().map(|c| c.0).min().unwrap_or(spec.bs) as u64,
            None => spec.bs as u64,
        });
        let bps: [u64; 3] =
            std::array::from_fn(|k| if r.bytes_per_s[k] > 0 { r.bytes_per_s[k] } else { r.iops[k] * min_bs[k] });
        if bps == [0; 3] {
            return None;
        }
        let mixed = matches!(spec.rw, RwPattern::ReadWrite | RwPattern::RandRw);
        let poisson = r.poisson.then(|| {
            std::array::from_fn(|k| Pcg64Mcg::seed_from_u64(spec.randseed ^ 0x0a11_e5a1 ^ ((k as u64) << 40)))
        });
        Some(RateSchedule {
            bps,
            min_bs,
            poisson,
            ignore_thinktime: r.ignore_thinktime,
            switches: mixed && spec.rwmixread > 0 && spec.rwmixread < 100,
            trimwrite: spec.rw.is_trimwrite(),
            epoch_ns: start,
            ramp_end_ns: if ramp_end > start { ramp_end } else { u64::MAX },
            issue_bytes: [0; 3],
            next_us: [0; 3],
            last_us: [0; 3],
            fixed: match spec.rw {
                RwPattern::Read | RwPattern::RandRead => 0,
                RwPattern::Trim | RwPattern::RandTrim => 2,
                RwPattern::ReadWrite | RwPattern::RandRw if spec.rwmixread >= 100 => 0,
                _ => 1,
            },
            last_dir: 0,
        })
    }

    /// Start over at `now` (a job started again), the ramp ending at
    /// `ramp_end`.
    fn restart(&mut self, now: u64, ramp_end: u64) {
        self.epoch_ns = now;
        self.ramp_end_ns = if ramp_end > now { ramp_end } else { u64::MAX };
        self.issue_bytes = [0; 3];
        self.next_us = [0; 3];
        self.last_us = [0; 3];
    }

    /// Whole µs since the epoch at `now` (fio's `utime_since_now`); the
    /// first look at or past the end of the ramp restarts the schedule.
    fn since_epoch_us(&mut self, now: u64) -> u64 {
        if now >= self.ramp_end_ns {
            self.restart(now, 0);
        }
        (now - self.epoch_ns) / 1000
    }

    /// fio's `rate_ddir` for the direction `proposed` the job's mix drew,
    /// at `now`.
    pub(crate) fn decide(&mut self, proposed: usize, now: u64) -> Decision {
        let now_us = self.since_epoch_us(now);
        let d = if self.trimwrite { 1 } else { proposed };
        if self.next_us[d] <= now_us {
            return Decision::Now(proposed);
        }
        if !self.switches {
            return Decision::Sleep { d: proposed, us: self.next_us[d] - now_us };
        }
        let o = d ^ 1;
        if self.next_us[o] <= now_us {
            return Decision::Now(o);
        }
        if self.next_us[d] <= self.next_us[o] {
            Decision::Sleep { d, us: self.next_us[d] - now_us }
        } else {
            Decision::Sleep { d: o, us: self.next_us[o] - now_us }
        }
    }

    /// A command of direction `d`, `len` bytes, was issued (fio's
    /// `td_io_queue`, then `usec_for_io`).
    pub(crate) fn issued(&mut self, d: usize, len: u64) {
        self.last_dir = d;
        self.issue_bytes[d] += len;
        let bps = self.bps[d];
        if bps == 0 {
            return;
        }
        self.next_us[d] = if let Some(rngs) = &mut self.poisson {
            let iops = (bps / self.min_bs[d]).max(1);
            let u: f32 = rngs[d].random();
            // fio: `(int64_t)(1000000 / iops) * -logf(__rand_0_1())`.
            let val = ((1_000_000 / iops) as f32 * -(1.0 - u).ln()) as u64;
            self.last_us[d] += val;
            self.last_us[d]
        } else {
            let bytes = self.issue_bytes[d];
            (bytes % bps) * 1_000_000 / bps + bytes / bps * 1_000_000
        };
    }

    /// The job thought for `think_ns` after its last command:
    /// with `rate_ignore_thinktime`, credit the bytes it would have
    /// issued meanwhile less one block (fio's `handle_thinktime`).
    pub(crate) fn thought(&mut self, think_ns: u64) {
        let d = self.last_dir;
        let total = think_ns / 1000;
        let bps = self.bps[d];
        if !self.ignore_thinktime || total == 0 || bps == 0 {
            return;
        }
        let missed = bps * total / 1_000_000;
        let bs = self.min_bs[d];
        let per_op = bs * 1_000_000 / bps;
        // fio: `over = bs` when a block takes no longer than the think,
        // else `(usperop - total) / usperop * -bs`, which is 0.
        let over = if per_op <= total { bs } else { 0 };
        self.issue_bytes[d] = (self.issue_bytes[d] + missed).saturating_sub(over);
        self.last_us[d] += total;
    }
}

/// A job's way through its rate schedule: each command's direction and
/// time decided before it goes, the quiesce and sleep when it is ahead.
impl Source {
    /// At the job's start: its schedule from now (the generator steered
    /// by it for a mix).
    pub(super) fn start_rate(&mut self, now: u64) {
        self.rate_wait = RateWait::No;
        match &mut self.rate {
            Some(r) => r.restart(now, self.ramp_end),
            None => {
                self.rate = RateSchedule::of(&self.spec, now, self.ramp_end).map(Box::new);
                if self.rate.as_ref().is_some_and(|r| r.switches) {
                    self.gen.steered();
                }
            }
        }
    }

    /// The next command of a rated job (instead of
    /// [`Source::issue_or_wait`]'s plain path): its think time first, then
    /// fio's `rate_ddir`: issue now, or quiesce and sleep.
    #[cold]
    pub(super) fn rate_issue(&mut self, dev: &mut Device, me: u32, think: bool) {
        if self.rate_wait != RateWait::No {
            return;
        }
        let now = dev.now();
        let r = self.rate.as_mut().expect("a rated job");
        if think && self.spec.thinktime_ns > 0 {
            r.thought(self.spec.thinktime_ns);
            self.rate_wait = RateWait::Think;
            self.pending += 1;
            Timer { source: me, kind: TimerKind::Submit }.set(dev, now + self.spec.thinktime_ns);
            return;
        }
        let proposed = if r.switches { self.gen.draw_direction() } else { r.fixed };
        let decision = r.decide(proposed, now);
        let (d, us) = match decision {
            Decision::Now(d) => (d, None),
            Decision::Sleep { d, us } => (d, Some(us)),
        };
        if r.switches && d != proposed {
            self.gen.steer(d);
        }
        match us {
            None => self.submit(dev, me),
            Some(us) => {
                self.rate_wait = RateWait::Quiesce { us };
                self.rate_quiesced(dev, me);
            }
        }
    }

    /// With nothing outstanding, a job quiescing before its rate sleep
    /// starts sleeping (fio's `io_u_quiesce`, then `usec_sleep`).
    pub(super) fn rate_quiesced(&mut self, dev: &mut Device, me: u32) {
        if let RateWait::Quiesce { us } = self.rate_wait {
            if self.outstanding == 0 {
                self.rate_wait = RateWait::Sleep;
                self.pending += 1;
                // fio sleeps no further than the job's runtime.
                let wake = (dev.now() + us * 1000).min(self.deadline.unwrap_or(u64::MAX)).max(dev.now());
                Timer { source: me, kind: TimerKind::Submit }.set(dev, wake);
            }
        }
    }

    /// A rated job's think time or sleep is over at `now` (its timer's
    /// pending count already taken back): after a sleep, issue the
    /// direction decided before it; then issue what the schedule allows,
    /// up to the depth.
    #[cold]
    pub(super) fn on_rate_timer(&mut self, dev: &mut Device, me: u32, now: u64) {
        let was = std::mem::replace(&mut self.rate_wait, RateWait::No);
        if was == RateWait::Sleep && self.can_issue(now) && self.outstanding < self.limit() {
            self.submit(dev, me);
        }
        self.fill(dev, me);
        if self.outstanding == 0 && self.pending == 0 {
            // The job ends here, at the end of its sleep (its runtime).
            self.end_ns = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::workload::{IoSpec, Rate, RwPattern};

    fn spec(rw: RwPattern, bytes: [u64; 3], iops: [u64; 3]) -> IoSpec {
        let mut s = IoSpec::new("j", rw);
        s.rate = Some(Rate { bytes_per_s: bytes, iops, poisson: false, ignore_thinktime: false });
        s
    }

    #[test]
    fn a_linear_schedule_is_the_bytes_issued_at_the_rate_in_whole_microseconds() {
        // 3,000,000 B/s: 4096 bytes take 1365.33 µs; fio truncates.
        let mut r = RateSchedule::of(&spec(RwPattern::RandWrite, [0, 3_000_000, 0], [0; 3]), 0, 0).unwrap();
        assert_eq!(r.decide(1, 0), Decision::Now(1));
        r.issued(1, 4096);
        assert_eq!(r.decide(1, 1_000_000), Decision::Sleep { d: 1, us: 365 });
        // Time in whole µs too: 1364.999 µs is 1364.
        assert_eq!(r.decide(1, 1_364_999), Decision::Sleep { d: 1, us: 1 });
        assert_eq!(r.decide(1, 1_365_000), Decision::Now(1));
        r.issued(1, 4096);
        // 8192 bytes: 2730.67 µs → 2730.
        assert_eq!(r.decide(1, 0), Decision::Sleep { d: 1, us: 2730 });
    }

    #[test]
    fn a_mixed_job_ahead_in_one_direction_sends_the_other() {
        // rate=,1m on randrw: the reads have no schedule.
        let mut r = RateSchedule::of(&spec(RwPattern::RandRw, [0, 1 << 20, 0], [0; 3]), 0, 0).unwrap();
        r.issued(1, 4096);
        assert_eq!(r.decide(1, 10_000), Decision::Now(0));
        // Both limited: the earlier of the two.
        let mut r = RateSchedule::of(&spec(RwPattern::RandRw, [1 << 20, 4 << 20, 0], [0; 3]), 0, 0).unwrap();
        r.issued(0, 4096);
        r.issued(1, 4096);
        // Reads due at 3906 µs, writes at 976 µs.
        assert_eq!(r.decide(0, 100_000), Decision::Sleep { d: 1, us: 876 });
        // A read-only job never switches.
        let mut r = RateSchedule::of(&spec(RwPattern::RandRead, [1 << 20, 0, 0], [0; 3]), 0, 0).unwrap();
        r.issued(0, 4096);
        assert_eq!(r.decide(0, 0), Decision::Sleep { d: 0, us: 3906 });
    }

    #[test]
    fn rate_iops_is_a_byte_rate_of_the_smallest_block_and_the_ramp_restarts_it() {
        let mut r = RateSchedule::of(&spec(RwPattern::RandRead, [0; 3], [100, 0, 0]), 0, 5_000_000).unwrap();
        r.issued(0, 4096);
        assert_eq!(r.decide(0, 0), Decision::Sleep { d: 0, us: 10_000 });
        // At the end of the ramp the schedule starts over.
        assert_eq!(r.decide(0, 5_000_000), Decision::Now(0));
        r.issued(0, 4096);
        assert_eq!(r.decide(0, 5_000_000), Decision::Sleep { d: 0, us: 10_000 });
    }

    #[test]
    fn ignoring_think_time_credits_the_missed_bytes_less_a_block() {
        let mut s = spec(RwPattern::RandWrite, [0, 4_096_000, 0], [0; 3]);
        s.rate.as_mut().unwrap().ignore_thinktime = true;
        let mut r = RateSchedule::of(&s, 0, 0).unwrap();
        r.issued(1, 4096);
        // 10 ms of think: 40,960 bytes missed, less one block.
        r.thought(10_000_000);
        r.issued(1, 4096);
        assert_eq!(r.decide(1, 0), Decision::Sleep { d: 1, us: 11_000 });
    }
}
