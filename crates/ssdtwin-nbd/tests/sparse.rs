//! Structured replies and `NBD_CMD_BLOCK_STATUS` (`base:allocation`)
//! with real clients: `nbdinfo --map` and `qemu-img map` see the drive's
//! holes (logical pages never written or trimmed) exactly where they are,
//! `nbdcopy` and `qemu-img convert` copy a 16 GB drive holding 3 MiB of
//! data in seconds (they skip the holes) and the copy is right, and
//! `nbdcopy --no-extents` reads everything (read replies made of data and
//! hole chunks) and gets the same bytes.
//!
//! The clients come from Debian's `libnbd-bin` (nbdinfo, nbdcopy) and
//! `qemu-utils` (qemu-img); a missing one is skipped with a printed reason.

use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ssdtwin::{Drive, DriveSpec, IoKind};
use ssdtwin_nbd::server::ServeOutcome;
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};

const MIB: u64 = 1 << 20;

fn have(tool: &str) -> bool {
    let found = Command::new(tool).arg("--version").output().is_ok();
    if !found {
        eprintln!(
            "SKIPPED: `{tool}` is not installed (Debian: libnbd-bin for nbdinfo/nbdcopy, qemu-utils for qemu-img)"
        );
    }
    found
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("client runs");
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A generic TLC drive of `bytes`, holding data at 0..1 MiB except a trimmed
/// 256 KiB at 512 KiB, and 2 MiB at 5 GiB + 1 MiB; the rest never written.
/// Returns the twin and the data ranges `(start, end)`.
fn sparse_drive(bytes: u64) -> (Twin, Vec<(u64, u64)>) {
    let set = vec![format!("ftl.user_capacity_bytes={bytes}")];
    let spec = DriveSpec::load("generic-tlc-nvme", &set).expect("drive parses");
    let mut twin = Twin::new(Drive::new(spec.build("test drive").expect("valid")));
    let far = (bytes / 3) & !(MIB - 1);
    let pattern = |at: u64, n: u64| (at..at + n).map(|i| (i % 251) as u8 + 1).collect::<Vec<u8>>();
    let mut t = twin.write(0, 0, &pattern(0, MIB), false);
    t = twin.trim(t, 512 << 10, 256 << 10);
    twin.write(t, far, &pattern(far, 2 * MIB), false);
    (twin, vec![(0, 512 << 10), (768 << 10, MIB), (far, far + 2 * MIB)])
}

/// What the client must read at `at`.
fn expected_byte(at: u64, data: &[(u64, u64)]) -> u8 {
    if data.iter().any(|&(s, e)| (s..e).contains(&at)) {
        (at % 251) as u8 + 1
    } else {
        0
    }
}

struct Served {
    uri: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<ServeOutcome>,
}

fn serve(twin: Twin) -> Served {
    let opts = ServeOptions {
        listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
        time_scale: 0.0,
        log: false,
        ..ServeOptions::new()
    };
    let server = Server::bind(twin, opts).expect("bind");
    let uri = format!("nbd://{}/ssdtwin", server.local_addr().expect("TCP"));
    let stop = server.stopper();
    let handle = std::thread::spawn(move || server.run().expect("server runs"));
    Served { uri, stop, handle }
}

impl Served {
    fn stop(self) -> ServeOutcome {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().expect("server thread")
    }
}

/// The data extents a map lists: `(start, end)`, merged.
fn merged(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if last.1 == s => last.1 = e,
            _ => out.push((s, e)),
        }
    }
    out
}

#[test]
fn nbdinfo_and_qemu_img_map_see_the_holes() {
    if !have("nbdinfo") || !have("qemu-img") {
        return;
    }
    let size = 16_000_000_000u64;
    let (twin, data) = sparse_drive(size);
    let s = serve(twin);
    // nbdinfo --map --json: [{offset, length, type, description}], type 3
    // = hole,zero.
    let out = run(Command::new("nbdinfo").args(["--map", "--json", &s.uri]));
    let v: serde_json::Value = serde_json::from_str(&out).expect("nbdinfo JSON");
    let extents = v.as_array().expect("a list");
    let covered: u64 = extents.iter().map(|e| e["length"].as_u64().unwrap()).sum();
    assert_eq!(covered, size, "the map covers the export");
    let listed = |want_hole: bool| {
        merged(
            extents
                .iter()
                .filter(|e| (e["type"].as_u64().unwrap() & 1 == 1) == want_hole)
                .map(|e| (e["offset"].as_u64().unwrap(), e["offset"].as_u64().unwrap() + e["length"].as_u64().unwrap()))
                .collect(),
        )
    };
    assert_eq!(listed(false), data, "nbdinfo --map's allocated extents: {out}");
    // qemu-img map: data and zero flags per extent.
    let out = run(Command::new("qemu-img").args(["map", "--output=json", "-f", "raw", &s.uri]));
    let v: serde_json::Value = serde_json::from_str(&out).expect("qemu-img JSON");
    let qemu_data = merged(
        v.as_array()
            .expect("a list")
            .iter()
            .filter(|e| e["data"].as_bool() == Some(true))
            .map(|e| (e["start"].as_u64().unwrap(), e["start"].as_u64().unwrap() + e["length"].as_u64().unwrap()))
            .collect(),
    );
    assert_eq!(qemu_data, data, "qemu-img map's data extents: {out}");
    // Everything else is a hole that reads as zeros, and the map covers
    // the export.
    let extents = v.as_array().unwrap();
    assert!(
        extents.iter().filter(|e| e["data"].as_bool() == Some(false)).all(|e| e["zero"].as_bool() == Some(true)),
        "qemu-img map's holes read as zeros: {out}"
    );
    assert_eq!(extents.iter().map(|e| e["length"].as_u64().unwrap()).sum::<u64>(), size, "{out}");
    s.stop();
}

