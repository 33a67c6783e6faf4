//! Real NBD clients against the server, in process, on loopback (port 0)
//! or a Unix socket: `nbdinfo` (handshake, size, block sizes), `qemu-img`
//! (convert a random image onto the export and back, byte-identical, on a
//! drive small enough that GC runs), `fio` with `ioengine=nbd` and
//! `verify=crc32c` (page map, SLC cache and hybrid drives, written
//! several times over), plus hand-written bad clients.
//!
//! A client that is not installed is skipped with a printed reason. The
//! Debian packages: `qemu-utils` (qemu-img), `libnbd-bin` (nbdinfo,
//! nbdcopy), `fio`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ssdtwin::{Drive, DriveModel, DriveSpec, DriveState};
use ssdtwin_nbd::proto::*;
use ssdtwin_nbd::server::ServeOutcome;
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};
use tempfile::TempDir;

mod common;
use common::{fio_has_nbd, small_model, small_spec};

fn model(preset: &str, set: &[&str]) -> DriveModel {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let spec = DriveSpec::load(preset, &set).expect("test drive parses");
    spec.build("test drive").expect("test drive is valid")
}

fn small_tlc() -> DriveModel {
    small_model("page-mapped", &[])
}

fn small_660p() -> DriveModel {
    small_model("SLC-cached", &[])
}

fn small_hybrid() -> DriveModel {
    small_model("hybrid", &[])
}

/// A server running in a thread.
struct Running {
    addr: Option<SocketAddr>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<ServeOutcome>>,
}

impl Running {
    fn start(m: DriveModel, scale: f64, listen: Listen) -> Running {
        Running::start_drive(Drive::new(m), scale, listen)
    }

    fn start_drive(drive: Drive, scale: f64, listen: Listen) -> Running {
        Running::start_twin(Twin::new(drive), scale, listen)
    }

    /// A loaded twin, served as fast as possible.
    fn start_drive_twin(twin: Twin, listen: Listen) -> Running {
        Running::start_twin(twin, 0.0, listen)
    }

    fn start_twin(twin: Twin, scale: f64, listen: Listen) -> Running {
        let opts = ServeOptions { listen, time_scale: scale, log: false, ..ServeOptions::new() };
        let server = Server::bind(twin, opts).expect("bind");
        let addr = server.local_addr();
        let stop = server.stopper();
        let handle = std::thread::spawn(move || server.run().expect("server runs"));
        Running { addr, stop, handle: Some(handle) }
    }

