//! Replaying measured jobs on a candidate twin: each [`Plan`] is one
//! [`Unit`] of the battery (or the jobs outside it), run from the state its
//! jobs found the real drive in (secure-erased, or full from a sequential
//! fill built by the fast path, or the state given with `--state`), with the jobs' own options as fio's JSON
//! records them. Plans run in parallel, one per core ([`run_all`]): every
//! run is independent and deterministic, so the order does not change a
//! number.
//!
//! What a replay changes in a job, and why: a stationary job's `runtime`
//! may be shortened ([`Plan::runtime_cap_ns`]: its rate does not depend on
//! how long it ran); a write job's `size` may be capped
//! ([`Plan::size_cap`]: the rate into the SLC cache needs only part of the
//! cache); log files go to a private directory, read back as the real
//! logs are; a replay from a full drive starts with one 4 KiB read, so
//! that the drive's idle clock runs as it did after the real fill. A unit
//! whose numbers depend on the state earlier writes left (the random
//! writes: how many pages GC finds invalid) replays those writes and
//! pauses first ([`Plan::prepare`]); the others leave out what happened on
//! the real drive between the jobs of other units (a read does not change
//! the drive's state).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::battery::Unit;
use super::measure::{from_json, given_metrics, metrics, JobRecord, Quantity};
use super::FitError;
use crate::model::drive::Drive;
use crate::run::state::DriveState;
use crate::run::workload::fio::parse_time;
use crate::run::workload::{parse_job_file, JobOptions};
use crate::run::{execute, RunOptions, RunResults};
use crate::spec::DriveSpec;
use crate::study::fio_out::FioReport;

/// One unit's replay: its jobs, in order, from the unit's state.
#[derive(Debug, Clone)]
pub struct Plan<'a> {
    /// The unit.
    pub unit: Unit,
    /// The state the replay starts from.
    pub state: DriveState,
    /// Measured jobs that ran on the real drive before `jobs` and changed
    /// its state (writes, idle pauses), replayed first and not reported
    /// ([`super::battery::prepared_by`]).
    pub prepare: Vec<&'a JobRecord>,
    /// The measured jobs to replay.
    pub jobs: Vec<&'a JobRecord>,
    /// Longest `runtime` of a replayed job, ns (`None`: as measured; units
    /// whose numbers depend on the duration keep it anyway).
    pub runtime_cap_ns: Option<u64>,
    /// Largest `size` of a replayed job, bytes (`None`: as measured).
    pub size_cap: Option<u64>,
}

/// A number the twin gave for a job.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Observation {
    /// Job name.
    pub job: String,
    /// What was measured.
    pub quantity: Quantity,
    /// Its value.
    pub value: f64,
}

