//! fio compatibility: concurrent jobs and their order, the distributions
//! of offsets and sizes, rate-limited arrivals, fio's JSON layout (checked
//! against the real fio when it is installed) and determinism.

use std::collections::BTreeSet;
use std::process::Command as Process;

use serde_json::Value;
use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::fio::JobFile;
use ssdtwin::run::workload::{parse_job_file, IoGenerator, JobOptions, Phase};
use ssdtwin::IoKind;

use crate::common::{scratch_dir, small_drive, with_fio_report};

const CAP: u64 = 256 << 20;

fn parse(text: &str) -> JobFile {
    parse_job_file(text, "t.fio", CAP, &JobOptions::new()).unwrap()
}

fn run(text: &str) -> (Vec<JobResult>, Device, JobFile) {
    let file = parse(text);
    let mut dev = Device::new(small_drive(256, &[]));
    let r = run_jobs(&mut dev, &file);
    (r, dev, file)
}

fn json(text: &str, plus: bool) -> String {
    let (results, dev, file) = run(text);
    with_fio_report(&dev, &file, &results, |r| serde_json::to_string_pretty(&r.to_json(plus)).unwrap())
}

#[test]
fn unstonewalled_jobs_overlap_and_share_the_drive() {
    let alone = run("[a]\nrw=randwrite\nsize=64m\nio_size=16m\niodepth=8\n").0;
    let (both, _, _) =
        run("[global]\nsize=64m\nio_size=16m\niodepth=8\n[a]\nrw=randwrite\n[b]\nrw=randwrite\noffset=64m\n");
    let (a, b) = (&both[0].result, &both[1].result);
    assert_eq!(a.start_ns, b.start_ns);
    assert!(b.start_ns < a.end_ns && a.start_ns < b.end_ns, "the jobs overlap");
    // Sharing the drive: each job gets less than it does alone.
    let solo = alone[0].iops(IoKind::Write);
    assert!(both[0].iops(IoKind::Write) < 0.8 * solo, "{} vs {solo}", both[0].iops(IoKind::Write));
    assert_eq!((both[0].groupid, both[1].groupid), (0, 0));
}

#[test]
fn stonewall_serialises_and_starts_a_group() {
    let (r, _, _) =
        run("[global]\nsize=64m\nio_size=8m\n[a]\nrw=randwrite\n[b]\nstonewall\nrw=randread\n[c]\nrw=read\n");
    assert!(r[1].result.start_ns >= r[0].result.end_ns);
    // The job after the stonewall runs with it, in its group.
    assert_eq!(r[2].result.start_ns, r[1].result.start_ns);
    assert_eq!((r[0].groupid, r[1].groupid, r[2].groupid), (0, 1, 1));
    // wait_for and startdelay.
    let (r, _, _) = run(
        "[global]\nsize=64m\nio_size=8m\n[a]\nrw=randwrite\n[b]\nwait_for=a\nrw=read\n[c]\nstartdelay=10ms\nrw=read\n",
    );
    assert!(r[1].result.start_ns >= r[0].result.end_ns);
    assert_eq!(r[2].result.start_ns, 10_000_000);
}

#[test]
fn numjobs_clones_run_concurrently_at_their_offsets() {
    let file = parse("[w]\nrw=write\nbs=128k\nsize=32m\nnumjobs=4\noffset_increment=32m\ngroup_reporting\n");
    assert_eq!(file.jobs.len(), 4);
    let offs: Vec<u64> = file.jobs.iter().map(|j| if let Phase::Io(s) = &j.phase { s.offset } else { 0 }).collect();
    assert_eq!(offs, [0, 32 << 20, 64 << 20, 96 << 20]);
    let text = json("[w]\nrw=write\nbs=128k\nsize=32m\nnumjobs=4\noffset_increment=32m\ngroup_reporting\n", false);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1, "group_reporting merges the clones");
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 128u64 << 20);
}

fn spec_of(text: &str) -> ssdtwin::run::workload::IoSpec {
    match &parse(text).jobs[0].phase {
        Phase::Io(s) => s.clone(),
        p => panic!("{p:?}"),
    }
}

