//! `ssdtwin fit` (issue 34): the battery run on a twin whose parameters
//! are known and not the base's, fitted from the base, recovers those
//! parameters and predicts workloads the battery did not run; bad input
//! is named.

use std::path::Path;

use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::run::{execute, RunOptions, RunResults};
use ssdtwin::study::fio_out::FioReport;
use ssdtwin::study::fit::params::Param;
use ssdtwin::study::fit::{battery, fit, measure, FitError, FitOptions};
use ssdtwin::{Drive, DriveSpec, DriveState, IoKind};

use crate::common::scratch_dir;

/// Time scale of the battery on the small drives (its idle pauses and
/// runtimes; its sizes are shares of the drive).
const SCALE: f64 = 0.01;

/// The small 660p-like drive of `common::small_slc_model` as a spec.
fn small_spec(extra: &[&str]) -> DriveSpec {
    let mut set: Vec<String> = vec![
        "geometry.blocks_per_plane=40".into(),
        "geometry.pages_per_block=256".into(),
        "ftl.user_capacity_bytes=3199995904".into(),
        "slc_cache.static_bytes=200000000".into(),
        "slc_cache.capacity_curve=[[0.0, 1.2e9], [0.5, 1.2e9], [0.78, 0.2e9], [1.0, 0.2e9]]".into(),
        "ftl.map_cache=".into(),
    ];
    set.extend(extra.iter().map(|s| s.to_string()));
    DriveSpec::load("intel-660p-1tb", &set).expect("test drive parses")
}

/// Run `text` (a job file) on `spec` from `state`; the jobs' results.
fn run(spec: &DriveSpec, state: DriveState, text: &str) -> Vec<ssdtwin::run::jobs::JobResult> {
    let model = spec.build("t").unwrap();
    let cap = model.user_lpns as u64 * 4096;
    let mut drive = Drive::new(model);
    if state != DriveState::Fresh {
        state.apply_fast(&mut drive, 1);
    }
    let file = parse_job_file(text, "t.fio", cap, &JobOptions::new()).unwrap();
    match execute(drive, &file, RunOptions::default()).unwrap().results {
        RunResults::Jobs(j) => j,
        RunResults::Phases(_) => panic!("jobs run concurrently"),
    }
}

