//! Real fio (`ioengine=nbd`, queue depth 1) through `serve` in real time
//! sees the drive's latency, not the drive's plus the transport's: each
//! reply is sent the connection's measured transport delay before its
//! simulated completion (`server/transport.rs`). Issue 36, item 5, with
//! fio's mean total latency (`lat`: submission plus completion):
//!
//! - reads (slower than the transport) within 5 % of the twin's own mean;
//! - buffered writes (faster than the transport) within 10 % of the larger
//!   of the transport's floor — the same client against `--time-scale 0`
//!   — and the twin's own mean.
//!
//! Twice: on a drive whose reads take 250 µs, several times any round
//! trip, and on the preset's own reads (65–90 µs, the 77.6 µs
//! mean) over TCP, where the round trip is half the read and its tail and
//! stalls decide the mean.
//!
//! **Measured at the same time.** The floor is not one number on the
//! project's 2-core VM: the same client's round trip was 16–63 µs from run
//! to run (whether the two processes share a core or wake each other
//! across cores, which the scheduler decides afresh), so a floor measured
//! in one run and writes in another disagree by far more than 10 %. Here
//! both servers run at once and one fio process alternates between them,
//! round by round (stonewalled jobs at time scale 1, each between two
//! rounds of the floor: 12 rounds of 400 reads, 48 of 100 buffered
//! writes, whose floor wanders by ±20 % from round to round). Each round's mean is held to its
//! bound against the mean of the two floor rounds around it (so that a
//! pace that drifts during the run, as it does on a loaded machine, moves
//! the round and its floor alike), and the test asserts the median of
//! those rounds' ratios: a fault that shifts every round (a reply sent late, or
//! early) moves the median, a stall of a few milliseconds that falls in
//! one round of one side (seen even at real-time priority: the VM's host,
//! the kernel's own work) does not. The means pooled over all rounds are
//! printed.
//!
//! **Steady cores.** CI's machine (2 virtual CPUs) showed a loopback round
//! trip of 60–80 µs where an earlier one showed 16–63 µs: an idle virtual
//! CPU halts and is woken through its host. While it measures, the test
//! keeps every CPU busy with a spinning thread at `SCHED_IDLE` (which any
//! other thread preempts) and pins the servers to CPU 0 and fio to the
//! others (`cpus_allowed`), so that every round is placed alike.
//!
//! **Real-time priority.** On a loaded machine the scheduler's occasional
//! millisecond delays rule a mean of 20–270 µs latencies (fio's read mean
//! was 2.5× its median at load 2.5 on 2 cores). The test runs itself —
//! the servers' threads and fio, which inherit it — at `SCHED_FIFO`
//! priority when it may (root or `CAP_SYS_NICE`; CI runs as root), so
//! other processes' work does not delay a request (the kernel keeps 5 % of
//! each second for them, `sched_rt_runtime_us`). Without that the means
//! are checked only on a quiet machine (load average below the CPUs), the
//! medians (each round's, paired likewise) always.
//!
//! fio comes from Debian's `fio` package (with the nbd engine); without it
//! the test is skipped with a printed reason.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use ssdtwin::run::sim::PhaseResult;
use ssdtwin::{Drive, DriveSpec, DriveState, IoKind};
use ssdtwin_nbd::server::ServeOutcome;
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};

mod common;
use common::fio_has_nbd;