#[test]
fn zipf_concentrates_accesses_as_the_distribution_says() {
    // 1000 blocks, θ = 1.2: the ten most accessed blocks against the ten
    // first Zipf ranks, the rest as one class (chi-square, 10 dof).
    let spec = spec_of("[z]\nrw=randread\nbs=4k\nsize=4000k\nrandom_distribution=zipf:1.2\n");
    let mut g = IoGenerator::new(&spec, CAP);
    let n = 200_000;
    let mut counts = vec![0u64; 1000];
    for _ in 0..n {
        counts[(g.next_command().offset / 4096) as usize] += 1;
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let h: f64 = (1..=1000).map(|k| (k as f64).powf(-1.2)).sum();
    let p = |k: usize| (k as f64).powf(-1.2) / h;
    let mut chi2 = 0.0;
    for k in 1..=10 {
        let e = p(k) * n as f64;
        chi2 += (counts[k - 1] as f64 - e).powi(2) / e;
    }
    let rest_e = (1.0 - (1..=10).map(p).sum::<f64>()) * n as f64;
    let rest: u64 = counts[10..].iter().sum();
    chi2 += (rest as f64 - rest_e).powi(2) / rest_e;
    assert!(chi2 < 29.6, "chi-square {chi2:.1} (p < 0.001 at 10 dof)");
}

#[test]
fn bssplit_proportions_hold_within_one_percent() {
    // Without the random map (which shortens commands that run into
    // written units), the sizes are drawn as split.
    let spec = spec_of("[s]\nrw=randwrite\nbssplit=4k/50:16k/30:64k/20\nsize=64m\nnorandommap\n");
    let mut g = IoGenerator::new(&spec, CAP);
    let n = 100_000;
    let mut by = std::collections::BTreeMap::new();
    for _ in 0..n {
        let c = g.next_command();
        assert!(c.offset + c.len as u64 <= 64 << 20);
        *by.entry(c.len).or_insert(0u64) += 1;
    }
    for (size, pct) in [(4096u32, 50.0), (16384, 30.0), (65536, 20.0)] {
        let got = by[&size] as f64 * 100.0 / n as f64;
        assert!((got - pct).abs() < 1.0, "{size}: {got}% for {pct}%");
    }
    // bs=4k,64k: reads of 4k, writes of 64k.
    let spec = spec_of("[s]\nrw=randrw\nbs=4k,64k\nsize=64m\n");
    let mut g = IoGenerator::new(&spec, CAP);
    for _ in 0..1000 {
        let c = g.next_command();
        assert_eq!(c.len, if c.kind == IoKind::Read { 4096 } else { 65536 });
    }
}

#[test]
fn poisson_rate_gives_exponential_inter_arrivals() {
    let file = parse("[p]\nrw=randread\nsize=64m\nrate_iops=20000\nrate_process=poisson\niodepth=64\nnumber_ios=20000\nio_size=128m\n");
    let mut dev = Device::new(small_drive(256, &[]));
    dev.log_commands(true);
    let r = run_jobs(&mut dev, &file);
    let mut sub: Vec<u64> = dev.take_log().iter().map(|c| c.submitted_ns).collect();
    sub.sort_unstable();
    let gaps: Vec<f64> = sub.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((mean - 50_000.0).abs() < 2_500.0, "mean gap {mean}");
    assert!((sd / mean - 1.0).abs() < 0.05, "coefficient of variation {}", sd / mean);
    // Share below the median of an exponential (mean · ln 2): one half.
    let below = gaps.iter().filter(|&&g| g < mean * std::f64::consts::LN_2).count() as f64 / gaps.len() as f64;
    assert!((below - 0.5).abs() < 0.02, "{below}");
    assert_eq!(r[0].result.dirs[0].ios, 20000);
}

#[test]
fn same_file_and_seed_give_identical_json() {
    let text = "[global]\nsize=64m\nio_size=8m\nrandseed=3\n[a]\nrw=randrw\nbssplit=4k/70:64k/30\n[b]\nrw=randwrite\n\
                random_distribution=zipf:0.9\nrate_iops=5000\nrate_process=poisson\n\
                [c]\nstonewall\nrw=randread\niodepth=16\nlatency_target=300us\nlatency_window=20ms\nlatency_percentile=99\n\
                runtime=1\ntime_based\nss_dur=2\nss=iops_slope:5%\n";
    assert_eq!(json(text, true), json(text, true));
}

/// Every key path of a JSON value with its type (`bins` keys collapsed).
fn paths(v: &Value, p: String, out: &mut BTreeSet<(String, &'static str)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let k = if p.ends_with("/bins") { "*" } else { k.as_str() };
                paths(x, format!("{p}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for x in a {
                paths(x, format!("{p}[]"), out);
            }
        }
        Value::Number(n) => {
            out.insert((p, if n.is_f64() { "float" } else { "int" }));
        }
        Value::String(_) => {
            out.insert((p, "str"));
        }
        Value::Bool(_) => {
            out.insert((p, "bool"));
        }
        Value::Null => {
            out.insert((p, "null"));
        }
    }
}

fn fio_available() -> bool {
    match Process::new("fio").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            eprintln!("skipped: fio is not installed (apt-get install fio)");
            false
        }
    }
}

