//! Runs a job's phases (fio-style I/O, idle, secure erase, traces,
//! retention, aging) one after the other on a [`Device`] in virtual time,
//! and what each phase measured ([`PhaseResult`]).
//!
//! An I/O phase is a closed loop, as fio's: `iodepth × numjobs` workload
//! slots each submit a command, wait for its completion, optionally think
//! (a device timer), and submit the next, until the phase's byte or time
//! limit; bursts alternate with idle gaps. One job's bookkeeping is a
//! [`crate::run::source::Source`]; the loop that drives one or several of
//! them on the device is [`crate::run::driver`]. The device core does the
//! rest (the drive, the clock, background work when idle, the statistics).
//! Concurrent jobs of a fio job file are scheduled by [`crate::run::jobs`],
//! not here.

use crate::model::drive::{Drive, IoKind};
use crate::run::device::{Device, Window};
use crate::run::driver::{drive_sources, Action, Hooked};
use crate::run::source::Source;
use crate::run::stats::{Counters, DirStats, Stalls, TimeSeries};
use crate::run::trace::{TraceSpec, TraceSummary};
use crate::run::workload::{IoSpec, Job, Phase};

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
    /// Intervals in which commands were outstanding and none completed.
    pub stalls: Stalls,
    /// Energy drawn from start to end, J (`None`: no power model).
    pub energy_j: Option<f64>,
    /// Trace phases: what the replay did and the trace's statistics.
    pub trace: Option<Box<TraceSummary>>,
    /// Temperatures over the phase (`None`: no thermal model).
    pub thermal: Option<crate::run::device::ThermalWindow>,
    /// Aging phases: the days aged and the wear after them.
    pub age: Option<crate::run::lifetime::AgeSummary>,
    /// Zones and placement handles over the phase (`None`: a drive
    /// without `[zns]` or `[fdp]`, or a phase that timed no command).
    pub placement: Option<crate::run::placement_stats::PlacementWindow>,
}

impl PhaseResult {
    /// A phase's results from its statistics window (what
    /// [`Device::end_window`] returns, or a job's own statistics as one):
    /// from the window's start to its end, throughput over the time from
    /// its `record_from_ns` (after `ramp_time`). What a window does not
    /// hold starts empty — no bursts, no trace or aging summary — for the
    /// phases that have one to set it.
    pub fn from_window(phase: Phase, w: Window) -> PhaseResult {
        PhaseResult {
            phase,
            start_ns: w.start_ns,
            end_ns: w.end_ns,
            measured_ns: w.end_ns.saturating_sub(w.record_from_ns),
            dirs: w.dirs,
            series: w.series,
            counters: w.counters,
            bursts: 0,
            busy_ns: w.busy_ns,
            stalls: w.stalls,
            energy_j: w.energy_j,
            trace: None,
            thermal: w.thermal,
            age: None,
            placement: w.placement,
        }
    }

    /// A phase that timed no command (retention, aging): from `start` to
    /// `end`, no I/O, an empty series, the drive's `counters` over it and
    /// no energy drawn (`Some(0.0)` with a `power_model`: the power was
    /// off, or the days ran untimed).
    pub fn untimed(phase: Phase, start: u64, end: u64, counters: Counters, power_model: bool) -> PhaseResult {
        PhaseResult {
            phase,
            start_ns: start,
            end_ns: end,
            measured_ns: end - start,
            dirs: Default::default(),
            series: TimeSeries::new(start),
            counters,
            bursts: 0,
            busy_ns: 0,
            stalls: Stalls::default(),
            energy_j: power_model.then_some(0.0),
            trace: None,
            thermal: None,
            age: None,
            placement: None,
        }
    }

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
        let (end_ns, bursts) = match phase {
            Phase::Age(spec) => {
                // Progress by the day (an aging phase may take minutes).
                let progress = &mut self.progress;
                let mut report = |day: u64| {
                    if let Some(cb) = progress.as_mut() {
                        let fraction = Some(day as f64 / spec.days.max(1) as f64);
                        let phase_ns = day * crate::run::lifetime::DAY_NS;
                        cb(&Progress { phase: spec.name.clone(), phase_index: index, phases, phase_ns, fraction });
                    }
                };
                return Ok(crate::run::lifetime::run_age(&mut self.device, phase, spec, &mut report)?);
            }
            Phase::Idle { .. } | Phase::SecureErase { .. } | Phase::Retention { .. } => {
                return run_quiet(&mut self.device, phase)
            }
            Phase::Trace(spec) => return self.replay_trace(spec, index, phases),
            Phase::Io(spec) => {
                let ramp_end = start + spec.ramp_time_ns;
                self.device.begin_window(ramp_end);
                self.run_io(spec, index, phases)
            }
        };
        let mut r = PhaseResult::from_window(phase.clone(), self.device.end_window(end_ns));
        r.bursts = bursts;
        Ok(r)
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
        self.device.set_link_pm(spec.link_pm);
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
pub(crate) fn run_quiet(dev: &mut Device, phase: &Phase) -> Result<PhaseResult, crate::Error> {
    match phase {
        Phase::Retention { duration_ns, .. } => {
            return Ok(crate::run::lifetime::run_retention(dev, phase, *duration_ns))
        }
        Phase::Age(spec) => return crate::run::lifetime::run_age(dev, phase, spec, &mut |_| {}).map_err(Into::into),
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
    let mut r = PhaseResult::from_window(phase.clone(), dev.end_window(end_ns));
    if let Phase::SecureErase { .. } = phase {
        // The erase keeps the drive busy throughout.
        r.busy_ns = r.measured_ns;
    }
    Ok(r)
}