/// The generic TLC drive shrunk to 4 dies, full (every page mapped, so
/// reads go to the NAND). `slow_reads`: its reads slowed to a 250 µs tR,
/// several times the transport's round trip however the machine
/// schedules the two processes (18 µs on a loaded machine, up to 60 µs on
/// an idle one whose cores sleep between requests); otherwise the
/// preset's own reads, 65–90 µs at QD1 (the 77.6 µs mean).
fn full_small_tlc(slow_reads: bool) -> Drive {
    let set: Vec<String> = [
        "nand.native.tr_ns=[250000, 250000, 250000]",
        "geometry.channels=2",
        "geometry.dies_per_channel=2",
        "geometry.blocks_per_plane=32",
        "geometry.pages_per_block=48",
        "ftl.user_capacity_bytes=83886080",
    ]
    .iter()
    .skip(usize::from(!slow_reads))
    .map(|s| s.to_string())
    .collect();
    let spec = DriveSpec::load("generic-tlc-nvme", &set).expect("test drive parses");
    let mut d = Drive::new(spec.build("test drive").expect("test drive is valid"));
    DriveState::Filled(100.0).apply_fast(&mut d, 1);
    d
}

/// A served drive on a loopback port.
struct Served {
    uri: String,
    stop: Arc<AtomicBool>,
    handle: JoinHandle<ServeOutcome>,
}

fn serve(scale: f64, slow_reads: bool) -> Served {
    let opts = ServeOptions {
        listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
        time_scale: scale,
        log: false,
        ..ServeOptions::new()
    };
    let server = Server::bind(Twin::new(full_small_tlc(slow_reads)), opts).expect("bind");
    let uri = format!("nbd://{}/ssdtwin", server.local_addr().expect("TCP"));
    let stop = server.stopper();
    let handle = std::thread::spawn(move || server.run().expect("server runs"));
    Served { uri, stop, handle }
}

impl Served {
    fn finish(self) -> ServeOutcome {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().expect("server thread")
    }
}

/// A latency's mean and median, ns.
#[derive(Debug, Clone, Copy)]
struct Lat {
    mean: f64,
    p50: f64,
}

/// The requests' mean over all rounds (each round's mean weighted by its
/// requests), and the median of the rounds' medians: printed.
fn pooled(rounds: &[(Lat, u64)]) -> Lat {
    let n: u64 = rounds.iter().map(|r| r.1).sum();
    let mean = rounds.iter().map(|(l, k)| l.mean * *k as f64).sum::<f64>() / n as f64;
    Lat { mean, p50: median(rounds.iter().map(|r| r.0.p50).collect()) }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Whether the median over the rounds of `got(round) / want(round)` is
/// within `tol` of 1; the ratios, for the message.
fn rounds_within(n: usize, got: impl Fn(usize) -> f64, want: impl Fn(usize) -> f64, tol: f64) -> (bool, Vec<f64>) {
    let ratios: Vec<f64> = (0..n).map(|i| got(i) / want(i)).collect();
    let m = median(ratios.clone());
    ((m - 1.0).abs() <= tol, ratios)
}

/// One fio run of stonewalled QD1 4 KiB jobs: `rounds` rounds of random
/// reads, then of random writes, each round `n` requests against the
/// floor (`floor_uri`), then `n` against the real-time server (`uri`),
/// and one more floor round after the last: each real-time round lies
/// between two floor rounds. fio's total latency of each round (and its
/// requests) per side and direction: [floor read, read, floor write,
/// write], the floors' `rounds + 1` long.
fn fio_rounds(floor_uri: &str, uri: &str, rounds: [(u32, u32); 2], cpus: Option<&str>) -> [Vec<(Lat, u64)>; 4] {
    let mut job = String::from("[global]\nioengine=nbd\nbs=4k\niodepth=1\nsize=64m\nlat_percentiles=1\nstonewall\n");
    if let Some(c) = cpus {
        writeln!(job, "cpus_allowed={c}").expect("to a string");
    }
    for (rw, (rounds, n)) in ["randread", "randwrite"].into_iter().zip(rounds) {
        for i in 0..=rounds {
            for (side, u) in [("floor", floor_uri), ("drive", uri)].into_iter().take(if i < rounds { 2 } else { 1 }) {
                writeln!(job, "[{side}-{rw}-{i}]\nrw={rw}\nuri={u}\nnumber_ios={n}").expect("to a string");
            }
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("rounds.fio");
    std::fs::write(&path, job).expect("job file");
    let out = Command::new("fio").arg(&path).arg("--output-format=json").output().expect("fio runs");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&text[text.find('{').expect("fio JSON")..]).expect("fio JSON");
    let mut sides: [Vec<(Lat, u64)>; 4] = Default::default();
    for j in v["jobs"].as_array().expect("fio jobs") {
        let name = j["jobname"].as_str().expect("job name");
        let read = name.contains("randread");
        let d = &j[if read { "read" } else { "write" }];
        let lat = &d["lat_ns"];
        let l = Lat {
            mean: lat["mean"].as_f64().expect("lat mean"),
            p50: lat["percentile"]["50.000000"].as_f64().expect("lat p50 (lat_percentiles)"),
        };
        let ios = d["total_ios"].as_u64().expect("total_ios");
        assert_eq!(ios, u64::from(rounds[usize::from(!read)].1), "{name}: every request done");
        sides[usize::from(!read) * 2 + usize::from(name.starts_with("drive"))].push((l, ios));
    }
    for (i, s) in sides.iter().enumerate() {
        let floor = i % 2 == 0;
        assert_eq!(s.len(), rounds[i / 2].0 as usize + usize::from(floor), "every round ran");
    }
    sides
}

fn twin_lat(p: &PhaseResult, kind: IoKind) -> Lat {
    let d = &p.dirs[kind as usize];
    Lat { mean: d.mean_ns(), p50: d.percentile_ns(50.0) as f64 }
}

/// Run this thread, and what it starts from now on (threads, fio), at
/// `SCHED_FIFO` priority 10; false where that is not allowed.
fn realtime_priority() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: changes only the calling thread's scheduling policy.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Pin this thread, and what it starts from now on (the servers'
/// threads), to CPU 0, and return the CPU list for fio (`cpus_allowed`):
/// the rest. None on a single CPU, or where affinity cannot be set.
fn pin_servers() -> Option<String> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        return None;
    }
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within it.
    let ok = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    };
    ok.then(|| format!("1-{}", cpus - 1))
}

