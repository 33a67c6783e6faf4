//! Latency outliers (the share of commands above a threshold) and stalls
//! (intervals in which commands were outstanding and none completed):
//! against a hand computation on a drive of fixed read latency, and
//! against the same quantities computed independently from the command
//! log of a run with garbage collection.

use ssdtwin::run::device::{Completion, Device, Event};
use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::study::metric::Metric;
use ssdtwin::study::report::phase_record;
use ssdtwin::{Command, Drive, DriveState, IoKind, PhaseResult};

use crate::common::small_model;

const MS: u64 = 1_000_000;

fn idle_phase() -> Phase {
    Phase::Idle { name: "window".into(), duration_ns: 0, apst: None }
}

/// Run every command to completion, `depth` at a time in the order
/// given; the completions.
fn run_at_depth(device: &mut Device, cmds: &[Command], depth: usize) -> Vec<Completion> {
    let mut done = Vec::new();
    let mut next = 0;
    while next < cmds.len() && (device.outstanding() as usize) < depth {
        device.submit(cmds[next], next as u32);
        next += 1;
    }
    while device.outstanding() > 0 {
        if let Some(Event::Completion(c)) = device.next_event() {
            done.push(c);
            if next < cmds.len() {
                device.submit(cmds[next], next as u32);
                next += 1;
            }
        }
    }
    done
}

fn read(lba: u64) -> Command {
    Command { kind: IoKind::Read, offset: lba * 4096, len: 4096 }
}

#[test]
fn outliers_and_stalls_match_a_hand_computation_at_fixed_latency() {
    // Every NAND read takes 15 ms; reads of never-written pages touch no
    // NAND and complete in microseconds.
    let model = small_model(64, &["nand.native.tr_ns=[15000000, 15000000, 15000000]"]);
    let mut device = Device::new(Drive::new(model));
    // Write 1 MiB (LBAs 0..256) and let the write buffer reach the NAND.
    let writes: Vec<Command> =
        (0..8).map(|i| Command { kind: IoKind::Write, offset: i * 131_072, len: 131_072 }).collect();
    run_at_depth(&mut device, &writes, 1);
    let settle = device.now() + 1_000 * MS;
    device.idle_until(settle);

    // QD1: one read in four is of a written page (≈ 15 ms), the others of
    // unwritten ones. 100 reads: 25 slow ones, each a 15 ms interval
    // without a completion.
    device.begin_window(device.now());
    let cmds: Vec<Command> = (0..100u64).map(|i| if i % 4 == 0 { read(i) } else { read(10_000 + i) }).collect();
    let done = run_at_depth(&mut device, &cmds, 1);
    let slow = done.iter().filter(|c| c.latency_ns() > 10 * MS).count();
    assert_eq!(slow, 25, "the drive's read latency is as set");
    assert!(done.iter().all(|c| c.latency_ns() < 20 * MS));
    let end = device.now();
    let r = PhaseResult::from_window(idle_phase(), device.end_window(end));
    let value = |m: &str| Metric::parse(m).unwrap().value(&r, None);
    assert_eq!(value("over_10ms"), Some(25.0));
    assert_eq!(value("read_over_10ms"), Some(25.0));
    assert_eq!(value("write_over_10ms"), None, "no writes in the window");
    assert_eq!(value("over_100ms"), Some(0.0));
    assert_eq!(value("over_1ms"), Some(25.0));
    assert_eq!(value("stalls_10ms"), Some(25.0));
    assert_eq!(value("stalls_1ms"), Some(25.0));
    assert_eq!(value("stalls_20ms"), Some(0.0));
    assert_eq!(value("stalls_100ms"), Some(0.0));
    assert!((r.stalls.time_at_least_ns(10 * MS) as f64 - 25.0 * 15.0 * MS as f64).abs() < 25.0 * 0.1 * MS as f64);

    // QD2, a slow read beside a fast one: the fast one completes at once,
    // then nothing until the slow one 15 ms later — one stall. Two slow
    // reads of different dies side by side complete together: one stall
    // for the pair, not two.
    device.begin_window(device.now());
    run_at_depth(&mut device, &[read(0), read(12_000)], 2);
    let r = PhaseResult::from_window(idle_phase(), device.end_window(device.now()));
    assert_eq!(r.stalls.count_at_least(10 * MS), 1);
    assert_eq!(Metric::parse("over_10ms").unwrap().value(&r, None), Some(50.0));

    // The phase record carries the default thresholds.
    let rec = phase_record(&r);
    assert_eq!(rec.latency_outliers.len(), 0, "an idle phase reports no outliers");
    let mut io = r.clone();
    io.phase = Phase::Io(IoSpec::new("reads", RwPattern::RandRead));
    let rec = phase_record(&io);
    assert_eq!(rec.latency_outliers[0].threshold_ms, 10.0);
    assert_eq!(rec.latency_outliers[0].read_pct, Some(50.0));
    assert_eq!(rec.latency_outliers[1].threshold_ms, 100.0);
    assert_eq!(rec.latency_outliers[1].all_pct, Some(0.0));
    assert_eq!(rec.stalls[0].min_ms, 100.0);
    assert_eq!(rec.stalls[0].count, 0);
    assert!(rec.stalls[0].longest_ms > 14.0 && rec.stalls[0].longest_ms < 16.0);
}

