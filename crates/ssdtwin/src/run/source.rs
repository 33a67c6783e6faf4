//! One closed-loop workload source: the bookkeeping of one fio job on the
//! device — its command generator, byte/command/time limits, bursts,
//! think time, the latency-target search and steady-state tracker it
//! carries, and the statistics it keeps of its own ([`JobStats`]). It
//! decides what to submit and when; the event loop that calls it is
//! [`crate::run::driver`], and what it does with each event is in
//! [`events`]. Its fio extras are one module each: flushes ([`sync`]),
//! verify ([`verify`]), priorities ([`prio`]), trim ranges ([`ranges`]),
//! the rate schedule per direction ([`rate`]: `rate`, `rate_iops`,
//! `rate_process`, `rate_ignore_thinktime`) and flow control ([`flow`], the one thing shared between jobs: a
//! flow's counters). Left out: anything else shared between jobs (the
//! drive, the clock, the reporting groups).

use crate::model::drive::{Command, Drive, IoKind};
use crate::run::control::{LatSearch, MinRateCheck, SsTracker};
use crate::run::device::{Completion, Device};
use crate::run::driver::{Timer, TimerKind};
use crate::run::logs::JobLogs;
use crate::run::stats::{DirStats, Samples, Stalls, TimeSeries};
use crate::run::workload::generator::LOOKAHEAD;
use crate::run::workload::{IoGenerator, IoSpec, RwPattern};
use crate::run::zbd::ZbdJob;

mod events;
mod failed;
mod flow;
mod prio;
mod ranges;
mod rate;
mod sync;
mod verify;
mod verify_log;
mod zoned;

pub use failed::ErrorCount;
use zoned::ZbdSubmit;

pub(crate) use flow::{FlowGroup, FlowState};
pub use prio::PrioLat;

/// fio's error number when a job ends below its minimum rate (EIO).
pub const EIO: i32 = 5;
/// fio's error number when a command exceeds `max_latency` or the latency
/// target cannot be met (ETIMEDOUT).
pub const ETIMEDOUT: i32 = 110;

/// fio's bandwidth and IOPS sampling interval (`bwavgtime`, `iopsavgtime`).
pub const SAMPLE_NS: u64 = 500_000_000;

/// What a job measured by itself (jobs sharing a drive each keep their
/// own): latency per direction, per-second series, bandwidth samples and
/// the queue depths it submitted at.
#[derive(Debug, Clone)]
pub struct JobStats {
    /// Read, write and trim latency and volume (index `IoKind as usize`).
    pub dirs: [DirStats; 3],
    /// Per-second series of the job's completions (drive state sampled as
    /// each second opens).
    pub series: TimeSeries,
    /// Bytes and commands completed per direction in each
    /// [`SAMPLE_NS`] interval after the ramp.
    pub samples: Samples,
    /// Submissions by the job's outstanding count after it (fio's
    /// `iodepth_level` buckets 1, 2, 4, 8, 16, 32, ≥64).
    pub depth_levels: [u64; 7],
    /// Time the job had commands outstanding, ns.
    pub busy_ns: u64,
    /// Intervals in which the job had commands outstanding and none of
    /// them completed (ended after the ramp).
    pub stalls: Stalls,
    /// Its FLUSHes after the ramp (`fsync`, `fdatasync`): count and
    /// latency (no bytes); `None` for a job without them.
    pub sync: Option<DirStats>,
    /// Each direction's runtime, ns, when they differ (a verify phase's
    /// reads after the writes); `None`: the job's.
    pub dir_ns: Option<[u64; 3]>,
    /// Latency per priority (`None`: the job has no `cmdprio*`).
    pub prios: Option<Box<PrioLat>>,
}

