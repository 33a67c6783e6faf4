//! fio's rate limits per direction (`rate`, `rate_iops`, `rate_process`,
//! `rate_ignore_thinktime`): each direction keeps its own schedule, a mix
//! ahead in one direction sends the other (fio's `rate_ddir`), and the
//! counts per direction are fio's — by hand from fio's arithmetic, and
//! against real fio (`--ioengine=null`) when it is installed.

use std::process::Command as Process;

use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};

use crate::common::{scratch_dir, small_drive};

/// A 2-second job on a small drive with `opts` (one per line).
fn job(opts: &str) -> String {
    format!("[j]\nsize=64m\nbs=4k\ntime_based\nruntime=2\n{opts}\n")
}

/// Run `text` on a small drive: its one job's result.
fn run(text: &str) -> JobResult {
    let drive = small_drive(256, &[]);
    let file = parse_job_file(text, "t.fio", drive.user_bytes(), &JobOptions::new()).unwrap();
    let mut dev = Device::new(drive);
    run_jobs(&mut dev, &file).remove(0)
}

/// Commands completed per direction (read, write, trim).
fn ios(r: &JobResult) -> [u64; 3] {
    let d = &r.stats.as_ref().unwrap().dirs;
    [d[0].ios, d[1].ios, d[2].ios]
}

/// Commands per direction under real fio (null engine), or `None`
/// without fio.
fn real_fio(text: &str) -> Option<[u64; 3]> {
    if Process::new("fio").arg("--version").output().is_err() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return None;
    }
    let dir = scratch_dir("rate");
    let path = dir.path().join("j.fio");
    std::fs::write(&path, format!("[global]\nioengine=null\n{text}")).unwrap();
    let out = Process::new("fio").arg(&path).arg("--output-format=json").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = &v["jobs"][0];
    Some(["read", "write", "trim"].map(|d| j[d]["total_ios"].as_u64().unwrap()))
}

/// Within `tol` commands (fio runs on the wall clock: a command more or
/// less at the end).
fn close(a: [u64; 3], b: [u64; 3], tol: u64) -> bool {
    (0..3).all(|k| a[k].abs_diff(b[k]) <= tol)
}

/// `rate=1m` limits each direction to 1 MiB/s (2 MiB/s in all), and
/// `rate=1m,4m` sends four writes per read whatever `rwmixread` says:
/// a direction's k-th command goes at k·bs/rate, so 2 s hold
/// ⌈2 s · rate / bs⌉ of them (512 reads of 4 KiB at 1 MiB/s).
#[test]
fn each_direction_keeps_its_own_rate_as_fio_does() {
    for (opts, want) in [
        ("rw=randrw\nrate=1m", [512, 512, 0]),
        ("rw=randrw\nrate=1m,4m", [512, 2048, 0]),
        ("rw=rw\nrate=1m,4m\nrwmixread=80\niodepth=8", [512, 2048, 0]),
        ("rw=randrw\nrate_iops=100,300", [200, 600, 0]),
        // A write limit does nothing to a read job.
        ("rw=randread\nrate=1m,4m", [512, 0, 0]),
        ("rw=randtrim\nrate=,,2m", [0, 0, 1024]),
    ] {
        let text = job(opts);
        let got = ios(&run(&text));
        assert!(close(got, want, 1), "{opts}: {got:?}, want {want:?}");
        if let Some(f) = real_fio(&text) {
            assert!(close(f, want, 3), "fio with {opts}: {f:?}, want {want:?}");
        }
    }
}

/// `rate_iops` is a byte rate of the direction's smallest size (fio
/// 3.33's `__setup_rate`): with 4–16 KiB commands, 2 s at 100 IOPS are
/// 800 KiB of reads, fewer than 200 commands — the same number as fio's
/// (the same sizes: fio's `bsrange` sequence).
#[test]
fn rate_iops_with_varying_sizes_limits_bytes_of_the_smallest_size() {
    let text = job("rw=randrw\nrate_iops=100,300\nbsrange=4k-16k");
    let r = run(&text);
    let d = &r.stats.as_ref().unwrap().dirs;
    for (k, rate) in [(0, 100 * 4096 * 2), (1, 300 * 4096 * 2)] {
        assert!((rate..rate + 16384).contains(&d[k].bytes), "direction {k}: {} bytes", d[k].bytes);
    }
    if let Some(f) = real_fio(&text) {
        assert!(close(f, ios(&r), 2), "fio {f:?}, twin {:?}", ios(&r));
    }
}

/// `rate=,1m` on a 50/50 mix: the writes are held to 1 MiB/s and the
/// reads, with no limit, go whenever the writes are ahead — far more
/// reads than writes (fio's `rate_ddir`), not the half the mix asks for.
#[test]
fn a_mix_ahead_in_one_direction_sends_the_other() {
    let got = ios(&run(&job("rw=randrw\nrate=,1m\niodepth=4")));
    assert!(got[1].abs_diff(512) <= 1, "{got:?}");
    assert!(got[0] > 20 * got[1], "the reads fill the writes' gaps: {got:?}");
    let got = ios(&run(&job("rw=randrw\nrate=1m,\niodepth=4")));
    assert!(got[0].abs_diff(512) <= 1 && got[1] > 20 * got[0], "{got:?}");
}