/// Check a copy of the drive: right bytes where there is data, zeros
/// elsewhere (sampled every 64 KiB and around each data range), and
/// sparse: allocated no more than a few times the data.
fn check_copy(path: &std::path::Path, size: u64, data: &[(u64, u64)]) {
    use std::io::{Read, Seek, SeekFrom};
    let meta = std::fs::metadata(path).expect("copy exists");
    assert_eq!(meta.len(), size, "{path:?} size");
    let allocated = meta.blocks() * 512;
    assert!(allocated < 64 * MIB, "{path:?} is sparse: {allocated} bytes allocated");
    let mut f = std::fs::File::open(path).expect("open copy");
    let mut buf = vec![0u8; 4096];
    let mut probes: Vec<u64> = (0..size / (64 * MIB)).map(|i| i * 64 * MIB).collect();
    for &(s, e) in data {
        probes.extend([s.saturating_sub(4096), s, ((s + e) / 2) & !4095, e - 4096, e]);
    }
    for at in probes.into_iter().filter(|&a| a + 4096 <= size) {
        f.seek(SeekFrom::Start(at)).unwrap();
        f.read_exact(&mut buf).unwrap();
        for (i, &b) in buf.iter().enumerate() {
            assert_eq!(b, expected_byte(at + i as u64, data), "{path:?} byte {}", at + i as u64);
        }
    }
}

#[test]
fn nbdcopy_and_qemu_img_convert_skip_the_holes_of_a_16_gb_drive() {
    if !have("nbdcopy") || !have("qemu-img") {
        return;
    }
    let size = 16_000_000_000u64;
    let (twin, data) = sparse_drive(size);
    let s = serve(twin);
    let dir = tempfile::Builder::new().prefix("ssdtwin-sparse-").tempdir().expect("temp dir");
    let copy = dir.path().join("nbdcopy.img");
    std::fs::File::create(&copy).unwrap().set_len(size).unwrap();
    let started = Instant::now();
    run(Command::new("nbdcopy").args([&s.uri, copy.to_str().unwrap()]));
    let nbdcopy_took = started.elapsed();
    check_copy(&copy, size, &data);
    std::fs::remove_file(&copy).unwrap();
    let converted = dir.path().join("qemu.img");
    let started = Instant::now();
    run(Command::new("qemu-img").args(["convert", "-f", "raw", "-O", "raw", &s.uri, converted.to_str().unwrap()]));
    let qemu_took = started.elapsed();
    check_copy(&converted, size, &data);
    let mut o = s.stop();
    // Reading 16 GB through the twin would take minutes; the holes are
    // skipped, so only the data is read.
    let read = o.twin.finish(1).dirs[IoKind::Read as usize].bytes;
    eprintln!("nbdcopy {nbdcopy_took:?}, qemu-img convert {qemu_took:?}; {read} bytes read from the drive");
    assert!(read <= 4 * 3 * MIB, "only the data was read: {read} bytes");
    assert!(nbdcopy_took < Duration::from_secs(30) && qemu_took < Duration::from_secs(30));
}

#[test]
fn reads_across_holes_come_back_as_data_and_hole_chunks() {
    if !have("nbdcopy") {
        return;
    }
    // 48 MiB: the data at 0..1 MiB (with its trimmed hole) and at 16 MiB.
    let size = 48 * MIB;
    let (twin, data) = sparse_drive(size);
    let s = serve(twin);
    let dir = tempfile::Builder::new().prefix("ssdtwin-sparse-").tempdir().expect("temp dir");
    let copy = dir.path().join("all.img");
    std::fs::File::create(&copy).unwrap().set_len(size).unwrap();
    // Without extents nbdcopy reads the whole drive in 256 KiB requests,
    // some across data and holes; it writes only what is not zero.
    run(Command::new("nbdcopy").args(["--no-extents", "--request-size=262144", &s.uri, copy.to_str().unwrap()]));
    check_copy(&copy, size, &data);
    let mut o = s.stop();
    let read = o.twin.finish(1).dirs[IoKind::Read as usize].bytes;
    assert_eq!(read, size, "every byte was read through the drive");
}
