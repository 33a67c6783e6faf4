//! Flexible data placement: placement identifiers keep hot and cold data
//! in different reclaim units; the write amplification of a simple case
//! against its hand computation; GC isolation by handle type; the log
//! page; the fio options and their checks.

use ssdtwin::model::ftl::fdp::MIXED;
use ssdtwin::model::nand::NONE;
use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::run::{execute, RunOptions};
use ssdtwin::{Command, Drive, DriveSpec, IoKind};

use crate::common::{small_drive, small_model};

fn fdp_drive(isolation: &str) -> Drive {
    Drive::new(small_model(
        300,
        &["fdp.reclaim_unit_handles=2", &format!("fdp.isolation={isolation}"), "ftl.version_stamps=true"],
    ))
}

fn run_on(dev: &mut Device, text: &str) -> Vec<JobResult> {
    let file = parse_job_file(text, "p.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    run_jobs(dev, &file)
}

/// Cold data written once through handle 1 while, at the same rate, a
/// hot region is overwritten sequentially four times over through handle
/// 0 (or both without placement identifiers): 400 MiB written, 248 MiB
/// live, on 384 MiB of flash.
fn hot_and_cold(placed: bool) -> String {
    let (cold, hot) = if placed { ("fdp=1\nplids=1\n", "fdp=1\nplids=0\n") } else { ("", "") };
    // The hot region is 8 reclaim units (4 dies × 1.5 MiB blocks: 6 MiB).
    format!(
        "[global]\nbs=128k\niodepth=4\n\
         [cold]\nrw=write\noffset=0\nsize=200m\n{cold}\
         [hot]\nrw=write\noffset=204m\nsize=48m\nio_size=200m\n{hot}"
    )
}

#[test]
fn separated_hot_and_cold_data_is_never_moved() {
    // Hand computation: a reclaim unit of the hot handle holds 6 MiB of
    // the hot region in LBA order, so each pass over the region leaves
    // whole units without valid data, which greedy GC erases without
    // moving anything; the cold handle's units are never overwritten.
    // Media writes = host writes: WAF 1 exactly.
    let mut dev = Device::new(fdp_drive("initially"));
    let r = run_on(&mut dev, &hot_and_cold(true));
    assert!(r.iter().all(|j| j.error == 0));
    let d = dev.drive();
    assert!(d.ftl().counters().gc_blocks > 0, "the drive did collect");
    assert_eq!(d.ftl().counters().gc_slots_moved, 0);
    assert!((d.waf() - 1.0).abs() < 1e-12, "WAF {}", d.waf());
    let f = d.ftl().fdp().unwrap();
    let (hot, cold) = (f.counters(0), f.counters(1));
    assert_eq!((hot.host_slots, cold.host_slots), ((200 << 20) / 4096, (200 << 20) / 4096));
    // Each handle's media writes are its host writes in whole program
    // units (24 slots): all but its partial unit, still in the buffer.
    for c in [hot, cold] {
        assert_eq!(c.media_slots, c.host_slots / 24 * 24);
        assert_eq!(c.moved_slots, 0);
    }
    let stats = d.fdp_statistics().unwrap();
    assert_eq!(stats.host_bytes, 400 << 20);
    assert_eq!(stats.media_bytes, (hot.media_slots + cold.media_slots) * 4096);
    d.ftl().check_consistency().unwrap();

    // The same writes without placement identifiers mix in one stream:
    // hot overwrites leave cold data in every unit, which GC must move.
    let mut mixed = Device::new(fdp_drive("initially"));
    run_on(&mut mixed, &hot_and_cold(false));
    let m = mixed.drive();
    assert!(m.ftl().counters().gc_slots_moved > 0);
    assert!(m.waf() > 1.05, "WAF without placement {}", m.waf());
    assert_eq!(m.ftl().fdp().unwrap().counters(1).host_slots, 0, "everything went to the default handle");
}

/// Random overwrites of a hot region through handle 0 beside cold data
/// through handle 1, GC running: where does moved data go?
fn churn(isolation: &str) -> Drive {
    let mut dev = Device::new(fdp_drive(isolation));
    let r = run_on(
        &mut dev,
        "[global]\nbs=4k\niodepth=8\n[cold]\nrw=write\nbs=128k\nsize=200m\nfdp=1\nplids=1\n\
         [hot]\nrw=randwrite\nnorandommap=1\noffset=200m\nsize=90m\nio_size=400m\nfdp=1\nplids=0\n",
    );
    let why: Vec<_> = r.iter().map(|j| (j.error, j.result.dirs[1].bytes)).collect();
    assert_eq!(why, [(0, 200 << 20), (0, 400 << 20)]);
    dev.drive().clone()
}

#[test]
fn persistent_isolation_keeps_moved_data_with_its_handle() {
    let d = churn("persistently");
    assert!(d.ftl().counters().gc_slots_moved > 0, "{:?}", d.ftl().counters());
    let f = d.ftl().fdp().unwrap();
    let geo = d.model().geometry;
    let p2l = d.ftl().p2l();
    for b in 0..geo.total_blocks {
        let owner = f.owner(b);
        assert_ne!(owner, MIXED, "no shared GC blocks when persistently isolated");
        let s = geo.first_slot(b) as usize;
        for &lpn in &p2l[s..s + geo.slots_per_block as usize] {
            if lpn != NONE {
                let cold = (lpn as u64) < (200 << 20) / 4096;
                assert_eq!(owner, if cold { 1 } else { 0 }, "block {b} holds page {lpn}");
            }
        }
    }
    assert!(f.counters(0).moved_slots > 0);
    d.ftl().check_consistency().unwrap();
    // Initially isolated: moved data of both handles shares GC blocks.
    let d = churn("initially");
    let f = d.ftl().fdp().unwrap();
    assert!((0..d.model().geometry.total_blocks).any(|b| f.owner(b) == MIXED));
    assert!(f.mixed_slots() > 0);
}

#[test]
fn placement_identifiers_are_checked() {
    let mut d = fdp_drive("initially");
    // A placement the drive does not have: the default one, and an event.
    d.submit_placed(Command { kind: IoKind::Write, offset: 0, len: 8192 }, 7, 0);
    let f = d.ftl().fdp().unwrap();
    assert_eq!((f.invalid_placements(), f.counters(0).host_slots), (1, 2));
    // Reads and trims carry none.
    d.submit_placed(Command { kind: IoKind::Read, offset: 0, len: 4096 }, 1, 1_000_000);
    assert_eq!(d.ftl().fdp().unwrap().counters(1).host_slots, 0);
    // fio: fdp on a drive without [fdp]; plids beyond the drive's.
    let file = parse_job_file("[w]\nrw=write\nfdp=1\n", "p.fio", 300 << 20, &JobOptions::new()).unwrap();
    let e = execute(small_drive(300, &[]), &file, RunOptions::default()).err().unwrap().to_string();
    assert!(e.contains("p.fio") && e.contains("`fdp`") && e.contains("[fdp]"), "{e}");
    let file = parse_job_file("[w]\nrw=write\nfdp=1\nplids=0,2\n", "p.fio", 300 << 20, &JobOptions::new()).unwrap();
    let e = execute(fdp_drive("initially"), &file, RunOptions::default()).err().unwrap().to_string();
    assert!(e.contains("plids") && e.contains("index 2"), "{e}");
    for bad in ["dataplacement=streams", "plid_select=scheme", "plids=3-1"] {
        let text = format!("[w]\nrw=write\nfdp=1\n{bad}\n");
        let e = parse_job_file(&text, "p.fio", 300 << 20, &JobOptions::new()).unwrap_err().to_string();
        assert!(e.contains(bad.split('=').next().unwrap()), "{e}");
    }
}

#[test]
fn round_robin_spreads_writes_over_the_handles() {
    let mut dev = Device::new(fdp_drive("initially"));
    run_on(&mut dev, "[w]\nrw=write\nbs=64k\nsize=8m\nfdp=1\n");
    let f = dev.drive().ftl().fdp().unwrap();
    assert_eq!((f.counters(0).host_slots, f.counters(1).host_slots), (1024, 1024));
    let mut dev = Device::new(fdp_drive("initially"));
    run_on(&mut dev, "[w]\nrw=write\nbs=64k\nsize=8m\nfdp=1\nplid_select=random\n");
    let f = dev.drive().ftl().fdp().unwrap();
    let a = f.counters(0).host_slots;
    assert!(a > 600 && a < 1448 && a + f.counters(1).host_slots == 2048, "{a}");
}

fn build(set: &[&str]) -> Result<(), String> {
    let mut all = vec![
        "geometry.channels=2",
        "geometry.dies_per_channel=2",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=48",
        "ftl.user_capacity_bytes=314572800",
        "fdp.reclaim_unit_handles=2",
        "fdp.isolation=persistently",
    ];
    all.extend_from_slice(set);
    let all: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    let spec = DriveSpec::load("generic-tlc-nvme", &all).map_err(|e| e.to_string())?;
    spec.build("fdp").map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn bad_fdp_sections_name_the_field() {
    build(&[]).unwrap();
    let f = small_model(300, &["fdp.reclaim_unit_handles=4", "fdp.reclaim_groups=2", "fdp.isolation=initially"]).fdp;
    let f = f.unwrap();
    assert_eq!((f.placements(), f.dies_per_group, f.ru_bytes), (8, 2, 2 * 1536 * 1024));
    let cases: &[(&[&str], &str)] = &[
        (&["fdp.reclaim_unit_handles=0"], "fdp.reclaim_unit_handles"),
        (&["fdp.reclaim_groups=3"], "fdp.reclaim_groups"),
        (&["fdp.isolation=sometimes"], "isolation"),
        (&["fdp.reclaim_unit_handles=100"], "fdp.reclaim_unit_handles"),
        (
            &[
                "zns.zone_size_bytes=8388608",
                "zns.zone_capacity_bytes=6291456",
                "zns.max_open_zones=1",
                "zns.max_active_zones=1",
            ],
            "zns",
        ),
        (&["ftl.user_capacity_bytes=380000000"], "ftl.user_capacity_bytes"),
    ];
    for (set, field) in cases {
        let e = build(set).expect_err(&format!("{set:?} is refused"));
        assert!(e.contains(field), "{set:?}: {e}");
    }
}

#[test]
fn each_job_reports_what_each_handle_wrote() {
    // Two jobs one after the other: 96 MiB through handle 1, then 48 MiB
    // through handle 0. Each job's window holds its own handle's writes
    // only; media bytes are the host bytes programmed in whole units
    // (what is left in the buffer is programmed later), nothing moved.
    let mut dev = Device::new(fdp_drive("initially"));
    let r = run_on(
        &mut dev,
        "[global]\nrw=write\nbs=128k\niodepth=4\nfdp=1\n[a]\nsize=96m\nplids=1\n[b]\nstonewall\noffset=96m\nsize=48m\nplids=0\n",
    );
    let host = |j: usize| -> Vec<(u32, u32, u64)> {
        let p = r[j].result.placement.as_ref().expect("an FDP drive's job reports its handles");
        assert!(p.zone_states.is_none() && p.zones.is_empty());
        p.handles.iter().map(|h| (h.group, h.handle, h.host_bytes)).collect()
    };
    assert_eq!(host(0), vec![(0, 0, 0), (0, 1, 96 << 20)]);
    assert_eq!(host(1), vec![(0, 0, 48 << 20), (0, 1, 0)]);
    for (j, handle) in [(0, 1), (1, 0)] {
        let h = &r[j].result.placement.as_ref().unwrap().handles[handle];
        assert_eq!(h.moved_bytes, 0);
        assert!(h.media_bytes <= h.host_bytes + (96 << 10) && h.host_bytes - h.media_bytes < 96 << 10, "{h:?}");
        assert!((h.waf - h.media_bytes as f64 / h.host_bytes as f64).abs() < 1e-12);
    }
    let lines = r[0].result.placement.as_ref().unwrap().summary_lines();
    assert!(lines.contains("RG0 RUH1 0.1 GB WAF 1.00"), "{lines}");
}

#[test]
fn a_scheme_file_places_writes_by_offset() {
    // fio's dp_scheme: [0, 2 MiB) through placement 1, [2, 3 MiB) through
    // 0, [3, 4 MiB) through 5 (not the drive's: the default one and an
    // event each); the rest (4-8 MiB) in no entry: placement 0.
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("scheme");
    std::fs::write(&path, "0,2097152,1\n2097152, 3145728, 0\n3145728,4194304,5\n").unwrap();
    let mut dev = Device::new(fdp_drive("initially"));
    let job = format!("[w]\nrw=write\nbs=64k\nsize=8m\nfdp=1\nplid_select=scheme\ndp_scheme={}\n", path.display());
    run_on(&mut dev, &job);
    let f = dev.drive().ftl().fdp().unwrap();
    assert_eq!((f.counters(0).host_slots, f.counters(1).host_slots), (1536, 512));
    assert_eq!(f.invalid_placements(), 16);
    // A scheme file that is not there is named.
    let text = "[w]\nrw=write\nfdp=1\nplid_select=scheme\ndp_scheme=/nonexistent/scheme\n";
    let e = parse_job_file(text, "p.fio", 300 << 20, &JobOptions::new()).unwrap_err().to_string();
    assert!(e.contains("dp_scheme") && e.contains("/nonexistent/scheme"), "{e}");
}

#[test]
fn a_replayed_trace_carries_fios_placement_identifiers() {
    // 128 writes of 64 KiB in an iolog; fio gives replayed writes the
    // job's placement identifiers as it gives generated ones: in turn.
    let dir = tempfile::TempDir::new().unwrap();
    let trace = dir.path().join("w.iolog");
    let mut text = String::from("fio version 3 iolog\n0 f add\n0 f open\n");
    for i in 0..128u64 {
        text.push_str(&format!("{} f write {} 65536\n", i * 100, i * 65536));
        text.push_str(&format!("{} f read {} 4096\n", i * 100 + 50, i * 65536));
    }
    std::fs::write(&trace, text).unwrap();
    let run = |options: &str| {
        let job = format!("[t]\ntrace={}\nreplay=closed:4\n{options}", trace.display());
        let file = parse_job_file(&job, "p.fio", 300 << 20, &JobOptions::new()).unwrap();
        let out = execute(fdp_drive("initially"), &file, RunOptions::default()).unwrap();
        let f = out.device.drive().ftl().fdp().unwrap();
        (f.counters(0).host_slots, f.counters(1).host_slots)
    };
    assert_eq!(run("fdp=1\n"), (64 * 16, 64 * 16), "round robin over both");
    assert_eq!(run("fdp=1\nfdp_pli=1\n"), (0, 128 * 16), "plids (alias fdp_pli) picks handle 1");
    assert_eq!(run(""), (128 * 16, 0), "without fdp: the default handle");
    let scheme = dir.path().join("scheme");
    std::fs::write(&scheme, format!("0,{},1\n", 32 * 65536)).unwrap();
    let by_offset = format!("fdp=1\nplid_select=scheme\ndp_scheme={}\n", scheme.display());
    assert_eq!(run(&by_offset), (96 * 16, 32 * 16), "the first 32 writes by the scheme");
    // On a drive without [fdp], the option is named.
    let job = format!("[t]\ntrace={}\nfdp=1\n", trace.display());
    let file = parse_job_file(&job, "p.fio", 300 << 20, &JobOptions::new()).unwrap();
    let e = execute(small_drive(300, &[]), &file, RunOptions::default()).err().unwrap().to_string();
    assert!(e.contains("`fdp`") && e.contains("[fdp]"), "{e}");
}
