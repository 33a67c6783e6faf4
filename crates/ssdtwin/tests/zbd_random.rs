//! Random writes under `zonemode=zbd` issue fio's own commands: the
//! offsets are drawn from fio's sequence (its random generator and random
//! map, as for any job from a job file) and zbd.c's rules move each to a
//! write zone's write pointer. The expected commands are real fio 3.33's
//! (Debian 12's) on a regular file with the same emulated zones
//! (`zonesize=8m`, `zonecapacity=6m`, `ioengine=psync`, `direct=1`),
//! from its `write_iolog`. The twin's seeds are fio 3.33's; fio 3.42 seeds
//! its generators otherwise, so its offsets differ from both.

use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::run_jobs;
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::Drive;

use crate::common::{scratch_dir, small_zoned_model};

/// The writes (offset, length) of `job` on the small zoned drive.
fn writes(job: &str) -> Vec<(u64, u64)> {
    let mut dev = Device::new(Drive::new(small_zoned_model(&[])));
    let dir = scratch_dir("zbd-random");
    let log = dir.path().join("w.log");
    let text = format!("[w]\nzonemode=zbd\nrw=randwrite\nwrite_iolog={}\n{job}", log.display());
    let file = parse_job_file(&text, "z.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    let r = run_jobs(&mut dev, &file).remove(0);
    assert_eq!(r.error, 0, "{:?}", r.error_reason);
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"write")).then(|| (f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect()
}

#[test]
fn random_writes_go_where_fio_sends_them() {
    // fio 3.33: `--size=32m --rw=randwrite --bs=64k --io_size=48m
    // --max_open_zones=2`: 768 writes of 64 KiB. Zones 0 and 2 are the
    // first write zones; every full zone is reset and written again.
    let w = writes("size=32m\nbs=64k\nio_size=48m\nmax_open_zones=2\n");
    assert_eq!(w.len(), 768);
    assert!(w.iter().all(|&(_, len)| len == 65536));
    let blocks = |r: std::ops::Range<usize>| w[r].iter().map(|&(o, _)| o / 65536).collect::<Vec<_>>();
    assert_eq!(blocks(0..16), [0, 256, 257, 1, 2, 258, 3, 4, 259, 5, 260, 261, 262, 6, 7, 263]);
    // Around the first reset of zone 0 (its blocks 0, 1, 2 again).
    assert_eq!(blocks(379..395), [474, 129, 475, 130, 476, 477, 131, 478, 132, 479, 0, 1, 2, 133, 3, 4]);
}