/// Stalls from a command log: sweep submissions and completions in time
/// order (completions first at equal times, as the device delivers them
/// before the host reacts), and measure each interval from the last
/// completion, or the submission that ended an idle, to the next
/// completion.
fn stalls_from_log(log: &[Completion]) -> Vec<u64> {
    let mut events: Vec<(u64, u8)> = Vec::with_capacity(log.len() * 2);
    for c in log {
        events.push((c.submitted_ns, 1));
        events.push((c.done_ns, 0));
    }
    events.sort();
    let (mut outstanding, mut progress, mut gaps) = (0u64, 0u64, Vec::new());
    for (t, kind) in events {
        if kind == 1 {
            if outstanding == 0 {
                progress = t;
            }
            outstanding += 1;
        } else {
            gaps.push(t - progress);
            progress = t;
            outstanding -= 1;
        }
    }
    gaps
}

#[test]
fn outliers_and_stalls_agree_with_the_command_log_through_gc() {
    // A full drive with a small write buffer: random writes wait behind
    // programs and garbage collection, with stalls of milliseconds.
    let model = small_model(300, &["controller.write_buffer_bytes=131072"]);
    let mut drive = Drive::new(model);
    DriveState::Steady.apply_fast(&mut drive, 7);
    let mut device = Device::new(drive);
    device.log_commands(true);
    device.begin_window(0);
    let mut x = 12345u64;
    let cmds: Vec<Command> = (0..20_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            Command { kind: IoKind::Write, offset: ((x >> 33) % (300 * 256)) * 4096, len: 4096 }
        })
        .collect();
    run_at_depth(&mut device, &cmds, 4);
    let end = device.now();
    let r = PhaseResult::from_window(idle_phase(), device.end_window(end));
    let log = device.take_log();
    assert_eq!(log.len(), cmds.len());
    assert!(r.counters.gc_slots_moved > 0, "the run must collect garbage");

    let gaps = stalls_from_log(&log);
    let lats: Vec<u64> = log.iter().map(|c| c.latency_ns()).collect();
    let mut checked = 0;
    for t in [MS, 2 * MS, 3 * MS, 5 * MS, 10 * MS, 20 * MS] {
        // The histogram holds 3 significant digits: leave out thresholds
        // with a value within 0.2% of them.
        let near = |v: &u64| (*v as f64 - t as f64).abs() <= t as f64 * 0.002;
        if !gaps.iter().any(near) {
            let want = gaps.iter().filter(|&&g| g >= t).count() as u64;
            assert_eq!(r.stalls.count_at_least(t), want, "stalls of at least {t} ns");
            checked += want;
        }
        if !lats.iter().any(near) {
            let want = 100.0 * lats.iter().filter(|&&l| l > t).count() as f64 / lats.len() as f64;
            let got = Metric::Over(ssdtwin::study::metric::Dir::Write, t).value(&r, None).unwrap();
            assert!((got - want).abs() < 1e-9, "writes over {t} ns: {got} % against {want} %");
        }
    }
    assert!(checked > 0, "the run must stall for a millisecond or more");
}