/// One closed-loop workload source: an I/O phase's generator and limits.
/// Several sources may share one device (concurrent fio jobs).
pub(crate) struct Source {
    pub(crate) spec: IoSpec,
    gen: IoGenerator,
    pub(crate) start: u64,
    pub(crate) ramp_end: u64,
    deadline: Option<u64>,
    byte_limit: u64,
    ios_limit: u64,
    issued: u64,
    issued_ios: u64,
    burst_bytes: u64,
    seg_issued: u64,
    seg_start: u64,
    pub(crate) bursts: u32,
    depth: u32,
    outstanding: u32,
    pending: u32,
    completions: u64,
    /// fio's rate schedule per direction (`rate`, `rate_iops`).
    rate: Option<Box<rate::RateSchedule>>,
    /// What the rate schedule holds the job for.
    rate_wait: rate::RateWait,
    busy_since: u64,
    /// Its last completion, or the submission that ended its idle.
    progress_ns: u64,
    pub(crate) end_ns: u64,
    finished: bool,
    /// fio's error number (110 = ETIMEDOUT after `max_latency` or a
    /// failed latency target, 5 = EIO below a minimum rate).
    pub(crate) error: i32,
    pub(crate) stats: Option<Box<JobStats>>,
    /// Issue no more commands (steady state reached, latency search done).
    pub(crate) stop: bool,
    /// Started with nothing but a depth and limits ([`Source::is_plain`]).
    pub(crate) plain: bool,
    /// The latency-target depth search (`latency_target`).
    pub(crate) lat: Option<LatSearch>,
    /// Steady-state detection (`ss`).
    pub(crate) ss: Option<SsTracker>,
    /// With `group_reporting`, the source whose tracker judges the
    /// group's summed rate (fio keeps it in the group's last job); this
    /// source then has no tracker of its own.
    pub(crate) ss_forward: Option<usize>,
    /// This source's tracker judges its reporting group.
    pub(crate) ss_holder: bool,
    /// The minimum-rate check (`rate_min`, `rate_iops_min`).
    min_rate: Option<MinRateCheck>,
    /// fio's message for `error`, naming the job.
    pub(crate) error_reason: Option<String>,
    /// The errors it went on after (`continue_on_error`).
    pub(crate) errors: ErrorCount,
    /// A failed zbd write whose zone's write pointer is to be recovered
    /// (`recover_zbd_write_error`).
    zbd_retry: Option<Command>,
    /// fio's log files, when the job writes any.
    pub(crate) logs: Option<JobLogs>,
    /// `zonemode=zbd` on a zoned drive (set up when the job starts).
    pub(crate) zbd: Option<Box<ZbdJob>>,
    /// A command placed by the zbd logic, waiting for its zone
    /// management commands.
    zbd_ready: Option<Command>,
    /// The job waits for its zone management commands until then (fio's
    /// synchronous resets and finishes).
    zbd_blocked_until: u64,
    /// The job waits for its commands in flight to complete before it
    /// sends zone management commands (fio's `io_u_quiesce`).
    zbd_quiesce: bool,
    /// fio's `fdp=1`: the placement identifiers its writes carry.
    placement: Option<Box<crate::run::plids::Placements>>,
    /// fio's `fsync`, `fdatasync`, `end_fsync`, `sync` ([`sync`]).
    syncs: Option<Box<sync::SyncState>>,
    /// fio's verify phase ([`verify`]).
    verify: Option<Box<verify::VerifyState>>,
    /// fio's I/O priorities (`prio`, `prioclass`, `cmdprio*`).
    prio: Option<Box<prio::PrioState>>,
    /// fio's flow control (`flow`: [`flow`]), once the job joined its flow.
    pub(crate) flow: Option<Box<FlowState>>,
    /// It has `syncs`, `verify`, `iolog`, priorities or a flow, or the
    /// host's queues are arbitrated: submissions go through them.
    extras: bool,
    /// fio's `write_iolog`, when the job writes one.
    pub(crate) iolog: Option<Box<crate::run::iolog::IoLog>>,
}