/// The job file of a plan: the first job's `[global]`, then each job's own
/// options with the plan's changes, every job after the one before
/// (`stonewall`), log prefixes under `log_dir`.
pub fn job_text(plan: &Plan, log_dir: &std::path::Path) -> String {
    let log_keys = ["write_bw_log", "write_iops_log", "write_lat_log", "write_hist_log"];
    let mut text = String::from("[global]\n");
    if let Some(first) = plan.jobs.first() {
        for (k, v) in &first.global {
            if !log_keys.contains(&k.as_str()) && k != "runtime" && k != "size" {
                text.push_str(&format!("{k}={v}\n"));
            }
        }
    }
    // Each job gets its thread number from the measured file, so that
    // fio's seeds (offsets: 0xb1899bed × the thread number) and so its
    // commands are the measured ones: the jobs before it that the replay
    // leaves out are stood in for by one section of 4 KiB reads with as
    // many clones ([`PAD_JOB`]).
    let mut threads = 0u64;
    if plan.state != DriveState::Fresh {
        // The drive's idle clock runs from its last command: one read
        // starts it, as the fill before these jobs did on the real drive
        // (a fast-path state has no last command), so that an idle pause
        // at the start folds and collects as it did there.
        text.push_str(&format!("[{START_JOB}]\nrw=read\nbs=4k\nsize=4k\n"));
        threads = 1;
    }
    let mut number = |text: &mut String, job: &JobRecord| {
        if job.thread > threads + 1 {
            let pad = job.thread - threads - 1;
            text.push_str(&format!("[{PAD_JOB}]\nstonewall=1\nrw=read\nbs=4k\nsize=4k\ntime_based=0\nnumjobs={pad}\n"));
            threads += pad;
        }
        threads += job.option("numjobs").and_then(|v| v.parse::<u64>().ok()).unwrap_or(1).max(1);
    };
    for job in &plan.prepare {
        number(&mut text, job);
        // Only what it did to the drive matters: its pause, its writes
        // (all of them), its reads cut to the runtime cap; no log.
        text.push_str(&format!("[{}]\nstonewall=1\n", job.name));
        for (k, v) in &job.options {
            if k == "runtime" || log_keys.contains(&k.as_str()) || k.starts_with("log_") {
                continue;
            }
            text.push_str(&format!("{k}={v}\n"));
        }
        if let Some(r) = job.option("runtime") {
            let ns = parse_time(r, 1_000_000_000).unwrap_or(u64::MAX);
            match plan.runtime_cap_ns.filter(|&c| c < ns && !job.rw().contains("write") && job.rw() != "randrw") {
                Some(cap) => text.push_str(&format!("runtime={}us\n", (cap / 1000).max(1))),
                None => text.push_str(&format!("runtime={r}\n")),
            }
        }
    }
    for job in &plan.jobs {
        number(&mut text, job);
        text.push_str(&format!("[{}]\nstonewall=1\n", job.name));
        let runtime = job.option("runtime").map(str::to_string);
        let size = job.option("size").map(str::to_string);
        for (k, v) in &job.options {
            if k == "runtime" || k == "size" || (log_keys.contains(&k.as_str()) && k != "write_bw_log") {
                continue;
            }
            if k == "write_bw_log" {
                let name = std::path::Path::new(v).file_name().map_or(v.clone(), |s| s.to_string_lossy().into_owned());
                text.push_str(&format!("write_bw_log={}\n", log_dir.join(name).display()));
            } else {
                text.push_str(&format!("{k}={v}\n"));
            }
        }
        if let Some(r) = runtime {
            let ns = parse_time(&r, 1_000_000_000).unwrap_or(u64::MAX);
            match plan.runtime_cap_ns.filter(|&c| c < ns && !plan.unit.keeps_runtime()) {
                Some(cap) => text.push_str(&format!("runtime={}us\n", (cap / 1000).max(1))),
                None => text.push_str(&format!("runtime={r}\n")),
            }
        }
        match (size, plan.size_cap) {
            (_, Some(cap)) => text.push_str(&format!("size={cap}\n")),
            (Some(s), None) => text.push_str(&format!("size={s}\n")),
            (None, None) => {}
        }
    }
    text
}

/// Name of the one-read job a replay from a full drive starts with.
pub const START_JOB: &str = "ssdtwin-replay-start";

/// Name of the section of 4 KiB reads that stands in for the measured
/// jobs a replay leaves out, one clone each, so that every replayed job
/// has its measured thread number ([`JobRecord::thread`]).
pub const PAD_JOB: &str = "ssdtwin-replay-pad";

static SCRATCH: AtomicUsize = AtomicUsize::new(0);

/// Replay one plan on a drive built from `spec`; the numbers of each job
/// ([`metrics`], or [`given_metrics`] for the jobs outside the battery).
/// A candidate on which the simulator stops (an FTL invariant broken by a
/// drive that passed validation: a bug of the model, which the error
/// names with the candidate's structure) is an error of that candidate,
/// not of the fit: the optimisers treat it as an invalid drive.
pub fn run_plan(spec: &DriveSpec, plan: &Plan, seed: u64) -> Result<Vec<Observation>, FitError> {
    let prepare: Vec<String> = plan.prepare.iter().map(|j| j.name.clone()).collect();
    run_text(spec, plan.unit, plan.state, |dir| job_text(plan, dir), &prepare, seed)
}

