//! Dependent trace replay (`dependent:MS`) on hand-built traces whose
//! groups and gaps are known, so every issue time is computed exactly:
//! groups from MSR response times, from blkparse completion (and merge)
//! events, and one request per group for a format without completions;
//! and `--lba-scale` keeping sequential runs sequential inside the drive.

use ssdtwin::run::device::{Completion, Device};
use ssdtwin::run::trace::{replay, OutOfRange, ReplayMode, TraceSpec};
use ssdtwin::{Drive, DriveState, PhaseResult};

use crate::common::small_model;
use crate::trace_formats::temp_file;

const US: u64 = 1000;
const MS: u64 = 1_000_000;

/// A small drive (300 MiB), filled so that reads hit NAND (a 4 KiB read
/// takes tens of µs).
fn device() -> Device {
    let mut drive = Drive::new(small_model(300, &[]));
    DriveState::Filled(100.0).apply_fast(&mut drive, 1);
    Device::new(drive)
}

/// Replay `text` (written to a file named `name`) with `dependent:25` and
/// return the result and the commands in submission order.
fn dependent(name: &str, text: &str) -> (PhaseResult, Vec<Completion>) {
    let path = temp_file(name, text.as_bytes());
    let mut spec = TraceSpec::new(name, path.to_str().unwrap());
    spec.mode = Some(ReplayMode::parse("dependent:25").unwrap());
    let mut dev = device();
    dev.log_commands(true);
    let r = replay(&mut dev, &spec, &mut |_| {}).unwrap();
    let mut log = dev.take_log();
    log.sort_by_key(|c| c.seq);
    (r, log)
}

/// The recorded structure both hand-built traces below share (times in
/// µs; every request a 4 KiB read):
///
/// | request | arrival | completion | group                              |
/// |---------|---------|------------|------------------------------------|
/// | 0       | 0       | 1000       | 1 starts                           |
/// | 1       | 500     | 1500       | 1 (arrived before 1's last completion) |
/// | 2       | 3000    | 3200       | 2: gap 3000, idle 1500             |
/// | 3       | 103000  | 103005     | 3: gap 100000, idle 99800          |
/// | 4       | 103010  | 103100     | 4: gap 10, idle 5                  |
/// | 5       | 103010  | 103100     | 4                                  |
///
/// Replayed with the idle capped at 25 ms on a drive whose reads take tens
/// of µs: group 2 at its recorded 3 ms (group 1 has long completed);
/// group 3 at group 2's start + 200 µs busy + 25 ms capped idle; group 4
/// when group 3 completes (its 10 µs gap is shorter than the read).
fn check_issue_times(r: &PhaseResult, log: &[Completion]) {
    assert_eq!(log.len(), 6);
    let s: Vec<u64> = log.iter().map(|c| c.submitted_ns - r.start_ns).collect();
    assert_eq!(s[0], 0);
    assert_eq!(s[1], 500 * US);
    assert!(log[0].done_ns.max(log[1].done_ns) < r.start_ns + 3 * MS);
    assert_eq!(s[2], 3 * MS);
    assert_eq!(s[3], 3 * MS + 200 * US + 25 * MS);
    assert!(log[3].done_ns > log[3].submitted_ns + 10 * US);
    assert_eq!(log[4].submitted_ns, log[3].done_ns);
    assert_eq!(log[5].submitted_ns, log[4].submitted_ns);
    let t = &r.trace.as_ref().unwrap().replay;
    assert_eq!((t.groups, t.max_group), (4, 2));
    assert_eq!(t.idle_removed_ns, 99_800 * US - 25 * MS);
    assert!(t.max_outstanding <= 2);
}

