//! The one way into a run: a prepared drive and a parsed job file in, the
//! results out ([`execute`]). It decides which runner runs the file — the
//! concurrent fio scheduler ([`crate::run::jobs`]) or the sequential phase
//! runner ([`crate::run::sim`]) — so the command line and the Python
//! binding, which only read arguments, show progress and write the
//! results, make that choice alike.

use crate::model::drive::Drive;
use crate::model::health::Health;
use crate::run::device::Device;
use crate::run::jobs::{try_run_jobs, JobResult};
use crate::run::sim::{PhaseResult, ProgressFn, Simulator};
use crate::run::workload::fio::JobFile;
use crate::run::workload::Phase;

/// How a job file runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Its jobs interleave on the drive, ordered by fio's rules
    /// ([`crate::run::jobs`]); results in fio's form ([`JobResult`]).
    Concurrent,
    /// Its sections run one after another as phases
    /// ([`Simulator::try_run_job`]); results as [`PhaseResult`]s.
    Sequential,
}

/// Which runner runs `file`, the one place this is decided.
///
/// A file with a trace section runs sequentially: a trace replay is not a
/// workload source of the closed-loop driver that interleaves fio's jobs
/// but a driver of its own ([`crate::run::trace`]), submitting at the
/// trace's recorded times (or its own dependency and queue-depth rules)
/// with the device to itself, so it cannot share the drive with other
/// jobs; its result carries the replay's summary, which only the run
/// document shows. A run that records its commands (`record_commands`,
/// the CLI's `--record-trace`) runs sequentially too: recording is
/// defined as every phase's commands in order, with the run document as
/// its output. Everything else runs concurrently, as fio would run it.
pub fn mode(file: &JobFile, record_commands: bool) -> Mode {
    if record_commands || file.jobs.iter().any(|j| matches!(j.phase, Phase::Trace(_))) {
        Mode::Sequential
    } else {
        Mode::Concurrent
    }
}

/// What a run may be asked for besides its job file.
#[derive(Default)]
pub struct RunOptions {
    /// Log every command the device completes, for writing the run as a
    /// trace afterwards ([`Device::take_log`] on [`RunOutcome::device`]);
    /// makes the run sequential (see [`mode`]).
    pub record_commands: bool,
    /// Called about once per simulated second of a sequential run
    /// (concurrent runs report no progress).
    pub progress: Option<ProgressFn>,
}

/// The results of a run, by the runner that made them.
#[derive(Debug)]
pub enum RunResults {
    /// Each job's results, in file order ([`Mode::Concurrent`]).
    Jobs(Vec<JobResult>),
    /// Each phase's results, in order ([`Mode::Sequential`]).
    Phases(Vec<PhaseResult>),
}

/// A finished run: its results and what the reports need besides.
pub struct RunOutcome {
    /// The results.
    pub results: RunResults,
    /// The drive's health log at the end.
    pub health: Health,
    /// The device after the run (its drive, clock and command log).
    pub device: Device,
}

impl RunOutcome {
    /// How the run ran.
    pub fn mode(&self) -> Mode {
        match self.results {
            RunResults::Jobs(_) => Mode::Concurrent,
            RunResults::Phases(_) => Mode::Sequential,
        }
    }

    /// The drive after the run.
    pub fn drive(&self) -> &Drive {
        self.device.drive()
    }
}

/// Run `file` on `drive` (already in its starting state), by the runner
/// [`mode`] chooses: the first error (a trace that cannot be read, a log
/// file that cannot be written) is returned.
pub fn execute(drive: Drive, file: &JobFile, opts: RunOptions) -> Result<RunOutcome, crate::Error> {
    check_drive(&drive, file)?;
    let resolved = in_zones(&drive, file)?;
    let file = resolved.as_ref().unwrap_or(file);
    let (results, device) = match mode(file, opts.record_commands) {
        Mode::Concurrent => {
            let mut device = Device::new(drive);
            let results = try_run_jobs(&mut device, file)?;
            (RunResults::Jobs(results), device)
        }
        Mode::Sequential => {
            let mut sim = Simulator::new(drive);
            if let Some(f) = opts.progress {
                sim.on_progress(f);
            }
            if opts.record_commands {
                sim.device().log_commands(true);
            }
            let results = sim.try_run_job(&file.to_job())?;
            (RunResults::Phases(results), sim.into_device())
        }
    };
    let health = Health::of(device.drive());
    Ok(RunOutcome { results, health, device })
}

