//! The closed-loop driver: runs a job's phases (fio-style I/O, idle,
//! secure erase) on a [`Device`] in virtual time.
//!
//! An I/O phase is a closed loop, as fio's: `iodepth × numjobs` workload
//! slots each submit a command, wait for its completion, optionally think
//! (a device timer), and submit the next, until the phase's byte or time
//! limit; bursts alternate with idle gaps. The device core does the rest
//! (the drive, the clock, background work when idle, the statistics); this
//! driver decides only what to submit and when, and reports progress.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::model::drive::{Drive, IoKind};
use crate::run::control::{LatAction, LatSearch, SsTracker};
use crate::run::device::{Completion, Device, Event, Window};
use crate::run::logs::JobLogs;
use crate::run::stats::{Counters, DirStats, Samples, TimeSeries};
use crate::run::trace::{TraceSpec, TraceSummary};
use crate::run::workload::generator::LOOKAHEAD;
use crate::run::workload::{IoGenerator, IoSpec, Job, Phase, RwPattern};

/// Results of one phase.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    /// The phase as specified.
    pub phase: Phase,
    /// Start time, ns of virtual time.
    pub start_ns: u64,
    /// End time (last completion, or end of the idle period), ns.
    pub end_ns: u64,
    /// Time over which throughput is computed (after `ramp_time`), ns.
    pub measured_ns: u64,
    /// Read, write and trim statistics (index `IoKind as usize`).
    pub dirs: [DirStats; 3],
    /// Per-second series.
    pub series: TimeSeries,
    /// Counter increments during the phase.
    pub counters: Counters,
    /// Bursts run (burst phases).
    pub bursts: u32,
    /// Time commands were outstanding (busy time), ns.
    pub busy_ns: u64,
    /// Energy drawn from start to end, J (`None`: no power model).
    pub energy_j: Option<f64>,
    /// Trace phases: what the replay did and the trace's statistics.
    pub trace: Option<Box<TraceSummary>>,
    /// Temperatures over the phase (`None`: no thermal model).
    pub thermal: Option<crate::run::device::ThermalWindow>,
    /// Aging phases: the days aged and the wear after them.
    pub age: Option<crate::run::lifetime::AgeSummary>,
}

impl PhaseResult {
    /// IOPS of one direction over the measured time.
    pub fn iops(&self, kind: IoKind) -> f64 {
        per_second(self.dirs[kind as usize].ios as f64, self.measured_ns)
    }

    /// Bytes per second of one direction.
    pub fn bw_bytes(&self, kind: IoKind) -> f64 {
        per_second(self.dirs[kind as usize].bytes as f64, self.measured_ns)
    }

    /// Mean power from start to end, W.
    pub fn power_w(&self) -> Option<f64> {
        let ns = self.end_ns - self.start_ns;
        self.energy_j.filter(|_| ns > 0).map(|e| e / (ns as f64 * 1e-9))
    }

    /// Mean power of the last whole point of the series (a second unless
    /// the phase was long enough to coarsen it; the whole phase if it is
    /// shorter), W: the state an idle drive settled in.
    pub fn settled_power_w(&self) -> Option<f64> {
        let whole = ((self.end_ns - self.start_ns) / self.series.point_ns()) as usize;
        match whole.checked_sub(1).and_then(|i| self.series.seconds.get(i)) {
            Some(s) => s.power_w,
            None => self.power_w(),
        }
    }

    /// Fraction of the phase during which commands were outstanding.
    pub fn duty_cycle(&self) -> f64 {
        let total = self.end_ns - self.start_ns;
        if total == 0 {
            0.0
        } else {
            self.busy_ns as f64 / total as f64
        }
    }
}

fn per_second(x: f64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        x * 1e9 / ns as f64
    }
}

/// A drive and its clock, running jobs.
pub struct Simulator {
    device: Device,
    progress: Option<ProgressFn>,
}

/// A progress callback.
pub type ProgressFn = Box<dyn FnMut(&Progress)>;