/// Replay a plan given as its job file (`text` writes it with its logs
/// under the directory given), from `state`, on a drive built from
/// `spec`: the numbers of each job but those named in `prepare`
/// ([`run_plan`], and [`super::remote::run_task`] on another machine).
pub fn run_text(
    spec: &DriveSpec,
    unit: Unit,
    state: DriveState,
    text: impl FnOnce(&std::path::Path) -> String,
    prepare: &[String],
    seed: u64,
) -> Result<Vec<Observation>, FitError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| replay_text(spec, unit, state, text, prepare, seed)))
        .unwrap_or_else(|p| {
            let why = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let g = &spec.geometry;
            Err(FitError::Candidate(format!(
                "the simulator stopped ({why}) on a candidate with {} dies, {} blocks per plane, SLC cache {:?} GB \
                 (static {:?} GB), replaying unit {:?} from {}",
                super::params::dies(spec),
                g.blocks_per_plane,
                super::params::Param::CacheMax.get(spec).map(|v| v / 1e9),
                super::params::Param::CacheStatic.get(spec).map(|v| v / 1e9),
                unit,
                state
            )))
        })
}

fn replay_text(
    spec: &DriveSpec,
    unit: Unit,
    state: DriveState,
    text: impl FnOnce(&std::path::Path) -> String,
    prepare: &[String],
    seed: u64,
) -> Result<Vec<Observation>, FitError> {
    let model = spec.build(&spec.name).map_err(|e| FitError::Candidate(e.to_string()))?;
    let capacity = model.user_lpns as u64 * 4096;
    let mut drive = Drive::new(model);
    if state != DriveState::Fresh {
        state.apply_fast(&mut drive, seed);
    }
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "ssdtwin-fit-{}-{}",
        std::process::id(),
        SCRATCH.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| FitError::Input { origin: dir.display().to_string(), reason: e.to_string() })?;
    let result = (|| {
        let text = text(&dir);
        let origin = format!("replay of unit {unit:?}");
        // fio's own sequence of commands, as the real drive (or `ssdtwin
        // run --job-file`) was given them.
        let file = parse_job_file(&text, &origin, capacity, &JobOptions::new())
            .map_err(|e| FitError::Replay(e.to_string()))?;
        let outcome = execute(drive, &file, RunOptions::default()).map_err(|e| FitError::Replay(e.to_string()))?;
        let RunResults::Jobs(jobs) = &outcome.results else {
            return Err(FitError::Replay("the replay ran as phases, not as fio jobs".into()));
        };
        let report = FioReport {
            drive: spec,
            state: state.to_string(),
            seed,
            global: &file.global,
            jobs,
            health: &outcome.health,
        };
        let records = from_json(&report.to_json(false), &origin, Some(&dir))?;
        Ok(records
            .iter()
            .filter(|r| !prepare.contains(&r.name) && r.name != PAD_JOB && r.name != START_JOB)
            .flat_map(|r| {
                let numbers = if unit == Unit::Given { given_metrics(r) } else { metrics(r) };
                numbers.into_iter().map(|(quantity, value)| Observation { job: r.name.clone(), quantity, value })
            })
            .collect())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// `f` over `items` on every core (at most one thread per item), results
/// in the items' order.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len()).max(1);
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = f(&items[i]);
                out.lock().expect("no thread panicked holding it")[i] = Some(r);
            });
        }
    });
    out.into_inner().expect("no thread panicked holding it").into_iter().map(|r| r.expect("every item ran")).collect()
}

/// Replay every (drive, plan) pair, in parallel; each pair's numbers.
pub fn run_all(tasks: &[(DriveSpec, Plan)], seed: u64) -> Vec<Result<Vec<Observation>, FitError>> {
    parallel_map(tasks, |(spec, plan)| run_plan(spec, plan, seed))
}
