//! fio's in-job controllers and logs: the latency-target depth search
//! finds the depth a drive can take, `ss` ends a job at steady state, and
//! the log files have fio's format and read with fio's own tools.

use std::path::Path;
use std::process::Command as Process;

use serde_json::Value;
use ssdtwin::model::health::Health;
use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::fio::JobFile;
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::study::fio_out::FioReport;
use ssdtwin::{Drive, DriveSpec, DriveState, IoKind};

use crate::common::{scratch_dir, small_drive, small_model};

fn run_on(drive: Drive, text: &str) -> (Vec<JobResult>, Device, JobFile) {
    let file = parse_job_file(text, "t.fio", drive.user_bytes(), &JobOptions::new()).unwrap();
    let mut dev = Device::new(drive);
    let r = run_jobs(&mut dev, &file);
    (r, dev, file)
}

fn fio_json(results: &[JobResult], dev: &Device, file: &JobFile) -> Value {
    let spec = DriveSpec::load("generic-tlc-nvme", &[]).unwrap();
    let health = Health::of(dev.drive());
    FioReport { drive: &spec, state: "full".into(), seed: 1, global: &file.global, jobs: results, health: &health }
        .to_json(false)
}

/// One die, full, its map held whole: random reads queue on the die, so
/// a read's latency grows by one read time per command ahead of it.
fn one_die() -> Drive {
    let model = small_model(48, &["geometry.channels=1", "geometry.dies_per_channel=1", "ftl.map_cache="]);
    let mut drive = Drive::new(model);
    DriveState::Filled(100.0).apply_fast(&mut drive, 3);
    drive
}

/// 95th percentile of read latency at a fixed queue depth, ns (one
/// second after a second's ramp).
fn p95_at(qd: u32) -> u64 {
    let (r, _, _) = run_on(one_die(), &format!("[r]\nrw=randread\niodepth={qd}\nramp_time=1\nruntime=1\ntime_based\n"));
    r[0].stats.as_ref().unwrap().dirs[0].percentile_ns(95.0)
}

#[test]
fn latency_target_finds_the_largest_depth_within_target() {
    // The relation, measured at fixed depths: latency rises with depth.
    let p: Vec<u64> = (1..=12).map(p95_at).collect();
    assert!(p.windows(2).all(|w| w[1] > w[0]), "{p:?}");
    // A target between the 95th percentiles at depths 6 and 7: depth 6 is
    // the largest that meets it.
    let target = (p[5] + p[6]) / 2;
    let text = format!(
        "[r]\nrw=randread\niodepth=32\nlatency_target={}ns\nlatency_window=200ms\nlatency_percentile=95\n\
         runtime=60s\ntime_based\n",
        target
    );
    let (r, dev, file) = run_on(one_die(), &text);
    assert_eq!(r[0].latency_depth, 6, "p95 by depth {p:?}, target {target}");
    // It ended after its final window, not at the runtime.
    assert!(r[0].result.end_ns - r[0].result.start_ns < 10_000_000_000);
    // The statistics cover the final run at the depth found: within target.
    let d = &r[0].stats.as_ref().unwrap().dirs[0];
    assert!(d.percentile_ns(95.0) <= target, "{} > {target}", d.percentile_ns(95.0));
    let v = fio_json(&r, &dev, &file);
    let j = &v["jobs"][0];
    assert_eq!(j["latency_depth"], 6);
    assert_eq!(j["latency_target"], target);
    assert_eq!(j["latency_percentile"], 95.0);
    assert_eq!(j["latency_window"], 200_000);
    // A target below what depth 1 reaches ends the job with ETIMEDOUT.
    let (r, _, _) = run_on(one_die(), "[r]\nrw=randread\niodepth=8\nlatency_target=1us\nnumber_ios=1000\n");
    assert_eq!((r[0].error, r[0].latency_depth), (110, 1));
}