/// What a progress callback is told, about once per simulated second.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Phase name.
    pub phase: String,
    /// Index of the phase in the job.
    pub phase_index: usize,
    /// Phases in the job.
    pub phases: usize,
    /// Virtual time since the phase began, ns.
    pub phase_ns: u64,
    /// Fraction of the phase's limit reached (0–1), if known.
    pub fraction: Option<f64>,
}

impl Simulator {
    /// A simulator at time 0 around a drive.
    pub fn new(drive: Drive) -> Simulator {
        Simulator::on(Device::new(drive))
    }

    /// A simulator driving an existing device (at its current time).
    pub fn on(device: Device) -> Simulator {
        Simulator { device, progress: None }
    }

    /// Call `f` about once per simulated second with the run's progress.
    pub fn on_progress(&mut self, f: impl FnMut(&Progress) + 'static) {
        self.progress = Some(Box::new(f));
    }

    /// Current virtual time, ns.
    pub fn now(&self) -> u64 {
        self.device.now()
    }

    /// The drive.
    pub fn drive(&self) -> &Drive {
        self.device.drive()
    }

    /// The drive, to change between phases.
    pub fn drive_mut(&mut self) -> &mut Drive {
        self.device.drive_mut()
    }

    /// The device core.
    pub fn device(&mut self) -> &mut Device {
        &mut self.device
    }

    /// Give the drive back.
    pub fn into_drive(self) -> Drive {
        self.device.into_drive()
    }

    /// Give the device back.
    pub fn into_device(self) -> Device {
        self.device
    }

