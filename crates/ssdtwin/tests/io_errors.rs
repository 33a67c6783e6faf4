//! fio's handling of the drive's error statuses in a job: the error
//! numbers Linux gives them, `continue_on_error` (which classes),
//! `ignore_error` (which numbers are non-fatal), failed commands left out
//! of the statistics, the error count fio reports (`total_err`,
//! `first_error`), and `recover_zbd_write_error`.

use ssdtwin::run::device::Device;
use ssdtwin::run::jobs::{run_jobs, JobResult};
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::{Drive, IoKind};

use crate::common::{small_zoned_model, with_fio_report};

const EIO: i32 = 5;
const EINVAL: i32 = 22;
const EOVERFLOW: i32 = 75;

fn run(text: &str) -> (Device, Vec<JobResult>) {
    let mut dev = Device::new(Drive::new(small_zoned_model(&[])));
    let file = parse_job_file(text, "e.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    let r = run_jobs(&mut dev, &file);
    (dev, r)
}

fn written(r: &JobResult) -> u64 {
    r.result.dirs[IoKind::Write as usize].bytes
}

/// Random writes without `zonemode=zbd` land off the write pointers:
/// Zone Invalid Write, EIO.
const OFF_POINTER: &str = "[w]\nrw=randwrite\nbs=4k\nio_size=1m\n";

/// More write zones than the drive keeps active: Too Many Active Zones,
/// EOVERFLOW.
const TOO_MANY_ACTIVE: &str =
    "[w]\nzonemode=zbd\nrw=randwrite\nbs=4k\nmax_open_zones=12\nignore_zone_limits=1\nio_size=8m\n";

#[test]
fn the_first_error_ends_the_job_by_default() {
    let (_, r) = run(OFF_POINTER);
    assert_eq!(r[0].error, EIO);
    assert!(r[0].errors.is_none());
    let (_, r) = run(TOO_MANY_ACTIVE);
    // Linux reports the active-resource limit as EOVERFLOW.
    assert_eq!(r[0].error, EOVERFLOW);
    assert!(r[0].error_reason.as_deref().unwrap().contains("Too Many Active Zones (NVMe status 0x1bd)"));
}

#[test]
fn continue_on_error_goes_on_after_eio_in_its_class_only() {
    // EIO is non-fatal for write errors: every write is tried, the failed
    // ones are counted as errors and not as I/O.
    let (_, r) = run(&format!("{OFF_POINTER}continue_on_error=write\n"));
    let c = r[0].errors.expect("counted");
    assert_eq!(r[0].error, 0);
    assert_eq!(r[0].fio_error(), EIO, "fio reports the first error it went on after");
    assert_eq!(c.first, EIO);
    assert!(c.total > 0);
    assert_eq!(written(&r[0]) + c.total * 4096, 1 << 20);
    assert_eq!(r[0].result.dirs[1].ios + c.total, 256);
    // A read class does not cover write errors.
    let (_, r) = run(&format!("{OFF_POINTER}continue_on_error=read\n"));
    assert_eq!(r[0].error, EIO);
    assert_eq!(r[0].errors.unwrap().total, 1);
}

#[test]
fn only_eio_and_eilseq_are_non_fatal_unless_ignore_error_lists_others() {
    // EOVERFLOW ends the job even with continue_on_error=all.
    let (_, r) = run(&format!("{TOO_MANY_ACTIVE}continue_on_error=all\n"));
    assert_eq!(r[0].error, EOVERFLOW);
    // Listed for write errors, it does not.
    let (_, r) = run(&format!("{TOO_MANY_ACTIVE}ignore_error=,EOVERFLOW\n"));
    let c = r[0].errors.expect("ignore_error sets continue_on_error for its class");
    assert_eq!(r[0].error, 0);
    assert_eq!(c.first, EOVERFLOW);
    assert_eq!(written(&r[0]) + c.total * 4096, 8 << 20);
    // By number (0x4b = 75), the same.
    let (_, s) = run(&format!("{TOO_MANY_ACTIVE}continue_on_error=write\nignore_error=,0x4b\n"));
    assert_eq!(s[0].errors, r[0].errors);
    // The list replaces fio's default: EIO is then fatal.
    let (_, r) = run(&format!("{OFF_POINTER}ignore_error=,EOVERFLOW\n"));
    assert_eq!(r[0].error, EIO);
    // A later continue_on_error=none takes the class back.
    let (_, r) = run(&format!("{TOO_MANY_ACTIVE}ignore_error=,EOVERFLOW\ncontinue_on_error=none\n"));
    assert_eq!(r[0].error, EOVERFLOW);
}

#[test]
fn fios_outputs_carry_the_error_count() {
    let text = format!("{OFF_POINTER}continue_on_error=write\n");
    let (dev, r) = run(&text);
    let file = parse_job_file(&text, "e.fio", dev.drive().user_bytes(), &JobOptions::new()).unwrap();
    let total = r[0].errors.unwrap().total;
    let (v, normal) = with_fio_report(&dev, &file, &r, |f| (f.to_json(false), f.normal()));
    let job = &v["jobs"][0];
    assert_eq!(job["error"], EIO);
    assert_eq!(job["total_err"], total);
    assert_eq!(job["first_error"], EIO);
    assert!(normal.contains(&format!("errors    : total={total}, first_error=5/<Input/output error>")), "{normal}");
}

#[test]
fn bad_error_options_are_named() {
    for (bad, what) in [
        ("continue_on_error=sometimes", "continue_on_error"),
        ("ignore_error=EBOGUS", "Unknown error EBOGUS"),
        ("ignore_error=EIO,EIO,EIO,EIO", "Illegal error type"),
    ] {
        let text = format!("[w]\nrw=write\n{bad}\n");
        let e = parse_job_file(&text, "e.fio", 1 << 30, &JobOptions::new()).unwrap_err().to_string();
        assert!(e.contains("e.fio") && e.contains(what), "{e}");
    }
}

#[test]
fn recover_zbd_write_error_needs_continue_on_error_and_rewrites_at_the_pointer() {
    // fio refuses it at setup without continue_on_error.
    let (_, r) = run(&format!("{TOO_MANY_ACTIVE}recover_zbd_write_error=1\n"));
    assert_eq!(r[0].error, EINVAL);
    assert!(r[0].error_reason.as_deref().unwrap().contains("works only when continue_on_error is set"));
    // The write that opens a seventh zone fails; the recovery writes the
    // same blocks at the zone's write pointer, which the drive refuses
    // again: fio's "move wp failed" ends the job with its error.
    let (_, r) = run(&format!("{TOO_MANY_ACTIVE}ignore_error=,EOVERFLOW\nrecover_zbd_write_error=1\n"));
    assert_eq!(r[0].error, EOVERFLOW);
    let why = r[0].error_reason.as_deref().unwrap();
    assert!(why.contains("move wp failed") && why.contains("Too Many Active Zones"), "{why}");
    assert_eq!(r[0].errors.unwrap().total, 1);
}