#[test]
fn steady_state_ends_the_job() {
    // At a fixed rate the IOPS are steady from the first second: fio
    // ends the job once `ss_dur` seconds are in (plus the check's second).
    let job = "[w]\nrw=randwrite\nsize=64m\nrate_iops=2000\ntime_based\nruntime=60\nss_dur=3\n";
    let (r, dev, file) = run_on(small_drive(256, &[]), &format!("{job}ss=iops:2%\n"));
    let secs = (r[0].result.end_ns - r[0].result.start_ns) as f64 / 1e9;
    assert!((3.0..3.1).contains(&secs), "{secs}");
    let ss = r[0].steadystate.as_ref().unwrap();
    assert!(ss.attained);
    assert!(ss.iops.iter().all(|&x| (1990..=2010).contains(&x)), "{:?}", ss.iops);
    let v = fio_json(&r, &dev, &file);
    let s = &v["jobs"][0]["steadystate"];
    assert_eq!(s["ss"], "iops:2.000000%");
    assert_eq!((s["duration"].as_u64(), s["attained"].as_u64()), (Some(3), Some(1)));
    assert_eq!(s["data"]["bw"][0].as_u64().unwrap(), s["data"]["iops"][0].as_u64().unwrap() * 4096);
    assert!(s["criterion"].as_str().unwrap().ends_with('%'));
    // ss_ramp: the first seconds are not judged.
    let (r, _, _) = run_on(small_drive(256, &[]), &format!("{job}ss=iops_slope:1%\nss_ramp=2\n"));
    let secs = (r[0].result.end_ns - r[0].result.start_ns) as f64 / 1e9;
    assert!((5.0..5.1).contains(&secs), "{secs}");
    // A limit that cannot be met: the job runs to its runtime.
    let (r, _, _) = run_on(small_drive(256, &[]), &format!("{job}ss=bw:0\n"));
    let secs = (r[0].result.end_ns - r[0].result.start_ns) as f64 / 1e9;
    assert!(secs > 59.9, "{secs}");
    assert!(!r[0].steadystate.as_ref().unwrap().attained);
}

/// A reporting group of three jobs at 1000 IOPS each with one
/// steady-state setting.
const SS_GROUP: &str = "[global]\nsize=64m\nrw=randwrite\nrate_iops=1000\ntime_based\nruntime=20\nss_dur=3\n\
    ss=iops:5%\ngroup_reporting\n[a]\nnumjobs=2\n[b]\n";

/// Key paths of a JSON value with the type of each leaf.
fn key_paths(v: &Value, at: &str, out: &mut Vec<(String, &'static str)>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| key_paths(x, &format!("{at}.{k}"), out)),
        Value::Array(a) => a.iter().for_each(|x| key_paths(x, &format!("{at}[]"), out)),
        Value::String(_) => out.push((at.to_string(), "string")),
        Value::Number(_) => out.push((at.to_string(), "number")),
        Value::Bool(_) => out.push((at.to_string(), "bool")),
        Value::Null => out.push((at.to_string(), "null")),
    }
    out.sort();
    out.dedup();
}

#[test]
fn steady_state_with_group_reporting_judges_the_group() {
    let (r, dev, file) = run_on(small_drive(256, &[]), SS_GROUP);
    // The group's summed IOPS are steady from the start: every job ends
    // when the group's window is full, as fio terminates the group.
    for j in &r {
        let secs = (j.result.end_ns - j.result.start_ns) as f64 / 1e9;
        assert!((3.0..3.1).contains(&secs), "{}: {secs}", j.name);
    }
    // The group's data is kept by its last job, and sums the three.
    assert!(r[0].steadystate.is_none() && r[1].steadystate.is_none());
    let ss = r[2].steadystate.as_ref().unwrap();
    assert!(ss.attained);
    assert!(ss.iops.iter().all(|&x| (2990..=3010).contains(&x)), "{:?}", ss.iops);
    let v = fio_json(&r, &dev, &file);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    let s = &v["jobs"][0]["steadystate"];
    assert_eq!((s["attained"].as_u64(), s["ss"].as_str()), (Some(1), Some("iops:5.000000%")));
    assert!((2990..=3010).contains(&s["data"]["iops_mean"].as_u64().unwrap()), "{s}");
    // Without group_reporting each job is judged by itself (1000 IOPS).
    let (r, _, _) = run_on(small_drive(256, &[]), &SS_GROUP.replace("group_reporting\n", ""));
    for j in &r {
        let ss = j.steadystate.as_ref().unwrap();
        assert!(ss.attained && ss.iops.iter().all(|&x| (990..=1010).contains(&x)), "{}: {:?}", j.name, ss.iops);
    }
    // fio rejects a group whose jobs' steady-state settings differ.
    let e = parse_job_file(
        "[global]\nrw=read\nsize=1m\n[a]\nss_dur=3\nss=iops:5%\n[b]\nss_dur=3\nss=iops:6%\n",
        "g.fio",
        1 << 30,
        &JobOptions::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("g.fio:9: option `ss`") && e.contains("consistent within reporting groups"), "{e}");
    let mixed = "[global]\nrw=read\nsize=1m\n[a]\nss_dur=3\n[b]\n";
    assert!(parse_job_file(mixed, "g.fio", 1 << 30, &JobOptions::new()).is_err());
    // In separate groups they may differ.
    let apart = "[global]\nrw=read\nsize=1m\n[a]\nss_dur=3\n[b]\nstonewall\n";
    assert!(parse_job_file(apart, "g.fio", 1 << 30, &JobOptions::new()).is_ok());
}