    /// Run every phase of a job in order.
    ///
    /// # Panics
    /// If a trace phase fails (its file cannot be read, is malformed or
    /// does not fit the drive); [`Simulator::try_run_job`] returns the
    /// error instead.
    pub fn run_job(&mut self, job: &Job) -> Vec<PhaseResult> {
        self.try_run_job(job).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Run every phase of a job in order; stops at the first trace phase
    /// that fails.
    pub fn try_run_job(&mut self, job: &Job) -> Result<Vec<PhaseResult>, crate::Error> {
        let n = job.phases.len();
        job.phases.iter().enumerate().map(|(i, p)| self.try_run_phase(p, i, n)).collect()
    }

    /// Run one phase.
    ///
    /// # Panics
    /// If a trace phase fails; see [`Simulator::try_run_phase`].
    pub fn run_phase(&mut self, phase: &Phase, index: usize, phases: usize) -> PhaseResult {
        self.try_run_phase(phase, index, phases).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Run one phase; a trace phase's error (file, line, field) is
    /// returned. The other kinds of phase cannot fail.
    pub fn try_run_phase(&mut self, phase: &Phase, index: usize, phases: usize) -> Result<PhaseResult, crate::Error> {
        let start = self.now();
        let (end_ns, record_from, bursts) = match phase {
            Phase::Idle { .. } | Phase::SecureErase { .. } | Phase::Retention { .. } | Phase::Age(_) => {
                return Ok(run_quiet(&mut self.device, phase))
            }
            Phase::Trace(spec) => return self.replay_trace(spec, index, phases),
            Phase::Io(spec) => {
                let ramp_end = start + spec.ramp_time_ns;
                self.device.begin_window(ramp_end);
                let (end, bursts) = self.run_io(spec, index, phases);
                (end, ramp_end, bursts)
            }
        };
        let w: Window = self.device.end_window(end_ns);
        let measured_ns = end_ns.saturating_sub(record_from);
        Ok(PhaseResult {
            phase: phase.clone(),
            start_ns: start,
            end_ns,
            measured_ns,
            dirs: w.dirs,
            series: w.series,
            counters: w.counters,
            bursts,
            busy_ns: w.busy_ns,
            energy_j: w.energy_j,
            trace: None,
            thermal: w.thermal,
            age: None,
        })
    }

    /// A trace phase: the replay on the device core, reporting progress.
    fn replay_trace(&mut self, spec: &TraceSpec, index: usize, phases: usize) -> Result<PhaseResult, crate::Error> {
        let progress = &mut self.progress;
        let mut report = |phase_ns: u64| {
            if let Some(cb) = progress.as_mut() {
                cb(&Progress { phase: spec.name.clone(), phase_index: index, phases, phase_ns, fraction: None });
            }
        };
        Ok(crate::run::trace::replay(&mut self.device, spec, &mut report)?)
    }

    /// Let virtual time pass with no host I/O until `until`, doing
    /// background work when the drive wants it.
    pub fn wait_until(&mut self, until: u64) {
        self.device.idle_until(until);
    }

    /// One closed-loop I/O phase; returns its end (the last completion, or
    /// the end of the last burst's idle gap) and the bursts run.
    fn run_io(&mut self, spec: &IoSpec, index: usize, phases: usize) -> (u64, u32) {
        let start = self.device.now();
        let mut sources = [Source::new(spec.clone(), self.device.drive().user_bytes(), start, None)];
        let progress = self.progress.as_mut().map(|cb| (cb, index, phases));
        self.device.set_apst(spec.apst);
        drive_sources(&mut self.device, &mut sources, progress, &mut |_, _, h| match h {
            Hooked::Begin => Action { start: vec![0], timers: vec![] },
            _ => Action::default(),
        });
        let s = &sources[0];
        (s.end_ns.max(start), s.bursts)
    }
}

/// Run an idle, secure-erase, retention or aging phase on `dev` now
/// (nothing else may be running), measured in the device's statistics
/// window (retention and aging: see [`crate::run::lifetime`]).
pub(crate) fn run_quiet(dev: &mut Device, phase: &Phase) -> PhaseResult {
    match phase {
        Phase::Retention { duration_ns, .. } => return crate::run::lifetime::run_retention(dev, phase, *duration_ns),
        Phase::Age(spec) => return crate::run::lifetime::run_age(dev, phase, spec),
        _ => {}
    }
    let start = dev.now();
    dev.begin_window(start);
    match phase {
        Phase::Idle { duration_ns, apst, .. } => {
            if let Some(on) = *apst {
                dev.set_apst(on);
            }
            dev.idle_until(start + duration_ns);
        }
        Phase::SecureErase { .. } => {
            let done = dev.format();
            dev.idle_until(done);
        }
        Phase::Io(_) | Phase::Trace(_) | Phase::Retention { .. } | Phase::Age(_) => {
            unreachable!("an I/O or trace phase is not quiet; retention and aging returned above")
        }
    }
    let end_ns = dev.now();
    dev.touch_series((end_ns - start).saturating_sub(1));
    let w: Window = dev.end_window(end_ns);
    let measured_ns = end_ns - start;
    PhaseResult {
        phase: phase.clone(),
        start_ns: start,
        end_ns,
        measured_ns,
        dirs: w.dirs,
        series: w.series,
        counters: w.counters,
        bursts: 0,
        busy_ns: if let Phase::SecureErase { .. } = phase { measured_ns } else { w.busy_ns },
        energy_j: w.energy_j,
        trace: None,
        thermal: w.thermal,
        age: None,
    }
}

/// Timer tokens: the source's index times 4 plus one of these.
const TIMER_SUBMIT: u32 = 0;
const TIMER_BURST: u32 = 1;
/// A timer of the scheduler above the loop (e.g. a delayed job start).
pub(crate) const TIMER_EXTERNAL: u32 = 2;

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
    next_issue: u64,
    /// Mean time between commands under the rate limits, ns (0: none).
    rate_gap_ns: f64,
    rate_rng: Option<Pcg64Mcg>,
    busy_since: u64,
    pub(crate) end_ns: u64,
    pub(crate) finished: bool,
    /// fio's error number (110 = ETIMEDOUT after `max_latency`).
    pub(crate) error: i32,
    pub(crate) stats: Option<Box<JobStats>>,
    /// Issue no more commands (steady state reached, latency search done).
    stop: bool,
    /// The latency-target depth search (`latency_target`).
    pub(crate) lat: Option<LatSearch>,
    /// Steady-state detection (`ss`).
    pub(crate) ss: Option<SsTracker>,
    /// fio's log files, when the job writes any.
    pub(crate) logs: Option<JobLogs>,
}

impl Source {
    /// A source starting at `start` on a drive of `capacity` bytes;
    /// `own_stats` keeps the job's own statistics ([`JobStats`]), with
    /// every bandwidth sample if it is `Some(true)`. It
    /// starts when the loop's scheduler says so (`finished` until then).
    pub(crate) fn new(spec: IoSpec, capacity: u64, start: u64, own_stats: Option<bool>) -> Source {
        let ramp_end = start + spec.ramp_time_ns;
        let span = spec.size.unwrap_or(capacity - spec.offset);
        let byte_limit = match (spec.time_based && spec.runtime_ns.is_some(), spec.io_size) {
            (true, _) => u64::MAX,
            (false, Some(b)) => b.saturating_mul(spec.loops as u64),
            (false, None) => span.saturating_mul(spec.loops as u64),
        };
        let ios_limit = spec.number_ios.unwrap_or(u64::MAX);
        Source {
            gen: IoGenerator::new(&spec, capacity),
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
            next_issue: start,
            rate_gap_ns: rate_gap(&spec),
            rate_rng: spec.rate.filter(|r| r.poisson).map(|_| Pcg64Mcg::seed_from_u64(spec.randseed ^ 0x0a11_e5a1)),
            busy_since: start,
            end_ns: start,
            finished: true,
            error: 0,
            stop: false,
            lat: None,
            ss: None,
            logs: None,
            stats: own_stats.map(|keep_samples| {
                Box::new(JobStats {
                    dirs: Default::default(),
                    series: TimeSeries::new(start),
                    samples: Samples::new(keep_samples),
                    depth_levels: [0; 7],
                    busy_ns: 0,
                })
            }),
            spec,
        }
    }

