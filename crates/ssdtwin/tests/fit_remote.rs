//! `ssdtwin fit`'s replays handed to an executor (`fit/remote.rs`, the
//! Python package's Ray backend): a fit whose replays go out as JSON tasks
//! and come back as JSON answers is the fit on this machine's cores, bit
//! for bit; an executor that fails ends the fit with its error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::run::{execute, RunOptions, RunResults};
use ssdtwin::study::fio_out::FioReport;
use ssdtwin::study::fit::remote::{run_task_json, Executor, ReplayTask};
use ssdtwin::study::fit::{fit, measure, report, FitOptions};
use ssdtwin::{Drive, DriveSpec, DriveState};

use crate::common::scratch_dir;

/// A small drive and a short queue-depth sweep of its reads (full drive),
/// as fio's JSON.
fn measured() -> (DriveSpec, Vec<measure::JobRecord>) {
    let set = ["geometry.blocks_per_plane=32".to_string(), "ftl.user_capacity_bytes=499998720".to_string()];
    let truth = DriveSpec::load("generic-tlc-nvme", &set).unwrap();
    let mut t = truth.clone();
    // tR 25% above the base's: the fit has something to find.
    t.nand.native.tr_ns = t.nand.native.tr_ns.iter().map(|v| v * 5 / 4).collect();
    let text = "[global]\nrw=randread\nbs=4k\nruntime=40ms\nstonewall\n[qd1]\niodepth=1\n[qd8]\niodepth=8\n[qd32]\niodepth=32\n";
    let model = t.build("t").unwrap();
    let cap = model.user_lpns as u64 * 4096;
    let mut drive = Drive::new(model);
    DriveState::Filled(100.0).apply_fast(&mut drive, 1);
    let file = parse_job_file(text, "sweep.fio", cap, &JobOptions::new()).unwrap();
    let outcome = execute(drive, &file, RunOptions::default()).unwrap();
    let RunResults::Jobs(jobs) = &outcome.results else { panic!("jobs run concurrently") };
    let report =
        FioReport { drive: &t, state: "full".into(), seed: 1, global: &file.global, jobs, health: &outcome.health };
    let dir = scratch_dir("fit-remote");
    let path = dir.path().join("sweep.json");
    std::fs::write(&path, serde_json::to_string(&report.to_json(false)).unwrap()).unwrap();
    (truth, measure::read_file(&path).unwrap())
}

fn options(executor: Option<Executor>) -> FitOptions {
    FitOptions { state: DriveState::Filled(100.0), refine_iterations: 6, executor, ..FitOptions::default() }
}

#[test]
fn a_fit_whose_replays_run_as_tasks_is_the_local_fit_bit_for_bit() {
    let (base, jobs) = measured();
    let local = fit(&base, &jobs, &options(None)).unwrap();
    let tasks = Arc::new(AtomicUsize::new(0));
    let counted = tasks.clone();
    let exec: Executor = Box::new(move |batch: Vec<String>| {
        counted.fetch_add(batch.len(), Ordering::Relaxed);
        // Each task is plain data: it parses, names its unit and drive.
        let first: ReplayTask = serde_json::from_str(&batch[0]).map_err(|e| e.to_string())?;
        assert!(first.drive.contains("[geometry]") && first.job_file.contains("[qd1]"));
        Ok(batch.iter().map(|t| run_task_json(t)).collect())
    });
    let remote = fit(&base, &jobs, &options(Some(exec))).unwrap();
    assert!(local.evaluations > 0);
    assert_eq!(tasks.load(Ordering::Relaxed), remote.evaluations, "every replay went to the executor");
    assert_eq!(remote.evaluations, local.evaluations);
    assert_eq!(remote.spec.to_toml(), local.spec.to_toml());
    assert_eq!(format!("{:?}", remote.rows), format!("{:?}", local.rows));
    let without_time =
        |t: String| t.lines().filter(|l| !l.contains(" s\n") && !l.ends_with(" s")).collect::<Vec<_>>().join("\n");
    assert_eq!(without_time(report::text(&remote)), without_time(report::text(&local)));
}

#[test]
fn an_executor_that_fails_ends_the_fit_with_its_error() {
    let (base, jobs) = measured();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let exec: Executor = Box::new(move |_batch: Vec<String>| {
        counted.fetch_add(1, Ordering::Relaxed);
        Err("the cluster went away".to_string())
    });
    let e = fit(&base, &jobs, &options(Some(exec))).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("the executor failed: the cluster went away"), "{e}");
    // Stages that search side by side may each have sent a batch; nothing
    // more is sent once the executor failed (the fit sends hundreds).
    assert!(calls.load(Ordering::Relaxed) <= 3, "{} batches sent", calls.load(Ordering::Relaxed));
    // A malformed answer is named, never read as numbers.
    let bad: Executor =
        Box::new(|batch: Vec<String>| Ok(batch.iter().map(|_| "{\"observations\": 3}".into()).collect()));
    let e = fit(&base, &jobs, &options(Some(bad))).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("an executor's answer"), "{e}");
}