/// Run real fio on `jobs` (whose first line is `[global]`) with the null
/// engine; its process output and JSON. `None` (the test skips) when fio
/// is not installed.
fn real_fio(name: &str, jobs: &str) -> Option<(std::process::Output, Value)> {
    if Process::new("fio").arg("--version").output().is_err() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return None;
    }
    let tmp = scratch_dir(name);
    let dir = tmp.path().to_path_buf();
    let path = dir.join(format!("{name}.fio"));
    std::fs::write(&path, format!("[global]\nioengine=null\n{}", &jobs["[global]\n".len()..])).unwrap();
    let json = dir.join("out.json");
    let out = Process::new("fio")
        .arg(&path)
        .arg("--output-format=json")
        .arg(format!("--output={}", json.display()))
        .output()
        .unwrap();
    let fio: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    Some((out, fio))
}

/// Real fio (null engine) on the same group: the same `steadystate` key
/// paths and types, and fio's data sums the group too.
#[test]
fn steady_state_group_matches_real_fio() {
    let Some((out, fio)) = real_fio("ssgroup", SS_GROUP) else { return };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (r, dev, file) = run_on(small_drive(256, &[]), SS_GROUP);
    let ours = fio_json(&r, &dev, &file);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    key_paths(&fio["jobs"][0]["steadystate"], "steadystate", &mut a);
    key_paths(&ours["jobs"][0]["steadystate"], "steadystate", &mut b);
    assert_eq!(a, b);
    assert_eq!(fio["jobs"].as_array().unwrap().len(), 1);
    let fs = &fio["jobs"][0]["steadystate"];
    assert_eq!(fs["attained"], 1);
    // fio samples a wall-clock second; the group's sum is ~3000 IOPS.
    let mean = fs["data"]["iops_mean"].as_u64().unwrap();
    assert!((2850..=3150).contains(&mean), "{fs}");
    // A group's job_runtime sums its members' (about 3 × 3 s here).
    let (fio_ms, our_ms) =
        (fio["jobs"][0]["job_runtime"].as_f64().unwrap(), ours["jobs"][0]["job_runtime"].as_f64().unwrap());
    assert!((our_ms / fio_ms - 1.0).abs() < 0.1, "job_runtime: fio {fio_ms} ms, ssdtwin {our_ms} ms");
}

/// Three jobs against minimum rates: one slowed by think time below its
/// `rate_iops_min` (checked every 500 ms), one capped by `rate_iops` below
/// its `rate_min` (default 1000 ms cycle), one that keeps its minimum.
const MIN_RATE_JOBS: &str = "[global]\nsize=64m\nbs=4k\ntime_based\nruntime=4\n\
    [think]\nrw=randread\nthinktime=4ms\nrate_iops_min=400\nrate_cycle=500\n\
    [capped]\nrw=randwrite\nrate_iops=200\nrate_min=1m\n\
    [keeps]\nrw=randread\nrate_iops=300\nrate_min=1m\n";

