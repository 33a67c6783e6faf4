//! The closed-loop driver: runs a job's phases (fio-style I/O, idle,
//! secure erase) on a [`Device`] in virtual time.
//!
//! An I/O phase is a closed loop, as fio's: `iodepth × numjobs` workload
//! slots each submit a command, wait for its completion, optionally think
//! (a device timer), and submit the next, until the phase's byte or time
//! limit; bursts alternate with idle gaps. The device core does the rest
//! (the drive, the clock, background work when idle, the statistics); this
//! driver decides only what to submit and when, and reports progress.

use crate::model::drive::{Drive, IoKind};
use crate::run::device::{Device, Event, Window};
use crate::run::stats::{Counters, DirStats, TimeSeries};
use crate::run::trace::{TraceSpec, TraceSummary};
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
    /// Trace phases: what the replay did and the trace's statistics.
    pub trace: Option<Box<TraceSummary>>,
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
        let mut bursts = 0;
        let (end_ns, record_from) = match phase {
            Phase::Idle { duration_ns, apst, .. } => {
                self.device.begin_window(start);
                if let Some(on) = *apst {
                    self.device.set_apst(on);
                }
                self.device.idle_until(start + duration_ns);
                (self.now(), start)
            }
            Phase::SecureErase { .. } => {
                self.device.begin_window(start);
                let done = self.device.format();
                self.device.idle_until(done);
                (self.now(), start)
            }
            Phase::Trace(spec) => return self.replay_trace(spec, index, phases),
            Phase::Io(spec) => {
                let ramp_end = start + spec.ramp_time_ns;
                self.device.begin_window(ramp_end);
                let end;
                (end, bursts) = self.run_io(spec, index, phases);
                (end, ramp_end)
            }
        };
        let idle_like = matches!(phase, Phase::Idle { .. } | Phase::SecureErase { .. });
        if idle_like {
            self.device.touch_series((end_ns - start).saturating_sub(1));
        }
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
            busy_ns: if let Phase::SecureErase { .. } = phase { measured_ns } else { w.busy_ns },
            energy_j: w.energy_j,
            trace: None,
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
        let dev = &mut self.device;
        let capacity = dev.drive().user_bytes();
        let start = dev.now();
        let ramp_end = start + spec.ramp_time_ns;
        let deadline = spec.runtime_ns.map(|t| ramp_end + t);
        let span = spec.size.unwrap_or(capacity - spec.offset);
        let byte_limit = match (spec.time_based && spec.runtime_ns.is_some(), spec.io_size) {
            (true, _) => u64::MAX,
            (false, Some(b)) => b,
            (false, None) => span,
        };
        let depth = spec.outstanding();
        dev.set_apst(spec.apst);
        let mut gen = IoGenerator::new(spec, capacity);
        let mut issued = 0u64;
        let mut pending_submits = 0usize;
        let burst_bytes = spec.burst.map_or(u64::MAX, |b| b.bytes);
        let mut seg_issued = 0u64;
        let mut seg_start = start;
        let mut end_ns = start;
        let mut next_progress = start + 1_000_000_000;
        let bs = spec.bs as u64;
        let can_issue = |issued: u64, seg_issued: u64, now: u64| {
            issued < byte_limit && deadline.is_none_or(|d| now < d) && seg_issued < burst_bytes
        };
        let mut submit = |dev: &mut Device, slot: u32, issued: &mut u64, seg_issued: &mut u64| {
            let cmd = gen.next_command();
            // Warm the map entries of the commands that follow: the map
            // lines of the one 16 ahead, the reverse entries of the one 8
            // ahead (whose map line is warm by now).
            dev.drive().prefetch_map(gen.ahead(LOOKAHEAD));
            dev.drive().prefetch_update(gen.ahead(LOOKAHEAD / 2));
            dev.submit(cmd, slot);
            *issued += bs;
            *seg_issued += bs;
        };

        let mut bursts = 1;
        for s in 0..depth {
            if !can_issue(issued, seg_issued, start) {
                break;
            }
            submit(dev, s, &mut issued, &mut seg_issued);
        }
        while let Some(ev) = dev.next_event() {
            let now = dev.now();
            match ev {
                Event::Completion(c) => {
                    if can_issue(issued, seg_issued, now) {
                        if spec.thinktime_ns > 0 {
                            pending_submits += 1;
                            dev.set_timer(now + spec.thinktime_ns, c.tag);
                        } else {
                            submit(dev, c.tag, &mut issued, &mut seg_issued);
                        }
                    }
                    if dev.outstanding() == 0 {
                        end_ns = now;
                    }
                }
                Event::Timer(s) => {
                    pending_submits -= 1;
                    if can_issue(issued, seg_issued, now) {
                        submit(dev, s, &mut issued, &mut seg_issued);
                    }
                }
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
            if dev.outstanding() == 0 && pending_submits == 0 {
                let Some(burst) = spec.burst else { break };
                // End of a burst: idle so that busy / (busy + idle) is the
                // duty cycle, then start the next burst.
                let busy = now - seg_start;
                let idle = (busy as f64 * (1.0 - burst.duty_cycle) / burst.duty_cycle).round() as u64;
                dev.idle_until(now + idle);
                let t = dev.now();
                end_ns = t;
                if issued >= byte_limit || deadline.is_some_and(|dl| t >= dl) {
                    break;
                }
                seg_start = t;
                seg_issued = 0;
                bursts += 1;
                for s in 0..depth {
                    if !can_issue(issued, seg_issued, t) {
                        break;
                    }
                    submit(dev, s, &mut issued, &mut seg_issued);
                }
            }
        }
        (end_ns.max(start), bursts)
    }
}
