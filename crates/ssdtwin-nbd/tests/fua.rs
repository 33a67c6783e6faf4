//! A FUA write from a real client survives a power cut that takes the
//! unflushed write beside it: `qemu-io` (whose NBD client sends
//! `NBD_CMD_FLAG_FUA` for `write -f` once the server advertises it) writes
//! one page with FUA and another without, and sleeps before it would
//! close (a close flushes); the power is cut by the server's cutter (what
//! SIGUSR1 sets), the drive restarts through a saved image, and a new
//! `qemu-io` reads both pages back. The wire log shows the FUA flag was
//! sent and its audit finds the lost page unflushed by NBD's rules. The
//! fio and filesystem campaigns (`power.rs`, `fs_power.rs`) send no FUA
//! (fio's nbd engine and the kernel through a loop device do not), so
//! this is the one real client that does.
//!
//! Skipped with a printed reason without `qemu-io` (Debian: qemu-utils).

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ssdtwin::Drive;
use ssdtwin_nbd::proto::CMD_WRITE;
use ssdtwin_nbd::server::wire::{audit, WireEvent};
use ssdtwin_nbd::server::ReloadImage;
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};

mod common;
use common::small_spec;

/// Writes the server has replied to, from its wire log.
fn writes_replied(events: &[WireEvent]) -> usize {
    let writes: Vec<(u64, u64)> = events
        .iter()
        .filter_map(|e| match e {
            WireEvent::Request { conn, cookie, kind: CMD_WRITE, .. } => Some((*conn, *cookie)),
            _ => None,
        })
        .collect();
    events
        .iter()
        .filter(|e| matches!(e, WireEvent::Replied { conn, cookie } if writes.contains(&(*conn, *cookie))))
        .count()
}

/// `qemu-io` on the export with a write-back cache (its default,
/// write-through, would flush after every write).
fn qemu_io(uri: &str, cmds: &[&str]) -> Output {
    let mut c = Command::new("qemu-io");
    c.args(["-f", "raw", "-t", "writeback"]);
    for cmd in cmds {
        c.args(["-c", cmd]);
    }
    c.arg(uri).output().expect("qemu-io runs")
}

#[test]
fn a_fua_write_survives_the_cut_that_takes_the_unflushed_write_beside_it() {
    if Command::new("qemu-io").arg("--version").output().is_err() {
        eprintln!("SKIPPED: `qemu-io` is not installed (Debian: qemu-utils)");
        return;
    }
    let dir = tempfile::Builder::new().prefix("ssdtwin-fua-").tempdir().expect("temp dir");
    let spec = small_spec("page-mapped", &[]);
    let drive = Drive::new(spec.build("test drive").unwrap());
    let opts = ServeOptions {
        listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
        time_scale: 0.0,
        log: false,
        power_loss_by_signal: true,
        wire_log: true,
        reload: Some(ReloadImage { spec, origin: "test drive".into(), path: dir.path().join("restart.img") }),
        ..ServeOptions::new()
    };
    let server = Server::bind(Twin::new(drive), opts).expect("bind");
    let uri = format!("nbd://{}/ssdtwin", server.local_addr().unwrap());
    let (stop, cut, counters) = (server.stopper(), server.power_cutter(), server.counters());
    let handle = std::thread::spawn(move || server.run().expect("server runs"));
    // Page 0 with FUA, page 256 (1 MiB) without; then qemu-io waits, its
    // close's flush not yet sent.
    let writer = {
        let uri = uri.clone();
        std::thread::spawn(move || {
            qemu_io(&uri, &["write -f -P 0xaa 0 4k", "write -P 0xbb 1M 4k", "sleep 3000"]);
        })
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while writes_replied(&counters.wire.events()) < 2 {
        assert!(Instant::now() < deadline, "qemu-io's two writes were not answered");
        std::thread::sleep(Duration::from_millis(10));
    }
    cut.store(true, Ordering::SeqCst);
    while counters.power_cuts.load(Ordering::Relaxed) == 0 {
        assert!(Instant::now() < deadline, "the cut did not happen");
        std::thread::sleep(Duration::from_millis(10));
    }
    writer.join().unwrap();
    // After the restart: the FUA page is there, the other never was.
    let o = qemu_io(&uri, &["read -P 0xaa 0 4k", "read -P 0 1M 4k"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(!out.contains("Pattern verification failed"), "after the cut: {out}");
    assert_eq!(out.matches("read 4096/4096 bytes").count(), 2, "{out}");
    stop.store(true, Ordering::SeqCst);
    let o = handle.join().unwrap();
    assert_eq!(o.counters.power_cuts.load(Ordering::Relaxed), 1);
    assert_eq!(o.counters.lost_pages.load(Ordering::Relaxed), 1, "the unflushed page, and only it");
    let wire = audit(&o.counters.wire.events()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wire.fua_writes, 1, "qemu-io sent its write -f with NBD_CMD_FLAG_FUA: {wire:?}");
    assert_eq!((wire.cuts, wire.lost_pages, wire.lost_acknowledged), (1, 1, 1), "{wire:?}");
}