#[test]
fn rate_min_ends_a_job_below_its_minimum_as_fio_does() {
    let (r, dev, file) = run_on(small_drive(256, &[]), MIN_RATE_JOBS);
    let secs: Vec<f64> = r.iter().map(|j| (j.result.end_ns - j.result.start_ns) as f64 / 1e9).collect();
    let errors: Vec<i32> = r.iter().map(|j| j.error).collect();
    assert_eq!(errors, [5, 5, 0], "{secs:?}");
    // fio checks from 2 s on: the first check notes the counts, the first
    // completion a whole cycle later judges them (one I/O period late at
    // most: ~4.1 ms for `think`, plus a read waiting behind a program of
    // the writing job in progress on its die; 5 ms for `capped`).
    assert!((2.5..2.507).contains(&secs[0]), "{secs:?}");
    assert!((3.0..3.006).contains(&secs[1]), "{secs:?}");
    assert!(secs[2] >= 4.0, "{secs:?}");
    // fio's messages, with the rate measured over the last cycle: 4 KiB
    // every (4 ms + a read) is ~245 IOPS; 200 IOPS of 4 KiB is 819200 B/s.
    let think = r[0].error_reason.as_deref().unwrap();
    let got: u64 = think
        .strip_prefix("think: rate_iops_min=400 not met, got ")
        .unwrap()
        .strip_suffix(" IOPS")
        .unwrap()
        .parse()
        .unwrap();
    assert!((235..=250).contains(&got), "{think}");
    // The cycle is judged at the first completion a whole `rate_cycle`
    // (in whole ms, fio's mtime) after the last check: 1000 ms of 200
    // commands, or — when the sleeps' sub-µs remainders put the 200th
    // just short of it — 1004 ms of 201 (820015 B/s).
    let capped = r[1].error_reason.as_deref().unwrap();
    let got: u64 = capped
        .strip_prefix("capped: rate_min=1048576B/s not met, got ")
        .unwrap()
        .strip_suffix("B/s")
        .unwrap()
        .parse()
        .unwrap();
    assert!([819200, 201 * 4096 * 1000 / 1004].contains(&got), "{capped}");
    assert_eq!(r[2].error_reason, None);
    let v = fio_json(&r, &dev, &file);
    assert_eq!(v["jobs"][0]["error"], 5);
    // fio's consistency checks: a minimum above the limit, both kinds of
    // minimum.
    let bad = parse_job_file("[a]\nrw=read\nsize=1m\nrate=1m\nrate_min=2m\n", "b.fio", 1 << 30, &JobOptions::new());
    let e = bad.unwrap_err().to_string();
    assert!(e.starts_with("b.fio:5: option `rate_min`") && e.contains("exceeds the rate"), "{e}");
    let bad =
        parse_job_file("[a]\nrw=read\nsize=1m\nrate_min=1m\nrate_iops_min=5\n", "b.fio", 1 << 30, &JobOptions::new());
    assert!(bad.unwrap_err().to_string().contains("mutually exclusive"));
}

/// Real fio (null engine) on the same jobs: the same jobs fail, with the
/// same error and message, at the same point of their runtime.
#[test]
fn rate_min_matches_real_fio() {
    let Some((out, fio)) = real_fio("ratemin", MIN_RATE_JOBS) else { return };
    // fio's exit status counts the jobs that ended with an error.
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (r, _, _) = run_on(small_drive(256, &[]), MIN_RATE_JOBS);
    for (j, ours) in fio["jobs"].as_array().unwrap().iter().zip(&r) {
        assert_eq!(j["jobname"].as_str(), Some(ours.name.as_str()));
        assert_eq!(j["error"].as_i64(), Some(ours.error as i64), "{}", ours.name);
        let fio_ms = j["job_runtime"].as_u64().unwrap();
        let our_ms = (ours.result.end_ns - ours.result.start_ns) / 1_000_000;
        // fio's clock adds scheduling noise to the same check times.
        assert!(fio_ms.abs_diff(our_ms) <= 50, "{}: fio {fio_ms} ms, ssdtwin {our_ms} ms", ours.name);
        if let Some(why) = &ours.error_reason {
            let stem = &why[..why.find("got").unwrap()];
            assert!(stderr.contains(stem), "{stem} not in fio's {stderr}");
        }
    }
    let capped = "capped: rate_min=1048576B/s not met, got ";
    assert!(stderr.contains(capped), "{stderr}");
}

/// (time ms, value, direction, bs) of each line.
fn read_log(path: &Path) -> Vec<(u64, u64, u64, u64)> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split(", ").map(|x| x.parse().unwrap()).collect();
            assert_eq!(f.len(), 5, "{l}");
            (f[0], f[1], f[2], f[3])
        })
        .collect()
}

