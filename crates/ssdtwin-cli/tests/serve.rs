//! `ssdtwin serve` from the command line: option errors, a client session
//! with `--once` over a Unix socket, and a graceful stop on SIGTERM, both
//! writing the run's JSON.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

fn ssdtwin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ssdtwin")).args(args).output().expect("binary runs")
}

/// An empty temporary directory of the test's own, removed with what it
/// holds when dropped (also when the test panics).
fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("ssdtwin-serve-cli-").tempdir().expect("temp dir")
}

/// A server process, killed and reaped when dropped unless taken out to be
/// waited for: a failing test leaves no server running that writes into
/// its temporary directory (bind it after the directory, so that it is
/// dropped first).
struct Server(Option<Child>);

impl Server {
    fn into_child(mut self) -> Child {
        self.0.take().expect("the server process")
    }
}

impl std::ops::Deref for Server {
    type Target = Child;

    fn deref(&self) -> &Child {
        self.0.as_ref().expect("the server process")
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Child {
        self.0.as_mut().expect("the server process")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

const SMALL: &[&str] = &[
    "--drive",
    "generic-tlc-nvme",
    "--set",
    "geometry.channels=2",
    "--set",
    "geometry.dies_per_channel=2",
    "--set",
    "geometry.blocks_per_plane=32",
    "--set",
    "geometry.pages_per_block=48",
    "--set",
    "ftl.user_capacity_bytes=83886080",
];

fn fails_with(args: &[&str], needle: &str) {
    let mut all: Vec<&str> = SMALL.to_vec();
    all.extend_from_slice(args);
    let mut cmd = vec!["serve"];
    cmd.extend(all);
    let o = ssdtwin(&cmd);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} should fail");
    assert!(err.contains(needle), "{args:?}: {err}");
}

#[test]
fn bad_options_are_clear_errors() {
    fails_with(&["--listen", "0.0.0.0:0"], "--allow-remote");
    fails_with(&["--listen", "localhost"], "--listen localhost");
    fails_with(&["--time-scale=-1"], "--time-scale");
    fails_with(&["--time-scale", "nan"], "--time-scale");
    fails_with(&["--state", "half"], "--state");
    fails_with(&["--json", "/nonexistent-dir/x.json"], "does not exist");
    fails_with(&["--listen", "127.0.0.1:1", "--unix", "/tmp/x.sock"], "cannot be used with");
    fails_with(&["--load", "/tmp/x.img"], "cannot be used with");
    fails_with(&["--save", "/nonexistent-dir/x.img"], "does not exist");
    // A remote address needs TLS (or the waiver); TLS needs certificates;
    // pre-shared keys are refused with the reason.
    fails_with(&["--listen", "0.0.0.0:0", "--allow-remote"], "--tls=require");
    fails_with(&["--tls", "require"], "--tls-certificates");
    fails_with(&["--tls", "maybe"], "--tls");
    fails_with(&["--tls", "on", "--tls-certificates", "/nonexistent-dir"], "server-cert.pem");
    fails_with(&["--tls-psk", "/tmp/keys.psk"], "built without pre-shared keys");
    fails_with(&["--transport-delay", "soon"], "--transport-delay");
    fails_with(&["--power-loss-at", "later"], "--power-loss-at");
    fails_with(&["--power-loss-random", "1", "--power-loss-window", "0"], "--power-loss-window");
    // NBD has no zone commands: a zoned drive is refused, saying why.
    let zoned = [
        "--set",
        "zns.zone_size_bytes=8388608",
        "--set",
        "zns.zone_capacity_bytes=6291456",
        "--set",
        "zns.max_open_zones=2",
        "--set",
        "zns.max_active_zones=2",
    ];
    fails_with(&zoned, "a zoned drive ([zns]) cannot be served: NBD has no zone commands");
    // A file that is not a drive image: named, with what is wrong.
    let dir = temp_dir();
    let bogus = dir.path().join("bogus.img");
    std::fs::write(&bogus, "[drive]\nname = 1\n").unwrap();
    let o = ssdtwin(&["serve", "--load", bogus.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("bogus.img") && err.contains("not a drive image"), "{err}");
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} did not appear", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn check_json(path: &Path, sessions: u64) {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).expect("JSON written")).unwrap();
    assert_eq!(v["jobs"][0]["jobname"], "serve");
    assert!(v["overall"]["waf"].is_number());
    assert!(v["health"].is_object());
    assert_eq!(v["serve"]["sessions"], sessions);
}

#[test]
fn once_with_a_client_writes_the_json() {
    if Command::new("nbdinfo").arg("--version").output().is_err() {
        eprintln!("SKIPPED: nbdinfo is not installed (Debian: libnbd-bin)");
        return;
    }
    let dir = temp_dir();
    let sock = dir.path().join("once.sock");
    let json = dir.path().join("once.json");
    let _ = std::fs::remove_file(&sock);
    let mut args = vec!["serve"];
    args.extend_from_slice(SMALL);
    let (s, j) = (sock.to_str().unwrap(), json.to_str().unwrap());
    args.extend_from_slice(&["--unix", s, "--time-scale", "0", "--once", "--json", j, "-q"]);
    let mut server =
        Server(Some(Command::new(env!("CARGO_BIN_EXE_ssdtwin")).args(&args).spawn().expect("serve starts")));
    wait_for(&sock);
    // The socket file appears at bind, a moment before the server
    // listens: a refused connection is no session, so try again (a
    // session that ended would have stopped the server).
    let started = Instant::now();
    let out = loop {
        let out =
            Command::new("nbdinfo").arg("--size").arg(format!("nbd+unix:///ssdtwin?socket={s}")).output().unwrap();
        let refused = String::from_utf8_lossy(&out.stderr).contains("refused");
        if out.status.success() || !refused || started.elapsed() > Duration::from_secs(10) {
            break out;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "83886080",
        "nbdinfo: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = server.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "--once: the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    check_json(&json, 1);
    assert!(!sock.exists(), "socket removed");
}

#[test]
fn sigterm_stops_gracefully_and_writes_the_json() {
    let dir = temp_dir();
    let sock = dir.path().join("term.sock");
    let json = dir.path().join("term.json");
    let _ = std::fs::remove_file(&sock);
    let mut args = vec!["serve"];
    args.extend_from_slice(SMALL);
    let (s, j) = (sock.to_str().unwrap(), json.to_str().unwrap());
    args.extend_from_slice(&["--unix", s, "--json", j]);
    let server = Server(Some(
        Command::new(env!("CARGO_BIN_EXE_ssdtwin"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("serve starts"),
    ));
    wait_for(&sock);
    let ok = Command::new("kill").arg("-TERM").arg(server.id().to_string()).status().unwrap();
    assert!(ok.success());
    let out = server.into_child().wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("serve:"), "summary printed");
    check_json(&json, 0);
}

/// Send `signal` to the server process.
fn signal(server: &Server, signal: &str) {
    let ok = Command::new("kill").arg(format!("-{signal}")).arg(server.id().to_string()).status().unwrap();
    assert!(ok.success(), "kill -{signal}");
}

/// Issue 36's campaign from the command line: a cut at a simulated time
/// (real time here, no client: the wall clock brings it), a cut by
/// SIGUSR1, then SIGINT, with standard output a pipe nobody reads: the
/// server stops quietly, and the JSON (two cuts) and the saved drive are
/// written whole, no temporary left; the saved drive loads again.
#[test]
fn cuts_by_time_and_by_sigusr1_then_sigint_with_a_closed_pipe_save_everything() {
    let dir = temp_dir();
    let sock = dir.path().join("cut.sock");
    let (json, save) = (dir.path().join("cut.json"), dir.path().join("cut.img"));
    let mut args = vec!["serve"];
    args.extend_from_slice(SMALL);
    let (s, j, d) = (sock.to_str().unwrap(), json.to_str().unwrap(), save.to_str().unwrap());
    args.extend_from_slice(&["--unix", s, "--time-scale", "1", "--power-loss-at", "150ms", "--power-loss-signal"]);
    args.extend_from_slice(&["--json", j, "--save", d]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ssdtwin"));
    cmd.args(&args).env_remove("RUST_BACKTRACE").stderr(Stdio::piped());
    // The summary's reader is gone before the server starts.
    cmd.stdout(Stdio::piped());
    let mut child = cmd.spawn().expect("serve starts");
    drop(child.stdout.take());
    let server = Server(Some(child));
    wait_for(&sock);
    std::thread::sleep(Duration::from_millis(400));
    signal(&server, "USR1");
    std::thread::sleep(Duration::from_millis(300));
    signal(&server, "INT");
    let out = server.into_child().wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
    assert!(err.contains("power cut (at its simulated time)") && err.contains("power cut (asked for)"), "{err}");
    check_json(&json, 0);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["serve"]["power_cuts"], 2, "{v}");
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains("tmp")), "no temporary left: {names:?}");
    // The saved drive is whole: it loads and serves again.
    let sock2 = dir.path().join("again.sock");
    let s2 = sock2.to_str().unwrap();
    let again = Server(Some(
        Command::new(env!("CARGO_BIN_EXE_ssdtwin"))
            .args(["serve", "--load", d, "--unix", s2, "-q"])
            .stderr(Stdio::piped())
            .spawn()
            .expect("serve --load starts"),
    ));
    wait_for(&sock2);
    signal(&again, "TERM");
    let out = again.into_child().wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