/// The bytes a job that is not time-based issues in all, as fio's passes
/// decide (`None`: passes as long as the span, which the plain byte limit
/// covers): backend.c's `do_io` ends a pass when the files are done (the
/// span's end, or a full random map) or the job's issued bytes reach
/// `limit × loops` (`io_bytes_exceeded`), and `keep_running` starts
/// another pass while loops are left, then while the bytes done are at
/// least a block short of `limit` (`io_size` if `given`, else `size`) —
/// not when the files are done and no `io_size` was given. Passes are
/// shorter than the span with an offset modifier (`rw=write:112k`), and
/// each is counted as it will run ([`PassWalk`](crate::run::workload::generator::PassWalk): an `rw=…:N` run's count
/// carries over into the next pass) up to [`WALKED_PASSES`], then the
/// last one counted repeats. A `trimwrite` job's cap is twice
/// `limit × loops` (each block is trimmed and then written), while
/// `keep_running` still compares trims and writes together with `limit`.
fn fio_passes(gen: &IoGenerator, limit: u64, given: bool, loops: u64, max_bs: u64, trimwrite: bool) -> Option<u64> {
    let cap = limit.saturating_mul(loops.max(1)).saturating_mul(if trimwrite { 2 } else { 1 });
    let (mut walk, repeat) = gen.pass_walk()?;
    let first = walk.next_pass(cap)?;
    let (mut last, mut walked) = (first, 1);
    // The next pass's bytes (`cap` when it reaches the cap).
    let mut next_pass = || {
        if !repeat && walked < WALKED_PASSES {
            walked += 1;
            last = walk.next_pass(cap).unwrap_or(cap);
        }
        last
    };
    let mut total = first;
    for _ in 1..loops.max(1) {
        total = total.saturating_add(next_pass());
        if total >= cap {
            return Some(cap);
        }
    }
    if !given {
        return Some(total);
    }
    while total < limit && limit - total >= max_bs {
        total = total.saturating_add(next_pass());
        if total >= cap {
            return Some(cap);
        }
    }
    Some(total)
}

/// How many passes [`fio_passes`] counts one by one before it takes the
/// last one counted to repeat (each costs a walk over the sequence).
const WALKED_PASSES: u32 = 64;

