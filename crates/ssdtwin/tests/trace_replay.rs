//! Trace replay on the device core: the timing modes do what they say
//! (as recorded on a fast drive gives the drive's QD1 latency and the
//! recorded duration; capped idle shortens exactly the idle gaps; closed
//! keeps QD outstanding in trace order), addresses are checked, wrapped
//! or scaled, a fio-written iolog replays fio's counts, and a replay is
//! a pure function of its inputs.

use ssdtwin::run::device::{Completion, Device};
use ssdtwin::run::trace::{replay, OutOfRange, ReplayMode, TraceSpec};
use ssdtwin::run::workload::{Job, Phase};
use ssdtwin::study::report::phase_json;
use ssdtwin::{Drive, DriveState, IoKind, PhaseResult, Simulator, TraceError};

use crate::common::{small_model, TempFile};
use crate::trace_formats::temp_file;

const MIB: u64 = 1 << 20;

/// A small drive (300 MiB), filled so that reads hit NAND.
fn device() -> Device {
    let mut drive = Drive::new(small_model(300, &[]));
    DriveState::Filled(100.0).apply_fast(&mut drive, 1);
    Device::new(drive)
}

/// An MQSim trace of `(time_ns, byte offset, bytes, write)`.
fn mqsim(reqs: &[(u64, u64, u64, bool)]) -> String {
    reqs.iter()
        .map(|&(t, off, len, w)| format!("{t} 0 {} {} {}\n", off / 512, len / 512, if w { 0 } else { 1 }))
        .collect()
}

/// Pseudo-random 4 KiB-aligned offsets within `span` bytes.
fn offsets(n: usize, span: u64) -> Vec<u64> {
    let mut x = 0x9e3779b97f4a7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % (span / 4096)) * 4096
        })
        .collect()
}

fn run(device: &mut Device, spec: &TraceSpec) -> PhaseResult {
    replay(device, spec, &mut |_| {}).unwrap()
}

/// A trace spec of `text` written to a temporary file named `name`; the
/// file lives as long as this (which dereferences to the spec).
struct FileSpec {
    spec: TraceSpec,
    _file: TempFile,
}

impl std::ops::Deref for FileSpec {
    type Target = TraceSpec;

    fn deref(&self) -> &TraceSpec {
        &self.spec
    }
}

impl std::ops::DerefMut for FileSpec {
    fn deref_mut(&mut self) -> &mut TraceSpec {
        &mut self.spec
    }
}

fn spec(name: &str, text: &str, mode: Option<ReplayMode>) -> FileSpec {
    let path = temp_file(name, text.as_bytes());
    let mut s = TraceSpec::new(name, path.to_str().unwrap());
    s.mode = mode;
    FileSpec { spec: s, _file: path }
}

fn logged(device: &mut Device, spec: &TraceSpec) -> (PhaseResult, Vec<Completion>) {
    device.log_commands(true);
    let r = run(device, spec);
    let mut log = device.take_log();
    log.sort_by_key(|c| c.seq);
    (r, log)
}

#[test]
fn as_recorded_on_a_fast_drive_gives_qd1_latency_and_the_recorded_duration() {
    // Random 4 KiB reads 1 ms apart: far slower than the drive.
    let reqs: Vec<_> =
        offsets(300, 300 * MIB).into_iter().enumerate().map(|(i, o)| (i as u64 * 1_000_000, o, 4096, false)).collect();
    let text = mqsim(&reqs);
    let open = run(&mut device(), &spec("slow.mqsim", &text, None));
    let closed = run(&mut device(), &spec("slow-closed.mqsim", &text, Some(ReplayMode::Closed { depth: 1 })));
    let t = open.trace.as_ref().unwrap();
    assert_eq!(t.replay.mode, ReplayMode::AsRecorded);
    assert_eq!(t.replay.max_outstanding, 1);
    let (o, c) = (&open.dirs[IoKind::Read as usize], &closed.dirs[IoKind::Read as usize]);
    assert_eq!((o.ios, o.bytes), (300, 300 * 4096));
    let err = (o.mean_ns() - c.mean_ns()).abs() / c.mean_ns();
    assert!(err < 0.01, "as recorded {:.0} ns, QD1 {:.0} ns", o.mean_ns(), c.mean_ns());
    // The run lasts the recorded 299 ms plus the last read.
    let recorded = 299_000_000;
    assert_eq!(t.stats.recorded_ns, recorded);
    assert!(open.end_ns - open.start_ns >= recorded && open.end_ns - open.start_ns < recorded + 1_000_000);
}

