//! `ssdtwin fit`: a twin of a particular drive from fio measurements of it.
//!
//! ```text
//!  battery.fio ──► real fio on the drive ──► JSON (+ bandwidth logs)
//!                                              │ measure: the numbers of each job
//!  base preset ──► identify: capacity, SLC cache sizes (the logs' knees)
//!              ──► optimise: reads (Nelder–Mead: tR, command overhead, channel rate),
//!                  dies (QD scaling), SLC and native program times, cache sizes,
//!                  spare area, then the command overhead from the QD1 writes and
//!                  tR and channel rate again (root finding on the measurement
//!                  each one moves)
//!                  every candidate judged by replaying the measured jobs on it
//!              ──► report: each measurement, the twin's value, the error;
//!                  each parameter with its uncertainty and what constrains it
//! ```
//!
//! The method is system identification of a model whose structure is
//! known (design: "a twin of a particular drive"): the battery
//! ([`battery`]) is built so that each parameter moves mainly one or two
//! of its numbers, so the parameters are found stage by stage with a
//! well-kept optimiser (`argmin`: Nelder–Mead for the three read-path
//! parameters that act together, Brent's root finding for the others), and
//! a last pass measures how each number moves with each parameter (the
//! sensitivity matrix) for the uncertainties. Every candidate is judged
//! by the simulator itself, replaying the jobs as fio recorded them
//! ([`replay`]), so nothing is assumed about the drive that the model
//! does not assume.
//!
//! Results of jobs that are not the battery's are measurements too: the
//! refinement stage ([`refine`]) replays them from the state they were
//! measured in and adjusts the parameters they determine, after the
//! battery's stages (which it then takes as prior knowledge) or alone.
//!
//! Left out: power and thermal parameters (fio measures neither),
//! the parameters [`params`] lists as kept from the base.

pub mod battery;
pub mod figures;
pub mod identify;
pub mod measure;
pub mod optimise;
pub mod params;
pub mod refine;
pub mod remote;
pub mod replay;
pub mod report;
mod reserve;
mod room;
mod root;
pub mod search;
mod transfer;

use std::collections::BTreeSet;

use thiserror::Error as ThisError;

use crate::run::state::DriveState;
use crate::run::workload::{parse_job_file, JobOptions};
use crate::spec::DriveSpec;
use battery::{Unit, JOBS};
use measure::{metrics, JobRecord, Quantity};
pub use optimise::fit;

/// Why a fit could not be made.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum FitError {
    /// A result file, or a job in it, cannot be used.
    #[error("{origin}: {reason}")]
    Input {
        /// File (and line), or file and job.
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// The base drive is not a valid drive.
    #[error("base drive: {0}")]
    Base(String),
    /// A candidate drive could not be built (a parameter out of range).
    #[error("candidate drive: {0}")]
    Candidate(String),
    /// A replay on the twin failed.
    #[error("replay on the twin: {0}")]
    Replay(String),
}

/// A callback given a line on each stage's progress.
pub type FitProgress = Box<dyn Fn(&str) + Sync>;

/// How to fit.
pub struct FitOptions {
    /// Longest simulated time of a stationary job's replay, ns (their
    /// rates settle within a second or two; the measured runtime is kept
    /// when shorter).
    pub runtime_cap_ns: u64,
    /// Seed of the replays' starting states.
    pub seed: u64,
    /// Most Nelder–Mead iterations of the read-path stage.
    pub read_iterations: u64,
    /// Called with a line on each stage's progress.
    pub progress: Option<FitProgress>,
    /// The state the drive was in when the jobs outside the battery were
    /// measured (`ssdtwin fit --state`).
    pub state: DriveState,
    /// Most Nelder–Mead iterations of the refinement stage.
    pub refine_iterations: u64,
    /// Where the replays run: `None` on this machine's cores; else each
    /// replay is handed to this executor as a task ([`remote`]: the
    /// Python package's Ray backend).
    pub executor: Option<remote::Executor>,
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions {
            runtime_cap_ns: 2_000_000_000,
            seed: 1,
            read_iterations: 60,
            progress: None,
            state: DriveState::Fresh,
            refine_iterations: 40,
            executor: None,
        }
    }
}

/// One measured number.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The job.
    pub job: String,
    /// The battery unit it belongs to.
    pub unit: Unit,
    /// What.
    pub quantity: Quantity,
    /// Its value.
    pub value: f64,
}