impl Source {
    /// A source starting at `start` on a drive of `capacity` bytes;
    /// `own_stats` keeps the job's own statistics ([`JobStats`]), with
    /// every bandwidth sample if it is `Some(true)`. It
    /// starts when the loop's scheduler says so (`finished` until then).
    pub(crate) fn new(spec: IoSpec, capacity: u64, start: u64, own_stats: Option<bool>) -> Source {
        let ramp_end = start + spec.ramp_time_ns;
        let span = spec.size.unwrap_or(capacity - spec.offset);
        // With verify, a loop's writes are verified before the next loop.
        let loops = if spec.verify.is_some() { 1 } else { spec.loops as u64 };
        // fio's trimwrite trims each block and then writes it: twice the
        // bytes and commands (backend.c `do_io`).
        let loops = if spec.rw.is_trimwrite() { loops * 2 } else { loops };
        let byte_limit = match (spec.time_based && spec.runtime_ns.is_some(), spec.io_size) {
            (true, _) => u64::MAX,
            // An io_size beyond the span: fio's passes of trims and
            // writes (each the span twice) go on while loops are left or
            // both together are short of it (keep_running counts every
            // direction's bytes).
            (false, Some(b)) if spec.rw.is_trimwrite() && b > span => {
                loops.max(2 * b.div_ceil(2 * span.max(1))).saturating_mul(span)
            }
            (false, Some(b)) => b.saturating_mul(loops),
            (false, None) => span.saturating_mul(loops),
        };
        // fio's number_ios counts every loop (backend.c exceeds_number_ios).
        let mut gen = IoGenerator::new(&spec, capacity);
        let max_bs = (0..3).map(|k| spec.bs_of(k)).max().unwrap_or(spec.bs) as u64;
        // A write job that verifies: each pass's writes, then their
        // read-back (`VerifyPasses`).
        let verify_passes = spec
            .verify
            .filter(|v| v.read_back && !v.only && !spec.time_based)
            .filter(|_| {
                matches!(spec.rw, RwPattern::Write | RwPattern::RandWrite | RwPattern::ReadWrite | RwPattern::RandRw)
            })
            .map(|_| {
                let limit = spec.io_size.unwrap_or(span);
                let cap = limit.saturating_mul(spec.loops.max(1) as u64);
                // One plain pass of the span, verified, is the whole job: no
                // need to count it (a pass costs a walk over the sequence).
                let plain = spec.io_size.is_none() && spec.loops <= 1 && spec.modifier.is_none();
                let pass = if plain { cap } else { gen.pass_bytes(cap).unwrap_or(cap) };
                verify::VerifyPasses::new(pass, cap, limit, max_bs)
            });
        let trimwrite = spec.rw.is_trimwrite();
        let byte_limit = match spec.io_size {
            _ if verify_passes.is_some() => verify_passes.as_ref().map_or(byte_limit, |p| p.next_pass()),
            _ if spec.time_based || spec.verify.is_some() => byte_limit,
            Some(io_size) if spec.loops > 1 || spec.modifier.is_some() || trimwrite => {
                fio_passes(&gen, io_size, true, spec.loops as u64, max_bs, trimwrite).unwrap_or(byte_limit)
            }
            // A trimwrite whose trims and writes differ in size: its pass
            // ends when the larger writes reach the span's end.
            None if spec.modifier.is_some() || (trimwrite && spec.sizes.as_ref().is_some_and(|s| s[1] != s[2])) => {
                fio_passes(&gen, span, false, spec.loops as u64, max_bs, trimwrite).unwrap_or(byte_limit)
            }
            _ => byte_limit,
        };
        // A verifying job's number_ios counts over all its loops
        // (`VerifyState`'s budget), each loop's limit what is left of it.
        let ios_loops = if spec.verify.is_some_and(|v| v.read_back) { loops * spec.loops as u64 } else { loops };
        let ios_limit = spec.number_ios.map_or(u64::MAX, |n| n.saturating_mul(ios_loops));
        let most = (byte_limit / spec.min_bs().max(1) as u64).min(ios_limit);
        let ios_limit = gen.command_limit(most).unwrap_or(ios_limit);
        if spec.prio.is_some() {
            // Its priorities re-seed with each of fio's passes.
            gen.track_passes();
        }
        Source {
            gen,
            start,
            ramp_end,
            deadline: spec.runtime_ns.map(|t| ramp_end + t),
            byte_limit,
            ios_limit,
            issued: 0,
            issued_ios: 0,
            burst_bytes: spec.burst.map_or(u64::MAX, |b| b.bytes),
            seg_issued: 0,
            seg_start: start,
            bursts: 1,
            depth: spec.outstanding(),
            outstanding: 0,
            pending: 0,
            completions: 0,
            rate: None,
            rate_wait: rate::RateWait::No,
            busy_since: start,
            progress_ns: start,
            end_ns: start,
            finished: true,
            error: 0,
            stop: false,
            plain: false,
            lat: None,
            ss: None,
            ss_forward: None,
            ss_holder: false,
            min_rate: None,
            error_reason: None,
            errors: ErrorCount::default(),
            zbd_retry: None,
            logs: None,
            zbd: None,
            zbd_ready: None,
            zbd_blocked_until: 0,
            zbd_quiesce: false,
            placement: None,
            syncs: spec.syncs.map(|s| Box::new(sync::SyncState::new(s))),
            verify: spec.verify.map(|v| Box::new(verify::VerifyState::new(v, &spec, verify_passes))),
            prio: prio::PrioState::of(&spec).map(Box::new),
            flow: None,
            extras: spec.syncs.is_some()
                || spec.verify.is_some()
                || spec.iolog.is_some()
                || spec.prio.is_some()
                || spec.flow.is_some()
                || spec.num_range > 1
                || spec.rate.is_some(),
            iolog: None,
            stats: own_stats.map(|keep_samples| {
                Box::new(JobStats {
                    dirs: Default::default(),
                    series: TimeSeries::new(start),
                    samples: Samples::new(keep_samples),
                    depth_levels: [0; 7],
                    busy_ns: 0,
                    stalls: Stalls::default(),
                    sync: spec.syncs.map(|_| DirStats::default()),
                    dir_ns: None,
                    prios: PrioLat::of(&spec).map(Box::new),
                })
            }),
            spec,
        }
    }

    /// Start (or restart) the clock-dependent state at `now`.
    pub(crate) fn begin(&mut self, now: u64) {
        self.finished = false;
        self.start = now;
        self.ramp_end = now + self.spec.ramp_time_ns;
        self.deadline = self.spec.runtime_ns.map(|t| self.ramp_end + t);
        self.seg_start = now;
        self.start_rate(now);
        self.busy_since = now;
        self.progress_ns = now;
        self.end_ns = now;
        if let Some(st) = &mut self.stats {
            st.series.start_ns = now;
        }
        self.lat = self.spec.latency_target.map(|t| LatSearch::new(t, self.depth, now));
        self.ss = self.spec.steadystate.filter(|_| self.ss_forward.is_none()).map(SsTracker::new);
        self.min_rate = self.spec.rate_min.map(MinRateCheck::new);
        self.plain = self.is_plain();
    }

