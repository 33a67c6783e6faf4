//! fio's verify phase (`verify`, `do_verify`, `verify_backlog`): a write
//! job reads back every block it wrote, in fio's order, counted as its
//! reads with their own runtime.

use serde_json::Value;
use ssdtwin::run::device::{Completion, Device};
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::fio::JobFile;
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::IoKind;

use crate::common::{small_drive, with_fio_report};

const CAP: u64 = 256 << 20;

fn parse(text: &str) -> JobFile {
    parse_job_file(text, "t.fio", CAP, &JobOptions::new()).unwrap()
}

/// The job's results and every command it issued, in completion order.
fn run(text: &str) -> (Vec<JobResult>, Vec<Completion>, Device, JobFile) {
    let file = parse(text);
    let mut dev = Device::new(small_drive(256, &[]));
    dev.log_commands(true);
    let r = run_jobs(&mut dev, &file);
    let log = dev.take_log();
    (r, log, dev, file)
}

fn offsets(log: &[Completion], kind: IoKind) -> Vec<u64> {
    log.iter().filter(|c| c.cmd.kind == kind).map(|c| c.cmd.offset).collect()
}

#[test]
fn a_write_job_reads_back_what_it_wrote_in_fios_order() {
    // A random writer with fio's random map: read back in write order.
    let (r, log, _, _) = run("[v]\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\n");
    let (w, rd) = (offsets(&log, IoKind::Write), offsets(&log, IoKind::Read));
    assert_eq!(w.len(), 256);
    assert_eq!(rd, w, "each block once, in the order written");
    // The verify phase begins when the last write completes (QD1).
    let last_write = log.iter().filter(|c| c.cmd.kind == IoKind::Write).map(|c| c.done_ns).max().unwrap();
    let first_read = log.iter().filter(|c| c.cmd.kind == IoKind::Read).map(|c| c.submitted_ns).min().unwrap();
    assert_eq!(first_read, last_write);
    let st = r[0].stats.as_ref().unwrap();
    assert_eq!((st.dirs[0].ios, st.dirs[0].bytes), (256, 1 << 20));
    let runtimes = st.dir_ns.expect("reads and writes have their own runtimes");
    assert_eq!(runtimes[1], last_write - r[0].result.start_ns);
    assert_eq!(runtimes[0], r[0].result.end_ns - last_write);
    // Without a random map (norandommap, or a sequential writer) fio
    // sorts the blocks by offset and reads a block written twice once.
    let (_, log, _, _) = run("[v]\nrw=randwrite\nbs=4k\nsize=1m\nnorandommap\nverify=md5\n");
    let (w, rd) = (offsets(&log, IoKind::Write), offsets(&log, IoKind::Read));
    let mut distinct = w.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() < w.len(), "norandommap rewrites some blocks");
    assert_eq!(rd, distinct);
    let (_, log, _, _) = run("[v]\nrw=write\nbs=64k\nsize=1m\niodepth=8\nverify=crc32c\n");
    assert_eq!(offsets(&log, IoKind::Read), (0..16).map(|i| i * 65536).collect::<Vec<_>>());
}

#[test]
fn verify_backlog_interleaves_batches_of_reads() {
    let (_, log, _, _) =
        run("[v]\nrw=write\nbs=4k\nsize=256k\nverify=crc32c\nverify_backlog=16\nverify_backlog_batch=8\n");
    // QD1: 16 writes, then the oldest 8 read back; then a batch whenever
    // 16 are unverified again (fio's io_hist_len), after 8 writes; the
    // rest at the end (fio 3.33 on a loop device issues this order).
    let kinds: Vec<IoKind> = log.iter().map(|c| c.cmd.kind).collect();
    let mut expect = Vec::new();
    expect.extend([IoKind::Write; 16]);
    expect.extend([IoKind::Read; 8]);
    for _ in 0..5 {
        expect.extend([IoKind::Write; 8]);
        expect.extend([IoKind::Read; 8]);
    }
    expect.extend([IoKind::Write; 8]);
    expect.extend([IoKind::Read; 16]);
    assert_eq!(kinds, expect);
    assert_eq!(offsets(&log, IoKind::Read)[..8], offsets(&log, IoKind::Write)[..8]);
    assert_eq!(offsets(&log, IoKind::Read).len(), 64, "every block once");
}

