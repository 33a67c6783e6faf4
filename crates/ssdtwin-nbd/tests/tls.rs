//! TLS (`NBD_OPT_STARTTLS`, rustls, X.509): libnbd's `nbds://` URIs
//! (nbdinfo, fio with verify) and qemu-img (`--object tls-creds-x509`)
//! reach a server that requires TLS, a client without TLS is refused, the
//! data round-trips, and a non-loopback address needs TLS unless waived.
//!
//! The certificates (a CA and a server certificate for 127.0.0.1) are made
//! by the `openssl` command; the clients come from Debian's `libnbd-bin`,
//! `qemu-utils` and `fio`. A missing tool skips the test with a reason.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::Ordering;

use ssdtwin::{Drive, DriveSpec};
use ssdtwin_nbd::server::{load_certificates, ServeOutcome, TlsMode};
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};
use tempfile::TempDir;

fn have(tool: &str, arg: &str) -> bool {
    let found = Command::new(tool).arg(arg).output().is_ok();
    if !found {
        eprintln!("SKIPPED: `{tool}` is not installed (Debian: openssl, libnbd-bin, qemu-utils, fio)");
    }
    found
}

fn run(cmd: &mut Command) -> std::process::Output {
    cmd.output().expect("tool runs")
}

fn ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A CA and a server certificate for 127.0.0.1 in `dir` (ECDSA P-256:
/// quick to make), laid out as nbdkit's and qemu's certificate
/// directories.
fn make_certificates(dir: &Path) {
    let d = |f: &str| dir.join(f).to_str().unwrap().to_string();
    ok(Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"])
        .args([
            "-nodes",
            "-days",
            "2",
            "-keyout",
            &d("ca-key.pem"),
            "-out",
            &d("ca-cert.pem"),
            "-subj",
            "/CN=ssdtwin test CA",
        ]));
    ok(Command::new("openssl").args(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]).args([
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        &d("server-key.pem"),
        "-out",
        &d("server.csr"),
    ]));
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
        .unwrap();
    ok(Command::new("openssl").args(["x509", "-req", "-days", "2", "-CAcreateserial"]).args([
        "-in",
        &d("server.csr"),
        "-CA",
        &d("ca-cert.pem"),
        "-CAkey",
        &d("ca-key.pem"),
        "-out",
        &d("server-cert.pem"),
        "-extfile",
        &d("ext.cnf"),
    ]));
}

fn small_drive() -> Twin {
    let set = vec!["ftl.user_capacity_bytes=67108864".to_string()];
    let spec = DriveSpec::load("generic-tlc-nvme", &set).expect("drive parses");
    Twin::new(Drive::new(spec.build("test drive").expect("valid")))
}

struct Served {
    addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<ServeOutcome>,
}

fn serve_tls(certs: &Path, scale: f64) -> Served {
    let opts = ServeOptions {
        listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
        time_scale: scale,
        log: false,
        tls: TlsMode::Require,
        tls_config: Some(load_certificates(certs).expect("certificates load")),
        ..ServeOptions::new()
    };
    let server = Server::bind(small_drive(), opts).expect("bind");
    let addr = server.local_addr().expect("TCP");
    let stop = server.stopper();
    let handle = std::thread::spawn(move || server.run().expect("server runs"));
    Served { addr, stop, handle }
}

impl Served {
    fn nbds(&self, certs: &Path) -> String {
        format!("nbds://{}/ssdtwin?tls-certificates={}", self.addr, certs.display())
    }
    fn stop(self) -> ServeOutcome {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().expect("server thread")
    }
}

fn certificates() -> Option<TempDir> {
    if !have("openssl", "version") {
        return None;
    }
    let dir = tempfile::Builder::new().prefix("ssdtwin-tls-").tempdir().expect("temp dir");
    make_certificates(dir.path());
    Some(dir)
}

#[test]
fn nbdinfo_needs_tls_and_gets_it() {
    let Some(certs) = certificates() else { return };
    if !have("nbdinfo", "--version") {
        return;
    }
    let s = serve_tls(certs.path(), 0.0);
    let out = ok(Command::new("nbdinfo").arg(s.nbds(certs.path())));
    assert!(out.contains("with TLS"), "{out}");
    assert!(out.contains("export-size: 67108864"), "{out}");
    // Without TLS the server answers nothing but STARTTLS.
    let plain = run(Command::new("nbdinfo").arg(format!("nbd://{}/ssdtwin", s.addr)));
    assert!(!plain.status.success(), "a client without TLS is refused");
    // A client that does not trust the server's CA is refused too.
    let other = certificates().expect("openssl");
    let untrusted = run(Command::new("nbdinfo").arg(s.nbds(other.path())));
    assert!(!untrusted.status.success(), "a certificate from another CA is not trusted");
    s.stop();
}