/// The measurements in `jobs`, after checking them. A job of the
/// battery's name must have its block size and pattern and be replayable
/// (its options parse); any other job is a measurement of its own
/// ([`Unit::Given`], used by [`refine`]) when the twin can replay it and
/// fio reported no error for it, else a warning says it is not used and
/// why. Returns the measurements and the warnings: battery jobs missing
/// (with what is then not determined, when the battery was run at all),
/// logs missing, jobs not used.
pub fn measurements(jobs: &[JobRecord], capacity: u64) -> Result<(Vec<Measurement>, Vec<String>), FitError> {
    let mut warnings = Vec::new();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for j in jobs {
        if !seen.insert(j.name.clone()) {
            return Err(FitError::Input {
                origin: j.origin.clone(),
                reason: "a second job of this name: give each job's result once".into(),
            });
        }
        let Some(b) = battery::job(&j.name) else {
            if j.error != 0 {
                let errno = std::io::Error::from_raw_os_error(j.error as i32);
                warnings.push(format!(
                    "{}: fio reported error {} ({errno}): its numbers are not a measurement; not used",
                    j.origin, j.error
                ));
            } else if let Err(e) = check_replayable(j, capacity) {
                warnings.push(format!("{e}; not used"));
            } else {
                let numbers = measure::given_metrics(j);
                if numbers.is_empty() {
                    warnings.push(format!("{}: it moved no data; not used", j.origin));
                }
                for (quantity, value) in numbers {
                    if value.is_finite() && value > 0.0 {
                        out.push(Measurement { job: j.name.clone(), unit: Unit::Given, quantity, value });
                    }
                }
            }
            continue;
        };
        let bs = j.option("bs").or_else(|| j.option("blocksize")).unwrap_or("4k");
        let bs_bytes = crate::run::workload::fio::parse_size(bs, 1024, capacity).unwrap_or(0);
        if bs_bytes != b.bs as u64 {
            return Err(FitError::Input {
                origin: j.origin.clone(),
                reason: format!(
                    "bs={bs}, but the battery asks for bs={} here: measure with the battery's job file \
                     (or rename the job: a job of another name is a measurement of its own)",
                    b.bs
                ),
            });
        }
        let want_rw = b.options.iter().find_map(|o| o.strip_prefix("rw=")).unwrap_or("read");
        if j.rw() != want_rw {
            return Err(FitError::Input {
                origin: j.origin.clone(),
                reason: format!("rw={}, but the battery asks for rw={want_rw} here", j.rw()),
            });
        }
        if j.error != 0 {
            let errno = std::io::Error::from_raw_os_error(j.error as i32);
            if b.unit.is_some() {
                return Err(FitError::Input {
                    origin: j.origin.clone(),
                    reason: format!(
                        "fio reported error {} ({errno}) for this job: its numbers are not a measurement",
                        j.error
                    ),
                });
            }
            warnings.push(format!(
                "{}: fio reported error {} ({errno}): this job only prepares the drive ({}); the jobs \
                 after it are taken as measured on the drive it would have left",
                j.origin, j.error, b.measures
            ));
            continue;
        }
        check_replayable(j, capacity)?;
        let Some(unit) = b.unit else { continue };
        if j.option("write_bw_log").is_some() && j.bw_log.is_none() {
            warnings.push(format!(
                "{}: its bandwidth log ({}_bw.*.log) is not beside the JSON: the cache size, the rate after it \
                 and the late random-write rate it gives are not determined",
                j.origin,
                j.option("write_bw_log").unwrap_or("")
            ));
        }
        for (quantity, value) in metrics(j) {
            if value.is_finite() && value > 0.0 {
                out.push(Measurement { job: j.name.clone(), unit, quantity, value });
            }
        }
    }
    if out.iter().any(|m| m.unit != Unit::Given) {
        for b in JOBS.iter().filter(|b| b.unit.is_some() && !seen.contains(b.name)) {
            warnings
                .push(format!("battery job `{}` is missing from the results: {} is not measured", b.name, b.measures));
        }
    }
    if out.is_empty() {
        return Err(FitError::Input {
            origin: "results".into(),
            reason: format!(
                "no job in the results the fit can use{}: measure with the battery's job file \
                 (`ssdtwin fit --jobs DIR`) or give results of jobs the twin can replay",
                if warnings.is_empty() { String::new() } else { format!(" ({})", warnings.join("; ")) }
            ),
        });
    }
    Ok((out, warnings))
}

/// `jobs` with the names of jobs outside the battery made unique (results
/// of several files may name their jobs alike): a repeated name gets
/// `-2`, `-3`, … in the order given.
pub fn uniquely_named(jobs: &[JobRecord]) -> Vec<JobRecord> {
    let mut seen = BTreeSet::new();
    jobs.iter()
        .map(|j| {
            let mut j = j.clone();
            if battery::job(&j.name).is_none() {
                let stem = j.name.clone();
                let mut k = 1;
                while !seen.insert(j.name.clone()) {
                    k += 1;
                    j.name = format!("{stem}-{k}");
                }
            }
            j
        })
        .collect()
}

/// The twin can replay the job: its options (with the global ones) parse.
fn check_replayable(j: &JobRecord, capacity: u64) -> Result<(), FitError> {
    let mut text = String::from("[global]\n");
    for (k, v) in &j.global {
        text.push_str(&format!("{k}={v}\n"));
    }
    text.push_str(&format!("[{}]\n", j.name));
    for (k, v) in &j.options {
        text.push_str(&format!("{k}={v}\n"));
    }
    parse_job_file(&text, &j.origin, capacity, &JobOptions::new()).map(|_| ()).map_err(|e| FitError::Input {
        origin: j.origin.clone(),
        reason: format!("the twin cannot replay this job: {e}"),
    })
}

/// A finished fit.
#[derive(Debug, Clone)]
pub struct Fit {
    /// The fitted drive.
    pub spec: DriveSpec,
    /// Each measurement with the fitted twin's value.
    pub rows: Vec<report::Residual>,
    /// Each parameter: base, fitted, uncertainty.
    pub params: Vec<report::ParamFit>,
    /// What the fit could not determine, and other notes.
    pub notes: Vec<String>,
    /// Replays run (one plan on one candidate each).
    pub evaluations: usize,
    /// Wall time, s.
    pub wall_s: f64,
}
