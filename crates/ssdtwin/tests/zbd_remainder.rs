//! fio's zone remainders under `zonemode=zbd`: when the block size does
//! not divide the zone capacity, fio (3.34 on; zbd.c's
//! `zbd_convert_to_write_zone`) finishes a zone left with less than a
//! block and moves on, and with `write_zone_remainder` writes the
//! remainder with one shorter write instead. The expected sequences are
//! traced by hand from fio 3.42's zbd.c; real fio cannot run them here
//! (Debian's fio 3.33 predates both, and fio needs a zoned block device
//! or its own emulated zones, which the twin's drive is not), but the
//! same jobs on a regular file with `zonesize=8m`, `zonecapacity=6m` and
//! `max_open_zones=4` in a fio 3.42 built from source gave the same
//! commands (see docs/workloads.md).

use ssdtwin::model::ftl::zones::ZoneState;
use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::{Drive, IoKind};

use crate::common::{scratch_dir, small_zoned_model};

const ZONE: u64 = 8 << 20;
const CAP: u64 = 6 << 20;
const BS: u64 = 36 << 10;
/// Whole blocks in a zone's capacity (170 × 36 KiB = 6,266,880 bytes;
/// 24 KiB are left).
const FIT: u64 = CAP / BS;

fn zoned() -> Device {
    Device::new(Drive::new(small_zoned_model(&[])))
}