/// Keep every CPU awake while the returned flag is false: one thread per
/// CPU spins at `SCHED_IDLE`, the lowest priority, which any other thread
/// preempts at once. An idle virtual CPU halts and is woken through the
/// host, which made a loopback round trip 16–80 µs from round to round;
/// awake, its spread is the transport's own.
fn keep_cpus_awake() -> (Arc<AtomicBool>, Vec<JoinHandle<()>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let spinners = (0..cpus)
        .map(|cpu| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                // SAFETY: changes only this thread's affinity and policy.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                    let param = libc::sched_param { sched_priority: 0 };
                    libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
                }
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    (stop, spinners)
}

/// Every CPU again for this thread.
fn unpin() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SAFETY: as above.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in 0..cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Back to the normal policy (threads started since keep theirs).
fn normal_priority() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: as above.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
}

/// Whether the machine is quiet enough for means of wall-clock latencies
/// (load average below the number of CPUs).
fn quiet_machine() -> bool {
    let load: f64 = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0.0);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    load < cpus
}

#[test]
fn fio_at_qd1_sees_the_drives_latency_not_the_transports() {
    qd1_through_serve(true);
}

/// The issue's own case: reads of 65–90 µs (77.6 µs mean), where the
/// transport's round trip (35–50 µs at real-time priority on the
/// project's 2-core VM) is more than half of the drive's latency, so
/// that its spread and tail decide whether the mean is right.
#[test]
fn fio_at_qd1_sees_the_presets_77_us_reads_over_tcp() {
    qd1_through_serve(false);
}