#[test]
fn as_recorded_queues_inside_the_drive_when_it_is_slower() {
    // 64 KiB writes every µs: 65 GB/s, far beyond the drive.
    let reqs: Vec<_> = (0..2000u64).map(|i| (i * 1000, (i * 65536) % (256 * MIB), 65536, true)).collect();
    let r = run(&mut device(), &spec("fast.mqsim", &mqsim(&reqs), None));
    let t = r.trace.as_ref().unwrap();
    assert!(t.replay.max_outstanding > 100, "max outstanding {}", t.replay.max_outstanding);
    // The drive takes far longer than the recorded 2 ms.
    assert!(r.end_ns - r.start_ns > 20 * t.stats.recorded_ns);
    assert_eq!(r.dirs[IoKind::Write as usize].ios, 2000);
}

#[test]
fn capped_idle_shortens_exactly_the_idle_gaps() {
    let ms = 1_000_000;
    let reqs = [
        (0, 0, 4096, false),
        (100 * ms, 4096, 4096, false),
        (100 * ms + 1000, 8192, 4096, false),
        (300 * ms, 0, 4096, false),
    ];
    let cap = 25 * ms;
    let mut dev = device();
    let (r, log) =
        logged(&mut dev, &spec("gaps.mqsim", &mqsim(&reqs), Some(ReplayMode::CappedIdle { max_idle_ns: cap })));
    assert_eq!(log.len(), 4);
    let start = r.start_ns;
    assert_eq!(log[0].submitted_ns, start);
    // Idle after the first read: cut to 25 ms.
    assert_eq!(log[1].submitted_ns, log[0].done_ns + cap);
    // 1 µs later with the second read outstanding: not idle, kept.
    assert!(log[1].done_ns > log[1].submitted_ns + 1000);
    assert_eq!(log[2].submitted_ns, log[1].submitted_ns + 1000);
    let idle_from = log[1].done_ns.max(log[2].done_ns);
    assert_eq!(log[3].submitted_ns, idle_from + cap);
    let removed = (100 * ms - (log[1].submitted_ns - start))
        + (300 * ms - (log[3].submitted_ns - start) - (100 * ms - (log[1].submitted_ns - start)));
    assert_eq!(r.trace.as_ref().unwrap().replay.idle_removed_ns, removed);

    // A cap longer than every gap changes nothing.
    let mut dev = device();
    let (_, same) =
        logged(&mut dev, &spec("gaps2.mqsim", &mqsim(&reqs), Some(ReplayMode::CappedIdle { max_idle_ns: 500 * ms })));
    let times: Vec<u64> = same.iter().map(|c| c.submitted_ns - same[0].submitted_ns).collect();
    assert_eq!(times, vec![0, 100 * ms, 100 * ms + 1000, 300 * ms]);
}

#[test]
fn time_scale_multiplies_arrivals() {
    let reqs = [(0, 0, 4096, false), (10_000_000, 4096, 4096, false), (30_000_000, 8192, 4096, true)];
    let mut s = spec("scaled.mqsim", &mqsim(&reqs), None);
    s.time_scale = 0.5;
    let mut dev = device();
    let (r, log) = logged(&mut dev, &s);
    let times: Vec<u64> = log.iter().map(|c| c.submitted_ns - r.start_ns).collect();
    assert_eq!(times, vec![0, 5_000_000, 15_000_000]);
    assert_eq!(r.trace.as_ref().unwrap().replay.scheduled_ns, 15_000_000);
}

#[test]
fn closed_loop_keeps_qd_outstanding_in_trace_order() {
    let offs = offsets(3000, 300 * MIB);
    // Timestamps are ignored in closed loop.
    let reqs: Vec<_> = offs.iter().enumerate().map(|(i, &o)| (i as u64 * 1_000_000_000, o, 4096, false)).collect();
    let mut dev = device();
    let (r, log) = logged(&mut dev, &spec("closed.mqsim", &mqsim(&reqs), Some(ReplayMode::Closed { depth: 8 })));
    let t = r.trace.as_ref().unwrap();
    assert_eq!(t.replay.max_outstanding, 8);
    // Submitted in trace order.
    assert!(log.iter().map(|c| c.cmd.offset).eq(offs.iter().copied()));
    // Eight outstanding all the time but the tail: mean QD ≈ 8.
    let d = &r.dirs[IoKind::Read as usize];
    let mean_qd = d.lat_sum_ns as f64 / (r.end_ns - r.start_ns) as f64;
    assert!((mean_qd - 8.0).abs() < 0.1, "mean QD {mean_qd:.2}");
    // Every submission but the first eight happens at a completion.
    for c in &log[8..] {
        assert!(log.iter().any(|p| p.done_ns == c.submitted_ns), "command {} not issued at a completion", c.seq);
    }
    // Far faster than the recorded hour.
    assert!(r.end_ns - r.start_ns < 1_000_000_000);
}

