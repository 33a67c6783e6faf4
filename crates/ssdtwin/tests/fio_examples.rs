//! fio's own example job files (`tests/data/fio-examples/`, fio's
//! examples/ directory; see the README there) run unchanged on a preset:
//! every file that targets one block device or file is parsed as it is
//! written and run, made short by the test (each job's runtime, bytes and
//! delays capped after parsing, so that the whole directory runs in
//! seconds). The others are skipped for a stated reason, found in the
//! file itself: an engine that does no block I/O or reaches storage over
//! a network, several files or devices per job, or a zoned or FDP
//! namespace: those run unchanged on a zoned drive and an FDP drive
//! ([`fios_zoned_example_job_files_run_on_a_zoned_drive`],
//! [`fios_fdp_example_runs_on_an_fdp_drive`]).

use std::path::Path;

use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::try_run_jobs;
use ssdtwin::run::workload::fio::JobFile;
use ssdtwin::run::workload::{parse_job_file, JobOptions, Phase, RwPattern};
use ssdtwin::{Drive, DriveSpec};

/// The preset the examples run on.
const PRESET: &str = "generic-tlc-nvme";

/// Engines that do no block I/O (CPU burners, file-system metadata,
/// commands, memory), or reach storage over a network or a remote API.
const NOT_BLOCK: &[&str] = &[
    "cpuio",
    "exec",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "e4defrag",
    "falloc",
    "ftruncate",
    "mtd",
    "page_fault",
    "dev-dax",
    "libpmem",
];
const REMOTE: &[&str] = &[
    "net",
    "netsplice",
    "rdma",
    "http",
    "nbd",
    "nfs",
    "rbd",
    "rados",
    "gfapi",
    "gfapi_async",
    "libiscsi",
    "libhdfs",
    "dfs",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "libcufile",
    "libhipfile",
];

/// Examples the twin refuses, with the option it names: what is left of
/// fio's table (issue 32) or of the drive. Each must still be refused for
/// that option; once one runs, move it out of this list.
const REFUSED: &[(&str, &str)] = &[
    ("uring-cmd-write-mode.fio", "write_mode"),
    ("uring-cmd-bsg.fio", "readfua"),
    ("sg_verify.fio", "sg_write_mode"),
    ("sg_verify-fail.fio", "sg_write_mode"),
    ("sg_write_same_ndob.fio", "sg_write_mode"),
    // 4096 + 64 bytes: a namespace formatted with extended-LBA metadata.
    ("uring-cmd-pi-ext.fio", "bs"),
    // 999 GiB: larger than the preset (and than any shipped drive).
    ("enospc-pressure.fio", "size"),
    // 30 jobs 124 GiB apart: a drive of about 3.7 TB, as its comment says
    // (its verify with loops and io_size runs: tests/fio_iolog.rs).
    ("cross-stripe-verify.fio", "offset"),
];

/// Why the file is skipped, from what it says (`None`: it should run).
fn skip_reason(text: &str) -> Option<String> {
    let values = |key: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split([';', '#']).next().unwrap_or("").trim())
            .filter_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == key).map(|(_, v)| v.trim().to_string()))
            .collect()
    };
    if let Some(e) = values("ioengine").iter().find(|e| NOT_BLOCK.contains(&e.as_str())) {
        return Some(format!("ioengine={e} does no block I/O"));
    }
    if let Some(e) = values("ioengine").iter().find(|e| REMOTE.contains(&e.as_str())) {
        return Some(format!("ioengine={e} reaches storage over a network or remote API"));
    }
    if values("zonemode").iter().any(|v| v == "zbd") || values("ioengine").iter().any(|e| e == "libzbc") {
        return Some("a zoned block device (zonemode=zbd)".into());
    }
    if values("fdp").iter().any(|v| v == "1") || !values("dataplacement").is_empty() {
        return Some("an FDP namespace (fdp=1)".into());
    }
    if values("nrfiles").iter().any(|v| v.parse::<u64>().is_ok_and(|n| n > 1))
        || values("filename").iter().any(|v| v.contains(':') && !v.starts_with("/dev/"))
        || !values("opendir").is_empty()
    {
        return Some("several files per job".into());
    }
    None
}

/// Cap every job so that the file runs in moments of virtual time.
fn shorten(file: &mut JobFile) {
    const MS: u64 = 1_000_000;
    for j in &mut file.jobs {
        j.startdelay_ns = j.startdelay_ns.min(5 * MS);
        match &mut j.phase {
            Phase::Io(s) => {
                s.ramp_time_ns = s.ramp_time_ns.min(2 * MS);
                s.runtime_ns = Some(s.runtime_ns.map_or(20 * MS, |r| r.min(20 * MS)));
                let bytes = s.io_size.or(s.size).unwrap_or(u64::MAX);
                s.io_size = Some(bytes.min(8 << 20).max(s.bs as u64));
                s.loops = s.loops.min(2);
                s.thinktime_ns = s.thinktime_ns.min(MS);
                // The log files the examples ask for are not the test's.
                s.logs = None;
                s.iolog = None;
            }
            Phase::Idle { duration_ns, .. } => *duration_ns = (*duration_ns).min(10 * MS),
            _ => {}
        }
    }
}