    /// Commands the job may have outstanding now: its depth, or the
    /// latency search's (0 while a ramp-down drains).
    #[inline]
    pub(crate) fn limit(&self) -> u32 {
        match &self.lat {
            None => self.depth,
            Some(l) => l.depth_limit().min(self.depth),
        }
    }

    #[inline]
    pub(crate) fn draining(&self) -> bool {
        self.lat.as_ref().is_some_and(|l| l.draining())
    }

    /// A drain the latency search asked for is over: start its next
    /// window (restarting the statistics for the final run) and fill the
    /// queue to the new depth.
    pub(crate) fn drain_over(&mut self, dev: &mut Device, me: u32) {
        let now = dev.now();
        if let Some(l) = &mut self.lat {
            if l.drained(now, self.completions) {
                // fio's reset_all_stats: the report covers the final run.
                self.ramp_end = now;
                self.min_rate = self.spec.rate_min.map(MinRateCheck::new);
                if let Some(st) = &mut self.stats {
                    st.dirs = Default::default();
                    st.samples = Samples::new(st.samples.kept.is_some());
                    st.depth_levels = [0; 7];
                }
            }
        }
        self.fill(dev, me);
    }

    /// Nothing but a depth and limits (decided when the source starts): no
    /// latency target, steady-state detection, minimum rate, latency
    /// limit, think time, rate, bursts, logs or statistics of its own.
    /// The host's submission queues are arbitrated: every command goes
    /// through them, a job without a priority in the medium class.
    pub(crate) fn arbitrate(&mut self) {
        self.extras = true;
    }

    /// Such a source never sets a timer; it keeps `depth` commands
    /// outstanding until its limits, answering each completion with the
    /// next command ([`crate::run::driver`]'s fast loop).
    fn is_plain(&self) -> bool {
        self.lat.is_none()
            && self.ss.is_none()
            && self.ss_forward.is_none()
            && self.min_rate.is_none()
            && self.logs.is_none()
            && self.stats.is_none()
            && self.spec.max_latency_ns.is_none()
            && self.spec.thinktime_ns == 0
            && self.rate.is_none()
            && self.spec.burst.is_none()
            && !self.extras
    }

    #[inline]
    pub(crate) fn can_issue(&self, now: u64) -> bool {
        self.error == 0
            && !self.stop
            && (self.issued < self.byte_limit || self.verify.is_some() && self.backlog_at_pass_end())
            && self.issued_ios < self.ios_limit
            && self.deadline.is_none_or(|d| now < d)
            && self.seg_issued < self.burst_bytes
    }

    /// Submit the next command now.
    #[inline]
    pub(crate) fn submit(&mut self, dev: &mut Device, tag: u32) {
        if self.extras && self.extra_instead(dev, tag) {
            return;
        }
        let (mut cmd, how) = if self.zbd.is_some() {
            match self.zbd_command(dev, tag) {
                Some(c) => c,
                None => return,
            }
        } else {
            (self.gen.next_command(), ZbdSubmit::Plain)
        };
        // Warm the map entries of the commands that follow: the map
        // lines of the one 16 ahead, the reverse entries of the one 8
        // ahead (whose map line is warm by now; a zbd job's reads also
        // warm where the zbd fold sends them: `Source::zbd_command`).
        dev.drive().prefetch_map(self.gen.ahead(LOOKAHEAD));
        dev.drive().prefetch_update(self.gen.ahead(LOOKAHEAD / 2));
        let now = dev.now();
        if self.extras {
            self.log_issue(now, cmd);
            if let Some(p) = self.prio.as_mut().filter(|_| how == ZbdSubmit::Plain) {
                if self.gen.pass_began() {
                    p.reseed();
                }
            }
        }
        if how != ZbdSubmit::Plain {
            match how {
                ZbdSubmit::Append => self.submit_append(dev, cmd, tag),
                ZbdSubmit::ZoneReset => dev.submit_zone_reset(cmd, tag),
                _ => dev.complete_at_once(cmd, tag),
            };
        } else {
            // A write with a placement identifier goes the way a plain
            // write goes (FUA, syncs, priorities, verify), the identifier
            // set first: the drive takes it with the next command it
            // submits (and the arbiter keeps it with a command it holds).
            if let Some(p) = self.placement.as_mut().filter(|_| cmd.kind == IoKind::Write) {
                dev.place_next(p.next(cmd.offset));
            }
            if self.extras && cmd.kind == IoKind::Trim && self.spec.num_range > 1 {
                cmd.len = self.submit_ranges(dev, cmd, tag);
            } else if self.extras {
                self.submit_extra(dev, cmd, tag);
            } else {
                dev.submit(cmd, tag);
            }
        }
        self.issued += cmd.len as u64;
        self.seg_issued += cmd.len as u64;
        self.issued_ios += 1;
        self.count_submitted(now);
    }

