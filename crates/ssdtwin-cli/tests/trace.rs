//! `ssdtwin run --trace`, `--record-trace`, job-file trace sections and
//! `ssdtwin trace stats|convert` from the command line: results for good
//! input, a non-zero exit naming file, line and field for bad input,
//! nothing written on failure.

use std::process::{Command, Output};

use serde_json::Value;
use tempfile::TempDir;

fn ssdtwin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ssdtwin")).args(args).output().expect("binary runs")
}

/// An empty temporary directory of the test's own, removed with what it
/// holds when dropped (also when the test panics).
fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("ssdtwin-cli-trace-").tempdir().expect("temporary directory")
}

fn tmp(dir: &TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn out_path(dir: &TempDir, name: &str) -> String {
    dir.path().join(name).display().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A small drive (500 MB) for quick runs.
const SMALL: [&str; 6] = [
    "--drive",
    "generic-tlc-nvme",
    "--set",
    "geometry.blocks_per_plane=32",
    "--set",
    "ftl.user_capacity_bytes=499998720",
];

fn run(extra: &[&str]) -> Output {
    let mut args = vec!["run"];
    args.extend(SMALL);
    args.extend(extra);
    ssdtwin(&args)
}

fn fio_log() -> String {
    format!("{}/../ssdtwin/tests/data/fio-randrw-4k.iolog", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_malformed_trace_fails_naming_file_line_and_field_and_writes_nothing() {
    let dir = temp_dir();
    let t = tmp(&dir, "bad.mqsim", "0 0 0 8 1\n1000 0 8 8 1\n2000 0 x 8 1\n");
    let json = out_path(&dir, "bad.json");
    let o = run(&["--trace", &t, "--json", &json]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("bad.mqsim:3: field `start sector`: expected a whole number, found `x`"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(!std::path::Path::new(&json).exists());
    // Beyond the drive: an error unless wrapped.
    let far = tmp(&dir, "far.mqsim", "0 0 4000000000 8 1\n");
    let o = run(&["--trace", &far]);
    assert!(stderr(&o).contains("far.mqsim:1: request at byte 2048000000000"), "{}", stderr(&o));
    ok(&run(&["--trace", &far, "--lba-wrap"]));
    // Bad options.
    let o = run(&["--trace", &far, "--replay", "closed:0"]);
    assert!(!o.status.success() && stderr(&o).contains("closed:0"), "{}", stderr(&o));
    let o = run(&["--trace", &far, "--lba-wrap", "--lba-scale"]);
    assert!(!o.status.success());
}

#[test]
fn a_fio_iolog_replays_with_fios_counts_in_the_json() {
    let o = run(&["--trace", &fio_log(), "--json", "-"]);
    let v: Value = serde_json::from_str(&ok(&o)).unwrap();
    let job = &v["jobs"][0];
    assert_eq!(job["type"], "trace");
    assert_eq!(job["read"]["total_ios"], 710);
    assert_eq!(job["write"]["io_bytes"], 1_286_144);
    assert_eq!(job["trace"]["format"], "fio-v3");
    assert_eq!(job["trace"]["stats"]["requests"], 1024);
    assert!(job["read"]["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
    // The summary names the trace and its statistics.
    let text = ok(&run(&["--trace", &fio_log(), "--replay", "closed:4"]));
    assert!(text.contains("(fio-v3, closed:4)"), "{text}");
    assert!(text.contains("trace: 1024 requests (710 reads, 314 writes, 0 trims)"), "{text}");
}

#[test]
fn a_recorded_run_replays_to_the_same_counts() {
    let dir = temp_dir();
    let rec = out_path(&dir, "rec.mqsim.zst");
    ok(&run(&[
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--iodepth",
        "4",
        "--size",
        "64m",
        "--io_size",
        "8m",
        "--record-trace",
        &rec,
        "--record-format",
        "mqsim",
        "-q",
    ]));
    let o = run(&["--trace", &rec, "--replay", "closed:4", "--json", "-"]);
    let v: Value = serde_json::from_str(&ok(&o)).unwrap();
    let job = &v["jobs"][0];
    let total = job["read"]["io_bytes"].as_u64().unwrap() + job["write"]["io_bytes"].as_u64().unwrap();
    assert_eq!(total, 8 << 20);
    assert_eq!(job["trace"]["compression"], "zstd");
}

#[test]
fn trace_stats_and_convert() {
    let dir = temp_dir();
    let t = tmp(&dir, "s.mqsim", "0 0 0 8 1\n1000 0 8 8 1\n3000 0 100 16 0\n");
    let v: Value = serde_json::from_str(&ok(&ssdtwin(&["trace", "stats", &t, "--json", "-"]))).unwrap();
    assert_eq!(v["requests"], 3);
    assert_eq!(v["ios"], serde_json::json!([2, 1, 0]));
    assert_eq!(v["bytes"], serde_json::json!([8192, 8192, 0]));
    assert_eq!(v["sequential"], 1);
    assert_eq!(v["footprint_bytes"], 5 * 4096);
    assert_eq!(v["format"], "mqsim");
    let text = ok(&ssdtwin(&["trace", "stats", &t]));
    assert!(text.contains("requests: 3, 2 reads (66.7% by count, 50.0% by bytes)"), "{text}");

    let gz = out_path(&dir, "s.iolog.gz");
    let text = ok(&ssdtwin(&["trace", "convert", &t, &gz, "--to", "fio-v3"]));
    assert!(text.contains("3 requests"), "{text}");
    let back: Value = serde_json::from_str(&ok(&ssdtwin(&["trace", "stats", &gz, "--json", "-"]))).unwrap();
    assert_eq!(back["format"], "fio-v3");
    assert_eq!((back["ios"].clone(), back["bytes"].clone()), (v["ios"].clone(), v["bytes"].clone()));

    // A failed conversion leaves no output.
    let bad = tmp(&dir, "b.mqsim", "0 0 0 8 1\nnot a line\n");
    let target = out_path(&dir, "b.csv");
    let o = ssdtwin(&["trace", "convert", &bad, &target, "--to", "msr"]);
    assert!(!o.status.success() && stderr(&o).contains("b.mqsim:2"), "{}", stderr(&o));
    assert!(!std::path::Path::new(&target).exists());
}

#[test]
fn a_job_file_section_replays_a_trace_beside_other_phases() {
    let dir = temp_dir();
    tmp(&dir, "job-trace.mqsim", "0 0 0 256 0\n1000000 0 0 256 1\n");
    let job = tmp(
        &dir,
        "trace.fio",
        "[warm]\nrw=write\nbs=128k\nsize=1m\n\n[replay]\ntrace=job-trace.mqsim\nreplay=capped-idle:0.5\n",
    );
    let v: Value = serde_json::from_str(&ok(&run(&["--job-file", &job, "--json", "-"]))).unwrap();
    assert_eq!(v["jobs"][1]["type"], "trace");
    assert_eq!(v["jobs"][1]["read"]["total_ios"], 1);
    assert_eq!(v["jobs"][1]["trace"]["mode"]["mode"], "capped-idle");
    let bad = tmp(&dir, "bad-trace.fio", "[replay]\ntrace=job-trace.mqsim\nbs=4k\n");
    let o = run(&["--job-file", &bad]);
    assert!(stderr(&o).contains("bad-trace.fio:3: option `bs`"), "{}", stderr(&o));
}
