//! fio's `num_range`: a trim of several ranges in one command. The same
//! job file deallocates exactly the pages its one-range version does, in
//! `num_range` times fewer commands, each the ranges' total length.

use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::run_jobs;
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::IoKind;

use crate::common::small_drive;

const CAP: u64 = 256 << 20;

/// Fill 8 MiB, then trim (sequentially or at random, as fio draws) with
/// `num_range` ranges per command: the map left and the trim commands
/// the device saw.
fn trim(rw: &str, num_range: u32) -> (Vec<u32>, Vec<u32>) {
    let text = format!(
        "[fill]\nrw=write\nbs=128k\nsize=8m\n[t]\nstonewall\nrw={rw}\nbs=4k\nsize=8m\nio_size=2m\nnum_range={num_range}\n"
    );
    let file = parse_job_file(&text, "t.fio", CAP, &JobOptions::new()).unwrap();
    let mut dev = Device::new(small_drive(256, &[]));
    dev.log_commands(true);
    let r = run_jobs(&mut dev, &file);
    assert_eq!(r[1].error, 0);
    let lens = dev.take_log().iter().filter(|c| c.cmd.kind == IoKind::Trim).map(|c| c.cmd.len).collect();
    let map = dev.drive().ftl().l2p()[..2048].iter().map(|&s| u32::from(s != ssdtwin::model::nand::NONE)).collect();
    (map, lens)
}

#[test]
fn num_range_trims_the_same_pages_in_fewer_commands() {
    for rw in ["trim", "randtrim"] {
        let (map1, lens1) = trim(rw, 1);
        let (map8, lens8) = trim(rw, 8);
        assert_eq!(lens1.len(), 512, "{rw}: 2 MiB of 4 KiB trims");
        assert_eq!(lens8.len(), 64, "{rw}: 8 ranges per command");
        assert!(lens8.iter().all(|&l| l == 32 << 10), "{rw}: each command trims 8 × 4 KiB");
        assert_eq!(map1, map8, "{rw}: the same pages deallocated");
        assert_eq!(map1.iter().sum::<u32>(), 2048 - 512, "{rw}: 512 distinct pages trimmed");
    }
}

#[test]
fn num_range_is_refused_with_trimwrite_as_fio() {
    let e = parse_job_file("[t]\nrw=trimwrite\nnum_range=2\n", "t.fio", CAP, &JobOptions::new()).unwrap_err();
    assert!(e.to_string().contains("trimwrite cannot be used with multiple ranges"), "{e}");
    let e = parse_job_file("[t]\nrw=trim\nnum_range=257\n", "t.fio", CAP, &JobOptions::new()).unwrap_err();
    assert!(e.to_string().contains("257 is not 1 to 256"), "{e}");
}
