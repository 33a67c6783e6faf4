//! The one entry point of a run (`ssdtwin::run::execute`): a job file with
//! a trace section, or a run that records its commands, goes to the
//! sequential phase runner, any other to the concurrent job scheduler;
//! either way the results are those of calling that runner directly.

use ssdtwin::model::health::Health;
use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::run_jobs;
use ssdtwin::run::workload::fio::JobFile;
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::run::{execute, mode, Mode, RunOptions, RunOutcome, RunResults};
use ssdtwin::study::fio_out::FioReport;
use ssdtwin::study::report::RunReport;
use ssdtwin::{Drive, DriveModel, DriveState, Simulator};

use crate::common::{small_model, TempFile};

const JOBS: &str = "[global]\nsize=16m\n[reader]\nrw=randread\nbs=4k\niodepth=4\n\
                    [writer]\nrw=write\nbs=64k\n[rest]\nidle=20ms\n";

fn model() -> DriveModel {
    small_model(64, &[])
}

/// The model's drive, half written (so that reads reach the flash).
fn drive() -> Drive {
    let mut d = Drive::new(model());
    DriveState::Filled(50.0).apply_fast(&mut d, 1);
    d
}

fn parse(text: &str) -> JobFile {
    parse_job_file(text, "t.fio", 64 << 20, &JobOptions::new()).unwrap()
}

/// An MQSim trace of a few writes and reads, 100 µs apart.
fn trace() -> TempFile {
    let text: String =
        (0..200u64).map(|i| format!("{} 0 {} 8 {}\n", i * 100_000, (i * 7919 % 4096) * 8, i % 2)).collect();
    TempFile::new("t.trace", text.as_bytes())
}

/// A job file of one I/O section then a trace section.
fn with_trace(file: &TempFile) -> JobFile {
    parse(&format!("[w]\nrw=randwrite\nbs=4k\nsize=4m\n[t]\ntrace={}\n", file.display()))
}

fn fio_json(jobs: &[ssdtwin::run::jobs::JobResult], file: &JobFile, health: &Health) -> String {
    let spec = &model().spec;
    let r = FioReport { drive: spec, state: "filled:50".into(), seed: 1, global: &file.global, jobs, health };
    serde_json::to_string(&r.to_json(true)).unwrap()
}

fn run_json(phases: &[ssdtwin::PhaseResult], health: &Health) -> String {
    let spec = &model().spec;
    let r = RunReport { drive: spec, state: "filled:50".into(), seed: 1, phases, health };
    serde_json::to_string(&r.to_json()).unwrap()
}

#[test]
fn mode_is_sequential_for_trace_sections_and_recording_only() {
    let t = trace();
    assert_eq!(mode(&parse(JOBS), false), Mode::Concurrent);
    assert_eq!(mode(&parse(JOBS), true), Mode::Sequential);
    assert_eq!(mode(&with_trace(&t), false), Mode::Sequential);
}

#[test]
fn concurrent_file_runs_as_run_jobs() {
    let file = parse(JOBS);
    let RunOutcome { results, health, device } = execute(drive(), &file, RunOptions::default()).unwrap();
    let RunResults::Jobs(jobs) = results else { panic!("a file without a trace section runs concurrently") };

    let mut direct = Device::new(drive());
    let want = run_jobs(&mut direct, &file);
    let want_health = Health::of(direct.drive());
    assert_eq!(jobs.len(), 3);
    assert_eq!(health, want_health);
    assert_eq!(device.now(), direct.now());
    assert_eq!(fio_json(&jobs, &file, &health), fio_json(&want, &file, &want_health));
}

#[test]
fn trace_section_runs_as_sequential_phases() {
    let t = trace();
    let file = with_trace(&t);
    let outcome = execute(drive(), &file, RunOptions::default()).unwrap();
    assert_eq!(outcome.mode(), Mode::Sequential);
    let RunResults::Phases(phases) = &outcome.results else { panic!("a trace section runs sequentially") };

    let mut sim = Simulator::new(drive());
    let want = sim.try_run_job(&file.to_job()).unwrap();
    let want_health = Health::of(sim.drive());
    assert_eq!(phases.len(), 2);
    assert!(phases[1].trace.is_some(), "the trace phase carries its replay summary");
    assert_eq!(outcome.health, want_health);
    assert_eq!(outcome.device.now(), sim.now());
    assert_eq!(run_json(phases, &outcome.health), run_json(&want, &want_health));
}

#[test]
fn recording_runs_sequentially_and_logs_commands() {
    let file = parse("[w]\nrw=randwrite\nbs=4k\nsize=8m\n");
    let opts = RunOptions { record_commands: true, ..RunOptions::default() };
    let mut outcome = execute(drive(), &file, opts).unwrap();
    let RunResults::Phases(phases) = &outcome.results else { panic!("recording runs sequentially") };
    assert_eq!(phases[0].dirs[1].ios, 2048);
    assert_eq!(outcome.device.take_log().len(), 2048);

    let mut sim = Simulator::new(drive());
    let want = sim.try_run_job(&file.to_job()).unwrap();
    assert_eq!(run_json(phases, &outcome.health), run_json(&want, &Health::of(sim.drive())));
}

#[test]
fn a_missing_trace_is_an_error() {
    let file = parse("[t]\ntrace=/nonexistent/ssdtwin-entry.trace\n");
    assert!(execute(drive(), &file, RunOptions::default()).is_err());
}