/// The order of a rated mix's commands is fio's: the same offsets in the
/// same order and as many of each direction as fio's `write_iolog`
/// lists (the direction of a command at a tie between the two schedules
/// can differ: fio runs on the wall clock).
#[test]
fn a_rated_mix_issues_fios_offsets() {
    if Process::new("fio").arg("--version").output().is_err() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = scratch_dir("rate-iolog");
    let log = |name: &str| dir.path().join(name);
    let body = "[j]\nsize=256m\nrw=randrw\nbs=4k\nrate=1m,4m\nruntime=500ms\ntime_based\n";
    let fio_job = dir.path().join("f.fio");
    std::fs::write(&fio_job, format!("[global]\nioengine=null\nwrite_iolog={}\n{body}", log("f.log").display()))
        .unwrap();
    let out = Process::new("fio").arg(&fio_job).arg("--output-format=terse").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = format!("[global]\nwrite_iolog={}\n{body}", log("t.log").display());
    let drive = small_drive(256, &[]);
    let file = parse_job_file(&text, "t.fio", drive.user_bytes(), &JobOptions::new()).unwrap();
    run_jobs(&mut Device::new(drive), &file);
    // (direction, offset) of each command.
    let lines = |name: &str| -> Vec<(String, String)> {
        std::fs::read_to_string(log(name))
            .unwrap()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                matches!(f.get(2), Some(&"read" | &"write")).then(|| (f[2].to_string(), f[3].to_string()))
            })
            .collect()
    };
    let (f, t) = (lines("f.log"), lines("t.log"));
    // 500 ms at 1 + 4 MiB/s: 128 reads and 512 writes. fio on a loaded
    // machine can stall and fall a little behind at the end.
    assert_eq!(t.len(), 640);
    let n = f.len().min(t.len());
    assert!(n > 600, "fio {} commands, twin {}", f.len(), t.len());
    let offsets = |v: &[(String, String)]| v[..n].iter().map(|c| c.1.clone()).collect::<Vec<_>>();
    assert_eq!(offsets(&f), offsets(&t));
    let reads = |v: &[(String, String)]| v[..n].iter().filter(|c| c.0 == "read").count();
    assert!(reads(&f).abs_diff(reads(&t)) <= 4, "reads: fio {}, twin {}", reads(&f), reads(&t));
    // Four writes per read.
    assert!((reads(&t) as f64 / n as f64 - 0.2).abs() < 0.01, "{} reads of {n}", reads(&t));
}

/// `rate_process=poisson`: as many commands on average, at exponential
/// gaps (their coefficient of variation near 1, where the linear
/// schedule's is near 0).
#[test]
fn a_poisson_rate_keeps_the_mean_with_exponential_gaps() {
    let dir = scratch_dir("rate-poisson");
    let cv = |process: &str| -> (u64, f64) {
        let log = dir.path().join(format!("{process}.log"));
        let text = job(&format!("rw=randread\nrate_iops=2000\nrate_process={process}\nwrite_iolog={}", log.display()));
        let n = ios(&run(&text))[0];
        let times: Vec<f64> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| l.contains(" read "))
            .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
            .collect();
        let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        (n, var.sqrt() / mean)
    };
    let (n, c) = cv("linear");
    assert!(n.abs_diff(4000) <= 1 && c < 0.05, "linear: {n} commands, CV {c}");
    // 4000 expected, σ ≈ 63: within 4σ.
    let (n, c) = cv("poisson");
    assert!(n.abs_diff(4000) < 250 && (c - 1.0).abs() < 0.1, "poisson: {n} commands, CV {c}");
}

/// Think time and a rate: by default the job catches up after thinking
/// (the rate holds: 200 IOPS for 2 s); with `rate_ignore_thinktime` the
/// think time is credited, less a block, and the job runs slower — 400
/// and 310 commands, as fio 3.33 gives.
#[test]
fn rate_ignore_thinktime_stops_the_catch_up() {
    let base = "rw=randwrite\nrate_iops=200\nthinktime=20000\nthinktime_blocks=10";
    for (extra, want) in [("", 400), ("rate_ignore_thinktime=1", 310)] {
        let text = job(&format!("{base}\n{extra}"));
        let got = ios(&run(&text))[1];
        assert!(got.abs_diff(want) <= 2, "{extra}: {got}, want {want}");
        if let Some(f) = real_fio(&text) {
            // fio credits the time it actually slept, which a loaded
            // machine stretches: within 5%.
            assert!(f[1].abs_diff(want) <= want / 20, "fio with {extra}: {f:?}");
        }
    }
}
