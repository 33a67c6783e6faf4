//! The device core driven directly: a hand-written command list (arrival
//! times, kinds, addresses) gives the same completions as the closed-loop
//! driver that produced the same sequence.

use ssdtwin::run::device::{Completion, Device, Event};
use ssdtwin::run::workload::parse_job_file;
use ssdtwin::{Command, Drive, DriveState, IoKind, Simulator};

use crate::common::small_model;

/// A small drive in steady state whose idle threshold (2 ms) is shorter
/// than the job's think time, so background GC runs between commands.
fn steady_drive() -> Drive {
    let mut drive = Drive::new(small_model(300, &["ftl.idle_threshold_ns=2000000"]));
    DriveState::Steady.apply_fast(&mut drive, 5);
    drive
}

/// Replay `arrivals` open loop: advance to each arrival, submit it.
fn replay(device: &mut Device, arrivals: &[(u64, Command)]) -> Vec<Completion> {
    let mut done = Vec::new();
    for (i, &(t, cmd)) in arrivals.iter().enumerate() {
        while let Some(ev) = device.advance_until(t) {
            if let Event::Completion(c) = ev {
                done.push(c);
            }
        }
        assert_eq!(device.now(), t);
        device.submit(cmd, i as u32);
    }
    while device.outstanding() > 0 {
        if let Some(Event::Completion(c)) = device.next_event() {
            done.push(c);
        }
    }
    done
}

#[test]
fn hand_written_commands_complete_as_in_the_closed_loop() {
    // A closed-loop job with think time: the host goes idle between
    // commands long enough for background GC.
    let text = "[mix]\nrw=randrw\nrwmixread=60\nbs=4k\niodepth=4\nthinktime=3ms\nio_size=8m\nsize=300m\nrandseed=11\n";
    let job = parse_job_file(text, "mix.fio", 300 << 20, &Default::default()).unwrap().to_job();
    let mut sim = Simulator::new(steady_drive());
    sim.device().log_commands(true);
    let before = sim.drive().ftl().counters();
    sim.run_job(&job);
    let mut closed = sim.device().take_log();
    let after = sim.drive().ftl().counters();
    assert!(closed.len() >= 2000, "{} commands", closed.len());
    assert!(after.gc_slots_moved > before.gc_slots_moved, "the job must exercise background GC");
    closed.sort_by_key(|c| c.seq);

    // The same sequence as a plain list of arrivals.
    let arrivals: Vec<(u64, Command)> = closed.iter().map(|c| (c.submitted_ns, c.cmd)).collect();
    assert!(arrivals.windows(2).all(|w| w[0].0 <= w[1].0));
    let mut device = Device::new(steady_drive());
    let mut open = replay(&mut device, &arrivals);
    open.sort_by_key(|c| c.seq);
    // The closed loop ended at its last event (a think-time timer that
    // found the byte limit reached), with background work until then.
    let end = sim.now();
    assert_eq!(device.advance_until(end), None);

    assert_eq!(open.len(), closed.len());
    for (o, c) in open.iter().zip(&closed) {
        assert_eq!((o.seq, o.cmd, o.submitted_ns, o.done_ns), (c.seq, c.cmd, c.submitted_ns, c.done_ns));
    }
    assert_eq!(device.drive().ftl().counters(), after);
    assert_eq!(device.drive().flash().counters, sim.drive().flash().counters);
}

#[test]
fn open_loop_arrivals_queue_when_the_drive_is_slower() {
    // Writes arriving every 500 ns (8 GB/s), faster than the link and the
    // dies take them:
    // latency grows with the queue, and nothing is lost.
    let mut device = Device::new(Drive::new(small_model(300, &[])));
    let arrivals: Vec<(u64, Command)> = (0..20_000u64)
        .map(|i| (i * 500, Command { kind: IoKind::Write, offset: (i * 7919 % 70_000) * 4096, len: 4096 }))
        .collect();
    device.begin_window(0);
    let done = replay(&mut device, &arrivals);
    let end = device.now();
    let w = device.end_window(end);
    assert_eq!(done.len(), arrivals.len());
    assert_eq!(w.dirs[IoKind::Write as usize].ios, arrivals.len() as u64);
    let first = done.iter().find(|c| c.seq == 0).unwrap().latency_ns();
    let last = done.iter().find(|c| c.seq == 19_999).unwrap().latency_ns();
    assert!(last > 20 * first, "queueing must show: first {first} ns, last {last} ns");
    assert!(w.busy_ns > 0 && w.busy_ns <= end);
}

#[test]
fn idle_device_runs_background_work_and_then_reports_nothing() {
    let mut drive = Drive::new(small_model(300, &["ftl.idle_threshold_ns=1000000"]));
    DriveState::Steady.apply_fast(&mut drive, 2);
    let mut device = Device::new(drive);
    let gc_before = device.drive().ftl().counters().gc_slots_moved;
    // One write, then nothing: the device delivers the completion, then
    // runs background GC (the steady drive is below its GC target) until
    // it has none, and reports no further event.
    device.submit(Command { kind: IoKind::Write, offset: 0, len: 4096 }, 7);
    match device.next_event() {
        Some(Event::Completion(c)) => assert_eq!(c.tag, 7),
        other => panic!("expected the completion, got {other:?}"),
    }
    assert_eq!(device.next_event(), None);
    assert!(device.drive().ftl().counters().gc_slots_moved > gc_before, "no background GC ran");
    // A timer is an event like a completion.
    let t = device.now() + 5;
    device.set_timer(t, 3);
    assert_eq!(device.next_event(), Some(Event::Timer(3)));
    assert_eq!(device.now(), t);
}

#[test]
fn plain_jobs_take_the_fast_loop_with_the_same_completions() {
    // A plain job (depth and limits only) runs in the driver's fast loop;
    // a `max_latency` no command reaches sends the same job through the
    // general loop. Every completion must be the same, GC included.
    let run = |extra: &str| {
        let text =
            format!("[w]\nrw=randrw\nrwmixread=30\nbs=4k\niodepth=8\nio_size=24m\nsize=300m\nrandseed=5\n{extra}");
        let job = parse_job_file(&text, "w.fio", 300 << 20, &Default::default()).unwrap().to_job();
        let mut sim = Simulator::new(steady_drive());
        sim.device().log_commands(true);
        let before = sim.drive().ftl().counters();
        sim.run_job(&job);
        let moved = sim.drive().ftl().counters().gc_slots_moved - before.gc_slots_moved;
        (sim.device().take_log(), moved)
    };
    let (plain, moved) = run("");
    let (general, _) = run("max_latency=100s\n");
    assert!(plain.len() >= 6000, "{} commands", plain.len());
    assert!(moved > 0, "the job must exercise GC");
    assert_eq!(plain, general);
}
