//! The simulator: runs a job's phases against a drive in virtual time.
//!
//! An I/O phase is a closed loop: `iodepth × numjobs` workload slots each
//! submit a command, wait for its completion, optionally think, and submit
//! the next, until the phase's byte or time limit. A completion is one
//! event; everything inside the drive is computed when the command is
//! submitted (see [`crate::model::drive`]). When no command is outstanding for the
//! drive's idle threshold, the drive may do background work (one GC victim
//! per step), which later commands then find on the dies.

use crate::model::drive::{Drive, IoKind};
use crate::run::engine::{EventKind, EventQueue};
use crate::run::stats::{Counters, DirStats, TimeSeries};
use crate::run::workload::generator::LOOKAHEAD;
use crate::run::workload::{IoGenerator, IoSpec, Job, Phase};

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

    /// Mean power of the last whole second of the phase (the whole phase
    /// if it is shorter), W: the state an idle drive settled in.
    pub fn settled_power_w(&self) -> Option<f64> {
        let whole = ((self.end_ns - self.start_ns) / 1_000_000_000) as usize;
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

#[derive(Debug, Clone, Copy, Default)]
struct InFlight {
    submitted: u64,
    kind: u8,
    len: u32,
}

/// A drive and its clock.
pub struct Simulator {
    /// The drive.
    pub drive: Drive,
    events: EventQueue,
    activity: u32,
    /// Activity generation that has a chain of idle checks scheduled.
    idle_chain: Option<u32>,
    wait_token: u32,
    idle_threshold_ns: u64,
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
        let idle_threshold_ns = drive.model.spec.ftl.idle_threshold_ns;
        Simulator {
            drive,
            events: EventQueue::default(),
            activity: 0,
            idle_chain: None,
            wait_token: 0,
            idle_threshold_ns,
            progress: None,
        }
    }

    /// Call `f` about once per simulated second with the run's progress.
    pub fn on_progress(&mut self, f: impl FnMut(&Progress) + 'static) {
        self.progress = Some(Box::new(f));
    }

    /// Current virtual time, ns.
    pub fn now(&self) -> u64 {
        self.events.now()
    }

    /// Run every phase of a job in order.
    pub fn run_job(&mut self, job: &Job) -> Vec<PhaseResult> {
        let n = job.phases.len();
        job.phases.iter().enumerate().map(|(i, p)| self.run_phase(p, i, n)).collect()
    }

    /// Run one phase.
    pub fn run_phase(&mut self, phase: &Phase, index: usize, phases: usize) -> PhaseResult {
        let start = self.now();
        let before = Counters::of(&self.drive);
        let energy_before = self.drive.energy_j(start);
        let mut result = PhaseResult {
            phase: phase.clone(),
            start_ns: start,
            end_ns: start,
            measured_ns: 0,
            dirs: Default::default(),
            series: TimeSeries { start_ns: start, seconds: Vec::new() },
            counters: Counters::default(),
            bursts: 0,
            busy_ns: 0,
            energy_j: None,
        };
        match phase {
            Phase::Idle { duration_ns, apst, .. } => {
                if let Some(on) = *apst {
                    self.drive.set_apst(on, start);
                }
                self.wait_recording(start + duration_ns, &mut result.series);
                result.end_ns = self.now();
                result.measured_ns = result.end_ns - start;
                result.series.touch(result.measured_ns.saturating_sub(1), &self.drive);
            }
            Phase::SecureErase { .. } => {
                let done = self.drive.format(start);
                self.activity = self.activity.wrapping_add(1);
                self.wait_recording(done, &mut result.series);
                result.end_ns = self.now();
                result.measured_ns = result.end_ns - start;
                result.busy_ns = result.measured_ns;
                result.series.touch(result.measured_ns.saturating_sub(1), &self.drive);
            }
            Phase::Io(spec) => self.run_io(spec, &mut result, index, phases),
        }
        result.series.finish(&self.drive, result.end_ns);
        result.counters = Counters::of(&self.drive).since(&before);
        result.energy_j = match (energy_before, self.drive.energy_j(result.end_ns)) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        result
    }

    /// Let virtual time pass with no host I/O until `until`, doing
    /// background work when the drive wants it.
    pub fn wait_until(&mut self, until: u64) {
        if until <= self.now() {
            return;
        }
        self.wait_token += 1;
        let token = self.wait_token;
        self.events.schedule(until, EventKind::WaitEnd(token));
        self.schedule_idle_check();
        while let Some(ev) = self.events.pop() {
            match ev.kind {
                EventKind::WaitEnd(t) if t == token => break,
                EventKind::IdleCheck(g) => self.idle_check(g),
                _ => {}
            }
        }
    }

    /// [`Simulator::wait_until`], opening each second of `series` as its
    /// boundary passes (so that per-second power and state are sampled on
    /// time while the host is idle).
    fn wait_recording(&mut self, until: u64, series: &mut TimeSeries) {
        loop {
            let next = series.start_ns + series.seconds.len() as u64 * 1_000_000_000;
            if next >= until {
                break;
            }
            self.wait_until(next);
            series.touch(next - series.start_ns, &self.drive);
        }
        self.wait_until(until);
    }

    fn schedule_idle_check(&mut self) {
        if self.idle_chain == Some(self.activity) {
            return;
        }
        self.idle_chain = Some(self.activity);
        let at = self.now() + self.idle_threshold_ns;
        self.events.schedule(at, EventKind::IdleCheck(self.activity));
    }

    fn idle_check(&mut self, generation: u32) {
        if generation != self.activity {
            return;
        }
        let now = self.now();
        match self.drive.background_step(now) {
            Some(done) => self.events.schedule(done.max(now + 1), EventKind::IdleCheck(generation)),
            None => self.idle_chain = None,
        }
    }

    // Slots are indexed inside the submit! macro.
    #[allow(clippy::needless_range_loop)]
    fn run_io(&mut self, spec: &IoSpec, r: &mut PhaseResult, index: usize, phases: usize) {
        let capacity = self.drive.user_bytes();
        let start = self.now();
        let ramp_end = start + spec.ramp_time_ns;
        let deadline = spec.runtime_ns.map(|t| ramp_end + t);
        let span = spec.size.unwrap_or(capacity - spec.offset);
        let byte_limit = match (spec.time_based && spec.runtime_ns.is_some(), spec.io_size) {
            (true, _) => u64::MAX,
            (false, Some(b)) => b,
            (false, None) => span,
        };
        let depth = spec.outstanding() as usize;
        self.drive.set_apst(spec.apst, start);
        let mut gen = IoGenerator::new(spec, capacity);
        let mut slots = vec![InFlight::default(); depth];
        let mut issued = 0u64;
        let mut outstanding = 0usize;
        let mut pending_submits = 0usize;
        let burst_bytes = spec.burst.map_or(u64::MAX, |b| b.bytes);
        let mut seg_issued = 0u64;
        let mut seg_start = start;
        let mut busy_since = start;
        let mut next_progress = start + 1_000_000_000;
        let bs = spec.bs as u64;

        macro_rules! can_issue {
            ($now:expr) => {
                issued < byte_limit && deadline.is_none_or(|d| $now < d) && seg_issued < burst_bytes
            };
        }
        macro_rules! submit {
            ($slot:expr, $now:expr) => {{
                let cmd = gen.next_command();
                // Warm the map entries of the commands that follow: the
                // map lines of the one 16 ahead, the reverse entries of
                // the one 8 ahead (whose map line is warm by now).
                self.drive.prefetch_map(gen.ahead(LOOKAHEAD));
                self.drive.prefetch_update(gen.ahead(LOOKAHEAD / 2));
                let done = self.drive.submit(cmd, $now);
                slots[$slot] = InFlight { submitted: $now, kind: cmd.kind as u8, len: cmd.len };
                self.events.schedule(done, EventKind::Complete($slot as u32));
                self.activity = self.activity.wrapping_add(1);
                issued += bs;
                seg_issued += bs;
                outstanding += 1;
            }};
        }

        r.bursts = 1;
        for s in 0..depth {
            if !can_issue!(start) {
                break;
            }
            submit!(s, start);
        }
        while let Some(ev) = self.events.pop() {
            let now = ev.time;
            match ev.kind {
                EventKind::Complete(s) => {
                    let f = slots[s as usize];
                    outstanding -= 1;
                    if f.submitted >= ramp_end {
                        let lat = now - f.submitted;
                        r.dirs[f.kind as usize].record(f.len as u64, lat);
                        r.series.record(now - start, f.kind as usize, f.len as u64, lat, &self.drive);
                    }
                    if can_issue!(now) {
                        if spec.thinktime_ns > 0 {
                            pending_submits += 1;
                            self.events.schedule(now + spec.thinktime_ns, EventKind::Submit(s));
                        } else {
                            submit!(s as usize, now);
                        }
                    }
                    if outstanding == 0 {
                        r.busy_ns += now - busy_since;
                        r.end_ns = now;
                        self.schedule_idle_check();
                    }
                }
                EventKind::Submit(s) => {
                    pending_submits -= 1;
                    if can_issue!(now) {
                        if outstanding == 0 {
                            busy_since = now;
                        }
                        submit!(s as usize, now);
                    }
                }
                EventKind::IdleCheck(g) => self.idle_check(g),
                EventKind::WaitEnd(_) => {}
            }
            if now >= next_progress {
                next_progress = now + 1_000_000_000;
                if let Some(cb) = self.progress.as_mut() {
                    let by_bytes = (byte_limit != u64::MAX).then(|| issued as f64 / byte_limit as f64);
                    let by_time = deadline.map(|d| (now - start) as f64 / (d - start).max(1) as f64);
                    let fraction = match (by_bytes, by_time) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                    cb(&Progress {
                        phase: spec.name.clone(),
                        phase_index: index,
                        phases,
                        phase_ns: now - start,
                        fraction: fraction.map(|f| f.min(1.0)),
                    });
                }
            }
            if outstanding == 0 && pending_submits == 0 {
                let Some(burst) = spec.burst else { break };
                // End of a burst: idle so that busy / (busy + idle) is the
                // duty cycle, then start the next burst.
                let busy = now - seg_start;
                let idle = (busy as f64 * (1.0 - burst.duty_cycle) / burst.duty_cycle).round() as u64;
                self.wait_recording(now + idle, &mut r.series);
                let t = self.now();
                r.end_ns = t;
                if issued >= byte_limit || deadline.is_some_and(|dl| t >= dl) {
                    break;
                }
                seg_start = t;
                seg_issued = 0;
                busy_since = t;
                r.bursts += 1;
                for s in 0..depth {
                    if !can_issue!(t) {
                        break;
                    }
                    submit!(s, t);
                }
            }
        }
        r.end_ns = r.end_ns.max(start);
        r.measured_ns = r.end_ns.saturating_sub(ramp_end);
    }
}