#[test]
fn qemu_img_round_trip_over_tls() {
    let Some(certs) = certificates() else { return };
    if !have("qemu-img", "--version") {
        return;
    }
    let s = serve_tls(certs.path(), 0.0);
    let dir = certs.path();
    let img = dir.join("disk.img");
    let back = dir.join("back.img");
    let data: Vec<u8> = (0..8u32 << 20).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    std::fs::write(&img, &data).unwrap();
    let object = format!("tls-creds-x509,id=tls0,endpoint=client,dir={}", dir.display());
    let target = format!(
        "driver=raw,file.driver=nbd,file.host=127.0.0.1,file.port={},file.export=ssdtwin,file.tls-creds=tls0",
        s.addr.port()
    );
    ok(Command::new("qemu-img")
        .args(["convert", "-n", "--object", &object, "-f", "raw", img.to_str().unwrap()])
        .args(["--target-image-opts", &target]));
    ok(Command::new("qemu-img").args(["convert", "--object", &object, "--image-opts"]).args([
        &format!("{target},size={}", data.len()),
        "-O",
        "raw",
        back.to_str().unwrap(),
    ]));
    assert!(std::fs::read(&back).unwrap() == data, "the bytes came back through TLS");
    let o = s.stop();
    assert_eq!(o.counters.errors.load(Ordering::Relaxed), 0);
}

#[test]
fn fio_verifies_over_tls_paced_and_at_time_scale_0() {
    let Some(certs) = certificates() else { return };
    let Ok(help) = Command::new("fio").arg("--enghelp").output() else {
        eprintln!("SKIPPED: `fio` is not installed");
        return;
    };
    if !String::from_utf8_lossy(&help.stdout).lines().any(|l| l.trim() == "nbd") {
        eprintln!("SKIPPED: this fio has no nbd engine");
        return;
    }
    // Time scale 0.05: replies go through the paced writer thread; time
    // scale 0 at QD32: the reader sends them, held while the client's
    // next requests are already in the socket (tls.rs, `has_input`).
    for (scale, depth) in [(0.05, "8"), (0.0, "32")] {
        let s = serve_tls(certs.path(), scale);
        // fio's libnbd may not read files a URI names; it finds the CA in
        // $HOME/.pki/libnbd, libnbd's default place.
        let home = certs.path().join("home");
        std::fs::create_dir_all(home.join(".pki/libnbd")).unwrap();
        std::fs::copy(certs.path().join("ca-cert.pem"), home.join(".pki/libnbd/ca-cert.pem")).unwrap();
        ok(Command::new("fio").env("HOME", &home).args([
            "--name=tls",
            "--ioengine=nbd",
            &format!("--uri=nbds://{}/ssdtwin", s.addr),
            "--rw=randwrite",
            "--bs=4k",
            &format!("--iodepth={depth}"),
            "--size=4m",
            "--verify=crc32c",
            "--do_verify=1",
        ]));
        let o = s.stop();
        assert_eq!(o.counters.errors.load(Ordering::Relaxed), 0, "time scale {scale}");
        assert!(o.counters.requests.load(Ordering::Relaxed) >= 2048, "time scale {scale}");
    }
}

#[test]
fn a_remote_address_needs_tls_unless_waived() {
    let remote = Listen::Tcp(SocketAddr::from(([0, 0, 0, 0], 0)));
    let opts = |tls, waived| ServeOptions {
        listen: remote.clone(),
        allow_remote: true,
        log: false,
        tls,
        remote_without_tls: waived,
        ..ServeOptions::new()
    };
    let err = Server::bind(small_drive(), opts(TlsMode::Off, false)).err().expect("refused");
    assert!(err.to_string().contains("--tls=require"), "{err}");
    let err = Server::bind(small_drive(), opts(TlsMode::On, false)).err().expect("refused");
    assert!(err.to_string().contains("--tls=require"), "{err}");
    assert!(Server::bind(small_drive(), opts(TlsMode::Off, true)).is_ok(), "waived");
    // TLS required without certificates is refused with a reason.
    let err = Server::bind(small_drive(), opts(TlsMode::Require, false)).err().expect("no certificates");
    assert!(err.to_string().contains("certificates"), "{err}");
}