    fn tcp(m: DriveModel, scale: f64) -> Running {
        Running::start(m, scale, Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))))
    }

    fn uri(&self) -> String {
        format!("nbd://{}/ssdtwin", self.addr.expect("TCP"))
    }

    fn stop(mut self) -> ServeOutcome {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.take().expect("running").join().expect("server thread")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn have(tool: &str) -> bool {
    let found = Command::new(tool).arg("--version").output().is_ok();
    if !found {
        eprintln!(
            "SKIPPED: `{tool}` is not installed (Debian: qemu-utils for qemu-img, libnbd-bin for nbdinfo/nbdcopy, fio)"
        );
    }
    found
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("client runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An empty temporary directory of the test's own, removed with what it
/// holds when dropped (also when the test panics).
fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("ssdtwin-nbd-test-").tempdir().expect("temp dir")
}

/// The path of `name` in the temporary directory `scratch`.
fn tmp(scratch: &TempDir, name: &str) -> PathBuf {
    scratch.path().join(name)
}

#[test]
fn nbdinfo_sees_size_block_sizes_and_flags() {
    if !have("nbdinfo") {
        return;
    }
    let m = small_tlc();
    let size = m.user_lpns as u64 * 4096;
    let s = Running::tcp(m, 0.0);
    let out = run(Command::new("nbdinfo").arg("--json").arg(s.uri()));
    let v: serde_json::Value = serde_json::from_str(&out).expect("nbdinfo JSON");
    let e = &v["exports"][0];
    assert_eq!(e["export-size"], size);
    assert_eq!(e["block_size_minimum"], 1);
    assert_eq!(e["block_size_preferred"], 4096);
    assert_eq!(e["block_size_maximum"], MAX_PAYLOAD);
    for f in ["can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn"] {
        assert_eq!(e[f], true, "{f}");
    }
    let list = run(Command::new("nbdinfo").arg("--list").arg(s.uri()));
    assert!(list.contains("export=\"ssdtwin\""), "{list}");
    let o = s.stop();
    assert_eq!(o.counters.violations.load(Ordering::Relaxed), 0);
}

#[test]
fn nbdinfo_over_a_unix_socket() {
    if !have("nbdinfo") {
        return;
    }
    let scratch = temp_dir();
    let path = tmp(&scratch, "serve.sock");
    let _ = std::fs::remove_file(&path);
    let s = Running::start(small_tlc(), 0.0, Listen::Unix(path.clone()));
    let out = run(Command::new("nbdinfo").arg("--size").arg(format!("nbd+unix:///ssdtwin?socket={}", path.display())));
    assert_eq!(out.trim(), "83886080");
    s.stop();
    assert!(!path.exists(), "the socket is removed at stop");
}

fn random_file(path: &Path, bytes: usize, seed: u64) {
    let mut data = vec![0u8; bytes];
    Pcg64Mcg::seed_from_u64(seed).fill(&mut data[..]);
    // Some zero runs, as real images have.
    data[bytes / 3..bytes / 3 + (1 << 20)].fill(0);
    std::fs::write(path, data).expect("write image");
}

#[test]
fn qemu_img_convert_round_trip_through_gc() {
    if !have("qemu-img") {
        return;
    }
    // A drive in steady state (every block a mix of valid and stale
    // pages), so that writing the image makes GC move data.
    let mut drive = Drive::new(small_tlc());
    DriveState::Steady.apply_fast(&mut drive, 1);
    let s = Running::start_drive(drive, 0.0, Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))));
    let scratch = temp_dir();
    let img = tmp(&scratch, "rand.img");
    let back = tmp(&scratch, "back.img");
    // Three different images onto an 80 MiB drive with 16 MiB spare:
    // the later ones are written over the earlier, so GC moves data.
    for seed in 0..3 {
        random_file(&img, 80 << 20, seed);
        run(Command::new("qemu-img").args(["convert", "-n", "-f", "raw", "-O", "raw"]).arg(&img).arg(s.uri()));
        let _ = std::fs::remove_file(&back);
        run(Command::new("qemu-img").args(["convert", "-f", "raw", "-O", "raw"]).arg(s.uri()).arg(&back));
        assert!(
            std::fs::read(&img).unwrap() == std::fs::read(&back).unwrap(),
            "pass {seed}: the image came back different"
        );
        run(Command::new("qemu-img").args(["compare", "-f", "raw", "-F", "raw"]).arg(&img).arg(s.uri()));
    }
    let o = s.stop();
    let c = o.twin.device().drive().ftl().counters();
    assert!(c.gc_slots_moved > 0, "GC ran: {c:?}");
    assert_eq!(o.counters.errors.load(Ordering::Relaxed), 0);
    let _ = std::fs::remove_file(&img);
    let _ = std::fs::remove_file(&back);
}