/// One measurement at a time: the tests of this file would otherwise run
/// at once and share the two cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn qd1_through_serve(slow_reads: bool) {
    if !fio_has_nbd() {
        return;
    }
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let awake = keep_cpus_awake();
    let realtime = realtime_priority();
    let fio_cpus = pin_servers();
    // The transport's floor (nothing waits) and real time (replies sent
    // the measured transport delay early), served at once.
    let floor = serve(0.0, slow_reads);
    let real = serve(1.0, slow_reads);
    // Reads: 12 rounds of 400; buffered writes, whose floor's pace
    // wanders from round to round by ±20 % on the project's VM: 48
    // shorter rounds, so that the median of their ratios is tight.
    let rounds = [(12, 400), (48, 100)];
    let sides = fio_rounds(&floor.uri, &real.uri, rounds, fio_cpus.as_deref());
    let _ = floor.finish();
    let mut o = real.finish();
    if realtime {
        normal_priority();
    }
    if fio_cpus.is_some() {
        unpin();
    }
    awake.0.store(true, Ordering::Relaxed);
    awake.1.into_iter().for_each(|h| h.join().expect("spinner"));
    let delays = o.counters.transport_delays_ns.lock().unwrap().clone();
    let twin = o.twin.finish(16);
    let (twin_read, twin_write) = (twin_lat(&twin, IoKind::Read), twin_lat(&twin, IoKind::Write));
    let [floor_read, read, floor_write, write] = sides.each_ref().map(|s| pooled(s));
    eprintln!(
        "fio QD1 lat, over {rounds:?} (rounds, requests) (real-time priority: {realtime}): reads {read:?} vs the twin's \
         {twin_read:?} (floor {floor_read:?}); buffered writes {write:?} vs the larger of the floor {floor_write:?} \
         and the twin's {twin_write:?}; transport delays {delays:?} ns"
    );
    // The premises: reads wait for the NAND, well beyond the transport;
    // buffered writes are answered faster than the transport goes.
    if slow_reads {
        assert!(twin_read.p50 > 2.0 * floor_read.p50, "reads hit the NAND and are slower than the transport");
    } else if twin_read.p50 < 1.25 * floor_read.p50 {
        // The bounds hold where the drive is slower than the transport.
        eprintln!("NOTE: the transport's round trip here is near the drive's reads: not checked");
        return;
    }
    assert!(twin_write.p50 < floor_write.p50, "writes land in the buffer, faster than the transport");
    assert!(delays.iter().filter(|&&d| d > 0).count() >= 8, "the I/O sessions measured their delay: {delays:?}");
    let [_, reads, floor_writes, writes] = &sides;
    // Reads against the twin's own latency; buffered writes against the
    // larger of their round's floor and the twin's.
    type Of = fn(&Lat) -> f64;
    let check = |what: &str, of: Of, read_tol: f64, write_tol: f64| {
        let (ok, ratios) = rounds_within(reads.len(), |i| of(&reads[i].0), |_| of(&twin_read), read_tol);
        eprintln!("reads' {what}: rounds at {ratios:.3?} of the twin's");
        assert!(ok, "reads' {what}: rounds at {ratios:.3?} of the twin's {twin_read:?}");
        // The round's floor: the mean of the floor rounds just before and
        // just after it (a machine whose pace drifts during the run moves
        // both sides alike).
        let target = |i: usize| ((of(&floor_writes[i].0) + of(&floor_writes[i + 1].0)) / 2.0).max(of(&twin_write));
        let (ok, ratios) = rounds_within(writes.len(), |i| of(&writes[i].0), target, write_tol);
        eprintln!("buffered writes' {what}: rounds at {ratios:.3?} of their floor's or the twin's");
        assert!(
            ok,
            "buffered writes' {what}: rounds at {ratios:.3?} of the larger of their floor's and the twin's {twin_write:?}"
        );
    };
    check("median", |l| l.p50, 0.05, 0.10);
    if realtime || quiet_machine() {
        check("mean", |l| l.mean, 0.05, 0.10);
    } else {
        eprintln!("NOTE: no real-time priority here and the machine is loaded: means not checked, medians are");
    }
}
