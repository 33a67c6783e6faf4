//! TLS with pre-shared keys (feature `tls-psk`, OpenSSL), as nbdkit's
//! `--tls-psk`: GnuTLS clients — libnbd's nbdinfo with a `tls-psk-file`
//! URI, qemu-img with `--object tls-creds-psk` — reach a server that
//! requires TLS with the right key; a wrong key and a client without TLS
//! are refused; the data round-trips.
//!
//! Run by the test command with `--features tls-psk` (scripts/test.sh);
//! the clients come from Debian's `libnbd-bin` and `qemu-utils`. A missing
//! tool skips the test with a reason.
#![cfg(feature = "tls-psk")]

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::Ordering;

use ssdtwin::{Drive, DriveSpec};
use ssdtwin_nbd::server::{load_psk_file, ServeOutcome, TlsMode};
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};

fn have(tool: &str, arg: &str) -> bool {
    let found = Command::new(tool).arg(arg).output().is_ok();
    if !found {
        eprintln!("SKIPPED: `{tool}` is not installed (Debian: libnbd-bin, qemu-utils)");
    }
    found
}

fn run(cmd: &mut Command) -> std::process::Output {
    cmd.output().expect("tool runs")
}

/// A psktool-format key file: `user:hexkey`, a 32-byte key drawn from
/// `seed`.
fn key_file(path: &Path, user: &str, seed: u8) {
    let hex: String = (0..32u8).map(|i| format!("{:02x}", i.wrapping_mul(37).wrapping_add(seed))).collect();
    std::fs::write(path, format!("{user}:{hex}\n")).unwrap();
}

struct Served {
    addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<ServeOutcome>,
}

fn serve_psk(keys: &Path) -> Served {
    let set = vec!["ftl.user_capacity_bytes=67108864".to_string()];
    let spec = DriveSpec::load("generic-tlc-nvme", &set).expect("drive parses");
    let twin = Twin::new(Drive::new(spec.build("test drive").expect("valid")));
    let opts = ServeOptions {
        listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
        time_scale: 0.0,
        log: false,
        tls: TlsMode::Require,
        tls_psk: Some(load_psk_file(keys).expect("keys load")),
        ..ServeOptions::new()
    };
    let server = Server::bind(twin, opts).expect("bind");
    let addr = server.local_addr().expect("TCP");
    let stop = server.stopper();
    let handle = std::thread::spawn(move || server.run().expect("server runs"));
    Served { addr, stop, handle }
}

#[test]
fn gnutls_clients_reach_the_drive_with_the_right_key_only() {
    if !have("nbdinfo", "--version") {
        return;
    }
    let dir = tempfile::Builder::new().prefix("ssdtwin-psk-").tempdir().unwrap();
    let keys = dir.path().join("keys.psk");
    let wrong = dir.path().join("wrong.psk");
    key_file(&keys, "alice", 1);
    key_file(&wrong, "alice", 2);
    let s = serve_psk(&keys);
    let uri = |user: &str, file: &Path| format!("nbds://{user}@{}/ssdtwin?tls-psk-file={}", s.addr, file.display());

    let out = run(Command::new("nbdinfo").args(["--size", &uri("alice", &keys)]));
    assert!(out.status.success(), "nbdinfo with the key: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "67108864");
    let out = run(Command::new("nbdinfo").args(["--size", &uri("alice", &wrong)]));
    assert!(!out.status.success(), "a wrong key must not get in");
    let out = run(Command::new("nbdinfo").args(["--size", &format!("nbd://{}/ssdtwin", s.addr)]));
    assert!(!out.status.success(), "a client without TLS must be refused");

    if have("qemu-img", "--version") {
        // qemu's tls-creds-psk reads `keys.psk` in its dir.
        let img = dir.path().join("disk.img");
        let back = dir.path().join("back.img");
        let data: Vec<u8> = (0..4u32 << 20).map(|i| (i.wrapping_mul(2654435761) >> 11) as u8).collect();
        std::fs::write(&img, &data).unwrap();
        let object = format!("tls-creds-psk,id=tls0,endpoint=client,dir={},username=alice", dir.path().display());
        let target = format!(
            "driver=raw,file.driver=nbd,file.host=127.0.0.1,file.port={},file.export=ssdtwin,file.tls-creds=tls0",
            s.addr.port()
        );
        let out = run(Command::new("qemu-img")
            .args(["convert", "-n", "--object", &object, "-f", "raw", img.to_str().unwrap()])
            .args(["--target-image-opts", &target]));
        assert!(out.status.success(), "qemu-img write: {}", String::from_utf8_lossy(&out.stderr));
        let out = run(Command::new("qemu-img").args(["convert", "--object", &object, "--image-opts"]).args([
            &format!("{target},size={}", data.len()),
            "-O",
            "raw",
            back.to_str().unwrap(),
        ]));
        assert!(out.status.success(), "qemu-img read: {}", String::from_utf8_lossy(&out.stderr));
        assert!(std::fs::read(&back).unwrap() == data, "the bytes came back through PSK TLS");
    }
    s.stop.store(true, Ordering::SeqCst);
    let o = s.handle.join().expect("server thread");
    assert_eq!(o.counters.errors.load(Ordering::Relaxed), 0);
}