/// fio overwrites a full drive (every page mapped by the `full` state)
/// with `passes` × its capacity of random writes at random offsets (with
/// replacement, so that blocks hold a mix of valid and stale pages and GC
/// has to move data), verifying every block's last write with crc32c.
fn fio_verify(m: DriveModel, passes: u32, bs: &str) -> ServeOutcome {
    let size = m.user_lpns as u64 * 4096;
    let mut drive = Drive::new(m);
    DriveState::Filled(100.0).apply_fast(&mut drive, 1);
    let s = Running::start_drive(drive, 0.0, Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))));
    let out = run(Command::new("fio").args([
        "--name=verify",
        "--ioengine=nbd",
        &format!("--uri={}", s.uri()),
        "--rw=randwrite",
        "--norandommap",
        &format!("--bs={bs}"),
        "--iodepth=16",
        &format!("--io_size={}", size * passes as u64),
        "--verify=crc32c",
        "--verify_fatal=1",
        "--verify_state_save=0",
        "--output-format=json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out[out.find('{').expect("fio JSON")..]).expect("fio JSON");
    assert_eq!(v["jobs"][0]["error"], 0, "{out}");
    assert!(v["jobs"][0]["read"]["io_bytes"].as_u64().unwrap() > 0, "fio verified: {out}");
    s.stop()
}

#[test]
fn fio_verify_on_a_page_mapped_drive() {
    if !fio_has_nbd() {
        return;
    }
    let o = fio_verify(small_tlc(), 5, "4k");
    let c = o.twin.device().drive().ftl().counters();
    assert!(c.gc_slots_moved > 20_480, "GC moved more than the drive holds: {c:?}");
    assert_eq!(o.counters.errors.load(Ordering::Relaxed), 0);
}

#[test]
fn fio_verify_on_an_slc_cached_drive() {
    if !fio_has_nbd() {
        return;
    }
    let o = fio_verify(small_660p(), 2, "16k");
    let c = o.twin.device().drive().ftl().counters();
    assert!(c.fold_slots_moved > 65_536, "folding moved more than the drive holds: {c:?}");
}

#[test]
fn fio_verify_on_a_hybrid_drive() {
    if !fio_has_nbd() {
        return;
    }
    let o = fio_verify(small_hybrid(), 2, "4k");
    let c = o.twin.device().drive().ftl().counters();
    assert!(c.merge_slots_copied > 7168, "merges copied more than the drive holds: {c:?}");
}

/// A minimal client for the bad-client tests.
fn greet(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut g = [0u8; 18];
    s.read_exact(&mut g).expect("greeting");
    assert_eq!(&g[..16], b"NBDMAGICIHAVEOPT");
    s
}

fn go(s: &mut TcpStream) {
    s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    let mut body = 0u32.to_be_bytes().to_vec();
    body.extend_from_slice(&0u16.to_be_bytes());
    let mut o = IHAVEOPT.to_be_bytes().to_vec();
    o.extend_from_slice(&OPT_GO.to_be_bytes());
    o.extend_from_slice(&(body.len() as u32).to_be_bytes());
    o.extend_from_slice(&body);
    s.write_all(&o).unwrap();
    // Replies until ACK.
    loop {
        let mut h = [0u8; 20];
        s.read_exact(&mut h).unwrap();
        let kind = u32::from_be_bytes(h[12..16].try_into().unwrap());
        let len = u32::from_be_bytes(h[16..20].try_into().unwrap());
        let mut d = vec![0u8; len as usize];
        s.read_exact(&mut d).unwrap();
        if kind == REP_ACK {
            return;
        }
        assert_eq!(kind, REP_INFO);
    }
}

fn request_read(s: &mut TcpStream, offset: u64, out: &mut [u8]) -> u32 {
    let r = Request { flags: 0, kind: CMD_READ, cookie: 43, offset, len: out.len() as u32 };
    s.write_all(&encode_request(&r)).unwrap();
    let mut h = [0u8; 16];
    s.read_exact(&mut h).unwrap();
    let err = u32::from_be_bytes(h[4..8].try_into().unwrap());
    if err == 0 {
        s.read_exact(out).unwrap();
    }
    err
}

fn request(s: &mut TcpStream, kind: u16, offset: u64, len: u32, data: &[u8]) -> u32 {
    let r = Request { flags: 0, kind, cookie: 42, offset, len };
    s.write_all(&encode_request(&r)).unwrap();
    s.write_all(data).unwrap();
    let mut h = [0u8; 16];
    s.read_exact(&mut h).unwrap();
    assert_eq!(u64::from_be_bytes(h[8..16].try_into().unwrap()), 42);
    let err = u32::from_be_bytes(h[4..8].try_into().unwrap());
    if err == 0 && kind == CMD_READ {
        let mut d = vec![0u8; len as usize];
        s.read_exact(&mut d).unwrap();
    }
    err
}

#[test]
fn bad_requests_get_errors_and_the_session_goes_on() {
    let s = Running::tcp(small_tlc(), 0.0);
    let addr = s.addr.unwrap();
    let mut c = greet(addr);
    go(&mut c);
    let size = 83886080u64;
    assert_eq!(request(&mut c, CMD_READ, size - 4096, 8192, &[]), EINVAL, "beyond the end");
    assert_eq!(request(&mut c, CMD_READ, u64::MAX - 100, 4096, &[]), EINVAL, "offset overflow");
    assert_eq!(
        request(&mut c, CMD_WRITE, size - 4096, 8192, &[7; 8192]),
        EINVAL,
        "write beyond the end (payload consumed)"
    );
    assert_eq!(request(&mut c, 99, 0, 0, &[]), EINVAL, "unknown command");
    assert_eq!(request(&mut c, CMD_READ, 0, MAX_PAYLOAD + 512, &[]), EINVAL, "read too large");
    // Byte-granular requests (minimum block size 1): read-modify-write.
    assert_eq!(request(&mut c, CMD_WRITE, 0, 4096, &[1; 4096]), 0);
    assert_eq!(request(&mut c, CMD_WRITE, 4093, 7, &[9; 7]), 0);
    let mut back = [0u8; 8192];
    assert_eq!(request_read(&mut c, 0, &mut back), 0);
    assert!(back[..4093].iter().all(|&b| b == 1) && back[4093..4100].iter().all(|&b| b == 9));
    assert!(back[4100..].iter().all(|&b| b == 0));
    assert_eq!(request(&mut c, CMD_FLUSH, 0, 0, &[]), 0);
    assert_eq!(request(&mut c, CMD_TRIM, 0, 1 << 20, &[]), 0);
    // An oversized write payload ends the session (not allocated).
    let r = Request { flags: 0, kind: CMD_WRITE, cookie: 1, offset: 0, len: u32::MAX };
    c.write_all(&encode_request(&r)).unwrap();
    let mut b = [0u8; 1];
    assert!(matches!(c.read(&mut b), Ok(0) | Err(_)), "disconnected");
    // The server still serves others.
    let mut c2 = greet(addr);
    go(&mut c2);
    assert_eq!(request(&mut c2, CMD_READ, 0, 4096, &[]), 0);
    let disc = Request { flags: 0, kind: CMD_DISC, cookie: 2, offset: 0, len: 0 };
    c2.write_all(&encode_request(&disc)).unwrap();
    assert!(matches!(c2.read(&mut b), Ok(0) | Err(_)), "NBD_CMD_DISC closes the session");
    let o = s.stop();
    assert!(o.counters.violations.load(Ordering::Relaxed) >= 1);
}

#[test]
fn fuzzed_handshakes_and_requests_leave_the_server_up() {
    let s = Running::tcp(small_tlc(), 0.0);
    let addr = s.addr.unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(7);
    let valid_start: Vec<u8> = {
        let mut v = (FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes().to_vec();
        v.extend_from_slice(&IHAVEOPT.to_be_bytes());
        v.extend_from_slice(&OPT_GO.to_be_bytes());
        v.extend_from_slice(&6u32.to_be_bytes());
        v.extend_from_slice(&[0; 6]);
        let r = Request { flags: 0, kind: CMD_READ, cookie: 1, offset: 0, len: 4096 };
        v.extend_from_slice(&encode_request(&r));
        v
    };
    for i in 0..1500 {
        let Ok(mut c) = TcpStream::connect(addr) else { panic!("connection {i} refused") };
        c.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        // A valid prefix with random mutations, or plain noise.
        let mut msg = if rng.random_range(0..3) == 0 {
            (0..rng.random_range(0..200)).map(|_| rng.random()).collect::<Vec<u8>>()
        } else {
            let mut m = valid_start.clone();
            for _ in 0..rng.random_range(1..4) {
                let at = rng.random_range(0..m.len());
                m[at] = rng.random();
            }
            m.truncate(rng.random_range(1..=m.len()));
            m
        };
        if rng.random_range(0..4) == 0 {
            msg.extend((0..rng.random_range(0..64)).map(|_| rng.random::<u8>()));
        }
        let _ = c.write_all(&msg);
        let _ = c.shutdown(std::net::Shutdown::Write);
        let mut sink = [0u8; 4096];
        let mut total = 0;
        while let Ok(n) = c.read(&mut sink) {
            if n == 0 || total > 1 << 20 {
                break;
            }
            total += n;
        }
    }
    // Still serving properly.
    let mut c = greet(addr);
    go(&mut c);
    assert_eq!(request(&mut c, CMD_WRITE, 0, 4096, &[5; 4096]), 0);
    assert_eq!(request(&mut c, CMD_READ, 0, 4096, &[]), 0);
    drop(c);
    let o = s.stop();
    assert!(o.counters.connections.load(Ordering::Relaxed) > 1500);
    // Memory stayed bounded: the store holds what was written, no more.
    assert!(o.twin.store().pool_bytes() < 64 << 20);
}

#[test]
fn time_scale_zero_gives_the_stats_of_ssdtwin_run() {
    if !fio_has_nbd() {
        return;
    }
    use ssdtwin::run::workload::{IoSpec, Job, Phase, RwPattern};
    use ssdtwin::{IoKind, Simulator};
    // The same command sequence both ways: 16 MiB of sequential 4 KiB
    // writes at queue depth 1, then the same span read back.
    let size = 16u64 << 20;
    let s = Running::tcp(small_tlc(), 0.0);
    for rw in ["write", "read"] {
        run(Command::new("fio").args([
            "--name=seq",
            "--ioengine=nbd",
            &format!("--uri={}", s.uri()),
            &format!("--rw={rw}"),
            "--bs=4k",
            "--iodepth=1",
            &format!("--size={size}"),
        ]));
    }
    let mut o = s.stop();
    let served = o.twin.finish(1);
    let mut sim = Simulator::new(Drive::new(small_tlc()));
    let phases: Vec<Phase> = [RwPattern::Write, RwPattern::Read]
        .into_iter()
        .map(|rw| {
            let mut p = IoSpec::new("seq", rw);
            p.size = Some(size);
            Phase::Io(p)
        })
        .collect();
    let runs = sim.run_job(&Job { phases });
    for (kind, r) in [(IoKind::Write, &runs[0]), (IoKind::Read, &runs[1])] {
        let (a, b) = (&served.dirs[kind as usize], &r.dirs[kind as usize]);
        assert_eq!(a.ios, b.ios, "{kind:?} commands");
        assert_eq!(a.bytes, b.bytes, "{kind:?} bytes");
        assert_eq!(a.lat_max_ns, b.lat_max_ns, "{kind:?} max latency");
        assert!((a.mean_ns() - b.mean_ns()).abs() < 1e-6 * b.mean_ns(), "{kind:?} mean latency");
    }
    let run_counters = runs[0].counters.plus(&runs[1].counters);
    assert_eq!(served.counters, run_counters);
}

fn which(tool: &str) -> bool {
    let found = ["/usr/bin", "/usr/sbin", "/bin", "/sbin"].iter().any(|d| Path::new(d).join(tool).exists());
    if !found {
        eprintln!("SKIPPED: `{tool}` is not installed (Debian: nbdfuse, e2fsprogs, fuse3)");
    }
    found
}

#[test]
fn ext4_on_nbdfuse() {
    if !(which("nbdfuse") && which("mkfs.ext4") && which("debugfs") && which("e2fsck")) {
        return;
    }
    if !Path::new("/dev/fuse").exists() {
        eprintln!("SKIPPED: no /dev/fuse");
        return;
    }
    let m = model(
        "generic-tlc-nvme",
        &[
            "geometry.channels=2",
            "geometry.dies_per_channel=2",
            "geometry.blocks_per_plane=64",
            "geometry.pages_per_block=48",
            "ftl.user_capacity_bytes=134217728",
        ],
    );
    let s = Running::tcp(m, 0.0);
    let scratch = temp_dir();
    let dir = tmp(&scratch, "fuse");
    std::fs::create_dir_all(&dir).unwrap();
    let mut fuse = Command::new("nbdfuse").arg(&dir).arg(s.uri()).spawn().expect("nbdfuse starts");
    let file = dir.join("nbd");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !file.exists() && std::time::Instant::now() < deadline {
        if let Ok(Some(st)) = fuse.try_wait() {
            eprintln!("SKIPPED: nbdfuse could not mount ({st}): FUSE not permitted here?");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let unmount = |fuse: &mut std::process::Child| {
        let ok = Command::new("fusermount3").arg("-u").arg(&dir).status().is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg(&dir).status();
        }
        let _ = fuse.kill();
        let _ = fuse.wait();
    };
    let result = std::panic::catch_unwind(|| {
        assert!(file.exists(), "nbdfuse exposed the export");
        run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&file));
        let blob = tmp(&scratch, "blob.bin");
        random_file(&blob, 5 << 20, 11);
        let hello = tmp(&scratch, "hello.txt");
        std::fs::write(&hello, "hello from the twin\n").unwrap();
        for (src, name) in [(&blob, "blob.bin"), (&hello, "hello.txt")] {
            let out = Command::new("debugfs")
                .arg("-w")
                .arg("-R")
                .arg(format!("write {} {name}", src.display()))
                .arg(&file)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && !err.contains("ext2fs_close"), "debugfs write: {err}");
        }
        for (src, name) in [(&blob, "blob.bin"), (&hello, "hello.txt")] {
            let back = tmp(&scratch, &format!("{name}.back"));
            let _ = std::fs::remove_file(&back);
            run(Command::new("debugfs").arg("-R").arg(format!("dump {name} {}", back.display())).arg(&file));
            assert!(std::fs::read(src).unwrap() == std::fs::read(&back).unwrap(), "{name} read back differs");
        }
        let fsck = Command::new("e2fsck").args(["-f", "-n"]).arg(&file).output().unwrap();
        assert!(
            fsck.status.success(),
            "e2fsck -f -n: {}{}",
            String::from_utf8_lossy(&fsck.stdout),
            String::from_utf8_lossy(&fsck.stderr)
        );
    });
    unmount(&mut fuse);
    s.stop();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn power_loss_after_n_requests_keeps_flushed_data_only() {
    let opts = ServeOptions {
        listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
        time_scale: 0.0,
        log: false,
        power_loss_after: Some(5),
        ..ServeOptions::new()
    };
    let server = Server::bind(Twin::new(Drive::new(small_tlc())), opts).expect("bind");
    let addr = server.local_addr().unwrap();
    let stop = server.stopper();
    let handle = std::thread::spawn(move || server.run().expect("server runs"));
    let mut c = greet(addr);
    go(&mut c);
    assert_eq!(request(&mut c, CMD_WRITE, 0, 65536, &[1; 65536]), 0); // 1
    assert_eq!(request(&mut c, CMD_FLUSH, 0, 0, &[]), 0); // 2
    assert_eq!(request(&mut c, CMD_WRITE, 0, 4096, &[2; 4096]), 0); // 3: lost
    assert_eq!(request(&mut c, CMD_WRITE, 1 << 20, 4096, &[3; 4096]), 0); // 4: lost
                                                                          // 5: the power goes; no reply, the connection drops.
    let r = Request { flags: 0, kind: CMD_READ, cookie: 5, offset: 0, len: 4096 };
    c.write_all(&encode_request(&r)).unwrap();
    let mut b = [0u8; 16];
    assert!(matches!(c.read(&mut b), Ok(0) | Err(_)), "dropped at the power cut");
    // After the restart: the flushed data, none of the lost writes.
    let mut c = greet(addr);
    go(&mut c);
    let mut a = vec![0u8; 65536];
    assert_eq!(request_read(&mut c, 0, &mut a), 0);
    assert!(a.iter().all(|&x| x == 1), "flushed data survives the cut, the later overwrite does not");
    let mut p = vec![9u8; 4096];
    assert_eq!(request_read(&mut c, 1 << 20, &mut p), 0);
    assert!(p.iter().all(|&x| x == 0), "the unflushed new page is gone");
    drop(c);
    stop.store(true, Ordering::SeqCst);
    let o = handle.join().unwrap();
    assert_eq!(o.counters.power_cuts.load(Ordering::Relaxed), 1);
    assert_eq!(o.counters.lost_pages.load(Ordering::Relaxed), 2);
}

#[test]
fn a_client_that_never_reads_does_not_block_the_stop() {
    let s = Running::tcp(small_tlc(), 0.0);
    let mut c = greet(s.addr.unwrap());
    go(&mut c);
    c.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    // Ask for far more reply data than the socket buffers hold; read none.
    for i in 0..256u64 {
        let r = Request { flags: 0, kind: CMD_READ, cookie: i, offset: 0, len: 1 << 20 };
        if c.write_all(&encode_request(&r)).is_err() {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    let started = std::time::Instant::now();
    s.stop();
    assert!(started.elapsed() < Duration::from_secs(10), "stopped in {:?}", started.elapsed());
}

/// Check 4 through a reload: write, flush, write more, cut the power,
/// save the drive, load it into a new server, read. With a write-back
/// buffer and no power-loss protection the writes after the flush are
/// gone and the flushed data is there; with power-loss protection or a
/// write-through drive nothing acknowledged is lost.
#[test]
fn a_power_cut_then_save_and_load_keeps_flushed_data_only() {
    let scratch = temp_dir();
    for (extra, plp, lost) in [
        ("controller.cores=2", false, true),
        ("controller.cores=2", true, false),
        ("controller.write_cache=write-through", false, false),
    ] {
        let spec = small_spec("page-mapped", &[extra]);
        let drive = Drive::new(spec.build("test drive").unwrap());
        let opts = ServeOptions {
            listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
            time_scale: 0.0,
            log: false,
            power_loss_after: Some(5),
            plp,
            ..ServeOptions::new()
        };
        let server = Server::bind(Twin::new(drive), opts).expect("bind");
        let addr = server.local_addr().unwrap();
        let stop = server.stopper();
        let handle = std::thread::spawn(move || server.run().expect("server runs"));
        let mut c = greet(addr);
        go(&mut c);
        assert_eq!(request(&mut c, CMD_WRITE, 0, 65536, &[1; 65536]), 0);
        assert_eq!(request(&mut c, CMD_FLUSH, 0, 0, &[]), 0);
        assert_eq!(request(&mut c, CMD_WRITE, 0, 4096, &[2; 4096]), 0);
        assert_eq!(request(&mut c, CMD_WRITE, 1 << 20, 4096, &[3; 4096]), 0);
        let r = Request { flags: 0, kind: CMD_READ, cookie: 5, offset: 0, len: 4096 };
        c.write_all(&encode_request(&r)).unwrap();
        let mut b = [0u8; 16];
        assert!(matches!(c.read(&mut b), Ok(0) | Err(_)), "dropped at the power cut");
        drop(c);
        stop.store(true, Ordering::SeqCst);
        let mut o = handle.join().unwrap();
        let path = tmp(&scratch, &format!("cut-{plp}-{}.img", extra.len()));
        ssdtwin_nbd::image::save(&mut o.twin, &spec, "test drive", &path).expect("saved");
        drop(o);
        let loaded = ssdtwin_nbd::image::load(&path).expect("loaded");
        let s = Running::start_drive_twin(loaded.twin, Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))));
        let mut c = greet(s.addr.unwrap());
        go(&mut c);
        let mut a = vec![0u8; 65536];
        assert_eq!(request_read(&mut c, 0, &mut a), 0);
        let mut p = vec![9u8; 4096];
        assert_eq!(request_read(&mut c, 1 << 20, &mut p), 0);
        if lost {
            assert!(a.iter().all(|&x| x == 1), "{extra}: flushed data survives, the later overwrite does not");
            assert!(p.iter().all(|&x| x == 0), "{extra}: the unflushed new page is gone");
        } else {
            assert!(a[..4096].iter().all(|&x| x == 2) && a[4096..].iter().all(|&x| x == 1), "{extra} plp={plp}");
            assert!(p.iter().all(|&x| x == 3), "{extra} plp={plp}: nothing acknowledged is lost");
        }
        drop(c);
        s.stop();
        std::fs::remove_file(&path).unwrap();
    }
}