    /// One more command outstanding, submitted at `now`.
    #[inline(always)]
    fn count_submitted(&mut self, now: u64) {
        if self.outstanding == 0 {
            self.busy_since = now;
            self.progress_ns = now;
        }
        self.outstanding += 1;
        if let Some(st) = &mut self.stats {
            let level = match self.outstanding {
                1 => 0,
                2..=3 => 1,
                4..=7 => 2,
                8..=15 => 3,
                16..=31 => 4,
                32..=63 => 5,
                _ => 6,
            };
            st.depth_levels[level] += 1;
        }
    }

    /// Issue the next command of slot `tag` now, or when the think time or
    /// the rate allows (a timer).
    #[inline]
    pub(crate) fn issue_or_wait(&mut self, dev: &mut Device, me: u32, think: bool) {
        if self.rate.is_some() {
            self.rate_issue(dev, me, think);
            return;
        }
        let now = dev.now();
        let at = if think { now + self.spec.thinktime_ns } else { now };
        if at > now {
            self.pending += 1;
            Timer { source: me, kind: TimerKind::Submit }.set(dev, at);
        } else {
            self.submit(dev, me);
        }
    }

    /// Fill the queue to the job's depth (at the start of a burst or of
    /// the job, or when the latency search raises the depth).
    pub(crate) fn fill(&mut self, dev: &mut Device, me: u32) {
        let now = dev.now();
        while self.outstanding + self.pending < self.limit()
            && self.can_issue(now)
            && !self.flow_held()
            && self.rate_wait == rate::RateWait::No
            && !self.zbd_quiesce
        {
            self.issue_or_wait(dev, me, false);
        }
    }

    /// End the job with fio's error number `errno` and message `why`
    /// (the first error stays).
    pub(crate) fn fail(&mut self, errno: i32, why: String) {
        if self.error == 0 {
            self.error = errno;
            self.error_reason = Some(format!("{}: {why}", self.spec.name));
        }
    }

    /// Record a completion in the job's own statistics, its steady-state
    /// detection and its logs (after the ramp). True when the completion
    /// brought the source's tracker to steady state.
    #[inline]
    pub(crate) fn record(&mut self, c: &Completion, drive: &Drive) -> bool {
        if let Some(e) = c.error {
            // Not counted; it ends the job unless fio goes on after it.
            self.on_failed(c, e);
            return false;
        }
        let k = c.cmd.kind as usize;
        let bytes = c.cmd.len as u64;
        // fio counts toward the minimum rate whatever completes after the
        // ramp.
        if let Some(m) = &mut self.min_rate {
            if c.done_ns >= self.ramp_end && self.error == 0 {
                if let Some(why) = m.on_completion(c.done_ns - self.ramp_end, k, bytes) {
                    self.fail(EIO, why);
                }
            }
        }
        let gap = c.done_ns.saturating_sub(self.progress_ns);
        self.progress_ns = c.done_ns;
        if c.submitted_ns < self.ramp_end {
            return false;
        }
        let lat = c.latency_ns();
        let rel = c.done_ns - self.ramp_end;
        if let Some(st) = &mut self.stats {
            st.dirs[k].record(bytes, lat);
            if let Some(p) = &mut st.prios {
                p.record(k, c.ioprio, bytes, lat);
            }
            st.stalls.record(gap);
            st.series.record(c.done_ns - st.series.start_ns, k, bytes, lat, drive);
            st.samples.record(rel / SAMPLE_NS, k, bytes);
        }
        let mut steady = false;
        if let Some(ss) = &mut self.ss {
            if ss.on_completion(rel, bytes, lat) {
                // Steady state: fio terminates the job.
                self.stop = true;
                steady = true;
            }
        }
        if let Some(logs) = &mut self.logs {
            logs.record(rel, k, bytes, c.cmd.offset, lat, c.ioprio);
        }
        steady
    }
}