#[test]
fn addresses_beyond_the_drive_are_an_error_unless_wrapped_or_scaled() {
    let cap = device().drive().user_bytes();
    let text = mqsim(&[(0, 0, 4096, true), (10, cap - 4096, 8192, true), (20, 2 * cap + 8192, 4096, true)]);
    let s = spec("range.mqsim", &text, None);
    match replay(&mut device(), &s, &mut |_| {}) {
        Err(TraceError::OutOfRange { line, offset, len, capacity, .. }) => {
            assert_eq!((line, offset, len, capacity), (2, (cap - 4096) as i128, 8192, cap));
        }
        other => panic!("{other:?}"),
    }
    let mut wrap = s.clone();
    wrap.address.out_of_range = OutOfRange::Wrap;
    let mut dev = device();
    let (_, log) = logged(&mut dev, &wrap);
    let got: Vec<u64> = log.iter().map(|c| c.cmd.offset).collect();
    // A request crossing the end is moved back to end at it.
    assert_eq!(got, vec![0, cap - 8192, 8192]);

    let mut scale = s.clone();
    scale.address.out_of_range = OutOfRange::Scale;
    let mut dev = device();
    let (r, log) = logged(&mut dev, &scale);
    let span = 2 * cap + 8192 + 4096;
    let f = r.trace.as_ref().unwrap().replay.address_scale.unwrap();
    assert!((f - cap as f64 / span as f64).abs() < 1e-12);
    // In 1 MiB chunks: the chunk's index scaled, the offset within it
    // kept (a request crossing the end moved back to end at it).
    let expect = |b: u64, len: u64| {
        let chunk = (b / MIB) as u128 * cap as u128 / span as u128;
        (chunk as u64 * MIB + b % MIB).min(cap - len)
    };
    assert_eq!(log[0].cmd.offset, 0);
    assert_eq!(log[1].cmd.offset, expect(cap - 4096, 8192));
    assert_eq!(log[2].cmd.offset, expect(2 * cap + 8192, 4096));

    // A negative offset removes a partition's start.
    let mut shifted = spec("shift.mqsim", &mqsim(&[(0, MIB, 4096, true)]), None);
    shifted.address.offset = -(MIB as i64);
    let mut dev = device();
    let (_, log) = logged(&mut dev, &shifted);
    assert_eq!(log[0].cmd.offset, 0);
}

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_fio_written_iolog_replays_fios_counts() {
    // Written by fio 3.33 (tests/data/README.md gives the command); fio
    // reported 710 reads of 2,908,160 bytes and 314 writes of 1,286,144.
    let r = run(&mut device(), &TraceSpec::new("fio", &data("fio-randrw-4k.iolog")));
    let (rd, wr) = (&r.dirs[IoKind::Read as usize], &r.dirs[IoKind::Write as usize]);
    assert_eq!((rd.ios, rd.bytes, wr.ios, wr.bytes), (710, 2_908_160, 314, 1_286_144));
    let t = r.trace.as_ref().unwrap();
    assert_eq!(t.replay.mode, ReplayMode::AsRecorded);
    // 32 trims and 32 writes of 64 KiB over 2 MiB.
    let r = run(&mut device(), &TraceSpec::new("tw", &data("fio-trimwrite-64k.iolog")));
    let (tr, wr) = (&r.dirs[IoKind::Trim as usize], &r.dirs[IoKind::Write as usize]);
    assert_eq!((tr.ios, tr.bytes, wr.ios, wr.bytes), (32, 2 * MIB, 32, 2 * MIB));
}

#[test]
fn fio_v2_without_timestamps_replays_closed_loop() {
    let text = "fio version 2 iolog\nf add\nf open\nf write 0 4096\nf write 4096 4096\nf read 0 8192\nf close\n";
    let r = run(&mut device(), &spec("v2.iolog", text, None));
    let t = r.trace.as_ref().unwrap();
    assert_eq!(t.replay.mode, ReplayMode::Closed { depth: 1 });
    assert_eq!((r.dirs[0].ios, r.dirs[1].ios), (1, 2));
}

#[test]
fn a_replay_is_a_pure_function_of_its_inputs() {
    let s = TraceSpec::new("fio", &data("fio-randrw-4k.iolog"));
    let a = phase_json(&run(&mut device(), &s)).to_string();
    let b = phase_json(&run(&mut device(), &s)).to_string();
    assert_eq!(a, b);
    assert!(a.contains("\"type\":\"trace\""));
}