#[test]
fn logs_have_fios_format_and_names() {
    let tmp = scratch_dir("logs");
    let dir = tmp.path().to_path_buf();
    let p = dir.join("j").display().to_string();
    let text = format!(
        "[global]\nsize=64m\niodepth=4\n[a]\nrw=randrw\nnumber_ios=20000\nwrite_bw_log={p}\nwrite_iops_log={p}\n\
         write_lat_log={p}\nwrite_hist_log={p}\nlog_hist_msec=20\n[b]\nrw=randread\nnumber_ios=5000\n\
         write_iops_log\nlog_avg_msec=10\nper_job_logs=0\n"
    );
    let (r, _, _) = run_on(small_drive(256, &[]), &text.replace("write_iops_log\n", &format!("write_iops_log={p}b\n")));
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "j_bw.1.log",
            "j_clat.1.log",
            "j_clat_hist.1.log",
            "j_iops.1.log",
            "j_lat.1.log",
            "j_slat.1.log",
            "jb_iops.log"
        ]
    );
    let st = r[0].stats.as_ref().unwrap();
    let ios = st.dirs[0].ios + st.dirs[1].ios;
    let clat = read_log(&dir.join("j_clat.1.log"));
    assert_eq!(clat.len() as u64, ios);
    assert!(clat.windows(2).all(|w| w[0].0 <= w[1].0), "time runs forward");
    // The log's latencies are the job's: same mean per direction.
    for k in [0usize, 1] {
        let xs: Vec<u64> = clat.iter().filter(|l| l.2 == k as u64).map(|l| l.1).collect();
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        assert!((mean - st.dirs[k].mean_ns()).abs() < 1e-6 * mean, "{mean} vs {}", st.dirs[k].mean_ns());
    }
    let bw = read_log(&dir.join("j_bw.1.log"));
    assert_eq!(bw.len() as u64, ios);
    assert!(bw.iter().zip(&clat).all(|(b, c)| b.1 == 4096 * 1_000_000 / c.1 && b.3 == 4096));
    // Averaged IOPS over 10 ms windows add up to the job's commands (the
    // last partial window is left out, as fio does).
    let iops = read_log(&dir.join("jb_iops.log"));
    let counted: u64 = iops.iter().map(|l| l.1 / 100).sum();
    let busiest = iops.iter().map(|l| l.1 / 100).max().unwrap();
    let total = r[1].stats.as_ref().unwrap().dirs[0].ios;
    assert!(counted <= total && counted + busiest >= total, "{counted} of {total}");
    assert!(iops.iter().all(|l| l.0 % 10 == 0 && l.2 == 0 && l.3 == 4096));
    // Histogram lines: time, direction, bs and fio's 1856 bins; the bins
    // of a direction add up to its commands (but those after its last line).
    let hist = std::fs::read_to_string(dir.join("j_clat_hist.1.log")).unwrap();
    let mut binned = [0u64; 3];
    for line in hist.lines() {
        let f: Vec<u64> = line.split(", ").map(|x| x.parse().unwrap()).collect();
        assert_eq!(f.len(), 3 + 1856);
        binned[f[1] as usize] += f[3..].iter().sum::<u64>();
    }
    assert!(binned[0] <= st.dirs[0].ios && binned[0] > st.dirs[0].ios / 2, "{binned:?}");
}

