//! Verify under `zonemode=zbd`: fio resets a verifying job's zones before
//! it writes, never takes a full zone as a write zone, and reads back
//! every write. The expected counts are fio 3.42's on a regular file with
//! the same emulated zones (`zonesize=8M`, `zonecapacity=6M`,
//! `ioengine=psync`), the twin's small zoned drive's geometry.

use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::{Drive, IoKind};

use crate::common::small_zoned_model;

fn run_on(dev: &mut Device, text: &str) -> Vec<JobResult> {
    let file = parse_job_file(text, "z.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    run_jobs(dev, &file)
}

/// (bytes written, bytes read, reads) of a job.
fn io(r: &JobResult) -> (u64, u64, u64) {
    let d = &r.result.dirs;
    (d[IoKind::Write as usize].bytes, d[IoKind::Read as usize].bytes, d[IoKind::Read as usize].ios)
}

fn resets(dev: &Device) -> u64 {
    let z = dev.drive().ftl().zoned().unwrap();
    (0..56).map(|i| z.zone_counters(i).resets).sum()
}

#[test]
fn a_verifying_zbd_job_reads_back_what_it_wrote() {
    let mut dev = Device::new(Drive::new(small_zoned_model(&[])));
    // fio 3.42: a: 6291456 B written, 6291456 B (768 reads) read back, 0
    // zone resets; b: 1 zone reset, then the same.
    let r = run_on(
        &mut dev,
        "[global]\nzonemode=zbd\nsize=8m\nbs=8K\nverify=crc32c\nstonewall=1\n\
         [a]\niodepth=1\nrw=randwrite\n[b]\nrw=write\n",
    );
    assert!(r.iter().all(|j| j.error == 0), "{:?}", r.iter().map(|j| &j.error_reason).collect::<Vec<_>>());
    // The random writer's one zone is full after its capacity: it is not
    // reset (its data is still to be read back), so the job's writes end.
    assert_eq!(io(&r[0]), (6 << 20, 6 << 20, 768));
    let z = dev.drive().ftl().zoned().unwrap();
    assert_eq!(z.zone_counters(0).resets, 1, "the second job's reset of the full zone, before it writes");
    assert_eq!(io(&r[1]), (6 << 20, 6 << 20, 768));
}

#[test]
fn each_verify_loop_resets_the_zones_it_will_write() {
    let mut dev = Device::new(Drive::new(small_zoned_model(&[])));
    // fio 3.42: pre 18874368 B written; w 50331648 B written and read
    // back (384 reads), 7 zone resets: the 3 zones pre wrote before the
    // first loop, the 4 zones of the range before the second.
    let r = run_on(
        &mut dev,
        "[global]\nzonemode=zbd\nbs=128K\nstonewall=1\n[pre]\nrw=write\nsize=24m\n\
         [w]\nrw=write\nsize=32m\nloops=2\nverify=crc32c\n",
    );
    assert!(r.iter().all(|j| j.error == 0), "{:?}", r.iter().map(|j| &j.error_reason).collect::<Vec<_>>());
    assert_eq!(io(&r[0]).0, 18874368);
    assert_eq!(io(&r[1]), (50331648, 50331648, 384));
    assert_eq!(resets(&dev), 7);
    // The verify reads were issued to written data: none unmapped.
    assert_eq!(dev.drive().counters().unmapped_reads, 0);
}

#[test]
fn resets_by_frequency_wait_for_the_read_back() {
    let mut dev = Device::new(Drive::new(small_zoned_model(&[])));
    // fio 3.42 writes 17432576 B and reads all of it back (266 writes and
    // 266 reads), with 11 zone resets: a write due to reset a zone reads
    // back the oldest write instead while one is left, and the offset it
    // drew is spent. Its random offsets are fio's own (the twin: 323
    // writes and reads, 16 resets), so the mechanism is checked here.
    let r = run_on(
        &mut dev,
        "[global]\nzonemode=zbd\nstonewall=1\n[pre]\nrw=write\nbs=128K\nsize=24m\n\
         [r]\nrw=randwrite\nsize=32m\nbs=64k\nio_size=40m\nverify=crc32c\n\
         zone_reset_frequency=0.05\nzone_reset_threshold=0\n",
    );
    assert!(r.iter().all(|j| j.error == 0), "{:?}", r.iter().map(|j| &j.error_reason).collect::<Vec<_>>());
    let (w, rd, _) = io(&r[1]);
    assert_eq!(w, rd, "every write is read back once");
    assert!(w < 40 << 20, "full zones are not rewritten: the job ends before its io_size ({w} B)");
    assert!(resets(&dev) > 3, "the 3 zones with data are reset first");
    assert_eq!(dev.drive().counters().unmapped_reads, 0);
}

#[test]
fn experimental_verify_is_refused_with_zbd_as_fio_refuses_it() {
    // fio 3.34 and later (zbd.c's zbd_setup_files): "zonemode=zbd does not
    // support experimental verify"; the job does not start. Without zbd,
    // or with experimental_verify=0, the job is accepted.
    let dev = Device::new(Drive::new(small_zoned_model(&[])));
    let parse = |t: &str| parse_job_file(t, "z.fio", dev.drive().user_bytes(), &JobOptions::new());
    let job = "[w]\nzonemode=zbd\nrw=write\nbs=128k\nsize=8m\nverify=crc32c\nexperimental_verify=1\n";
    let e = parse(job).unwrap_err().to_string();
    assert!(e.contains("z.fio:7") && e.contains("experimental_verify"), "{e}");
    assert!(e.contains("zonemode=zbd does not support experimental verify"), "{e}");
    assert!(parse(&job.replace("zonemode=zbd\n", "")).is_ok());
    assert!(parse(&job.replace("experimental_verify=1", "experimental_verify=0")).is_ok());
    assert!(parse(&job.replace("experimental_verify=1", "experimental_verify")).is_err());
}