#[test]
fn msr_groups_come_from_response_times() {
    // FILETIME (100 ns ticks) and response times in ticks.
    let base = 128_166_372_000_000_000u64;
    let rows = [(0, 10_000), (5_000, 10_000), (30_000, 2_000), (1_030_000, 50), (1_030_100, 900), (1_030_100, 900)];
    let mut text = String::from("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
    for (i, (t, resp)) in rows.iter().enumerate() {
        text.push_str(&format!("{},h,0,Read,{},4096,{resp}\n", base + t, i * 4096));
    }
    let (r, log) = dependent("groups.msr", &text);
    check_issue_times(&r, &log);
}

#[test]
fn blkparse_groups_come_from_completion_and_merge_events() {
    let ev = |t_us: u64, action: &str, sector: u64, count: u64| {
        format!(
            "  8,0  0  1  {}.{:09}  1  {action}  R {sector} + {count} [a]\n",
            t_us / 1_000_000,
            (t_us % 1_000_000) * 1000
        )
    };
    let mut text = String::new();
    for (t, a, s) in [
        (0, "Q", 0),
        (500, "Q", 8),
        (1000, "C", 0),
        (1500, "C", 8),
        (3000, "Q", 16),
        (3200, "C", 16),
        (103_000, "Q", 24),
        (103_005, "C", 24),
        (103_010, "Q", 32),
        (103_010, "Q", 40),
        (103_100, "C", 32),
        (103_100, "C", 40),
    ] {
        text.push_str(&ev(t, a, s, 8));
    }
    let (r, log) = dependent("groups.blkparse", &text);
    check_issue_times(&r, &log);

    // A back merge: the merged request gets no completion of its own, yet
    // its group ends with the request it joined.
    for (t, a, s, n) in [
        (200_000, "Q", 100, 8),
        (200_001, "Q", 108, 8),
        (200_001, "M", 108, 8),
        (200_200, "C", 100, 16),
        (201_000, "Q", 200, 8),
        (201_100, "C", 200, 8),
    ] {
        text.push_str(&ev(t, a, s, n));
    }
    let (r, _) = dependent("merge.blkparse", &text);
    let t = &r.trace.as_ref().unwrap().replay;
    assert_eq!((t.submitted, t.groups, t.max_group), (9, 6, 2));

    // Without completion events, every request is its own group.
    let only_q: String = text.lines().filter(|l| l.contains(" Q ")).map(|l| format!("{l}\n")).collect();
    let (r, _) = dependent("noc.blkparse", &only_q);
    let t = &r.trace.as_ref().unwrap().replay;
    assert_eq!((t.submitted, t.groups, t.max_group, t.max_outstanding), (9, 9, 1, 1));
}

#[test]
fn without_completion_times_each_request_waits_for_the_previous() {
    // MQSim (no response times): QD1 with think time. A 10 µs gap is
    // shorter than the read, so the next waits for its completion; a 50 ms
    // gap is idle, cut to 25 ms after the previous request's issue.
    let text = "0 0 0 8 1\n10000 0 8 8 1\n50010000 0 16 8 1\n";
    let (r, log) = dependent("own.mqsim", text);
    assert_eq!(log[0].submitted_ns, r.start_ns);
    assert!(log[0].done_ns > log[0].submitted_ns + 10 * US);
    assert_eq!(log[1].submitted_ns, log[0].done_ns);
    assert_eq!(log[2].submitted_ns, log[1].submitted_ns + 25 * MS);
    let t = &r.trace.as_ref().unwrap().replay;
    assert_eq!((t.groups, t.max_group, t.max_outstanding), (3, 1, 1));
    assert_eq!(t.idle_removed_ns, 25 * MS);
}

#[test]
fn lba_scale_keeps_sequential_runs_sequential_inside_the_drive() {
    // Sequential runs of 128 KiB writes and reads spread over a span 50×
    // the drive, each run crossing many 1 MiB chunks, plus random 4 KiB
    // reads.
    let dev = device();
    let cap = dev.drive().user_bytes();
    let span = 50 * cap;
    let mut lines = String::new();
    let mut t = 0u64;
    let mut x = 0x9e3779b97f4a7c15u64;
    for run in 0..40u64 {
        let start = (run * (span / 40)) / 4096 * 4096;
        for i in 0..64u64 {
            let off = start + i * 131072;
            lines.push_str(&format!("{t} 0 {} 256 {}\n", off / 512, run % 2));
            t += 1000;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        lines.push_str(&format!("{t} 0 {} 8 1\n", (x % (span / 4096)) * 8));
        t += 1000;
    }
    lines.push_str(&format!("{t} 0 {} 8 1\n", (span - 4096) / 512));
    let path = temp_file("scale.mqsim", lines.as_bytes());
    let mut spec = TraceSpec::new("s", path.to_str().unwrap());
    spec.mode = Some(ReplayMode::Closed { depth: 4 });
    spec.address.out_of_range = OutOfRange::Scale;
    let mut dev = dev;
    dev.log_commands(true);
    let r = replay(&mut dev, &spec, &mut |_| {}).unwrap();
    let mut log = dev.take_log();
    log.sort_by_key(|c| c.seq);
    assert_eq!(log.len(), 40 * 65 + 1);
    for c in &log {
        assert!(c.cmd.offset + c.cmd.len as u64 <= cap, "{:?} beyond {cap}", c.cmd);
    }
    // Within each run, every request continues the previous one.
    for run in log.chunks(65).filter(|c| c.len() == 65) {
        for w in run[..64].windows(2) {
            assert_eq!(w[1].cmd.offset, w[0].cmd.offset + w[0].cmd.len as u64, "run broken");
        }
    }
    // The trace's statistics (on drive addresses) count them so: 63 of
    // each run's 64 continue the one before.
    let s = &r.trace.as_ref().unwrap().stats;
    let want = (40 * 63) as f64 / s.requests as f64;
    assert!(s.sequential_fraction() >= want, "{} < {want}", s.sequential_fraction());
}
