//! Real fio (`ioengine=nbd`, queue depth 1) through `serve` in real time
//! sees the drive's latency, not the drive's plus the transport's: each
//! reply is sent the connection's measured transport delay before its
//! simulated completion (`server/transport.rs`). Reads (slower than the
//! transport) must show the twin's own latency within 5 %; writes that
//! land in the write buffer (faster than the transport) show the
//! transport's floor — measured in the same test against `--time-scale 0`
//! — or the twin's latency, whichever is larger, which is printed but not
//! asserted: the round trip itself varies 3–4× from run to run on this
//! machine (see the test), so writes are held to the drive's latency as a
//! floor and to well under the reads. Medians are
//! checked always, the reads' mean on a quiet machine only (on a loaded
//! one the scheduler's occasional millisecond delays rule the means).
//!
//! fio comes from Debian's `fio` package (with the nbd engine); without it
//! the test is skipped with a printed reason.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::Ordering;

use ssdtwin::run::sim::PhaseResult;
use ssdtwin::{Drive, DriveSpec, DriveState, IoKind};
use ssdtwin_nbd::server::ServeOutcome;
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};

mod common;
use common::fio_has_nbd;

/// The generic TLC drive shrunk to 4 dies, full (every page mapped, so
/// reads go to the NAND), its reads slowed to a 250 µs tR: several times
/// the transport's round trip however the machine schedules the two
/// processes (18 µs on a loaded machine, up to 50 µs on an idle one whose
/// cores sleep between requests), so the reads are the drive's latency.
fn full_small_tlc() -> Drive {
    let set: Vec<String> = [
        "nand.native.tr_ns=[250000, 250000, 250000]",
        "geometry.channels=2",
        "geometry.dies_per_channel=2",
        "geometry.blocks_per_plane=32",
        "geometry.pages_per_block=48",
        "ftl.user_capacity_bytes=83886080",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let spec = DriveSpec::load("generic-tlc-nvme", &set).expect("test drive parses");
    let mut d = Drive::new(spec.build("test drive").expect("test drive is valid"));
    DriveState::Filled(100.0).apply_fast(&mut d, 1);
    d
}

/// fio's total latency (`lat`: submission plus completion) of `n` QD1
/// 4 KiB random requests (`rw` = randread or randwrite): mean and median,
/// ns.
fn fio_qd1_lat(uri: &str, rw: &str, n: u32) -> Lat {
    let out = Command::new("fio")
        .args([
            "--name=lat",
            "--ioengine=nbd",
            &format!("--uri={uri}"),
            &format!("--rw={rw}"),
            "--bs=4k",
            "--iodepth=1",
            "--size=64m",
            &format!("--number_ios={n}"),
            "--lat_percentiles=1",
            "--output-format=json",
        ])
        .output()
        .expect("fio runs");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&text[text.find('{').expect("fio JSON")..]).expect("fio JSON");
    let dir = if rw.contains("read") { "read" } else { "write" };
    let lat = &v["jobs"][0][dir]["lat_ns"];
    Lat {
        mean: lat["mean"].as_f64().expect("lat mean"),
        p50: lat["percentile"]["50.000000"].as_f64().expect("lat p50 (--lat_percentiles)"),
    }
}

/// A latency's mean and median, ns.
#[derive(Debug, Clone, Copy)]
struct Lat {
    mean: f64,
    p50: f64,
}

/// Serve a full small drive at `scale`, run fio's QD1 reads then writes;
/// fio's latencies and the served run.
fn serve_and_measure(scale: f64, n: u32) -> (Lat, Lat, ServeOutcome) {
    let opts = ServeOptions {
        listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
        time_scale: scale,
        log: false,
        ..ServeOptions::new()
    };
    let server = Server::bind(Twin::new(full_small_tlc()), opts).expect("bind");
    let uri = format!("nbd://{}/ssdtwin", server.local_addr().expect("TCP"));
    let stop = server.stopper();
    let handle = std::thread::spawn(move || server.run().expect("server runs"));
    let read = fio_qd1_lat(&uri, "randread", n);
    let write = fio_qd1_lat(&uri, "randwrite", n);
    stop.store(true, Ordering::SeqCst);
    (read, write, handle.join().expect("server thread"))
}

fn twin_lat(p: &PhaseResult, kind: IoKind) -> Lat {
    let d = &p.dirs[kind as usize];
    Lat { mean: d.mean_ns(), p50: d.percentile_ns(50.0) as f64 }
}

/// Whether the machine is quiet enough for means of wall-clock latencies
/// (load average below the number of CPUs): on a loaded machine the
/// scheduler's delays (milliseconds, now and then) dominate the means, not
/// the medians.
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
    if !fio_has_nbd() {
        return;
    }
    let n = 4000;
    // The transport's floor: the same client, nothing waits.
    let (floor_read, floor_write, _) = serve_and_measure(0.0, n);
    // Real time, replies sent the measured transport delay early.
    let (read, write, mut o) = serve_and_measure(1.0, n);
    let delays = o.counters.transport_delays_ns.lock().unwrap().clone();
    let twin = o.twin.finish(2);
    let (twin_read, twin_write) = (twin_lat(&twin, IoKind::Read), twin_lat(&twin, IoKind::Write));
    eprintln!(
        "fio QD1 lat: reads {read:?} vs the twin's {twin_read:?} (floor {floor_read:?}); buffered writes {write:?} \
         vs the larger of the floor {floor_write:?} and the twin's {twin_write:?}; transport delays {delays:?} ns"
    );
    assert!(twin_read.p50 > 2.0 * floor_read.p50, "reads hit the NAND and are slower than the transport");
    assert!(twin_write.p50 < floor_write.p50, "writes land in the buffer, faster than the transport");
    assert!(delays.iter().filter(|&&d| d > 0).count() >= 2, "the I/O sessions measured their delay: {delays:?}");
    let within = |got: f64, want: f64, tol: f64| (got - want).abs() <= tol * want;
    assert!(within(read.p50, twin_read.p50, 0.05), "reads' median: {read:?} vs the twin's {twin_read:?}");
    // Buffered writes: the drive answers in 7 µs, so what fio sees is the
    // transport's round trip, which on this 2-core machine is not one
    // number: the same test measured 16–63 µs medians from run to run at
    // time scale 1 (a sleeping thread's wake-up; the load average, which
    // lags, does not tell when), against a floor of 15–18 µs at time scale
    // 0 (and 48–62 µs in other runs). So the writes are held to what holds
    // in every run: never faster than the drive, and not held to the NAND
    // (well under the reads' latency).
    assert!(write.p50 >= 0.95 * twin_write.p50, "writes' median: {write:?} faster than the drive's {twin_write:?}");
    assert!(write.p50 < 0.5 * read.p50, "writes' median: {write:?} against reads' {read:?}");
    // Means: the reads' only. The buffered writes' target is the floor,
    // itself a wall-clock mean of another run, whose scheduler delays do
    // not repeat (measured on an idle machine: 27.7 µs against a floor of
    // 24.4 µs, medians 16.5 and 16.3 µs).
    if quiet_machine() {
        assert!(within(read.mean, twin_read.mean, 0.05), "reads' mean: {read:?} vs the twin's {twin_read:?}");
    } else {
        eprintln!("NOTE: the machine is loaded (load average ≥ CPUs): means not checked, medians are");
    }
}
