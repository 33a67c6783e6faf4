//! fio's flushes and synchronous writes (`fsync`, `fdatasync`,
//! `end_fsync`, `fsync_on_close`, `sync`): the drive's FLUSH issued at
//! fio's points, checked against the same commands issued by hand on the
//! drive, and fio's `sync` statistics in the JSON.

use serde_json::Value;
use ssdtwin::model::drive::{Command, Drive};
use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::IoKind;

use crate::common::{small_drive, with_fio_report};

const CAP: u64 = 256 << 20;

fn run(text: &str) -> (Vec<JobResult>, Device) {
    let file = parse_job_file(text, "t.fio", CAP, &JobOptions::new()).unwrap();
    let mut dev = Device::new(small_drive(256, &[]));
    let r = run_jobs(&mut dev, &file);
    (r, dev)
}

fn write(i: u64) -> Command {
    Command { kind: IoKind::Write, offset: i * 4096, len: 4096 }
}

/// QD1 4 KiB writes on the drive by hand: each write, then (`flush`
/// after every `every` writes but the last) a FLUSH issued when the write
/// completes. Returns the end and the FLUSH latencies.
fn by_hand(d: &mut Drive, n: u64, every: u64) -> (u64, Vec<u64>) {
    let mut t = 0;
    let mut flushes = Vec::new();
    for i in 0..n {
        t = d.submit(write(i), t);
        if (i + 1) % every == 0 && i + 1 < n {
            let f = d.flush(t);
            flushes.push(f - t);
            t = f;
        }
    }
    (t, flushes)
}

/// The shortest program of the drive (native or SLC), ns.
fn min_tprog(d: &Drive) -> u64 {
    let nand = &d.model().spec.nand;
    nand.native.tprog_ns.iter().chain(nand.slc.iter().flat_map(|s| &s.tprog_ns)).copied().min().unwrap()
}

#[test]
fn fsync_issues_a_flush_after_every_n_writes_as_fio() {
    for (option, every) in [("fsync=1", 1), ("fdatasync=4", 4), ("fsync=3\nfdatasync=0", 3)] {
        let n = 48;
        let (r, _) = run(&format!("[w]\nrw=write\nbs=4k\nsize={}k\n{option}\n", 4 * n));
        let (end, flushes) = by_hand(&mut small_drive(256, &[]), n, every);
        let res = &r[0].result;
        assert_eq!((res.start_ns, res.end_ns), (0, end), "{option}: the job ends as the hand-issued commands");
        let sync = r[0].stats.as_ref().unwrap().sync.as_ref().expect("a job with fsync counts its syncs");
        assert_eq!(sync.ios, flushes.len() as u64, "{option}: no FLUSH after the last write");
        assert_eq!(sync.lat_sum_ns, flushes.iter().sum::<u64>() as u128, "{option}");
        assert_eq!(sync.lat_max_ns, *flushes.iter().max().unwrap(), "{option}");
        assert_eq!(res.dirs[IoKind::Write as usize].ios, n);
    }
    // A write-back drive: a FLUSH waits for the padded program of the
    // open unit, at least a TLC page program (generic-tlc-nvme's tPROG).
    let (r, _) = run("[w]\nrw=write\nbs=4k\nsize=192k\nfsync=1\n");
    let (plain, _) = run("[w]\nrw=write\nbs=4k\nsize=192k\n");
    let sync = r[0].stats.as_ref().unwrap().sync.clone().unwrap();
    let tprog = min_tprog(&small_drive(256, &[]));
    assert!(sync.lat_min_ns >= tprog, "a FLUSH {} ns, tPROG {tprog} ns", sync.lat_min_ns);
    assert!(r[0].result.end_ns > plain[0].result.end_ns + 47 * tprog, "47 FLUSHes cost at least 47 programs");
}

#[test]
fn end_fsync_flushes_once_at_the_end_and_is_not_counted() {
    let n = 32;
    for option in ["end_fsync=1", "fsync_on_close=1"] {
        let (r, _) = run(&format!("[w]\nrw=write\nbs=4k\nsize={}k\n{option}\n", 4 * n));
        let mut d = small_drive(256, &[]);
        let (last, _) = by_hand(&mut d, n, u64::MAX);
        let end = d.flush(last);
        assert!(end > last, "the last writes are buffered: the FLUSH takes time");
        assert_eq!(r[0].result.end_ns, end, "{option}: the job ends when its FLUSH completes");
        // fio does not account the end sync (run state TD_FSYNCING).
        assert_eq!(r[0].stats.as_ref().unwrap().sync.as_ref().unwrap().ios, 0);
    }
    // A job that only reads issues no FLUSH (fio's should_fsync).
    let (r, _) = run("[r]\nrw=read\nbs=4k\nsize=128k\nend_fsync=1\n");
    let (plain, _) = run("[r]\nrw=read\nbs=4k\nsize=128k\n");
    assert_eq!(r[0].result.end_ns, plain[0].result.end_ns);
}

#[test]
fn sync_writes_are_fua_and_complete_on_flash() {
    let n = 24;
    let (r, _) = run(&format!("[w]\nrw=write\nbs=4k\nsize={}k\nsync=1\n", 4 * n));
    let mut d = small_drive(256, &[]);
    let mut t = 0;
    let mut lat = 0u128;
    for i in 0..n {
        let done = d.submit_fua(write(i), t);
        lat += (done - t) as u128;
        t = done;
    }
    assert_eq!(r[0].result.end_ns, t);
    assert_eq!(r[0].result.dirs[IoKind::Write as usize].lat_sum_ns, lat);
    let tprog = min_tprog(&d);
    assert!(lat >= (n * tprog) as u128, "each FUA write waits for its program");
    // dsync is the same on a block device; a write-through drive is
    // durable at its acknowledgement anyway.
    let (dsync, _) = run(&format!("[w]\nrw=write\nbs=4k\nsize={}k\nsync=dsync\n", 4 * n));
    assert_eq!(dsync[0].result.end_ns, t);
    let mut wt = small_drive(256, &["controller.write_cache=\"write-through\""]);
    let plain = wt.submit(write(0), 0);
    let mut wt2 = small_drive(256, &["controller.write_cache=\"write-through\""]);
    assert_eq!(wt2.submit_fua(write(0), 0), plain);
}

#[test]
fn the_json_has_fios_sync_section() {
    let file =
        parse_job_file("[w]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=4\nfsync=8\n", "t.fio", CAP, &JobOptions::new())
            .unwrap();
    let mut dev = Device::new(small_drive(256, &[]));
    let results = run_jobs(&mut dev, &file);
    let (v, text): (Value, String) = with_fio_report(&dev, &file, &results, |r| (r.to_json(false), r.normal()));
    let sync = &v["jobs"][0]["sync"];
    // 256 writes, a sync after every 8th but the last: 31.
    assert_eq!(sync["total_ios"], 31, "{sync}");
    assert_eq!(sync["lat_ns"]["N"], 31);
    assert!(sync["lat_ns"]["min"].as_u64().unwrap() > 0);
    assert!(sync["lat_ns"]["percentile"]["99.000000"].as_u64().unwrap() >= sync["lat_ns"]["min"].as_u64().unwrap());
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 256);
    // fio's normal output: the sync block and the fourth issued count.
    assert!(text.contains("  fsync/fdatasync/sync_file_range:\n    sync ("), "{text}");
    assert!(text.contains("sync percentiles ("), "{text}");
    assert!(text.contains("issued rwts: total=0,256,0,31 "), "{text}");
}