/// The battery run on `spec` as `ssdtwin run --job-file` runs it, its
/// JSON and logs written into `dir`; the JSON's path.
fn measure_battery(spec: &DriveSpec, dir: &Path) -> std::path::PathBuf {
    let text = battery::text(SCALE).replace("write_bw_log=", &format!("write_bw_log={}/", dir.display()));
    let model = spec.build("t").unwrap();
    let cap = model.user_lpns as u64 * 4096;
    let file = parse_job_file(&text, "battery.fio", cap, &JobOptions::new()).unwrap();
    let outcome = execute(Drive::new(model), &file, RunOptions::default()).unwrap();
    let RunResults::Jobs(jobs) = &outcome.results else { panic!("jobs run concurrently") };
    let report =
        FioReport { drive: spec, state: "fresh".into(), seed: 1, global: &file.global, jobs, health: &outcome.health };
    let path = dir.join("battery.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report.to_json(false)).unwrap()).unwrap();
    path
}

#[test]
fn battery_is_one_fio_file_of_stonewalled_jobs_the_twin_runs() {
    let text = battery::text(1.0);
    assert!(text.contains("filename=${DEV}"));
    let file = parse_job_file(&text, "battery.fio", 1 << 40, &JobOptions::new()).unwrap();
    assert_eq!(file.jobs.len(), battery::JOBS.len() + 3, "numjobs=4 makes three clones");
    assert!(file.jobs.iter().all(|j| j.stonewall || j.clone > 0), "every job waits for the one before");
    assert!(file.ignored.iter().any(|o| o == "filename"), "{:?}", file.ignored);
    // Every job says what it measures and how long it takes.
    for j in battery::JOBS {
        assert!(text.contains(&format!("[{}]", j.name)));
        assert!(!j.measures.is_empty() && !j.takes.is_empty());
    }
    assert_eq!(battery::resolve("runtime={T:30}", 0.01), "runtime=300ms");
    assert_eq!(battery::resolve("log_avg_msec={M:1000}", 0.01), "log_avg_msec=10");
}

/// The fit recovers a known drive's parameters from the base (the same
/// family with other timings and cache sizes) and predicts workloads the
/// battery did not run.
#[test]
fn fit_recovers_a_known_drive_and_predicts_what_it_did_not_see() {
    let dir = scratch_dir("fit");
    let truth = small_spec(&[
        "nand.native.tr_ns=[110000, 130000, 150000, 170000]",
        "controller.cmd_overhead_ns=12000",
        "nand.slc.tprog_ns=[200000]",
        "nand.native.tprog_ns=[24000000]",
        "slc_cache.static_bytes=300000000",
        "slc_cache.capacity_curve=[[0.0, 0.9e9], [0.5, 0.9e9], [0.78, 0.3e9], [1.0, 0.3e9]]",
    ]);
    let base = small_spec(&[]);
    let json = measure_battery(&truth, dir.path());
    let jobs = measure::read_file(&json).unwrap();
    let result = fit(&base, &jobs, &FitOptions::default()).unwrap();
    let report = ssdtwin::study::fit::report::text(&result);
    let close = |p: Param, tol: f64| {
        let (t, f) = (p.get(&truth).unwrap(), p.get(&result.spec).unwrap());
        assert!((f / t - 1.0).abs() <= tol, "{p:?}: true {t}, fitted {f} (±{tol})\n{report}");
    };
    close(Param::NativeTr, 0.10);
    close(Param::CmdOverhead, 0.20);
    close(Param::NativeTprog, 0.15);
    close(Param::SlcTprog, 0.20);
    close(Param::CacheMax, 0.15);
    close(Param::CacheStatic, 0.30);
    // Every measurement within 15% on the fitted twin.
    for r in &result.rows {
        let e = r.error().unwrap_or(1.0);
        assert!(e.abs() < 0.15, "{} {:?}: {e:+.3}\n{report}", r.job, r.quantity);
    }
    // Workloads outside the battery: QD8 random reads on the full drive,
    // a sequential write of half the fresh drive at QD4, 16 KiB random
    // writes at QD8 on the fresh drive.
    let unseen = [
        (DriveState::Filled(100.0), "[r]\nrw=randread\nbs=4k\niodepth=8\nruntime=300ms\n", IoKind::Read),
        (DriveState::Fresh, "[w]\nrw=write\nbs=256k\niodepth=4\nsize=50%\n", IoKind::Write),
        (DriveState::Fresh, "[w]\nrw=randwrite\nbs=16k\niodepth=8\nsize=20%\nruntime=500ms\n", IoKind::Write),
    ];
    for (state, job, kind) in unseen {
        let t = run(&truth, state, job)[0].result.bw_bytes(kind);
        let f = run(&result.spec, state, job)[0].result.bw_bytes(kind);
        assert!((f / t - 1.0).abs() < 0.15, "{job}: true {t:.0} B/s, fitted {f:.0} B/s\n{report}");
    }
}

#[test]
fn bad_results_are_named() {
    let dir = scratch_dir("fit-bad");
    let spec = small_spec(&[]);
    let json = measure_battery(&spec, dir.path());
    let text = std::fs::read_to_string(&json).unwrap();
    let err = |t: &str| -> String {
        let p = dir.path().join("bad.json");
        std::fs::write(&p, t).unwrap();
        match measure::read_file(&p).and_then(|jobs| fit(&spec, &jobs, &FitOptions::default()).map(|_| ())) {
            Err(e) => e.to_string(),
            Ok(()) => panic!("accepted bad input"),
        }
    };
    // Truncated JSON: the file and line, and that it ends early.
    let e = err(&text[..text.len() / 2]);
    assert!(e.contains("bad.json:") && e.contains("ends early"), "{e}");
    // A job with fio's error field set.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["jobs"][4]["error"] = 5.into();
    let e = err(&doc.to_string());
    assert!(e.contains("job `randread-qd1`") && e.contains("error 5"), "{e}");
    // A block size other than the battery's.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["jobs"][4]["job options"]["bs"] = "8k".into();
    let e = err(&doc.to_string());
    assert!(e.contains("randread-qd1") && e.contains("bs=8k") && e.contains("bs=4096"), "{e}");
    // An option the twin cannot replay.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["jobs"][4]["job options"]["fsync"] = "1".into();
    let e = err(&doc.to_string());
    assert!(e.contains("randread-qd1") && e.contains("cannot replay") && e.contains("fsync"), "{e}");
    // No job of the battery at all.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    for j in doc["jobs"].as_array_mut().unwrap() {
        j["jobname"] = format!("x-{}", j["jobname"].as_str().unwrap()).into();
    }
    let e = err(&doc.to_string());
    assert!(e.contains("no job of the battery"), "{e}");
    // Missing jobs are warnings naming what is then not measured.
    let jobs = measure::read_file(&json).unwrap();
    let some: Vec<_> = jobs.into_iter().filter(|j| j.name.starts_with("randread")).collect();
    let (_, warnings) = ssdtwin::study::fit::measurements(&some, spec.ftl.user_capacity_bytes).unwrap();
    assert!(warnings.iter().any(|w| w.contains("`fill` is missing") && w.contains("cache")), "{warnings:?}");
    assert!(matches!(
        measure::read_file(&dir.path().join("none.json")),
        Err(FitError::Input { origin, .. }) if origin.ends_with("none.json")
    ));
}