#[test]
fn verify_is_only_for_writers_and_skipped_when_asked() {
    let (r, log, _, _) = run("[v]\nrw=write\nbs=4k\nsize=256k\nverify=crc32c\ndo_verify=0\n");
    assert!(offsets(&log, IoKind::Read).is_empty());
    assert!(r[0].stats.as_ref().unwrap().dir_ns.is_none());
    let (_, log, _, _) = run("[v]\nrw=read\nbs=4k\nsize=256k\nverify=crc32c\n");
    assert_eq!(offsets(&log, IoKind::Read).len(), 64, "a reader verifies what it reads: no more reads");
    // A mixed job verifies its writes after its I/O; its reads' runtime
    // is both phases (fio's update_runtime).
    let (r, log, _, _) = run("[v]\nrw=randrw\nbs=4k\nsize=1m\nverify=crc32c\n");
    let w = offsets(&log, IoKind::Write);
    let rd = offsets(&log, IoKind::Read);
    assert_eq!(rd[rd.len() - w.len()..], w[..], "the last reads are the writes', in order");
    let ns = r[0].stats.as_ref().unwrap().dir_ns.unwrap();
    assert_eq!(ns[0], r[0].result.end_ns - r[0].result.start_ns);
    // A write job's passes: io_size × loops caps the writes, so the first
    // pass takes them all and the second has none (fio 3.33: 256 writes,
    // 256 reads).
    let (_, log, _, _) = run("[v]\nrw=write\nbs=4k\nsize=1m\nio_size=512k\nloops=2\nverify=crc32c\n");
    assert_eq!((offsets(&log, IoKind::Write).len(), offsets(&log, IoKind::Read).len()), (256, 256));
    // A read/write job's passes likewise (fio 3.33: 256 reads of which 124
    // verify its 124 writes).
    let (_, log, _, _) = run("[v]\nrw=rw\nbs=4k\nsize=1m\nio_size=512k\nloops=2\nverify=crc32c\n");
    assert_eq!((offsets(&log, IoKind::Write).len(), offsets(&log, IoKind::Read).len()), (124, 256));
    let e = parse_job_file(
        "[v]\nrw=trimwrite\nsize=1m\nio_size=512k\nloops=2\nverify=crc32c\n",
        "t.fio",
        CAP,
        &JobOptions::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("t.fio:6") && e.to_string().contains("loops"), "{e}");
    let e = parse_job_file("[v]\nrw=write\nsize=1m\nverify=sha7\n", "t.fio", CAP, &JobOptions::new()).unwrap_err();
    assert!(e.to_string().contains("sha7"), "{e}");
}

#[test]
fn the_json_reports_the_verify_reads_as_fio() {
    let (results, _, dev, file) = run("[v]\nrw=randwrite\nbs=4k\nsize=2m\niodepth=4\nverify=crc32c\n");
    let v: Value = with_fio_report(&dev, &file, &results, |r| r.to_json(false));
    let j = &v["jobs"][0];
    assert_eq!((j["read"]["total_ios"].as_u64(), j["write"]["total_ios"].as_u64()), (Some(512), Some(512)));
    assert_eq!(j["read"]["io_bytes"], 2 << 20);
    let runtimes = results[0].stats.as_ref().unwrap().dir_ns.unwrap();
    assert_eq!(j["read"]["runtime"].as_u64().unwrap(), runtimes[0] / 1_000_000);
    assert_eq!(j["write"]["runtime"].as_u64().unwrap(), runtimes[1] / 1_000_000);
    let bw = j["read"]["bw_bytes"].as_f64().unwrap();
    let expect = (2u64 << 20) as f64 * 1e9 / runtimes[0] as f64;
    assert!((bw - expect).abs() <= 1.0, "{bw} vs {expect}");
}

/// fio 3.33 (`--ioengine=null --write_iolog`): with `loops=2` each loop
/// writes the span and reads it back before the next, the runtimes add
/// up; `verify_only` issues no writes (they are counted, in no time) and
/// reads back what they would have written, each loop.
#[test]
fn verify_loops_and_verify_only_are_fios() {
    let (r, log, _, _) = run("[v]\nrw=randwrite\nbs=4k\nsize=32k\nloops=2\nverify=md5\n");
    let kinds: Vec<IoKind> = log.iter().map(|c| c.cmd.kind).collect();
    let mut expect = Vec::new();
    for _ in 0..2 {
        expect.extend([IoKind::Write; 8]);
        expect.extend([IoKind::Read; 8]);
    }
    assert_eq!(kinds, expect);
    // fio's order: each loop writes (and reads back) this sequence.
    let fio = [0, 20480, 24576, 12288, 16384, 28672, 4096, 8192];
    assert_eq!(offsets(&log, IoKind::Write), [fio, fio].concat());
    assert_eq!(offsets(&log, IoKind::Read), [fio, fio].concat());
    let st = r[0].stats.as_ref().unwrap();
    assert_eq!((st.dirs[0].ios, st.dirs[1].ios), (16, 16));
    let ns = st.dir_ns.unwrap();
    assert_eq!(ns[0] + ns[1], r[0].result.end_ns - r[0].result.start_ns, "the phases add up to the job");

    let (r, log, _, _) = run("[v]\nrw=randwrite\nbs=4k\nsize=32k\nloops=3\nverify=md5\nverify_only\n");
    assert!(offsets(&log, IoKind::Write).is_empty(), "a dry run issues no writes");
    assert_eq!(offsets(&log, IoKind::Read), [fio, fio, fio].concat());
    let st = r[0].stats.as_ref().unwrap();
    assert_eq!((st.dirs[0].ios, st.dirs[0].bytes, st.dirs[1].ios, st.dirs[1].bytes), (24, 98304, 24, 98304));
    assert_eq!(st.dir_ns.unwrap()[1], 0, "the dry run takes no time");
    let e = parse_job_file(
        "[v]\nrw=randwrite\nsize=1m\nloops=2\nverify=crc32c\ntime_based\nruntime=1\n",
        "t.fio",
        CAP,
        &JobOptions::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("one pass"), "{e}");
}