/// The first job of `file` that needs another kind of drive: fio's
/// `zonemode=zbd` needs a zoned namespace (`[zns]`), `fdp=1` flexible data
/// placement (`[fdp]`) with every placement `plids` names. (A job without it on
/// a zoned drive runs, as fio's does on a zoned block device: its writes
/// off a zone's write pointer fail with the drive's status, which ends the
/// job with fio's I/O error.)
pub fn check_drive(drive: &Drive, file: &JobFile) -> Result<(), crate::error::JobError> {
    for job in &file.jobs {
        let placement = match &job.phase {
            Phase::Io(spec) => spec.placement.as_ref(),
            Phase::Trace(spec) => spec.placement.as_deref(),
            _ => None,
        };
        if let Some(p) = placement {
            check_placement(drive, p)?;
        }
        if let Phase::Io(spec) = &job.phase {
            if let Some(z) = spec.zbd.as_ref().filter(|_| !drive.is_zoned()) {
                return Err(crate::error::JobError::Invalid {
                    origin: z.at.clone(),
                    option: "zonemode".into(),
                    reason: format!(
                        "zonemode=zbd needs a zoned drive (a drive file with [zns]); {} is conventional",
                        drive.model().spec.name
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A job's (or trace section's) `fdp=1` needs a drive with `[fdp]` that
/// has every placement its `plids` names.
fn check_placement(drive: &Drive, p: &crate::run::workload::Placement) -> Result<(), crate::error::JobError> {
    let invalid = |option: &str, reason: String| crate::error::JobError::Invalid {
        origin: p.at.clone(),
        option: option.into(),
        reason,
    };
    let name = &drive.model().spec.name;
    let Some(f) = drive.model().fdp else {
        return Err(invalid("fdp", format!("fdp needs a drive with flexible data placement ([fdp]); {name} has none")));
    };
    if let Some(&bad) = p.ids.iter().find(|&&i| i >= f.placements()) {
        let why = format!(
            "placement id index {bad} is out of range: {name} has {} (0 to {})",
            f.placements(),
            f.placements() - 1
        );
        return Err(invalid("plids", why));
    }
    Ok(())
}

/// `file` with fio's sizes in zones (`offset=2z`, `size=1z`, `io_size=4z`)
/// turned into bytes of `drive`'s zones (`None`: it has none); a span past
/// the drive's end is an error naming the option.
pub fn in_zones(drive: &Drive, file: &JobFile) -> Result<Option<JobFile>, crate::error::JobError> {
    let uses = |j: &crate::run::workload::fio::JobEntry| match &j.phase {
        Phase::Io(s) => s.zbd.as_ref().is_some_and(|z| z.in_zones.iter().any(Option::is_some)),
        _ => false,
    };
    if !file.jobs.iter().any(uses) {
        return Ok(None);
    }
    let Some(zone) = drive.ftl().zoned().map(|z| z.zones().model().zone_lpns as u64 * 4096) else {
        return Ok(None);
    };
    let mut out = file.clone();
    for job in &mut out.jobs {
        let Phase::Io(spec) = &mut job.phase else { continue };
        let Some(z) = &spec.zbd else { continue };
        let (at, [offset, size, io_size]) = (z.at.clone(), z.in_zones);
        if let Some(n) = offset {
            spec.offset = n * zone;
        }
        if let Some(n) = size {
            spec.size = Some(n * zone);
        }
        if let Some(n) = io_size {
            spec.io_size = Some(n * zone);
        }
        let end = spec.offset + spec.size.unwrap_or(0);
        if spec.offset >= drive.user_bytes() || end > drive.user_bytes() {
            return Err(crate::error::JobError::Invalid {
                origin: at,
                option: "size".into(),
                reason: format!("{end} bytes (in zones of {zone}) is beyond the drive's {} bytes", drive.user_bytes()),
            });
        }
    }
    Ok(Some(out))
}