    /// Start (or restart) the clock-dependent state at `now`.
    fn begin(&mut self, now: u64) {
        self.finished = false;
        self.start = now;
        self.ramp_end = now + self.spec.ramp_time_ns;
        self.deadline = self.spec.runtime_ns.map(|t| self.ramp_end + t);
        self.seg_start = now;
        self.next_issue = now;
        self.busy_since = now;
        self.end_ns = now;
        if let Some(st) = &mut self.stats {
            st.series.start_ns = now;
        }
        self.lat = self.spec.latency_target.map(|t| LatSearch::new(t, self.depth, now));
        self.ss = self.spec.steadystate.map(SsTracker::new);
    }

    /// Commands the job may have outstanding now: its depth, or the
    /// latency search's (0 while a ramp-down drains).
    #[inline]
    fn limit(&self) -> u32 {
        match &self.lat {
            None => self.depth,
            Some(l) => l.depth_limit().min(self.depth),
        }
    }

    #[inline]
    fn draining(&self) -> bool {
        self.lat.as_ref().is_some_and(|l| l.draining())
    }

    /// A drain the latency search asked for is over: start its next
    /// window (restarting the statistics for the final run) and fill the
    /// queue to the new depth.
    fn drain_over(&mut self, dev: &mut Device, me: u32) {
        let now = dev.now();
        if let Some(l) = &mut self.lat {
            if l.drained(now, self.completions) {
                // fio's reset_all_stats: the report covers the final run.
                self.ramp_end = now;
                if let Some(st) = &mut self.stats {
                    st.dirs = Default::default();
                    st.samples = Samples::new(st.samples.kept.is_some());
                    st.depth_levels = [0; 7];
                }
            }
        }
        self.fill(dev, me);
    }