/// The job's results and the writes it issued (offset, length), from its
/// `write_iolog`.
fn run_logged(dev: &mut Device, job: &str) -> (JobResult, Vec<(u64, u64)>) {
    let dir = scratch_dir("zbd-remainder");
    let log = dir.path().join("w.log");
    let text = format!("[w]\nzonemode=zbd\nwrite_iolog={}\n{job}", log.display());
    let file = parse_job_file(&text, "z.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    let r = run_jobs(dev, &file).remove(0);
    let writes = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"write")).then(|| (f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect();
    (r, writes)
}

fn states(dev: &Device) -> Vec<ZoneState> {
    dev.drive().report_zones().iter().map(|z| z.state).collect()
}

fn counters(dev: &Device, z: u32) -> ssdtwin::model::ftl::zns::ZoneCounters {
    dev.drive().ftl().zoned().unwrap().zone_counters(z)
}

#[test]
fn a_zone_left_with_less_than_a_block_is_finished_and_the_next_written() {
    // Four zones, 36 KiB writes: 170 fit in each zone's 6 MiB; the 24 KiB
    // left are below a block, so fio finishes the zone and writes the
    // next one from its start; in the last zone of the range the job
    // ends (zbd_convert_to_write_zone returns no zone).
    let mut dev = zoned();
    let (r, writes) = run_logged(&mut dev, "rw=write\nbs=36k\nsize=32m\n");
    assert_eq!(r.error, 0, "{:?}", r.error_reason);
    let expected: Vec<(u64, u64)> = (0..4).flat_map(|z| (0..FIT).map(move |k| (z * ZONE + k * BS, BS))).collect();
    assert_eq!(writes.len(), expected.len());
    assert_eq!(writes, expected);
    assert_eq!(r.result.dirs[IoKind::Write as usize].bytes, 4 * FIT * BS);
    let s = states(&dev);
    assert!(s[..4].iter().all(|&z| z == ZoneState::Full), "{:?}", &s[..5]);
    assert_eq!(s[4], ZoneState::Empty);
    for z in 0..4 {
        let c = counters(&dev, z);
        assert_eq!((c.resets, c.finishes, c.host_pages * 4096), (0, 1, FIT * BS), "zone {z}");
    }
    dev.drive().ftl().check_consistency().unwrap();
}

#[test]
fn write_zone_remainder_writes_the_remainder_with_a_shorter_write() {
    // The same job with write_zone_remainder: each zone takes its 170
    // blocks and then one 24 KiB write; the zone fills to its capacity
    // and nothing is finished.
    let mut dev = zoned();
    let (r, writes) = run_logged(&mut dev, "rw=write\nbs=36k\nsize=32m\nwrite_zone_remainder=1\n");
    assert_eq!(r.error, 0, "{:?}", r.error_reason);
    let rest = CAP - FIT * BS;
    let expected: Vec<(u64, u64)> = (0..4)
        .flat_map(|z| (0..FIT).map(move |k| (z * ZONE + k * BS, BS)).chain([(z * ZONE + FIT * BS, rest)]))
        .collect();
    assert_eq!(writes, expected);
    assert_eq!(r.result.dirs[IoKind::Write as usize].bytes, 4 * CAP);
    for z in 0..4 {
        let c = counters(&dev, z);
        assert_eq!((c.resets, c.finishes, c.host_pages * 4096), (0, 0, CAP), "zone {z}");
        assert_eq!(states(&dev)[z as usize], ZoneState::Full);
    }
    // fio's init.c: the option needs norandommap, and sets it.
    let text = "[w]\nzonemode=zbd\nrw=randwrite\nbs=36k\nwrite_zone_remainder=1\nnorandommap=0\n";
    let e = parse_job_file(text, "z.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap_err().to_string();
    assert!(e.contains("norandommap") && e.contains("write_zone_remainder=1 requires norandommap=1"), "{e}");
    let text = "[w]\nzonemode=zbd\nrw=randwrite\nbs=36k\nwrite_zone_remainder=1\n";
    let file = parse_job_file(text, "z.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    let ssdtwin::run::workload::Phase::Io(spec) = &file.jobs[0].phase else { unreachable!() };
    assert!(spec.norandommap);
}

#[test]
fn a_random_job_whose_write_zones_all_have_small_remainders_finishes_and_resets_one() {
    // One zone and one write zone: after 170 blocks the zone has 24 KiB
    // left; fio finishes it (zbd_convert_to_write_zone's first step),
    // takes it as the write zone again (nothing else is in the range),
    // finds it full and resets it, and writes from its start.
    let mut dev = zoned();
    let (r, writes) = run_logged(&mut dev, "rw=randwrite\nbs=36k\nsize=8m\nio_size=7200k\nmax_open_zones=1\n");
    assert_eq!(r.error, 0, "{:?}", r.error_reason);
    let expected: Vec<(u64, u64)> = (0..FIT).chain(0..30).map(|k| (k * BS, BS)).collect();
    assert_eq!(writes, expected);
    let c = counters(&dev, 0);
    assert_eq!((c.finishes, c.resets), (1, 1));
    // With write_zone_remainder the 24 KiB are written, the full zone is
    // reset and written again: 201 writes.
    let mut dev = zoned();
    let job = "rw=randwrite\nbs=36k\nsize=8m\nio_size=7200k\nmax_open_zones=1\nwrite_zone_remainder=1\n";
    let (r, writes) = run_logged(&mut dev, job);
    assert_eq!(r.error, 0, "{:?}", r.error_reason);
    let expected: Vec<(u64, u64)> = (0..FIT)
        .map(|k| (k * BS, BS))
        .chain([(FIT * BS, CAP - FIT * BS)])
        .chain((0..30).map(|k| (k * BS, BS)))
        .collect();
    assert_eq!(writes, expected);
    let c = counters(&dev, 0);
    assert_eq!((c.finishes, c.resets), (0, 1));
}

#[test]
fn a_sequential_pass_ends_at_the_range_and_io_size_starts_another() {
    // Skipped bytes (capacity to zone end) do not count: with io_size the
    // job goes on from the start of its range, resetting the full zones,
    // until io_size was written (fio 3.42: 640 writes); without it the
    // job ends with its range (480).
    let mut dev = zoned();
    let (r, writes) = run_logged(&mut dev, "rw=write\nbs=128k\nsize=80m\nio_size=80m\n");
    assert_eq!((r.error, writes.len()), (0, 640));
    assert_eq!(r.result.dirs[IoKind::Write as usize].bytes, 80 << 20);
    assert_eq!(writes[480], (0, 128 << 10));
    assert_eq!((counters(&dev, 0).resets, counters(&dev, 4).resets), (1, 0));
    let mut dev = zoned();
    let (r, writes) = run_logged(&mut dev, "rw=write\nbs=128k\nsize=80m\n");
    assert_eq!((r.error, writes.len()), (0, 480));
    // loops: one pass each (fio 3.42: 3 × 2 zones × 170 writes); the
    // last zone of each pass is finished, the first of the next reset.
    let mut dev = zoned();
    let (r, writes) = run_logged(&mut dev, "rw=write\nbs=36k\nsize=16m\nloops=3\n");
    assert_eq!((r.error, writes.len()), (0, 3 * 2 * FIT as usize));
    assert_eq!((counters(&dev, 0).resets, counters(&dev, 0).finishes), (2, 3));
}

#[test]
fn write_zone_remainder_spares_the_wait_for_writes_in_flight() {
    // HOWTO: a zone finish waits for the writes in flight, which the
    // remainder writes avoid: at depth 8 the job with
    // write_zone_remainder writes more per second.
    let rate = |extra: &str| {
        let mut dev = zoned();
        let (r, _) = run_logged(&mut dev, &format!("rw=write\nbs=36k\niodepth=8\nsize=160m\n{extra}"));
        assert_eq!(r.error, 0, "{:?}", r.error_reason);
        r.result.bw_bytes(IoKind::Write)
    };
    let (finish, fill) = (rate(""), rate("write_zone_remainder=1\n"));
    assert!(fill > finish * 1.02, "finishing: {finish:.0} B/s, writing the remainders: {fill:.0} B/s");
}

/// fio 3.33 cuts a write at its zone's write pointer to what is left of
/// the zone's capacity, in whole minimum blocks: zbd.c (tag fio-3.33),
/// `zbd_adjust_block`, lines 1999–2001, `new_len = min(io_u->buflen,
/// zbd_zone_capacity_end(zb) - io_u->offset); new_len = new_len / min_bs
/// * min_bs;`, the cut kept when at least `min_bs` (line 2004). A
/// sequential job with `bsrange=16k-64k` (`min_bs` 16 KiB, lengths of
/// 16–64 KiB): every write at its zone's pointer, a whole number of
/// minimum blocks, never past the capacity, and each zone's last write
/// cut to end exactly at the capacity (6 MiB, a multiple of `min_bs`),
/// after which the next zone is written from its start. (With one block
/// size nothing is ever cut: a zone with less than `min_bs` left is
/// finished or reset before the write, `zbd_zone_full`, line 81.)
#[test]
fn a_write_is_cut_at_the_zone_capacity_in_whole_minimum_blocks() {
    let (r, writes) = run_logged(&mut zoned(), "rw=write\nbsrange=16k-64k\nsize=32m\n");
    assert_eq!(r.error, 0, "{:?}", r.error_reason);
    const MIN_BS: u64 = 16 << 10;
    let (mut z, mut wp, mut cuts) = (0, 0, 0);
    for &(offset, len) in &writes {
        if wp == CAP {
            (z, wp) = (z + 1, 0);
        }
        assert_eq!(offset, z * ZONE + wp, "at the write pointer");
        assert!(len % MIN_BS == 0 && (MIN_BS..=64 << 10).contains(&len), "{len}");
        assert!(wp + len <= CAP, "within the capacity");
        wp += len;
        // A write shorter than the largest block that ends the zone: cut.
        cuts += (wp == CAP && len < 64 << 10) as u32;
    }
    assert_eq!((z, wp), (3, CAP), "four zones, each written to its capacity");
    assert!(cuts >= 1, "some zone's last write was cut");
}

/// A sequential `bsrange` job under zbd (drawn by the twin's own
/// generator, not fio's sequence) draws every size of the range as fio
/// does: fio 3.33's `get_next_buflen` (io_u.c) draws `min + max · r` and
/// aligns it down to `min`, so `16k-64k` gives 16, 32, 48 and 64 KiB a
/// quarter each. Real fio 3.33 on this job (null engine, zones emulated on
/// a file: `--zonesize=8m --zonecapacity=6m`) wrote 137, 156, 145 and 163
/// of them. The twin wrote 64 KiB for 95 % of its writes: the range's
/// equal weights (one per multiple) were read as a `bssplit`'s
/// percentages short of 100, whose rest goes to the largest.
#[test]
fn a_sequential_bsrange_job_draws_every_size_of_the_range() {
    let (r, writes) = run_logged(&mut zoned(), "rw=write\nbsrange=16k-64k\nsize=32m\n");
    assert_eq!(r.error, 0, "{:?}", r.error_reason);
    // Writes not cut at a zone's capacity, by size.
    let mut by_size = [0u32; 4];
    for &(offset, len) in &writes {
        if offset % ZONE + len < CAP {
            by_size[(len / (16 << 10) - 1) as usize] += 1;
        }
    }
    let n: u32 = by_size.iter().sum();
    assert!(n > 300, "{n} writes");
    for (i, &c) in by_size.iter().enumerate() {
        let share = c as f64 / n as f64;
        assert!((0.15..=0.35).contains(&share), "{} KiB: {c} of {n}", 16 * (i + 1));
    }
}