#[test]
fn a_job_runs_trace_phases_beside_the_others() {
    let reqs: Vec<_> =
        offsets(100, 300 * MIB).into_iter().enumerate().map(|(i, o)| (i as u64 * 10_000, o, 4096, true)).collect();
    let s = spec("job.mqsim", &mqsim(&reqs), None);
    let job = Job {
        phases: vec![Phase::Idle { name: "rest".into(), duration_ns: 1_000_000, apst: None }, Phase::Trace(s.clone())],
    };
    let mut drive = Drive::new(small_model(300, &[]));
    DriveState::Filled(100.0).apply_fast(&mut drive, 1);
    let mut sim = Simulator::new(drive);
    let results = sim.try_run_job(&job).unwrap();
    assert_eq!(results[1].dirs[IoKind::Write as usize].ios, 100);
    assert!(results[1].start_ns >= 1_000_000);
    // A malformed trace is an error, not a panic.
    let bad = spec("bad.mqsim", "0 0 0 8 1\n5 0 0 8 9\n", None);
    let err = sim.try_run_job(&Job { phases: vec![Phase::Trace(bad.clone())] }).unwrap_err().to_string();
    assert!(err.ends_with("bad.mqsim:2: field `type`: expected 0 (write) or 1 (read), found `9`"), "{err}");
}

#[test]
fn a_recorded_job_replays_closed_loop_with_the_same_results() {
    use ssdtwin::run::trace::{TraceFormat, TraceWriter};
    use ssdtwin::run::workload::parse_job_file;
    let text = "[mix]\nrw=randrw\nrwmixread=60\nbs=4k\niodepth=8\nio_size=64m\nsize=256m\nrandseed=3\n";
    let job = parse_job_file(text, "mix.fio", 300 * MIB, &Default::default()).unwrap();
    let mut sim = Simulator::on(device());
    sim.device().log_commands(true);
    let start = sim.now();
    let job_result = sim.run_job(&job.to_job()).remove(0);
    let mut log = sim.device().take_log();
    let path = temp_file("recorded.mqsim", b"");
    let mut w = TraceWriter::create(path.to_str().unwrap(), TraceFormat::Mqsim).unwrap();
    w.write_log(&mut log, start).unwrap();
    assert_eq!(w.written(), 16384);
    w.finish().unwrap();

    let mut s = TraceSpec::new("replay", path.to_str().unwrap());
    s.mode = Some(ReplayMode::Closed { depth: 8 });
    let r = run(&mut device(), &s);
    let within = |a: f64, b: f64| (a - b).abs() <= 0.01 * b.abs().max(1e-9);
    for kind in [IoKind::Read, IoKind::Write] {
        let (a, b) = (&r.dirs[kind as usize], &job_result.dirs[kind as usize]);
        assert_eq!((a.ios, a.bytes), (b.ios, b.bytes));
        assert!(
            within(r.iops(kind), job_result.iops(kind)),
            "{kind:?} IOPS {} vs {}",
            r.iops(kind),
            job_result.iops(kind)
        );
        for p in [50.0, 99.0, 99.9] {
            assert!(within(a.percentile_ns(p) as f64, b.percentile_ns(p) as f64), "{kind:?} p{p}");
        }
    }
    assert!(within(r.counters.waf(), job_result.counters.waf()));
}

#[test]
fn every_written_format_reads_back() {
    use ssdtwin::run::trace::{TraceFormat, TraceOp, TraceReader, TraceWriter};
    let reqs = [
        (0u64, TraceOp::Write, 0u64, 4096u64),
        (1_500_000, TraceOp::Read, 8192, 16384),
        (2_000_000_000, TraceOp::Trim, 65536, 4096),
        (2_000_500_000, TraceOp::Write, 4096 * 10, 131072),
    ];
    for format in TraceFormat::ALL {
        for ext in ["", ".gz", ".zst"] {
            let path = temp_file(&format!("rt-{}{ext}", format.name()), b"");
            let p = path.to_str().unwrap();
            let mut w = TraceWriter::create(p, format).unwrap();
            for &(t, op, off, len) in &reqs {
                w.write(t, op, off, len).unwrap();
            }
            let holds_trims = matches!(format, TraceFormat::Blkparse | TraceFormat::FioV2 | TraceFormat::FioV3);
            assert_eq!(w.dropped(), if holds_trims { 0 } else { 1 }, "{format:?}");
            w.finish().unwrap();
            let mut r = TraceReader::open(p, None).unwrap();
            assert_eq!(r.format(), format);
            let sector = format.default_sector_bytes();
            let mut got = Vec::new();
            while let Some(q) = r.next_request().unwrap() {
                let len =
                    if matches!(format, TraceFormat::Mqsim | TraceFormat::Blkparse) { q.len * sector } else { q.len };
                got.push((q.time_ns, q.op, q.address * sector, len));
            }
            let want: Vec<_> = reqs
                .iter()
                .filter(|r| holds_trims || r.1 != TraceOp::Trim)
                .map(|&(t, op, off, len)| {
                    let t = match format {
                        TraceFormat::FioV2 => t / 1000 / 100 * 100_000, // waits of ≥ 100 µs
                        TraceFormat::FioV3 | TraceFormat::Spc => t / 1000 * 1000,
                        _ => t,
                    };
                    (t, op, off, len)
                })
                .collect();
            assert_eq!(got, want, "{format:?}{ext}");
        }
    }
}