/// Job files covering the supported options, each run by real fio (null
/// engine) and by ssdtwin: every key path of fio's JSON and json+ exists
/// in ssdtwin's with the same type.
#[test]
fn json_key_paths_match_real_fio() {
    if !fio_available() {
        return;
    }
    let files = [
        "[global]\nsize=32m\nbs=4k\n[a]\nrw=randread\niodepth=4\n[b]\nrw=randwrite\nstonewall\n",
        "[global]\nsize=32m\n[mix]\nrw=randrw:4\nrwmixread=70\nbssplit=4k/50:64k/50\nrandom_distribution=zipf:1.2\nnumjobs=2\ngroup_reporting\n\
         [seq]\nrw=trimwrite\nbs=4k,64k\nthinktime=10\nthinktime_blocks=4\nnumber_ios=500\n",
        "[r]\nrw=randread\nsize=16m\nrate_iops=50000\nrate_process=poisson\nrandom_distribution=zoned:60/10:40/90\nio_size=2m\n",
        // Steady state (fio attains it after about 2 s of real time) and
        // a latency target (loose: real fio on a loaded machine stalled
        // 6 ms once, and a job at depth 1 over its target is fatal in fio;
        // the keys do not depend on the value).
        "[s]\nrw=randread\nsize=16m\nrate_iops=1000\ntime_based\nruntime=10\nss_dur=2\nss=iops:5%\n\
         [l]\nstonewall\nrw=randread\nsize=16m\niodepth=8\nlatency_target=200ms\nlatency_window=50ms\nio_size=4m\n",
    ];
    let tmp = scratch_dir("fio");
    let dir = tmp.path().to_path_buf();
    for (i, text) in files.iter().enumerate() {
        for plus in [false, true] {
            let job = dir.join(format!("j{i}.fio"));
            std::fs::write(&job, format!("{text}\n")).unwrap();
            let fio_text = text
                .replacen("[", "[global]\nioengine=null\n[", 1)
                .replace("[global]\nioengine=null\n[global]", "[global]\nioengine=null");
            std::fs::write(&job, &fio_text).unwrap();
            let out = Process::new("fio")
                .arg(format!("--output-format={}", if plus { "json+" } else { "json" }))
                .arg(&job)
                .output()
                .unwrap();
            assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
            let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
            let ours: Value = serde_json::from_str(&json(&fio_text, plus)).unwrap();
            let (mut a, mut b) = (BTreeSet::new(), BTreeSet::new());
            paths(&theirs, String::new(), &mut a);
            paths(&ours, String::new(), &mut b);
            let missing: Vec<_> = a
                .difference(&b)
                .filter(|(p, _)| !p.starts_with("/disk_util") && !p.starts_with("/global options/"))
                .filter(|(p, _)| !p.starts_with("/jobs[]/job options/"))
                .collect();
            assert!(a.len() > 150, "fio gave {} key paths", a.len());
            assert!(missing.is_empty(), "file {i} plus={plus}: missing or of another type: {missing:#?}");
        }
    }
}

