//! The `ssdtwin` binary: bad input gets a clear error and a non-zero exit,
//! good input gets results, and JSON output is deterministic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

fn ssdtwin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ssdtwin")).args(args).output().expect("binary runs")
}

/// A path in a temporary directory of its own, removed with the directory
/// when this is dropped (also when the test panics); it dereferences to the
/// path.
struct Scratch {
    path: PathBuf,
    _dir: TempDir,
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// An empty temporary directory of the test's own, removed when dropped.
fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("ssdtwin-cli-").tempdir().expect("temporary directory")
}

/// `text` written as `name` in a temporary directory of its own (each
/// call has its own, so that tests running in parallel never share one).
fn tmp(name: &str, text: &str) -> Scratch {
    let dir = temp_dir();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    Scratch { path, _dir: dir }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A small valid drive file derived from a preset.
fn small_drive_toml() -> String {
    let o = ssdtwin(&[
        "show",
        "generic-tlc-nvme",
        "--set",
        "geometry.blocks_per_plane=32",
        "--set",
        "ftl.user_capacity_bytes=499998720",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn assert_fails_with(o: &Output, needles: &[&str]) {
    assert!(!o.status.success(), "expected failure, got success");
    let e = stderr(o);
    for n in needles {
        assert!(e.contains(n), "stderr does not mention `{n}`:\n{e}");
    }
    assert!(!e.contains("panicked"), "must not panic:\n{e}");
}

#[test]
fn malformed_toml_names_the_file_and_line() {
    let p = tmp("broken.toml", "name = \"x\"\n[geometry\nchannels = 2\n");
    let o = ssdtwin(&["run", "--drive", p.to_str().unwrap(), "--rw", "read"]);
    assert_fails_with(&o, &["broken.toml", "line 2"]);
}

#[test]
fn unknown_field_is_rejected() {
    let text = small_drive_toml().replace("[geometry]\n", "[geometry]\nchanels = 4\n");
    let p = tmp("typo.toml", &text);
    let o = ssdtwin(&["run", "--drive", p.to_str().unwrap(), "--rw", "read"]);
    assert_fails_with(&o, &["typo.toml", "chanels"]);
}

#[test]
fn impossible_geometry_names_the_field() {
    let o = ssdtwin(&["run", "--drive", "generic-tlc-nvme", "--set", "geometry.channels=0", "--rw", "read"]);
    assert_fails_with(&o, &["geometry.channels", "at least 1"]);
    let o = ssdtwin(&[
        "run",
        "--drive",
        "generic-tlc-nvme",
        "--set",
        "ftl.user_capacity_bytes=999999999995904",
        "--rw",
        "read",
    ]);
    assert_fails_with(&o, &["ftl.user_capacity_bytes", "larger than the raw flash"]);
    let o = ssdtwin(&["show", "generic-tlc-nvme", "--set", "ftl.gc_policy=random"]);
    assert_fails_with(&o, &["gc_policy", "random"]);
    let o = ssdtwin(&["show", "generic-mlc-sata", "--set", "host.max_queue_depth=64"]);
    assert_fails_with(&o, &["host.max_queue_depth", "NCQ"]);
    let o = ssdtwin(&["show", "generic-tlc-nvme", "--set", "ftl.gc_high_free_blocks=100000"]);
    assert_fails_with(&o, &["ftl.gc_high_free_blocks", "more than a die has"]);
}

/// `show --capacity`: a small twin of a preset, a drive file that loads and
/// runs, with the capacity asked for, the preset's dies and timings, and
/// the spare ratio kept (within the few blocks GC's reserve adds).
#[test]
fn show_capacity_writes_a_small_twin_of_a_preset() {
    let o = ssdtwin(&["show", "intel-660p-512gb", "--capacity", "4g"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let file = tmp("small-660p.toml", &text);
    let small = ssdtwin::DriveSpec::load(file.to_str().unwrap(), &[]).expect("a drive file");
    let full = ssdtwin::DriveSpec::load("intel-660p-512gb", &[]).unwrap();
    assert_eq!(small.ftl.user_capacity_bytes, 4 << 30);
    assert_eq!(small.geometry.dies_per_channel, full.geometry.dies_per_channel);
    assert_eq!(small.nand.channel_mts, full.nand.channel_mts);
    let raw = |s: &ssdtwin::DriveSpec| {
        let g = &s.geometry;
        g.blocks_per_plane as f64 * g.pages_per_block as f64 / s.ftl.user_capacity_bytes as f64
    };
    let ratio = raw(&small) / raw(&full);
    assert!((1.0..1.1).contains(&ratio), "raw / user changed by {ratio}");
    let o = ssdtwin(&["run", "--drive", file.to_str().unwrap(), "--rw", "write", "--bs", "128k", "--size", "100%"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = ssdtwin(&["show", "intel-660p-512gb", "--capacity", "4q"]);
    assert_fails_with(&o, &["--capacity 4q", "not a size"]);
}

#[test]
fn unknown_fio_option_is_named() {
    let drive = tmp("small.toml", &small_drive_toml());
    let job = tmp("bad.fio", "[global]\nbs=4k\n\n[job1]\nrw=randread\nsize=100m\nio_depth=8\n");
    let o = ssdtwin(&["run", "--drive", drive.to_str().unwrap(), "--job-file", job.to_str().unwrap()]);
    assert_fails_with(&o, &["bad.fio:7", "io_depth"]);
    let o = ssdtwin(&["run", "--drive", drive.to_str().unwrap(), "--rw", "randread", "--bs", "4q"]);
    assert_fails_with(&o, &["--bs", "4q"]);
    let o = ssdtwin(&["run", "--drive", drive.to_str().unwrap(), "--rw", "read", "--state", "half-full"]);
    assert_fails_with(&o, &["--state", "half-full"]);
    let o = ssdtwin(&["run", "--drive", "no-such-drive", "--rw", "read"]);
    assert_fails_with(&o, &["no-such-drive", "generic-tlc-nvme"]);
    // Every unknown option of a job file is named, with its line.
    let job = tmp("bad2.fio", "[global]\nio_depth=4\n[a]\nrw=read\nfrobnicate=1\nsize=1m\n");
    let o = ssdtwin(&["run", "--drive", drive.to_str().unwrap(), "--job-file", job.to_str().unwrap()]);
    assert_fails_with(&o, &["bad2.fio:2", "`io_depth`", "`frobnicate` (", "bad2.fio:5"]);
    // A span outside the drive names the option that put it there.
    let o = ssdtwin(&["run", "--drive", drive.to_str().unwrap(), "--rw", "read", "--offset", "1t"]);
    assert_fails_with(&o, &["--offset", "option `offset`", "beyond"]);
}

#[test]
fn idle_and_secure_erase_phases_run_from_the_command_line_and_job_files() {
    let drive = tmp("phases.toml", &small_drive_toml());
    let d = drive.to_str().unwrap();
    let o = ssdtwin(&["run", "--drive", d, "--state", "full", "--idle", "1500ms", "--apst"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("idle 1.500 s"), "{out}");
    let job = tmp(
        "erase.fio",
        "[global]\nbs=128k\n[fill]\nrw=write\nsize=64m\n[format]\nsecure_erase=1\n[after]\nrw=randread\nbs=4k\nsize=64m\nio_size=1m\n",
    );
    let o = ssdtwin(&["run", "--drive", d, "--job-file", job.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("[format] secure erase:") && out.contains("[all 3 phases]"), "{out}");
    // A secure-erase phase takes no I/O options.
    let bad = tmp("erase-bad.fio", "[format]\nsecure_erase=1\nrw=read\n");
    let o = ssdtwin(&["run", "--drive", d, "--job-file", bad.to_str().unwrap()]);
    assert_fails_with(&o, &["erase-bad.fio", "secure_erase", "`rw`"]);
}

#[test]
fn set_reaches_array_entries_and_removes_fields() {
    // Switch the interface: the NVMe fields go, the SATA ones come.
    let o = ssdtwin(&[
        "show",
        "generic-tlc-nvme",
        "--set",
        "host.interface=sata",
        "--set",
        "host.pcie_gen=",
        "--set",
        "host.pcie_lanes=",
        "--set",
        "host.sata_gbps=6",
        "--set",
        "host.max_queue_depth=32",
        "--set",
        "power.state[0].max_w=5.5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("interface = \"sata\"") && !text.contains("pcie_gen"), "{text}");
    assert!(text.contains("max_w = 5.5"), "{text}");
    let o = ssdtwin(&["show", "generic-tlc-nvme", "--set", "power.state[9].max_w=1"]);
    assert_fails_with(&o, &["power.state[9].max_w", "out of range"]);
    let o = ssdtwin(&["show", "generic-tlc-nvme", "--set", "host.interface=sata"]);
    assert_fails_with(&o, &["host.pcie_gen", "nvme"]);
}

#[test]
fn validate_exit_status_says_whether_figures_hold() {
    // Every figure of the 600p within tolerance: exit 0.
    let o = ssdtwin(&["validate", "intel-600p-512gb", "--quick"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Sequential write into SLC") && out.contains("all figures within tolerance"), "{out}");
    // The same drive with faster pSLC programs (700 → 600 µs) writes into
    // its cache 17% faster than rated, outside the 10% tolerance: exit 1.
    let o = ssdtwin(&["validate", "intel-600p-512gb", "--quick", "--set", "nand.slc.tprog_ns=[600000]"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("outside tolerance"));
    // A drive without figures: an error naming those that have some.
    let o = ssdtwin(&["validate", "generic-tlc-nvme"]);
    assert_fails_with(&o, &["generic-tlc-nvme", "intel-660p-1tb"]);
}

#[test]
fn json_output_is_deterministic_and_fio_shaped() {
    let drive = tmp("det.toml", &small_drive_toml());
    let out1 = tmp("out1.json", "");
    let out2 = tmp("out2.json", "");
    for out in [&out1, &out2] {
        let o = ssdtwin(&[
            "run",
            "--drive",
            drive.to_str().unwrap(),
            "--state",
            "full",
            "--rw",
            "randrw",
            "--rwmixread",
            "70",
            "--bs",
            "4k",
            "--iodepth",
            "8",
            "--io_size",
            "20m",
            "--size",
            "200m",
            "--json",
            out.to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let a = std::fs::read_to_string(&out1).unwrap();
    assert_eq!(a, std::fs::read_to_string(&out2).unwrap());
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    let job = &v["jobs"][0];
    assert!(job["read"]["iops"].as_f64().unwrap() > 0.0);
    assert!(job["write"]["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
    assert_eq!(v["state"], "full");
}

#[test]
fn presets_list_and_show() {
    let o = ssdtwin(&["presets"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("generic-tlc-nvme") && out.contains("generic-mlc-sata"));
    let o = ssdtwin(&["show", "generic-mlc-sata", "--set", "controller.cores=2"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("cores = 2"));
}

/// A fresh directory `name` in a temporary directory of its own.
fn tmp_dir(name: &str) -> Scratch {
    let dir = temp_dir();
    let path = dir.path().join(name);
    std::fs::create_dir_all(&path).unwrap();
    Scratch { path, _dir: dir }
}

/// A drive file small enough for a suite at `--scale 0.002`.
fn small_suite_drive() -> Scratch {
    tmp("suite-drive.toml", &small_drive_toml())
}

#[test]
fn suite_list_show_and_tests() {
    let o = ssdtwin(&["suite", "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for name in ["client-2018", "client-2015", "iometer-2008", "vendor-2018"] {
        assert!(out.contains(name), "{out}");
    }
    let o = ssdtwin(&["suite", "client-2018", "--list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("standard, full") && out.contains("qd32") && out.contains("read70"), "{out}");
    let o = ssdtwin(&["suite", "vendor-2018", "--show"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("numjobs = 4") && out.contains("1024"), "{out}");
}

#[test]
fn suite_json_is_complete_and_deterministic() {
    let drive = small_suite_drive();
    let dirs = [tmp_dir("s1"), tmp_dir("s2")];
    for d in &dirs {
        let o = ssdtwin(&[
            "suite",
            "iometer-2008",
            "--drive",
            drive.to_str().unwrap(),
            "--set",
            "controller.cores=2",
            "--scale",
            "0.01",
            "--time-scale",
            "0.002",
            "--out",
            d.to_str().unwrap(),
            "-q",
            "-j",
            "2",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(o.stdout.is_empty(), "--quiet prints nothing");
    }
    let a = std::fs::read_to_string(dirs[0].join("iometer-2008.json")).unwrap();
    assert_eq!(a, std::fs::read_to_string(dirs[1].join("iometer-2008.json")).unwrap());
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert!(v["ssdtwin_version"].is_string());
    assert_eq!(v["options"]["seed"], 1);
    assert!(v["suite"]["toml"].as_str().unwrap().contains("[[test]]"));
    assert_eq!(v["drives"][0]["overrides"][0], "controller.cores=2");
    assert_eq!(v["drives"][0]["spec"]["controller"]["cores"], 2);
    let t = &v["runs"][0]["tests"][3];
    assert_eq!(t["name"], "random-write-qd");
    assert_eq!(t["steps"].as_array().unwrap().len(), 7);
    let step = &t["steps"][6];
    assert_eq!(step["sweep"]["iodepth"], 64);
    assert!(step["result"]["write"]["iops"].as_f64().unwrap() > 0.0);
    assert!(!step["result"]["time_series"].as_array().unwrap().is_empty());
    assert!(v["scores"].as_array().unwrap().len() >= 4 * 7);
}

#[test]
fn review_prints_standard_and_full_scores() {
    let drive = small_suite_drive();
    let out = tmp_dir("review");
    let o = ssdtwin(&[
        "review",
        drive.to_str().unwrap(),
        "--scale",
        "0.002",
        "--time-scale",
        "0.005",
        "--only",
        "sustained-seq-write",
        "--only",
        "burst-random-read",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    for needle in ["standard", "full", "sustained-seq-write", "burst-random-read", "QD1–4 mean", "MB/s"] {
        assert!(table.contains(needle), "no `{needle}` in\n{table}");
    }
    assert!(!table.contains("mixed-random"), "--only runs only those tests");
    assert!(out.join("client-2018.json").exists());
    assert!(table.contains("report.html"), "{table}");
    report_rerenders_the_run_byte_for_byte(&out);
}

/// `ssdtwin report` on the JSON a run wrote gives the same files.
fn report_rerenders_the_run_byte_for_byte(run_dir: &Path) {
    let again = tmp_dir("report-again");
    let json = run_dir.join("client-2018.json");
    let o = ssdtwin(&["report", json.to_str().unwrap(), "--out", again.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty() && o.stderr.is_empty(), "--quiet and no terminal: silent");
    let html = std::fs::read(run_dir.join("report.html")).unwrap();
    assert_eq!(html, std::fs::read(again.join("report.html")).unwrap(), "report.html differs");
    let mut names: Vec<_> =
        std::fs::read_dir(run_dir.join("charts")).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    for n in &names {
        let a = std::fs::read(run_dir.join("charts").join(n)).unwrap();
        assert_eq!(a, std::fs::read(again.join("charts").join(n)).unwrap(), "{n:?} differs");
    }
    for csv in ["scores.csv", "steps.csv", "timeseries.csv"] {
        assert_eq!(std::fs::read(run_dir.join(csv)).unwrap(), std::fs::read(again.join(csv)).unwrap(), "{csv}");
    }
    let o = ssdtwin(&["report", drive_json_that_is_not_a_suite().to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert_fails_with(&o, &["not a suite run"]);
}

fn drive_json_that_is_not_a_suite() -> Scratch {
    tmp("not-a-suite.json", r#"{ "jobs": [] }"#)
}

#[test]
fn review_default_drive_and_bad_suites_fail_clearly() {
    let presets = String::from_utf8_lossy(&ssdtwin(&["presets"]).stdout).into_owned();
    if !presets.contains("intel-660p-1tb") {
        let o = ssdtwin(&["review"]);
        assert_fails_with(&o, &["intel-660p-1tb", "generic-tlc-nvme"]);
    }
    let drive = small_suite_drive();
    let d = drive.to_str().unwrap();
    let o = ssdtwin(&["suite", "client-2019", "--drive", d]);
    assert_fails_with(&o, &["client-2019", "client-2018"]);
    let bad = tmp("bad-suite.toml", &suite_source("iometer-2008").replace("also = [", "alsoo = ["));
    let o = ssdtwin(&["suite", bad.to_str().unwrap(), "--drive", d]);
    assert_fails_with(&o, &["bad-suite.toml", "alsoo"]);
    let bad = tmp(
        "bad-sweep.toml",
        &suite_source("iometer-2008").replace("iodepth = [1, 2, 4, 8, 16, 32, 64]", "iodepth = [1, 0]"),
    );
    let o = ssdtwin(&["suite", bad.to_str().unwrap(), "--drive", d]);
    assert_fails_with(&o, &["bad-sweep.toml", "random-write-qd", "iodepth", "0 is not between"]);
    let o = ssdtwin(&["suite", "iometer-2008", "--drive", d, "--only", "writes"]);
    assert_fails_with(&o, &["writes", "random-write-sizes"]);
    let o = ssdtwin(&["suite", "client-2018", "--drive", d]);
    assert_fails_with(&o, &["does not fit", "--scale"]);
}

fn suite_source(name: &str) -> String {
    let o = ssdtwin(&["suite", name, "--show"]);
    assert!(o.status.success());
    String::from_utf8(o.stdout).unwrap()
}

/// fio's command-line spelling of the log and steady-state options, and
/// `--output-format=terse`: one fio v3 line per job; the logs land where
/// fio puts them (the job's name as prefix when none is given, in the
/// working directory).
#[test]
fn terse_output_and_logs_from_fio_flags() {
    let drive = tmp("terse.toml", &small_drive_toml());
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let o = Command::new(env!("CARGO_BIN_EXE_ssdtwin"))
        .current_dir(&dir)
        .args([
            "run",
            "--drive",
            drive.to_str().unwrap(),
            "--name=lg",
            "--rw=randwrite",
            "--size=64m",
            "--rate_iops=2000",
            "--time_based",
            "--runtime=30",
            "--ss=iops:2%",
            "--ss_dur=2",
            "--write_bw_log",
            "--log_avg_msec=500",
            "--output-format=terse",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let fields: Vec<&str> = text.trim_end().split(';').collect();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert_eq!(fields[..5], ["3", "fio-3.33", "lg", "0", "0"]);
    // Steady state ended the job after about 2 s: its write runtime.
    let runtime_ms: u64 = fields[5 + 41 + 3].parse().unwrap();
    assert!((1900..2200).contains(&runtime_ms), "{runtime_ms}");
    let log = std::fs::read_to_string(dir.join("lg_bw.1.log")).unwrap();
    assert_eq!(log.lines().next(), Some("500, 8000, 1, 4096, 0"));
}

#[test]
fn trace_generate_writes_a_synthetic_trace_that_replays_as_a_file() {
    let dir = tmp_dir("generate");
    let out = dir.join("light.fio.zst");
    let o = ssdtwin(&["trace", "generate", "atsb-light-synthetic", out.to_str().unwrap(), "--scale", "0.001"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ssdtwin(&["trace", "stats", out.to_str().unwrap(), "--json", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["requests"], 800);
    assert_eq!(j["format"], "fio-v3");
    // The built-in generators are listed with their figures.
    let o = ssdtwin(&["trace", "generate", "--list"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("atsb-destroyer-synthetic: 49810000 requests"));
    let o = ssdtwin(&["trace", "generate", "no-such-generator", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("atsb-heavy-synthetic"), "{}", stderr(&o));
}

/// `--json` to a FIFO (as to `/dev/null`) writes into it in place: the
/// temporary-file-and-rename that protects regular files must not replace
/// a device or pipe with a regular file.
#[test]
fn json_into_a_fifo_keeps_the_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let fifo = dir.join("results.json");
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // The reader waits on the FIFO; if the run replaced it instead of
    // writing into it, nothing ever arrives (bounded wait, not a hang).
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let fifo = fifo.clone();
        std::thread::spawn(move || tx.send(std::fs::read_to_string(&fifo).unwrap()));
    }
    let o = ssdtwin(&[
        "run",
        "--drive",
        "generic-tlc-nvme",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--io_size",
        "4m",
        "--quiet",
        "--json",
        fifo.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the JSON arrives through the FIFO");
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok(), "the reader got the whole JSON");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary left beside it");
}

/// A fio command line pastes as it is: one-dash options, repeated `-name`
/// starting jobs, engine and program options ignored and listed; it gives
/// the same results as the two-dash spelling.
#[test]
fn zoned_jobs_need_a_zoned_drive() {
    let drive = tmp("conv.toml", &small_drive_toml());
    let o =
        ssdtwin(&["run", "--drive", drive.to_str().unwrap(), "--name=z", "--zonemode=zbd", "--rw=write", "--size=8m"]);
    assert_fails_with(&o, &["zonemode", "zoned drive"]);
    let o = ssdtwin(&["run", "--drive", drive.to_str().unwrap(), "--name=f", "--fdp=1", "--rw=write", "--size=8m"]);
    assert_fails_with(&o, &["fdp", "[fdp]"]);
}

#[test]
fn fio_command_lines_paste_as_they_are() {
    let drive = tmp("paste.toml", &small_drive_toml());
    let d = drive.to_str().unwrap();
    let pasted = [
        "run",
        "--drive",
        d,
        "--output-format=json",
        "-ioengine=libaio",
        "-direct=1",
        "-size=16m",
        "--eta-newline=1",
        "-name=a",
        "-rw=randread",
        "-bs=4k",
        "-iodepth",
        "2",
        "-io_size=1m",
        "-userspace_reap",
        "-name=b",
        "-rw=write",
        "-bs",
        "64k",
        "-io_size=2m",
        "-norandommap",
    ];
    let o = ssdtwin(&pasted);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("ignored: describes the host: ioengine, direct, userspace_reap, --eta-newline"), "{e}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let names: Vec<&str> = json["jobs"].as_array().unwrap().iter().map(|j| j["jobname"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(json["jobs"][1]["write"]["io_bytes"], 2 << 20);
    let dashes: Vec<String> = pasted
        .iter()
        .map(|a| if a.starts_with('-') && !a.starts_with("--") { format!("-{a}") } else { a.to_string() })
        .collect();
    let o2 = ssdtwin(&dashes.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o2.status.success(), "{}", stderr(&o2));
    assert_eq!(o.stdout, o2.stdout, "one dash and two give the same run");
    // fio's client mode is refused with the reason.
    let o = ssdtwin(&["run", "--drive", d, "--client=host1", "--rw=read", "--size=1m"]);
    assert_fails_with(&o, &["--client", "client/server"]);
}

/// fio's `xnvme-fdp.fio` runs as its comment says (`--section=default`;
/// its `[override]` section, whose options come from unset environment
/// variables, is not read): 2 MiB of random writes through placement
/// identifiers 4 and 5 in turn, on a drive with eight reclaim unit handles.
#[test]
fn section_runs_only_the_named_sections_of_a_job_file() {
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ssdtwin/tests/data/fio-examples/xnvme-fdp.fio");
    let f = file.to_str().unwrap();
    let fdp = ["--set", "fdp.reclaim_unit_handles=8", "--set", "fdp.isolation=initially"];
    let mut args = vec!["run", "--drive", "generic-tlc-nvme"];
    args.extend(fdp);
    args.extend(["--job-file", f, "--output-format=json", "--section=default"]);
    let o = ssdtwin(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let jobs = json["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["jobname"], "default");
    assert_eq!(jobs[0]["write"]["io_bytes"], 2 << 20);
    let host: Vec<u64> = jobs[0]["ssdtwin"]["placement"]["handles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(host, [0, 0, 0, 0, 1 << 20, 1 << 20, 0, 0]);
    // Without it the [override] section is read, and its empty variable
    // named.
    let o = ssdtwin(&args[..args.len() - 1]);
    assert_fails_with(&o, &["xnvme-fdp.fio", "FIO_RW"]);
    let o = ssdtwin(&["run", "--drive", "generic-tlc-nvme", "--rw=write", "--size=1m", "--section=default"]);
    assert_fails_with(&o, &["--section", "--job-file"]);
}

/// An option of fio's table the twin cannot model is refused with the
/// reason, file and line, unless it has fio's default value; `ssdtwin
/// fio-options` shows the table's entries.
#[test]
fn refused_options_say_why_and_fio_options_lists_the_table() {
    let drive = tmp("refused.toml", &small_drive_toml());
    let d = drive.to_str().unwrap();
    let job = tmp("sync.fio", "[global]\nsize=8m\n[w]\nrw=write\nwrite_barrier=4\nfile_append=1\n");
    let o = ssdtwin(&["run", "--drive", d, "--job-file", job.to_str().unwrap()]);
    assert_fails_with(
        &o,
        &["sync.fio:5", "`write_barrier`", "barrier", "`file_append` (", "sync.fio:6)", "end of a file"],
    );
    let job = tmp("inert.fio", "[global]\nsize=8m\n[w]\nrw=write\nwrite_barrier=0\nfile_append=0\n");
    let o = ssdtwin(&["run", "--drive", d, "--job-file", job.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ssdtwin(&["fio-options", "write_barrier", "timeout", "fixedbufs"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("write_barrier ") && lines[0].contains(" refused "), "{out}");
    assert!(lines[1].contains("refused: barrier"), "{out}");
    assert!(lines[2].starts_with("runtime (timeout)") && lines[2].contains(" fio "), "{out}");
    assert!(lines[3].starts_with("fixedbufs ") && lines[3].contains(" host "), "{out}");
    assert_fails_with(&ssdtwin(&["fio-options", "frobnicate"]), &["`frobnicate` is not a fio option"]);
    let o = ssdtwin(&["fio-options", "--markdown"]);
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/fio-options.md"));
    assert_eq!(String::from_utf8_lossy(&o.stdout), page.unwrap());
}

#[test]
fn suite_repeat_prints_medians_and_their_spread() {
    let drive = small_suite_drive();
    let dir = tmp_dir("repeat");
    let args = [
        "suite",
        "vendor-2018",
        "--drive",
        drive.to_str().unwrap(),
        "--scale",
        "0.01",
        "--time-scale",
        "0.002",
        "--repeat",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ];
    let o = ssdtwin(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("seeds 1–3 (median of 3 runs"), "{text}");
    assert!(text.contains("spread over 3 seeds ([1, 2, 3])") && text.contains("median"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("vendor-2018.json")).unwrap()).unwrap();
    let rep = &v["repeat"]["scores"][0];
    assert_eq!(rep["values"].as_array().unwrap().len(), 3);
    assert_eq!(rep["median"], v["scores"][0]["value"], "the reported score is the median");
    let o = ssdtwin(&[&args[..4], &["--repeat", "0"]].concat());
    assert!(!o.status.success() && stderr(&o).contains("--repeat"), "{}", stderr(&o));
}

/// `ssdtwin fit` end to end: the battery written, run by `ssdtwin run` in
/// its directory (logs beside the JSON, as real fio leaves them), fitted
/// from the preset, the drive file written and valid; bad input named.
#[test]
fn fit_writes_the_battery_and_fits_its_results() {
    let dir = tmp_dir("fit");
    let o = ssdtwin(&["fit", "--jobs", dir.to_str().unwrap(), "--time-scale", "0.01"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let drive = dir.join("drive.toml");
    std::fs::write(&drive, small_drive_toml()).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_ssdtwin"))
        .current_dir(&*dir)
        .args(["run", "--drive", "drive.toml", "--job-file", "battery.fio", "--output-format=json", "--output"])
        .arg("battery.json")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(dir.join("fill_bw.2.log").exists(), "the fill's bandwidth log is beside the JSON");
    let out = dir.join("fitted.toml");
    let o = ssdtwin(&[
        "fit",
        "--base",
        "generic-tlc-nvme",
        "--set",
        "geometry.blocks_per_plane=32",
        "--set",
        "ftl.user_capacity_bytes=499998720",
        dir.join("battery.json").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("randread-qd1") && report.contains("nand.native.tr_ns"), "{report}");
    let o = ssdtwin(&["show", out.to_str().unwrap()]);
    assert!(o.status.success(), "the fitted drive file is valid: {}", stderr(&o));
    // Bad input.
    assert_fails_with(&ssdtwin(&["fit"]), &["--jobs DIR", "--base PRESET"]);
    let missing = dir.join("missing.json");
    assert_fails_with(
        &ssdtwin(&["fit", "--base", "generic-tlc-nvme", missing.to_str().unwrap(), "--out", out.to_str().unwrap()]),
        &["missing.json"],
    );
    let truncated = tmp("cut.json", "{\"jobs\": [");
    assert_fails_with(
        &ssdtwin(&["fit", "--base", "generic-tlc-nvme", truncated.to_str().unwrap(), "--out", out.to_str().unwrap()]),
        &["cut.json:1", "ends early"],
    );
}
