//! Placed writes (fio's `fdp=1`) take every path a plain write takes:
//! FUA and syncs, I/O priorities (and the wait in an arbitrated queue,
//! where a write keeps its placement identifier), verify; and a program
//! failure in any handle's open block is handled as in a conventional
//! block, not only in the current handle's.

use ssdtwin::model::arbitration::ioprio;
use ssdtwin::model::counters::Counters;
use ssdtwin::model::ftl::fdp_events::FdpEventType;
use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::{Command, Drive, IoKind};

use crate::common::small_model;

fn fdp_drive(extra: &[&str]) -> Drive {
    let mut set = vec!["fdp.reclaim_unit_handles=2", "fdp.isolation=initially"];
    set.extend_from_slice(extra);
    Drive::new(small_model(256, &set))
}

fn run_on(dev: &mut Device, text: &str) -> Vec<JobResult> {
    let file = parse_job_file(text, "p.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    run_jobs(dev, &file)
}

/// A job's writes through the default handle (`fdp=1`, `plids=0`) and
/// the same writes carrying no identifier (which go to the default
/// handle) are the same writes to the drive, so with `sync=1` (every
/// write FUA) and with `fsync=4` (a FLUSH after every fourth) the two
/// jobs end at the same nanosecond with the same syncs. Before placed
/// writes went the plain way, they skipped FUA and the syncs: the placed
/// job ended early and issued no FLUSH.
#[test]
fn placed_writes_are_fua_and_counted_for_syncs_as_plain_writes() {
    for option in ["sync=1", "fsync=4"] {
        let job = |placed: &str| format!("[w]\nrw=write\nbs=4k\nsize=192k\n{option}\n{placed}");
        let mut a = Device::new(fdp_drive(&[]));
        let placed = run_on(&mut a, &job("fdp=1\nplids=0\n"));
        let mut b = Device::new(fdp_drive(&[]));
        let plain = run_on(&mut b, &job(""));
        let (p, q) = (&placed[0], &plain[0]);
        assert_eq!(p.error, 0);
        assert_eq!(p.result.end_ns, q.result.end_ns, "{option}: placed writes end as plain ones");
        let w = IoKind::Write as usize;
        assert_eq!(p.result.dirs[w].lat_sum_ns, q.result.dirs[w].lat_sum_ns, "{option}");
        let syncs = |r: &JobResult| r.stats.as_ref().unwrap().sync.as_ref().map_or(0, |s| s.ios);
        assert_eq!(syncs(p), syncs(q), "{option}");
        // The writes went through handle 0 in both runs.
        let f = a.drive().ftl().fdp().unwrap();
        assert_eq!(f.counters(0).host_slots, 48);
    }
    // And FUA costs what it should: a placed job without `sync` is faster.
    let mut c = Device::new(fdp_drive(&[]));
    let buffered = run_on(&mut c, "[w]\nrw=write\nbs=4k\nsize=192k\nfdp=1\nplids=0\n");
    let mut d = Device::new(fdp_drive(&[]));
    let fua = run_on(&mut d, "[w]\nrw=write\nbs=4k\nsize=192k\nfdp=1\nplids=0\nsync=1\n");
    assert!(fua[0].result.end_ns > 10 * buffered[0].result.end_ns);
}

/// Two jobs through different handles on a drive that takes one command
/// at a time under weighted round robin: each placed write carries its
/// job's priority (fio's `prioclass`/`prio`), waits in its class's queue,
/// and keeps its placement identifier while it waits, so each handle
/// receives exactly its job's writes. Before, placed writes skipped the
/// priority path (ioprio 0, no wait); a write held in the arbiter would
/// have taken whatever identifier the host set last.
#[test]
fn placed_writes_carry_their_priority_and_keep_their_placement_while_they_wait() {
    let mut dev = Device::new(fdp_drive(&[
        "host.max_queue_depth=1",
        "host.arbitration.mechanism=weighted-round-robin",
        "host.arbitration.weights=[4, 2, 1]",
    ]));
    dev.log_commands(true);
    let r = run_on(
        &mut dev,
        "[global]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\nfdp=1\n\
         [low]\nplids=0\nprioclass=3\n\
         [high]\noffset=1m\nplids=1\nprioclass=1\nprio=2\n",
    );
    assert!(r.iter().all(|j| j.error == 0));
    let log = dev.take_log();
    let high = ioprio::value(ioprio::CLASS_RT, 2, 0);
    let idle = ioprio::value(ioprio::CLASS_IDLE, 0, 0);
    let writes = |job: u32, prio: u16| log.iter().filter(|c| c.tag == job && c.ioprio == prio).count();
    assert_eq!((writes(0, idle), writes(1, high)), (256, 256), "each write carries its job's priority");
    let f = dev.drive().ftl().fdp().unwrap();
    assert_eq!((f.counters(0).host_slots, f.counters(1).host_slots), (256, 256));
    // The high class was served first: its job ended well before the other.
    assert!(r[1].result.end_ns * 3 < r[0].result.end_ns * 2, "{} vs {}", r[1].result.end_ns, r[0].result.end_ns);
}

/// fio's verify of a placed job: the written blocks are logged as a plain
/// job's (before, placed writes skipped the verify log and the verify
/// phase read nothing).
#[test]
fn placed_writes_are_verified() {
    let text = "[v]\nrw=write\nbs=16k\nsize=1m\nverify=crc32c\nfdp=1\nplids=1\n";
    let mut dev = Device::new(fdp_drive(&[]));
    let r = run_on(&mut dev, text);
    assert_eq!(r[0].error, 0);
    let reads = r[0].result.dirs[IoKind::Read as usize].ios;
    assert_eq!(reads, 64, "every placed write is read back");
    assert_eq!(dev.drive().ftl().fdp().unwrap().counters(1).host_slots, 256);
}

/// Program failures while a flush programs every handle's partly filled
/// unit: handle 0's unit is programmed (and may fail) while handle 1 is
/// current (the flush programs the current handle last). Each failed
/// block a handle held open is given up by that handle — an *Implicitly
/// Modified Reclaim Unit Handle* event for it — and relocated and
/// retired, whichever handle it belonged to. Before, only the current
/// handle's open block was looked for: handle 0 kept writing into a block
/// that had been retired.
#[test]
fn a_program_failure_in_another_handles_open_block_is_handled() {
    let mut d = fdp_drive(&[
        "geometry.pages_per_block=12",
        "nand.native.pe_cycles=5",
        "nand.bad_blocks.erase_failed_by_rated_pe=0",
        "nand.bad_blocks.program_failed_by_rated_pe=0.45",
        "nand.bad_blocks.fail_exponent=0",
        "nand.bad_blocks.spare_blocks_per_die=12",
        "ftl.user_capacity_bytes=50331648",
    ]);
    let n = d.user_lpns() as u64;
    let mut t = 0;
    // One page through each handle, then a flush: every program of the
    // run is a flush's padded unit, handle 0's programmed while handle 1
    // is the current one.
    for i in 0..3000u64 {
        for pid in [0, 1] {
            let lba = (i * 2 + pid as u64) % n;
            t = d.submit_placed(Command { kind: IoKind::Write, offset: lba * 4096, len: 4096 }, pid, t);
        }
        t = d.flush(t);
        if d.untimed().read_only() {
            break;
        }
    }
    let c = Counters::of(&d);
    let f = d.ftl().fdp().unwrap();
    let modified = |p: u32| {
        f.events()
            .controller()
            .iter()
            .filter(|e| e.kind == FdpEventType::ImplicitlyModifiedReclaimUnitHandle && e.placement == Some(p))
            .count()
    };
    eprintln!(
        "{} program failures, {} retired; handles modified: 0 {}, 1 {}",
        c.program_failures,
        c.grown_bad_blocks,
        modified(0),
        modified(1)
    );
    assert!(modified(0) >= 3, "failures in handle 0's open blocks changed handle 0's unit");
    assert!(modified(1) >= 3);
    assert!(c.grown_bad_blocks >= 10);
    d.ftl().check_consistency().unwrap();
}