/// fio's own json+ tool reads ssdtwin's json+: one CSV row per bin.
#[test]
fn fio_jsonplus_clat2csv_reads_our_output() {
    if !fio_available() || Process::new("fio_jsonplus_clat2csv").arg("-h").output().is_err() {
        eprintln!("skipped: fio_jsonplus_clat2csv not available");
        return;
    }
    let tmp = scratch_dir("clat");
    let dir = tmp.path().to_path_buf();
    let text =
        json("[a]\nrw=randread\nsize=32m\nio_size=4m\niodepth=4\n[b]\nrw=randwrite\nsize=32m\nio_size=4m\n", true);
    let src = dir.join("out.json");
    std::fs::write(&src, &text).unwrap();
    for validate in [false, true] {
        let mut cmd = Process::new("fio_jsonplus_clat2csv");
        cmd.arg(&src).arg(dir.join("lat.csv"));
        if validate {
            cmd.arg("--validate");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let v: Value = serde_json::from_str(&text).unwrap();
    for (j, dir_name) in [(0usize, "read"), (1, "write")] {
        let bins = v["jobs"][j][dir_name]["clat_ns"]["bins"].as_object().unwrap().len();
        let csv = std::fs::read_to_string(dir.join(format!("lat_job{j}.csv"))).unwrap();
        assert_eq!(csv.lines().count() - 1, bins, "job {j}: one row per bin");
    }
}

fn terse(text: &str) -> String {
    let (results, dev, file) = run(text);
    with_fio_report(&dev, &file, &results, |r| r.terse())
}

/// fio's terse output (version 3): the same lines and fields as real
/// fio's for the same job file, each field of the same kind.
#[test]
fn terse_fields_match_real_fio() {
    if !fio_available() {
        return;
    }
    let text = "[global]\nioengine=null\nsize=16m\n[a]\nrw=randrw\nbs=4k\n[b]\nrw=read\nbs=64k\nstonewall\n";
    let tmp = scratch_dir("terse");
    let dir = tmp.path().to_path_buf();
    let job = dir.join("t.fio");
    std::fs::write(&job, text).unwrap();
    let out = Process::new("fio").arg("--output-format=terse").arg(&job).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let theirs = String::from_utf8(out.stdout).unwrap();
    let ours = terse(text);
    assert_eq!(theirs.lines().count(), ours.lines().count(), "{theirs}\n{ours}");
    // The kind of a field: a percentile label, a percentage, a float, an
    // integer or text.
    let kind = |f: &str| -> String {
        if let Some((p, _)) = f.split_once('=') {
            format!("pct {p}")
        } else if f.ends_with('%') {
            "percent".into()
        } else if f.parse::<u64>().is_ok() {
            "int".into()
        } else if f.parse::<f64>().is_ok() {
            "float".into()
        } else {
            f.to_string()
        }
    };
    for (a, b) in theirs.lines().zip(ours.lines()) {
        let fa: Vec<&str> = a.split(';').collect();
        let fb: Vec<&str> = b.split(';').collect();
        assert_eq!(fa.len(), fb.len(), "\n{a}\n{b}");
        assert_eq!(fa[..5], fb[..5]);
        for (i, (x, y)) in fa.iter().zip(&fb).enumerate() {
            assert_eq!(kind(x), kind(y), "field {i}: fio `{x}`, ssdtwin `{y}`");
        }
    }
    // io_kbytes of reads and writes are the job's.
    let first: Vec<&str> = ours.lines().next().unwrap().split(';').collect();
    let (kib_r, kib_w): (u64, u64) = (first[5].parse().unwrap(), first[5 + 41].parse().unwrap());
    assert_eq!(kib_r + kib_w, 16 * 1024);
}

/// fio's random map with variable block sizes: one pass covers every 4 KiB
/// of the span exactly once; per-direction distributions apply to their
/// direction only.
#[test]
fn random_map_covers_each_unit_once_with_bssplit() {
    let spec = spec_of("[s]\nrw=randwrite\nbssplit=4k/50:16k/30:64k/20\nsize=16m\n");
    let mut g = IoGenerator::new(&spec, CAP);
    let units = (16 << 20) / 4096;
    let mut seen = vec![0u8; units];
    let mut bytes = 0u64;
    while bytes < 16 << 20 {
        let c = g.next_command();
        assert!(c.len % 4096 == 0 && c.len > 0 && c.offset + c.len as u64 <= 16 << 20);
        for u in c.offset / 4096..(c.offset + c.len as u64) / 4096 {
            seen[u as usize] += 1;
        }
        bytes += c.len as u64;
    }
    assert_eq!(bytes, 16 << 20);
    assert!(seen.iter().all(|&n| n == 1), "every unit once");
    // The next pass starts over.
    let c = g.next_command();
    assert!(c.len > 0);
    // zipf for reads, uniform for writes.
    let spec = spec_of("[s]\nrw=randrw\nsize=4000k\nrandom_distribution=zipf:1.2,random\n");
    let mut g = IoGenerator::new(&spec, CAP);
    let mut reads = vec![0u64; 1000];
    let mut writes = vec![0u64; 1000];
    for _ in 0..100_000 {
        let c = g.next_command();
        let v = if c.kind == IoKind::Read { &mut reads } else { &mut writes };
        v[(c.offset / 4096) as usize] += 1;
    }
    let top = |v: &mut Vec<u64>| {
        v.sort_unstable_by(|a, b| b.cmp(a));
        v[0] as f64 / v.iter().sum::<u64>() as f64
    };
    // Zipf 1.2 over 1000 ranks: the first has 1 / H(1000, 1.2) ≈ 23 %;
    // uniform writes: about 0.1 % each (at most a few times that).
    let (r, w) = (top(&mut reads), top(&mut writes));
    assert!((r - 0.23).abs() < 0.02 && w < 0.004, "top read {r}, top write {w}");
}

/// fio's offset modifiers on sequential patterns (fio's `ddir_seq_add`,
/// io_u.c `get_next_seq_offset`): `rw=write:8k` skips 8 KiB after each
/// I/O; `rw=read:-8k` (fio's examples/backwards-read.fio) reads the first
/// block, then steps back 8 KiB from the end of each I/O, from the span's
/// end when that goes before its start.
#[test]
fn sequential_offset_modifiers_follow_fio() {
    let kib = |text: &str, n: usize| {
        let mut g = IoGenerator::new(&spec_of(text), CAP);
        (0..n).map(|_| g.next_command().offset / 1024).collect::<Vec<u64>>()
    };
    assert_eq!(kib("[f]\nrw=write:8k\nbs=4k\nsize=64k\n", 4), [0, 12, 24, 36]);
    assert_eq!(kib("[b]\nrw=read:-8k\nbs=4k\nsize=64k\n", 6), [0, 56, 52, 48, 44, 40]);
    // Down to the start, then from the end again.
    assert_eq!(kib("[b]\nrw=read:-8k\nbs=4k\nsize=16k\n", 6), [0, 8, 4, 0, 8, 4]);
    // Random patterns take a count of I/Os, never a negative one.
    let e = ssdtwin::run::workload::parse_job_file("[r]\nrw=randread:-2\n", "j.fio", CAP, &Default::default());
    assert!(e.unwrap_err().to_string().contains("not a number of I/Os"));
}

/// A fio job file's comments may follow a value (fio cuts a line at its
/// first `;` or `#`).
#[test]
fn comments_may_follow_values() {
    let spec = spec_of("[c]\nrw=randread ; random reads\nnumjobs=1\t# one\nsize=1m # small\n");
    assert_eq!(spec.size, Some(1 << 20));
}

/// fio's `exitall` (libfio.c, `fio_terminate_threads`): when one job
/// finishes, the jobs of its group end too (`exit_what=group`); with
/// `exit_what=stonewall` the running jobs end and the next stonewalled
/// group runs; with `all`, every job ends, a later group with no I/O.
#[test]
fn exitall_ends_the_other_jobs_as_fio() {
    let base = "[global]\nsize=64m\nbs=4k\n[short]\nrw=randread\nio_size=1m\n[long]\nrw=randread\nio_size=48m\n";
    let ios = |r: &[JobResult]| r.iter().map(|j| j.result.dirs[0].ios).collect::<Vec<_>>();
    let (r, _, _) = run(base);
    assert_eq!(ios(&r), [256, 12288], "without exitall both run to their end");
    let end_short = r[0].result.end_ns;
    let (r, _, _) = run(&format!("[global]\nexitall\n{}", &base[9..]));
    assert_eq!(r[0].result.dirs[0].ios, 256);
    let long = r[1].result.dirs[0].ios;
    assert!(long < 12288 && long > 0, "the long job ends with the short one: {long} I/Os");
    assert!(r[1].result.end_ns < end_short + 1_000_000, "{} vs {end_short}", r[1].result.end_ns);
    // Another group is not ended by default (group), is by `all`.
    let two_groups = |what: &str| {
        let text = format!("{base}exitall\nexit_what={what}\n[after]\nstonewall\nrw=randread\nio_size=1m\n");
        ios(&run(&text).0)
    };
    let group = two_groups("group");
    assert!(group[1] < 12288 && group[2] == 256, "{group:?}");
    let stonewall = two_groups("stonewall");
    assert!(stonewall[1] < 12288 && stonewall[2] == 256, "{stonewall:?}");
    let all = two_groups("all");
    assert!(all[1] < 12288 && all[2] == 0, "{all:?}");
    // exitall_on_error ends the others only after an error.
    let (r, _, _) = run(&base.replace("io_size=1m", "io_size=1m\nexitall_on_error"));
    assert_eq!(ios(&r), [256, 12288]);
    let e = parse_job_file("[a]\nrw=read\nexit_what=some\n", "j.fio", CAP, &JobOptions::new()).unwrap_err();
    assert!(e.to_string().contains("not one of group, stonewall, all"), "{e}");
}

/// fio's `zonemode=strided` (io_u.c, `setup_strided_zone_mode`; fio's
/// examples/disk-zone-profile.fio): I/O stays in a zone of `zonerange`
/// bytes until `zonesize` bytes were issued there, then moves `zonerange +
/// zoneskip` on, and wraps to the start after the span's last zone.
#[test]
fn strided_zones_follow_fio() {
    let kib = |text: &str, n: usize| {
        let mut g = IoGenerator::new(&spec_of(text), CAP);
        (0..n).map(|_| g.next_command().offset / 1024).collect::<Vec<u64>>()
    };
    let seq = kib("[z]\nrw=read\nbs=64k\nsize=4m\nzonemode=strided\nzonesize=128k\nzoneskip=1m\n", 9);
    // The zones go on past `size` to the drive's end, as fio's on a block
    // device (its file is the device; the wrap is at its end).
    assert_eq!(seq, [0, 64, 1152, 1216, 2304, 2368, 3456, 3520, 4608]);
    let seq = kib("[z]\nrw=read\nbs=64k\noffset=252m\nsize=4m\nzonemode=strided\nzonesize=128k\nzoneskip=1m\n", 9);
    let at = 252 * 1024;
    assert_eq!(seq, [at, at + 64, at + 1152, at + 1216, at + 2304, at + 2368, at + 3456, at + 3520, at]);
    // A zone spanning more than its I/O: sequential I/O wraps inside it.
    let seq = kib("[z]\nrw=read\nbs=64k\nsize=1m\nzonemode=strided\nzonesize=256k\nzonerange=128k\n", 6);
    assert_eq!(seq, [0, 64, 0, 64, 128, 192]);
    // Random offsets: 16 I/Os of 4 KiB in each zone of 256 KiB.
    let mut g = IoGenerator::new(
        &spec_of("[z]\nrw=randread\nbs=4k\nsize=1m\nzonemode=strided\nzonesize=64k\nzonerange=256k\n"),
        CAP,
    );
    for i in 0..80u64 {
        // The fifth zone follows the fourth past `size` (fio on a device).
        let zone = i / 16;
        let o = g.next_command().offset;
        assert!(o >= zone * 256 * 1024 && o < (zone + 1) * 256 * 1024, "I/O {i} at {o}");
    }
    let err = |t: &str| parse_job_file(t, "j.fio", CAP, &JobOptions::new()).unwrap_err().to_string();
    assert!(err("[z]\nrw=read\nzonemode=none\nzonesize=1m\n").contains("not compatible"));
    assert!(err("[z]\nrw=read\nzonemode=strided\n").contains("zonesize must be specified"));
    // zonemode=zbd parses; a conventional drive refuses it when the job
    // runs (tests/zbd.rs).
    assert!(spec_of("[z]\nrw=read\nzonemode=zbd\n").zbd.is_some());
}
