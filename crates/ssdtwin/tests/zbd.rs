//! fio's `zonemode=zbd` on a zoned drive: writes at write pointers, the
//! write-zone limits, resets (when zones are full and by
//! `zone_reset_threshold`/`zone_reset_frequency`), Zone Append, reads of
//! written data, errors per job, and the checks that name the option.

use ssdtwin::model::ftl::zones::ZoneState;
use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::run::{execute, RunOptions};
use ssdtwin::{Drive, IoKind};

use crate::common::{small_drive, small_zoned_model};

const ZONE: u64 = 8 << 20;
const CAP: u64 = 6 << 20;
const ZONES: u64 = 56;

fn zoned() -> Device {
    Device::new(Drive::new(small_zoned_model(&[])))
}

fn run_on(dev: &mut Device, text: &str) -> Vec<JobResult> {
    let file = parse_job_file(text, "z.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    run_jobs(dev, &file)
}

fn states(dev: &Device) -> Vec<ZoneState> {
    dev.drive().report_zones().iter().map(|z| z.state).collect()
}

fn written(r: &JobResult) -> u64 {
    r.result.dirs[IoKind::Write as usize].bytes
}

#[test]
fn a_sequential_write_fills_every_zone_to_its_capacity() {
    let mut dev = zoned();
    let r = run_on(&mut dev, "[w]\nzonemode=zbd\nrw=write\nbs=128k\niodepth=8\n");
    assert_eq!(r[0].error, 0, "{:?}", r[0].error_reason);
    // The bytes between a zone's capacity and its end are skipped.
    assert_eq!(written(&r[0]), ZONES * CAP);
    assert!(states(&dev).iter().all(|&s| s == ZoneState::Full));
    assert!((dev.drive().waf() - 1.0).abs() < 1e-12);
    dev.drive().ftl().check_consistency().unwrap();
    // Again: every zone is full, so each is reset before it is written.
    let r = run_on(&mut dev, "[w]\nzonemode=zbd\nrw=write\nbs=128k\niodepth=8\nsize=80m\n");
    assert_eq!((r[0].error, written(&r[0])), (0, 10 * CAP));
    let s = states(&dev);
    assert!(s[..10].iter().all(|&z| z == ZoneState::Full) && s[10..].iter().all(|&z| z == ZoneState::Full));
    assert_eq!(dev.drive().ftl().counters().gc_slots_moved, 0);
    assert_eq!(dev.drive().ftl().zoned().unwrap().zone_counters(3).resets, 1);
    assert_eq!(dev.drive().ftl().zoned().unwrap().zone_counters(30).resets, 0);
}

#[test]
fn zoned_sequential_writes_run_as_fast_as_conventional_ones() {
    // The same flash, controller and link, conventional and zoned: 40
    // zones' capacity written sequentially against as much written to
    // the conventional drive.
    let bytes = 40 * CAP;
    let mut dev = zoned();
    let z = run_on(&mut dev, &format!("[w]\nzonemode=zbd\nrw=write\nbs=128k\niodepth=32\nsize={}\n", 40 * ZONE));
    let mut conv = Device::new(small_drive(300, &[]));
    let c = run_on(&mut conv, &format!("[w]\nrw=write\nbs=128k\niodepth=32\nsize={bytes}\n"));
    assert_eq!((written(&z[0]), written(&c[0])), (bytes, bytes));
    let (zb, cb) = (z[0].result.bw_bytes(IoKind::Write), c[0].result.bw_bytes(IoKind::Write));
    assert!((zb / cb - 1.0).abs() < 0.05, "zoned {zb:.0} B/s, conventional {cb:.0} B/s");
}

#[test]
fn random_writes_keep_to_the_write_zones() {
    let mut dev = zoned();
    let r = run_on(&mut dev, "[w]\nzonemode=zbd\nrw=randwrite\nbs=64k\niodepth=4\nmax_open_zones=3\nio_size=100m\n");
    assert_eq!(r[0].error, 0, "{:?}", r[0].error_reason);
    assert_eq!(written(&r[0]), 100 << 20);
    let s = states(&dev);
    let open = s.iter().filter(|&&z| z == ZoneState::ImplicitlyOpened).count();
    let full = s.iter().filter(|&&z| z == ZoneState::Full).count() as u64;
    assert!(open <= 3, "{open} zones open");
    assert!(!s.contains(&ZoneState::Closed), "never more zones than the drive keeps open");
    // Every byte went to a zone's write pointer (a full zone a random
    // offset lands on is reset first, as fio does when its write zones
    // have room).
    assert!(full >= 1);
    let zm = dev.drive().ftl().zoned().unwrap();
    let pages: u64 = (0..ZONES as u32).map(|z| zm.zone_counters(z).host_pages).sum();
    assert_eq!(pages * 4096, 100 << 20);
    dev.drive().ftl().check_consistency().unwrap();
    // job_max_open_zones limits one job further.
    let mut dev = zoned();
    let r = run_on(
        &mut dev,
        "[w]\nzonemode=zbd\nrw=randwrite\nbs=64k\nmax_open_zones=4\njob_max_open_zones=1\nio_size=20m\n",
    );
    assert_eq!(r[0].error, 0);
    let open = states(&dev).iter().filter(|&&z| z == ZoneState::ImplicitlyOpened).count();
    assert!(open <= 1, "{open}");
}

#[test]
fn zone_reset_threshold_and_frequency_reset_zones() {
    let mut dev = zoned();
    run_on(&mut dev, "[fill]\nzonemode=zbd\nrw=write\nbs=128k\niodepth=8\n");
    // The range is full (above the 0.5 threshold): a reset every 1/0.05
    // = 20 writes, besides the resets of full zones.
    let r = run_on(
        &mut dev,
        "[w]\nzonemode=zbd\nrw=randwrite\nbs=64k\nzone_reset_threshold=0.5\nzone_reset_frequency=0.05\nio_size=64m\n",
    );
    assert_eq!(r[0].error, 0, "{:?}", r[0].error_reason);
    let resets: u64 = (0..ZONES as u32).map(|z| dev.drive().ftl().zoned().unwrap().zone_counters(z).resets).sum();
    let writes = (64u64 << 20) / (64 << 10);
    assert!(resets >= writes / 20, "{resets} resets for {writes} writes");
    let mut plain = zoned();
    run_on(&mut plain, "[fill]\nzonemode=zbd\nrw=write\nbs=128k\niodepth=8\n");
    run_on(&mut plain, "[w]\nzonemode=zbd\nrw=randwrite\nbs=64k\nio_size=64m\n");
    let fewer: u64 = (0..ZONES as u32).map(|z| plain.drive().ftl().zoned().unwrap().zone_counters(z).resets).sum();
    assert!(fewer < resets, "{fewer} without the threshold, {resets} with it");
}

#[test]
fn zone_append_writes_at_the_pointer() {
    let mut dev = zoned();
    let r = run_on(&mut dev, "[w]\nzonemode=zbd\nwrite_mode=zone_append\nrw=write\nbs=64k\niodepth=4\nsize=24m\n");
    assert_eq!((r[0].error, written(&r[0])), (0, 3 * CAP));
    assert_eq!(&states(&dev)[..4], &[ZoneState::Full, ZoneState::Full, ZoneState::Full, ZoneState::Empty]);
    dev.drive().ftl().check_consistency().unwrap();
}

#[test]
fn reads_find_written_data() {
    let mut dev = zoned();
    run_on(&mut dev, "[w]\nzonemode=zbd\nrw=write\nbs=128k\nsize=40m\n");
    let before = dev.drive().counters().unmapped_reads;
    let r = run_on(&mut dev, "[r]\nzonemode=zbd\nrw=randread\nbs=16k\nio_size=8m\niodepth=4\n");
    assert_eq!((r[0].error, r[0].result.dirs[0].bytes), (0, 8 << 20));
    assert_eq!(dev.drive().counters().unmapped_reads, before, "every read found data");
    // Nothing written: a read job ends at once, without an error (fio's
    // end of file).
    let mut empty = zoned();
    let r = run_on(&mut empty, "[r]\nzonemode=zbd\nrw=read\nbs=16k\n");
    assert_eq!((r[0].error, r[0].result.dirs[0].ios), (0, 0));
}

#[test]
fn host_errors_end_the_job_with_the_status() {
    // Without zonemode=zbd, random writes land off the write pointers.
    let mut dev = zoned();
    let r = run_on(&mut dev, "[w]\nrw=randwrite\nbs=4k\nio_size=1m\n");
    assert_eq!(r[0].error, 5);
    let why = r[0].error_reason.as_deref().unwrap();
    assert!(why.contains("Zone Invalid Write") && why.starts_with("w:"), "{why}");
    // More zones than the drive keeps active.
    let mut dev = zoned();
    let r = run_on(
        &mut dev,
        "[w]\nzonemode=zbd\nrw=randwrite\nbs=4k\nmax_open_zones=12\nignore_zone_limits=1\nio_size=8m\n",
    );
    // Linux reports the active-resource limit as EOVERFLOW (75).
    assert_eq!(r[0].error, 75);
    assert!(r[0].error_reason.as_deref().unwrap().contains("Too Many Active Zones"), "{:?}", r[0].error_reason);
    // A limit larger than the drive's, as fio refuses it.
    let r = run_on(&mut zoned(), "[w]\nzonemode=zbd\nrw=randwrite\nmax_open_zones=9\nio_size=1m\n");
    assert_eq!(r[0].error, 22);
    assert!(r[0].error_reason.as_deref().unwrap().contains("--max_open_zones (9) is larger than max (4)"));
    // Less than a zone to write.
    let r = run_on(&mut zoned(), "[w]\nzonemode=zbd\nrw=write\nsize=4m\n");
    assert_eq!(r[0].error, 22);
}

#[test]
fn zoned_jobs_need_a_zoned_drive() {
    let file = parse_job_file("[w]\nzonemode=zbd\nrw=write\n", "z.fio", 300 << 20, &JobOptions::new()).unwrap();
    let e = execute(small_drive(300, &[]), &file, RunOptions::default()).err().unwrap().to_string();
    assert!(e.contains("z.fio") && e.contains("zonemode") && e.contains("zoned drive"), "{e}");
    let e = parse_job_file("[w]\nrw=write\nwrite_mode=zone_append\n", "z.fio", 300 << 20, &JobOptions::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("write_mode") && e.contains("zonemode=zbd"), "{e}");
    for bad in ["zone_reset_threshold=1.5", "max_open_zones=x", "write_mode=verify"] {
        let text = format!("[w]\nzonemode=zbd\nrw=write\n{bad}\n");
        let e = parse_job_file(&text, "z.fio", 300 << 20, &JobOptions::new()).unwrap_err().to_string();
        assert!(e.contains(bad.split('=').next().unwrap()), "{e}");
    }
}

#[test]
fn zoned_runs_are_deterministic() {
    let job = "[w]\nzonemode=zbd\nrw=randwrite\nbs=16k\niodepth=8\nio_size=30m\nzone_reset_threshold=0.1\nzone_reset_frequency=0.1\n";
    let a = run_on(&mut zoned(), job);
    let b = run_on(&mut zoned(), job);
    assert_eq!(a[0].result.end_ns, b[0].result.end_ns);
    assert_eq!(a[0].result.dirs[1].bytes, b[0].result.dirs[1].bytes);
}

/// The option sets of fio's zoned examples (examples/uring-cmd-zoned*.fio,
/// zbd-rand-write-zone-reset-gc.fio: engine options, verify, sizes in
/// zones) run as they are written, through the one entry point.
#[test]
fn fios_zoned_example_options_run() {
    let run = |text: &str| {
        let drive = Drive::new(small_zoned_model(&[]));
        let file = parse_job_file(text, "ex.fio", drive.user_bytes(), &JobOptions::new()).unwrap();
        let out = execute(drive, &file, RunOptions::default()).unwrap();
        match out.results {
            ssdtwin::run::RunResults::Jobs(j) => j,
            _ => unreachable!("no trace: concurrent jobs"),
        }
    };
    let append = run("[global]\nfilename=/dev/ng1n1\nioengine=io_uring_cmd\ncmd_type=nvme\nzonemode=zbd\n\
         write_mode=zone_append\nsize=1z\nbs=8K\nverify=crc32c\nstonewall=1\n\
         [a]\niodepth=1\nrw=randwrite\n[b]\niodepth=4\nrw=write\nregisterfiles=1\nsqthread_poll=1\n");
    assert!(append.iter().all(|j| j.error == 0), "{:?}", append.iter().map(|j| &j.error_reason).collect::<Vec<_>>());
    // With verify, nothing written is reset before it is read back: the
    // random writer fills its zone's 6 MiB capacity and ends there (its
    // size is 8 MiB); the sequential one resets the full zone before it
    // writes and fills it again. Each reads its 6 MiB back (fio 3.42 on a
    // file with these zones, psync: 6144 KiB written and read, 0 zone
    // resets; the same, 1 zone reset; tests/zbd_verify.rs).
    assert_eq!((written(&append[0]), written(&append[1])), (CAP, CAP));
    assert!(append.iter().all(|j| j.result.dirs[IoKind::Read as usize].bytes == CAP));
    let gc = run("[global]\nrw=randwrite\nzonemode=zbd\nbs=1M\ndirect=1\ntime_based\nruntime=2\n\
         [dev1]\nfilename=/dev/sdb\nsize=8z\noffset=16z\nioengine=psync\n\
         zone_reset_threshold=0.7\nzone_reset_frequency=0.125\n");
    assert_eq!(gc[0].error, 0, "{:?}", gc[0].error_reason);
    assert!(written(&gc[0]) > 8 * CAP, "time-based: the 8 zones are rewritten");
    // Sizes in zones need zonemode=zbd; a span past the drive is refused.
    let e = parse_job_file("[w]\nrw=write\nsize=2z\n", "ex.fio", 1 << 30, &JobOptions::new()).unwrap_err();
    assert!(e.to_string().contains("zonemode=zbd"), "{e}");
    let drive = Drive::new(small_zoned_model(&[]));
    let file = parse_job_file(
        "[w]\nzonemode=zbd\nrw=write\noffset=50z\nsize=8z\n",
        "ex.fio",
        drive.user_bytes(),
        &JobOptions::new(),
    )
    .unwrap();
    let e = execute(drive, &file, RunOptions::default()).err().unwrap().to_string();
    assert!(e.contains("beyond"), "{e}");
}

#[test]
fn a_job_reports_its_zones_by_state_and_what_each_zone_took() {
    let mut dev = zoned();
    // 80 MiB of LBA space: ten zones, each written to its capacity.
    let r = run_on(&mut dev, "[w]\nzonemode=zbd\nrw=write\nbs=128k\niodepth=8\nsize=80m\n");
    let p = r[0].result.placement.as_ref().expect("a job on a zoned drive reports its zones");
    let z = p.zone_states.unwrap();
    assert_eq!((z.full, z.empty, z.open(), z.closed), (10, ZONES as u32 - 10, 0, 0));
    let took: Vec<(u32, u64, u64, &str)> =
        p.zones.iter().map(|a| (a.zone, a.host_bytes, a.resets, a.state.as_str())).collect();
    assert_eq!(took, (0..10).map(|i| (i, CAP, 0, "full")).collect::<Vec<_>>());
    assert!(p.handles.is_empty());
    // The series counts the zones when each second opens (at its first
    // completion): the first zone open, none full yet.
    let first = r[0].result.series.seconds[0].zones.unwrap();
    assert_eq!((first.full, first.open(), first.empty), (0, 1, ZONES as u32 - 1));
    // Again over two zones: each is reset (it was full), then written.
    let r = run_on(&mut dev, "[w]\nzonemode=zbd\nrw=write\nbs=128k\niodepth=8\nsize=16m\n");
    let p = r[0].result.placement.as_ref().unwrap();
    let took: Vec<(u32, u64, u64)> = p.zones.iter().map(|a| (a.zone, a.resets, a.host_bytes)).collect();
    assert_eq!(took, vec![(0, 1, CAP), (1, 1, CAP)]);
    assert!(p.summary_lines().contains("10 full; 2 resets"), "{}", p.summary_lines());
    // A conventional drive's job has none of it.
    let mut conv = Device::new(small_drive(300, &[]));
    let r = run_on(&mut conv, "[w]\nrw=write\nbs=128k\nsize=16m\n");
    assert!(r[0].result.placement.is_none());
    assert!(r[0].result.series.seconds.iter().all(|s| s.zones.is_none()));
}

#[test]
fn closed_zones_count_against_the_write_zone_limit() {
    // fio 3.42's zbd_setup_files: on a drive with an active limit, closed
    // zones in the range join the write zones like open ones; more than
    // max_open_zones of them is fio's error.
    let mut dev = zoned();
    let r =
        run_on(&mut dev, "[a]\nzonemode=zbd\nrw=write\nbs=4k\nsize=16m\nio_size=4k\nnumjobs=2\noffset_increment=8m\n");
    assert!(r.iter().all(|j| j.error == 0), "{:?}", r.iter().map(|j| &j.error_reason).collect::<Vec<_>>());
    for zslba in [0, ZONE] {
        dev.zone_send(ssdtwin::model::ftl::zones::ZoneAction::Close, Some(zslba));
    }
    assert_eq!(&states(&dev)[..3], &[ZoneState::Closed, ZoneState::Closed, ZoneState::Empty]);
    let r = run_on(&mut dev, "[w]\nzonemode=zbd\nrw=randwrite\nbs=4k\nmax_open_zones=1\nio_size=1m\n");
    assert_eq!(r[0].error, 22);
    assert!(r[0].error_reason.as_deref().unwrap().contains("Number of open zones exceeds max_open_zones limit"));
    let r = run_on(&mut dev, "[w]\nzonemode=zbd\nrw=randwrite\nbs=4k\nmax_open_zones=2\nio_size=1m\n");
    assert_eq!(r[0].error, 0, "{:?}", r[0].error_reason);
}

/// fio's trims with `zonemode=zbd` are zone resets (`zbd_do_io_u_trim`):
/// a block of the zone size each, a zone with data reset, an empty one
/// left alone with its trim complete at once; a random trim aimed at an
/// empty zone goes to the nearest with data, and none left ends the job.
/// fio (commit f5344384, built from source) on a regular file with
/// emulated zones of these sizes, each pair of jobs in one run: 8 trims
/// of 64 MiB with 4 zone resets; 3 random trims of 24 MiB, 3 resets.
#[test]
fn trims_reset_their_zones() {
    let resets = |dev: &Device| -> Vec<u64> {
        (0..ZONES as u32).map(|z| dev.drive().ftl().zoned().unwrap().zone_counters(z).resets).collect()
    };
    let mut dev = zoned();
    // Four zones written, the next four left empty.
    run_on(&mut dev, "[w]\nzonemode=zbd\nrw=write\nbs=128k\nsize=32m\n");
    let r = run_on(&mut dev, "[t]\nzonemode=zbd\nrw=trim\nbs=8m\nsize=64m\n");
    assert_eq!(r[0].error, 0, "{:?}", r[0].error_reason);
    let trims = &r[0].result.dirs[IoKind::Trim as usize];
    assert_eq!((trims.ios, trims.bytes), (8, 64 << 20));
    assert!(states(&dev).iter().all(|&s| s == ZoneState::Empty));
    let mut once = vec![0; ZONES as usize];
    once[..4].fill(1);
    assert_eq!(resets(&dev), once);
    // The empty zones' trims took no time; the others a reset's.
    assert!(trims.percentile_ns(10.0) <= 1, "{}", trims.percentile_ns(10.0));
    assert!(trims.percentile_ns(90.0) > 1_000, "{}", trims.percentile_ns(90.0));
    dev.drive().ftl().check_consistency().unwrap();

    let mut dev = zoned();
    run_on(&mut dev, "[w]\nzonemode=zbd\nrw=write\nbs=128k\nsize=24m\n");
    let r = run_on(&mut dev, "[t]\nzonemode=zbd\nrw=randtrim\nbs=8m\nio_size=80m\n");
    assert_eq!(r[0].error, 0, "{:?}", r[0].error_reason);
    assert_eq!(r[0].result.dirs[IoKind::Trim as usize].bytes, 3 * ZONE, "three zones with data, then none");
    let mut once = vec![0; ZONES as usize];
    once[..3].fill(1);
    assert_eq!(resets(&dev), once);

    // zbd_verify_bs: the trim block is the zone, fixed.
    let r = run_on(&mut zoned(), "[t]\nzonemode=zbd\nrw=trim\nbs=4k\n");
    assert_eq!(r[0].error, 22);
    assert!(r[0].error_reason.as_deref().unwrap().contains("trim block size 4096 is not the zone size 8388608"));
    let r = run_on(&mut zoned(), "[t]\nzonemode=zbd\nrw=randtrim\nbsrange=8m-16m\n");
    assert_eq!(r[0].error, 22);
    assert!(r[0].error_reason.as_deref().unwrap().contains("bsrange and bssplit are not allowed"));
}

#[test]
fn a_read_folded_ahead_is_placed_as_if_folded_at_its_turn() {
    // A random read-only job folds the read LOOKAHEAD commands ahead to
    // warm its map entry and keeps the fold for the read's turn: the
    // reads must go where a job that never looked ahead sends them, also
    // when a zone's write pointer moves in between (another job writing).
    // Only a job over conventional zones folds ahead (a sequential zone
    // has no page map entry to warm): zone 0 is conventional.
    use ssdtwin::run::workload::generator::LOOKAHEAD;
    use ssdtwin::run::workload::{IoSpec, RwPattern, Zbd};
    use ssdtwin::run::zbd::ZbdJob;
    use ssdtwin::Command;
    let mut drive = Drive::new(small_zoned_model(&["zns.conventional_zones=1"]));
    let write = |drive: &mut Drive, offset: u64, len: u32| {
        drive.submit(Command { kind: IoKind::Write, offset, len }, 0);
        assert!(drive.last_error().is_none());
    };
    for z in 1..5 {
        write(&mut drive, z * ZONE, 1 << 20);
    }
    let mut spec = IoSpec::new("r", RwPattern::RandRead);
    spec.size = Some(5 * ZONE);
    let opts = Zbd::default();
    let mut ahead = ZbdJob::new(&spec, &opts, &drive).unwrap();
    let mut plain = ZbdJob::new(&spec, &opts, &drive).unwrap();
    assert!(ahead.folds_ahead());
    // Without a conventional zone in its range, a job has no map line to
    // warm and folds nothing ahead.
    spec.offset = ZONE;
    spec.size = Some(4 * ZONE);
    assert!(!ZbdJob::new(&spec, &opts, &drive).unwrap().folds_ahead());
    let mut x: u64 = 12345;
    let cmds: Vec<Command> = (0..200)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            Command { kind: IoKind::Read, offset: (x >> 20) % (5 * ZONE) / 4096 * 4096, len: 4096 }
        })
        .collect();
    let mut moved = 0;
    for i in 0..cmds.len() - LOOKAHEAD {
        ahead.ahead_hint(cmds[i + LOOKAHEAD], &drive);
        if i % 50 == 25 {
            // Zone 2 grows by 1 MiB: folds made before are stale.
            let wp = 2 * ZONE + (1 + (i as u64) / 50) * (1 << 20);
            write(&mut drive, wp, 1 << 20);
        }
        let got = ahead.next(cmds[i], &drive, u64::MAX, false);
        let want = plain.next(cmds[i], &drive, u64::MAX, false);
        assert_eq!(got, want, "read {i}: {:?}", cmds[i]);
        if let ssdtwin::run::zbd::Next::Io { cmd, .. } = got {
            moved += (cmd.offset != cmds[i].offset) as u32;
        }
    }
    assert!(moved > 80, "most reads are folded into the written megabytes ({moved})");
}