    #[inline]
    fn can_issue(&self, now: u64) -> bool {
        self.error == 0
            && !self.stop
            && self.issued < self.byte_limit
            && self.issued_ios < self.ios_limit
            && self.deadline.is_none_or(|d| now < d)
            && self.seg_issued < self.burst_bytes
    }

    /// Submit the next command now.
    #[inline]
    fn submit(&mut self, dev: &mut Device, tag: u32) {
        let cmd = self.gen.next_command();
        // Warm the map entries of the commands that follow: the map
        // lines of the one 16 ahead, the reverse entries of the one 8
        // ahead (whose map line is warm by now).
        dev.drive().prefetch_map(self.gen.ahead(LOOKAHEAD));
        dev.drive().prefetch_update(self.gen.ahead(LOOKAHEAD / 2));
        let now = dev.now();
        dev.submit(cmd, tag);
        if self.outstanding == 0 {
            self.busy_since = now;
        }
        self.outstanding += 1;
        self.issued += cmd.len as u64;
        self.seg_issued += cmd.len as u64;
        self.issued_ios += 1;
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
    fn issue_or_wait(&mut self, dev: &mut Device, me: u32, think: bool) {
        let now = dev.now();
        let at = if think { now + self.spec.thinktime_ns } else { now };
        let at = if self.rate_gap_ns > 0.0 {
            // The next arrival of the rate's schedule (fio's rate
            // process), independent of completions: a job that fell
            // behind catches up, as fio's does.
            let arrival = self.next_issue;
            let mut gap = self.rate_gap_ns;
            if let Some(rng) = &mut self.rate_rng {
                gap *= -(1.0 - rng.random::<f64>()).ln();
            }
            self.next_issue = arrival + gap.round() as u64;
            at.max(arrival)
        } else {
            at
        };
        if at > now {
            self.pending += 1;
            dev.set_timer(at, me * 4 + TIMER_SUBMIT);
        } else {
            self.submit(dev, me);
        }
    }

    /// Fill the queue to the job's depth (at the start of a burst or of
    /// the job, or when the latency search raises the depth).
    fn fill(&mut self, dev: &mut Device, me: u32) {
        let now = dev.now();
        while self.outstanding + self.pending < self.limit() && self.can_issue(now) {
            self.issue_or_wait(dev, me, false);
        }
    }

    /// Record a completion in the job's own statistics, its steady-state
    /// detection and its logs (after the ramp).
    #[inline]
    fn record(&mut self, c: &Completion, drive: &Drive) {
        if c.submitted_ns < self.ramp_end {
            return;
        }
        let lat = c.latency_ns();
        let k = c.cmd.kind as usize;
        let bytes = c.cmd.len as u64;
        let rel = c.done_ns - self.ramp_end;
        if let Some(st) = &mut self.stats {
            st.dirs[k].record(bytes, lat);
            st.series.record(c.done_ns - st.series.start_ns, k, bytes, lat, drive);
            st.samples.record(rel / SAMPLE_NS, k, bytes);
        }
        if let Some(ss) = &mut self.ss {
            if ss.on_completion(rel, bytes) {
                // Steady state: fio terminates the job.
                self.stop = true;
            }
        }
        if let Some(logs) = &mut self.logs {
            logs.record(rel, k, bytes, c.cmd.offset, lat);
        }
    }
}

/// Mean time between commands under `spec`'s rate limits, ns (0: none):
/// each direction's gap (its block size over its byte rate, or one over
/// its IOPS, whichever is longer), weighted by the read/write mix.
fn rate_gap(spec: &IoSpec) -> f64 {
    let Some(r) = spec.rate else { return 0.0 };
    let share = match spec.rw {
        RwPattern::Read | RwPattern::RandRead => [1.0, 0.0, 0.0],
        RwPattern::Write | RwPattern::RandWrite => [0.0, 1.0, 0.0],
        RwPattern::Trim | RwPattern::RandTrim => [0.0, 0.0, 1.0],
        RwPattern::TrimWrite => [0.0, 0.5, 0.5],
        RwPattern::ReadWrite | RwPattern::RandRw => {
            let rd = spec.rwmixread as f64 / 100.0;
            [rd, 1.0 - rd, 0.0]
        }
    };
    (0..3)
        .map(|k| {
            let mut gap = 0.0f64;
            if r.bytes_per_s[k] > 0 {
                gap = gap.max(spec.bs_of(k) as f64 * 1e9 / r.bytes_per_s[k] as f64);
            }
            if r.iops[k] > 0 {
                gap = gap.max(1e9 / r.iops[k] as f64);
            }
            share[k] * gap
        })
        .sum()
}

/// What a scheduler above the loop wants done: sources to start now and
/// timers (time, id) after which it is asked again.
#[derive(Debug, Default)]
pub(crate) struct Action {
    /// Indices of sources to start now.
    pub(crate) start: Vec<usize>,
    /// Timers to set: (time, id given back in [`Hooked::Timer`]).
    pub(crate) timers: Vec<(u64, u32)>,
}

/// The scheduler's hook: told when the loop begins, when one of its timers
/// expires and when a source finishes.
pub(crate) type Hook<'a> = dyn FnMut(&mut Device, &mut [Source], Hooked) -> Action + 'a;

/// What the scheduler hook is told.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Hooked {
    /// The loop begins.
    Begin,
    /// Its timer with this id expired.
    Timer(u32),
    /// Source `i` finished.
    Finished(usize),
}

/// The closed loop over one device: every running source keeps its
/// `iodepth` commands outstanding (with think time, rate limits and
/// bursts) until its limits; the hook decides when sources start. Returns
/// when no source runs and the hook has no timer left.
pub(crate) fn drive_sources(
    dev: &mut Device,
    sources: &mut [Source],
    mut progress: Option<(&mut ProgressFn, usize, usize)>,
    hook: &mut Hook<'_>,
) {
    let single = sources.len() == 1;
    let mut running = 0usize;
    let mut hook_timers = 0usize;
    let mut work = vec![Hooked::Begin];
    let mut react = |dev: &mut Device,
                     sources: &mut [Source],
                     work: &mut Vec<Hooked>,
                     running: &mut usize,
                     hook_timers: &mut usize| {
        while let Some(h) = work.pop() {
            let action = hook(dev, sources, h);
            for (at, id) in action.timers {
                *hook_timers += 1;
                dev.set_timer(at.max(dev.now()), id * 4 + TIMER_EXTERNAL);
            }
            for j in action.start {
                let s = &mut sources[j];
                s.begin(dev.now());
                s.fill(dev, j as u32);
                if s.outstanding == 0 && s.pending == 0 {
                    s.finished = true;
                    work.push(Hooked::Finished(j));
                } else {
                    *running += 1;
                }
            }
        }
    };
    react(dev, sources, &mut work, &mut running, &mut hook_timers);
    let mut next_progress = dev.now() + 1_000_000_000;
    while running > 0 || hook_timers > 0 {
        let Some(ev) = dev.next_event() else { break };
        let now = dev.now();
        let mut ended = None;
        match ev {
            Event::Completion(c) => {
                let i = c.tag as usize;
                let s = &mut sources[i];
                s.outstanding -= 1;
                s.completions += 1;
                s.record(&c, dev.drive());
                if s.spec.max_latency_ns.is_some_and(|m| c.latency_ns() > m) {
                    s.error = 110;
                }
                let mut raised = false;
                if let Some(l) = &mut s.lat {
                    match l.on_completion(c.latency_ns(), now, s.completions, c.submitted_ns >= s.ramp_end) {
                        LatAction::Go => raised = true,
                        LatAction::Drain => {}
                        LatAction::Fatal => s.error = 110,
                        LatAction::Done => s.stop = true,
                    }
                }
                if s.can_issue(now) && s.outstanding + s.pending < s.limit() {
                    let think = s.spec.thinktime_ns > 0 && s.completions % s.spec.thinktime_blocks as u64 == 0;
                    s.issue_or_wait(dev, i as u32, think);
                }
                if raised {
                    s.fill(dev, i as u32);
                }
                if s.outstanding == 0 && s.pending == 0 && s.draining() {
                    s.drain_over(dev, i as u32);
                }
                if s.outstanding == 0 {
                    s.end_ns = now;
                    if let Some(st) = &mut s.stats {
                        st.busy_ns += now - s.busy_since;
                    }
                    if s.pending == 0 {
                        ended = Some(i);
                    }
                }
            }
            Event::Timer(token) => {
                let i = (token / 4) as usize;
                match token % 4 {
                    TIMER_SUBMIT => {
                        let s = &mut sources[i];
                        s.pending -= 1;
                        if s.can_issue(now) && s.outstanding + s.pending < s.limit() {
                            s.submit(dev, i as u32);
                        } else if s.outstanding == 0 && s.pending == 0 {
                            if s.draining() {
                                s.drain_over(dev, i as u32);
                            }
                            if s.outstanding == 0 && s.pending == 0 {
                                ended = Some(i);
                            }
                        }
                    }
                    TIMER_BURST => {
                        let s = &mut sources[i];
                        s.pending -= 1;
                        s.end_ns = now;
                        if !restart_burst(dev, s, i) {
                            running -= 1;
                            work.push(Hooked::Finished(i));
                        }
                    }
                    _ => {
                        hook_timers -= 1;
                        work.push(Hooked::Timer(i as u32));
                    }
                }
            }
        }
        if let Some(i) = ended {
            let s = &mut sources[i];
            match s.spec.burst {
                Some(burst) if s.error == 0 => {
                    // End of a burst: idle so that busy / (busy + idle) is
                    // the duty cycle, then start the next burst.
                    let busy = now - s.seg_start;
                    let idle = (busy as f64 * (1.0 - burst.duty_cycle) / burst.duty_cycle).round() as u64;
                    if single {
                        dev.idle_until(now + idle);
                        s.end_ns = dev.now();
                        if !restart_burst(dev, s, i) {
                            running -= 1;
                            work.push(Hooked::Finished(i));
                        }
                    } else {
                        s.pending += 1;
                        dev.set_timer(now + idle, i as u32 * 4 + TIMER_BURST);
                    }
                }
                _ => {
                    s.finished = true;
                    running -= 1;
                    work.push(Hooked::Finished(i));
                }
            }
        }
        if !work.is_empty() {
            react(dev, sources, &mut work, &mut running, &mut hook_timers);
        }
        if let Some((cb, index, phases)) = progress.as_mut() {
            if now >= next_progress {
                next_progress = now + 1_000_000_000;
                let s = &sources[0];
                let by_bytes = (s.byte_limit != u64::MAX).then(|| s.issued as f64 / s.byte_limit as f64);
                let by_time = s.deadline.map(|d| (now - s.start) as f64 / (d - s.start).max(1) as f64);
                let fraction = match (by_bytes, by_time) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                cb(&Progress {
                    phase: s.spec.name.clone(),
                    phase_index: *index,
                    phases: *phases,
                    phase_ns: now - s.start,
                    fraction: fraction.map(|f| f.min(1.0)),
                });
            }
        }
    }
}

/// After a burst's idle gap: start the next burst; false (and the source
/// finished) when its limits are reached.
fn restart_burst(dev: &mut Device, s: &mut Source, me: usize) -> bool {
    let t = dev.now();
    if s.stop || s.issued >= s.byte_limit || s.issued_ios >= s.ios_limit || s.deadline.is_some_and(|dl| t >= dl) {
        s.finished = true;
        return false;
    }
    s.seg_start = t;
    s.seg_issued = 0;
    s.bursts += 1;
    s.fill(dev, me as u32);
    if s.outstanding == 0 && s.pending == 0 {
        s.finished = true;
        return false;
    }
    true
}