/// fio's own log tools read the logs: `fio2gnuplot` (its min, max and
/// mean are the log's), `fiologparser.py` and `fiologparser_hist.py`
/// (Debian's fio package ships them; skipped with a message when absent).
#[test]
fn fios_log_tools_read_our_logs() {
    let tmp = scratch_dir("logtools");
    let dir = tmp.path().to_path_buf();
    let p = dir.join("t").display().to_string();
    let text = format!(
        "[t]\nrw=randwrite\nsize=64m\niodepth=8\nruntime=3\ntime_based\nwrite_bw_log={p}\nlog_avg_msec=100\n\
         write_lat_log={p}\nwrite_hist_log={p}\nlog_hist_msec=500\n"
    );
    let (r, _, _) = run_on(small_drive(256, &[]), &text);
    assert!(r[0].iops(IoKind::Write) > 0.0);
    let bw = read_log(&dir.join("t_bw.1.log"));
    assert!(bw.len() >= 29, "{}", bw.len());
    if Process::new("fio2gnuplot").arg("-h").output().is_err() {
        eprintln!("skipped fio2gnuplot: not installed (apt-get install fio)");
    } else {
        let out = Process::new("fio2gnuplot").arg("-b").current_dir(&dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let global = std::fs::read_to_string(dir.join("result.global")).unwrap();
        // fio2gnuplot skips lines at time 0.
        let xs: Vec<f64> = bw.iter().filter(|l| l.0 > 0).map(|l| l.1 as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let min = xs.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = xs.iter().cloned().fold(0.0, f64::max);
        let lines: Vec<&str> = global.lines().collect();
        assert_eq!(lines[..3], [format!("min={min:.2}"), format!("max={max:.2}"), format!("avg={mean:.2}")]);
        assert!(lines.contains(&format!("values_count={}", xs.len()).as_str()), "{global}");
    }
    let parser = tool_script("fiologparser.py", &dir);
    match &parser {
        None => eprintln!("skipped fiologparser.py: not found (Debian's fio package ships it)"),
        Some(script) => {
            let out = Process::new("python3")
                .arg(script)
                .arg("-i")
                .arg("1")
                .arg("-a")
                .arg(dir.join("t_clat.1.log"))
                .output()
                .unwrap();
            if out.status.success() {
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(text.lines().count() >= 2, "{text}");
            } else {
                // The script unpacks four columns; fio 3.33 writes five
                // (its priority column), so it fails on fio's own logs too.
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(err.contains("too many values to unpack"), "{err}");
                eprintln!(
                    "fiologparser.py reads only 4-column logs (fio < 3.22); fio 3.33's own logs fail the same way"
                );
            }
        }
    }
    let hist = tool_script("fiologparser_hist.py", &dir);
    let pandas =
        Process::new("python3").args(["-c", "import numpy, pandas"]).output().is_ok_and(|o| o.status.success());
    match (&hist, pandas) {
        (None, _) => eprintln!("skipped fiologparser_hist.py: not found (Debian's fio package ships it)"),
        (_, false) => eprintln!("skipped fiologparser_hist.py: python3 lacks numpy/pandas (pip install numpy pandas)"),
        (Some(script), true) => {
            let out = Process::new("python3").arg(script).arg(dir.join("t_clat_hist.1.log")).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8_lossy(&out.stdout);
            // A header, then one row per interval with percentiles.
            assert!(text.lines().count() >= 3, "{text}");
            let rows = |text: &str| -> Vec<Vec<f64>> {
                text.lines().skip(1).map(|l| l.split(", ").map(|x| x.trim().parse().unwrap()).collect()).collect()
            };
            // Its medians are the job's median latency (fio's histogram
            // bins are within about 1.6 % of a value).
            let writes = &r[0].stats.as_ref().unwrap().dirs[IoKind::Write as usize];
            let p50 = writes.percentile_ns(50.0) as f64;
            for row in rows(&text) {
                assert!((row[4] / p50 - 1.0).abs() < 0.03, "median {} vs the job's {p50}: {text}", row[4]);
            }
            // Unweighted, each histogram line counts in one interval: the
            // rows count every write the log holds, which is every write
            // but those completing after the last line (at most the queue).
            let out = Process::new("python3")
                .arg(script)
                .arg("--noweight")
                .arg(dir.join("t_clat_hist.1.log"))
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8_lossy(&out.stdout);
            let samples: f64 = rows(&text).iter().map(|row| row[1]).sum();
            let logged: u64 = std::fs::read_to_string(dir.join("t_clat_hist.1.log"))
                .unwrap()
                .lines()
                .map(|l| l.split(", ").skip(4).map(|x| x.parse::<u64>().unwrap()).sum::<u64>())
                .sum();
            assert_eq!(samples as u64, logged, "{text}");
            assert!(logged <= writes.ios && writes.ios - logged <= 8, "{logged} of {}", writes.ios);
        }
    }
}

/// A script from Debian's fio package (gzipped under /usr/share/doc/fio),
/// unpacked into the test's temporary directory `dir`.
fn tool_script(name: &str, dir: &Path) -> Option<std::path::PathBuf> {
    let gz = Path::new("/usr/share/doc/fio").join(format!("{name}.gz"));
    let plain = Path::new("/usr/share/doc/fio").join(name);
    if plain.exists() {
        return Some(plain);
    }
    if !gz.exists() {
        return None;
    }
    let out = Process::new("gzip").arg("-dc").arg(&gz).output().ok()?;
    let dest = dir.join(name);
    std::fs::write(&dest, out.stdout).ok()?;
    Some(dest)
}