/// fio's example job files, sorted, with the environment variables the
/// examples' comments give (sprandom.fio, xnvme-compare.fio) set, as fio
/// expands them in job files. Only this file's tests parse job files that
/// name them.
fn example_files() -> Vec<std::path::PathBuf> {
    for (var, value) in [("FIO_BS", "4096"), ("FIO_RW", "randread"), ("FIO_IODEPTH", "16")] {
        std::env::set_var(var, value);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-examples");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.retain(|p| p.extension().is_some_and(|e| e == "fio"));
    names.sort();
    names
}

#[test]
fn fios_example_job_files_run() {
    let names = example_files();
    let model = DriveSpec::load(PRESET, &[]).unwrap().build(PRESET).unwrap();
    let capacity = Drive::new(model.clone()).user_bytes();
    let (mut ran, mut skipped, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for path in &names {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        if let Some(why) = skip_reason(&text) {
            skipped.push(format!("{name}: {why}"));
            continue;
        }
        let mut file = match parse_job_file(&text, &name, capacity, &JobOptions::new()) {
            Ok(f) => f,
            Err(e) => {
                failed.push(format!("{e}"));
                continue;
            }
        };
        shorten(&mut file);
        let mut dev = Device::new(Drive::new(model.clone()));
        match try_run_jobs(&mut dev, &file) {
            Ok(jobs) if jobs.iter().all(|j| j.error == 0) => ran.push(name),
            Ok(jobs) => failed.push(format!(
                "{name}: {}",
                jobs.iter().filter_map(|j| j.error_reason.clone()).collect::<Vec<_>>().join("; ")
            )),
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    // The refusals expected, each for its option.
    let mut refused = Vec::new();
    failed.retain(|msg| {
        let known = REFUSED.iter().find(|(f, o)| msg.starts_with(f) && msg.contains(&format!("option `{o}`")));
        if let Some(k) = known {
            refused.push(k.0);
        }
        known.is_none()
    });
    let gone: Vec<_> = REFUSED.iter().filter(|(f, _)| !refused.contains(f)).collect();
    eprintln!(
        "fio examples: {} ran, {} refused (listed), {} skipped, {} failed, of {}",
        ran.len(),
        refused.len(),
        skipped.len(),
        failed.len(),
        names.len()
    );
    for s in &skipped {
        eprintln!("  skipped {s}");
    }
    assert!(failed.is_empty(), "{} example(s) failed:\n{}", failed.len(), failed.join("\n"));
    assert!(gone.is_empty(), "no longer refused for the option listed (move them out of REFUSED): {gone:?}");
    assert_eq!(ran.len() + refused.len() + skipped.len(), names.len());
    assert!(ran.len() >= 45, "only {} examples ran", ran.len());
}

/// fio's `uring-cmd-fdp.fio`, unchanged, on the preset with `[fdp]` and
/// the 8 reclaim unit handles it names: each job's writes go round its
/// own `fdp_pli` list (4, 2 and 1 handles), handle 7 takes nothing.
#[test]
fn fios_fdp_example_runs_on_an_fdp_drive() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-examples/uring-cmd-fdp.fio");
    let text = std::fs::read_to_string(path).unwrap();
    let set = ["fdp.reclaim_unit_handles=8".to_string(), "fdp.isolation=initially".to_string()];
    let model = DriveSpec::load(PRESET, &set).unwrap().build(PRESET).unwrap();
    let capacity = Drive::new(model.clone()).user_bytes();
    let mut file = parse_job_file(&text, "uring-cmd-fdp.fio", capacity, &JobOptions::new()).unwrap();
    shorten(&mut file);
    let mut dev = Device::new(Drive::new(model));
    let jobs = try_run_jobs(&mut dev, &file).unwrap();
    assert!(jobs.iter().all(|j| j.error == 0), "{:?}", jobs.iter().map(|j| &j.error_reason).collect::<Vec<_>>());
    let f = dev.drive().ftl().fdp().unwrap();
    let host: Vec<u64> = (0..8).map(|p| f.counters(p).host_slots).collect();
    // 4 KiB writes, one slot each, in turn over the job's handles.
    let written = |j: usize| jobs[j].result.dirs[1].bytes / 4096;
    let turns = |ids: std::ops::Range<usize>, n: u64| {
        let k = ids.len() as u64;
        ids.clone().enumerate().all(|(i, p)| host[p] == n / k + u64::from((i as u64) < n % k))
    };
    assert!(written(0) > 0 && written(1) > 0 && written(2) > 0);
    assert!(turns(0..4, written(0)), "write-heavy over 0-3: {host:?}");
    assert!(turns(4..6, written(1)), "write-mid over 4, 5: {host:?}");
    assert_eq!(host[6], written(2), "write-light through 6");
    assert_eq!(host[7], 0);
}

/// The zoned drive fio's zoned examples run on: the WD ZN540 preset with
/// the zones of the host-managed SMR disks most of them were written for:
/// 256 MiB (`zonesize=256M`; with `zonemode=zbd` fio refuses a `zonesize`
/// other than the device's), 900 of them (241 GB: the examples reach zone
/// 652), up to 128 open (the examples ask for 32 per job; fio refuses
/// more than the device's limit, and the ZN540's 14 is an SSD's; the write
/// buffer grows to 16 MiB to hold each open zone's partial program unit), each on
/// one erase block per die of 96 wordlines (288 pages × 16 KiB × 2 planes
/// × 32 dies = 288 MiB), of which a zone's capacity uses 85 (255 MiB:
/// whole 96 KiB one-shot program units).
fn zoned_examples_model() -> ssdtwin::DriveModel {
    let set: Vec<String> = [
        "zns.zone_size_bytes=268435456",
        "zns.zone_capacity_bytes=267386880",
        "ftl.user_capacity_bytes=241591910400",
        "geometry.pages_per_block=288",
        "zns.max_open_zones=128",
        "zns.max_active_zones=128",
        "controller.write_buffer_bytes=16777216",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    DriveSpec::load("wd-zn540", &set).unwrap().build("wd-zn540, 256 MiB zones").unwrap()
}

/// Every zoned example of fio's examples/ (`zonemode=zbd`, or the libzbc
/// engine, which implies it) runs unchanged, shortened as the others are,
/// without an I/O error, moves data, and leaves the drive's zones and map
/// consistent. The read-only examples (`read_beyond_wp=0`: fio reads only
/// below write pointers, so a fresh drive gives them nothing) first find
/// a zone written at each job's offset.
#[test]
fn fios_zoned_example_job_files_run_on_a_zoned_drive() {
    let names = example_files();
    let model = zoned_examples_model();
    let capacity = Drive::new(model.clone()).user_bytes();
    let (mut ran, mut failed) = (Vec::new(), Vec::new());
    for path in &names {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        if skip_reason(&text).as_deref() != Some("a zoned block device (zonemode=zbd)") {
            continue;
        }
        let mut file = match parse_job_file(&text, &name, capacity, &JobOptions::new()) {
            Ok(f) => f,
            Err(e) => {
                failed.push(format!("{e}"));
                continue;
            }
        };
        shorten(&mut file);
        let mut dev = Device::new(Drive::new(model.clone()));
        let io = |p: &Phase| match p {
            Phase::Io(s) => Some((s.offset, s.rw)),
            _ => None,
        };
        let read_only = file.jobs.iter().filter_map(|j| io(&j.phase)).all(|(_, rw)| rw == RwPattern::Read);
        if read_only {
            for (offset, _) in file.jobs.iter().filter_map(|j| io(&j.phase)) {
                let fill = format!("[fill]\nzonemode=zbd\nrw=write\nbs=1m\noffset={offset}\nsize=1z\n");
                let fill = parse_job_file(&fill, "fill.fio", capacity, &JobOptions::new()).unwrap();
                let done = try_run_jobs(&mut dev, &fill).unwrap();
                assert_eq!(done[0].error, 0, "{name}: filling at {offset}: {:?}", done[0].error_reason);
            }
        }
        match try_run_jobs(&mut dev, &file) {
            Ok(jobs) if jobs.iter().all(|j| j.error == 0) => {
                let moved = jobs.iter().map(|j| j.result.dirs[0].bytes + j.result.dirs[1].bytes).sum::<u64>();
                if moved == 0 {
                    failed.push(format!("{name}: no byte read or written"));
                } else {
                    ran.push(name);
                }
            }
            Ok(jobs) => failed.push(format!(
                "{name}: {}",
                jobs.iter().filter_map(|j| j.error_reason.clone()).collect::<Vec<_>>().join("; ")
            )),
            Err(e) => failed.push(format!("{name}: {e}")),
        }
        dev.drive().ftl().check_consistency().unwrap();
    }
    eprintln!("fio zoned examples: {} ran: {ran:?}", ran.len());
    assert!(failed.is_empty(), "{} zoned example(s) failed:\n{}", failed.len(), failed.join("\n"));
    // fio 3.42's examples/: four zbd-*.fio, two libzbc-*.fio, two
    // uring-cmd-zoned*.fio and xnvme-zoned.fio.
    assert_eq!(ran.len(), 9, "{ran:?}");
}
