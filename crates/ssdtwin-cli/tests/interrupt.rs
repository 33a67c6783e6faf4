//! Clean interruption of the `ssdtwin` binary: a closed pipe on standard
//! output ends every command quietly (status 0, no panic), and runs
//! killed by SIGTERM or SIGINT at random moments leave no temporary file
//! and no half-written result: each output is either absent or exactly
//! what an uninterrupted run writes.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

fn ssdtwin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ssdtwin"));
    c.env_remove("RUST_BACKTRACE");
    c
}

fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("ssdtwin-cli-interrupt-").tempdir().expect("temporary directory")
}

/// The write end of a pipe whose read end is already closed: every write
/// to it fails with EPIPE.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() returns.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    Stdio::from(write)
}

/// A drive small enough to run in a fraction of a second.
fn small_drive(dir: &TempDir) -> String {
    let o = ssdtwin()
        .args(["show", "generic-tlc-nvme", "--set", "geometry.blocks_per_plane=32"])
        .args(["--set", "ftl.user_capacity_bytes=499998720"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let p = dir.path().join("small.toml");
    std::fs::write(&p, o.stdout).unwrap();
    p.display().to_string()
}

#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let dir = temp_dir();
    let drive = small_drive(&dir);
    let trace = dir.path().join("t.mqsim");
    std::fs::write(&trace, "0 1 0 8 1\n1000 1 8 8 0\n").unwrap();
    let trace = trace.display().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["run", "--help"],
        vec!["--version"],
        vec!["presets"],
        vec!["fio-options"],
        vec!["suite", "client-2018", "--show"],
        vec!["trace", "convert", &trace, "-", "--to", "fio-v3"],
        vec!["suite", "--list"],
        vec!["suite", "client-2018", "--list"],
        vec!["show", "intel-660p-1tb"],
        vec!["trace", "generate", "--list"],
        vec!["trace", "stats", &trace],
        vec!["trace", "stats", &trace, "--json", "-"],
        vec!["trace", "stats", &trace, "--json", "stats.json"],
        vec!["run", "--drive", &drive, "--rw", "randread", "--io_size", "1m"],
        vec!["run", "--drive", &drive, "--rw", "randread", "--io_size", "1m", "--output-format=json"],
        vec!["run", "--drive", &drive, "--rw", "randread", "--io_size", "1m", "--json", "-", "-q"],
        // A suite's score table, then its report rendered again from the
        // JSON the suite wrote.
        vec!["suite", "client-2018", "-d", &drive, "--only", "burst-random-read", "--scale", "0.005", "--out", "."],
        vec!["report", "client-2018.json", "--out", "again"],
    ];
    for args in commands {
        let o = ssdtwin().args(&args).current_dir(dir.path()).stdout(closed_pipe()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "ssdtwin {args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "ssdtwin {args:?}: {err}");
    }
    // Files asked for are written before the reader's absence ends the command.
    let stats = std::fs::read_to_string(dir.path().join("stats.json")).expect("trace stats wrote its JSON");
    assert!(stats.contains("\"format\""), "{stats}");
}

/// The files in `dir` and its subdirectories other than the inputs, by
/// path relative to `dir`.
fn outputs(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, names: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(root, &path, names);
            } else {
                names.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut names = Vec::new();
    walk(dir, dir, &mut names);
    names.retain(|n| !matches!(n.as_str(), "j.fio" | "small.toml"));
    names.sort();
    names
}

/// Remove every output in `dir` (the inputs stay).
fn clean(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else if !matches!(path.file_name().and_then(|n| n.to_str()), Some("j.fio" | "small.toml")) {
            std::fs::remove_file(&path).unwrap();
        }
    }
}

/// A seeded xorshift: random delays that differ from run to run of the
/// test (seeded by the clock, printed for reproduction).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

#[test]
fn runs_killed_at_random_moments_leave_no_temporary_and_no_half_written_result() {
    let dir = temp_dir();
    let drive = small_drive(&dir);
    std::fs::write(
        dir.path().join("j.fio"),
        "[w]\nrw=randwrite\nbs=4k\niodepth=4\nsize=256m\nio_size=1g\nwrite_bw_log=w\nwrite_lat_log=w\n\
         write_iops_log=w\n[r]\nstonewall\nrw=randread\nbs=4k\niodepth=8\nsize=256m\nio_size=512m\nwrite_bw_log=r\n",
    )
    .unwrap();
    // Three kinds of run: fio logs, JSON and the normal output to a file;
    // a recorded trace with JSON (the sequential runner); a suite with its
    // JSON, CSV tables, charts and HTML report.
    let job = ["run", "--drive", &drive, "--job-file", "j.fio", "-q"];
    let suite = ["suite", "client-2018", "-d", &drive, "--only", "sustained-random-read", "--scale", "0.005"];
    let kinds: [&[&str]; 3] = [
        &[&job[..], &["--json", "out.json", "--output", "out.txt"]].concat(),
        &[&job[..], &["--record-trace", "rec.iolog.zst", "--json", "out.json"]].concat(),
        &[&suite[..], &["--out", ".", "-q", "-j", "1"]].concat(),
    ];
    let run = |args: &[&str]| {
        let mut c = ssdtwin();
        c.args(args).current_dir(dir.path());
        c.stdout(Stdio::null()).stderr(Stdio::piped());
        c
    };
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    println!("seed {seed}");
    let mut rng = Rng(seed);
    let mut killed = 0;
    for args in kinds {
        // The reference: an uninterrupted run's outputs.
        clean(dir.path());
        let t = Instant::now();
        let o = run(args).output().unwrap();
        let took = t.elapsed();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let names = outputs(dir.path());
        assert!(names.len() >= 2, "{names:?}");
        let reference: Vec<(String, Vec<u8>)> =
            names.iter().map(|n| (n.clone(), std::fs::read(dir.path().join(n)).unwrap())).collect();
        for i in 0..6 {
            clean(dir.path());
            let signo = if i % 2 == 0 { libc::SIGTERM } else { libc::SIGINT };
            // From 20 ms (the handler is installed by then) to the run's length.
            let delay = Duration::from_micros(20_000 + rng.below(took.as_micros() as u64));
            let mut child = run(args).spawn().unwrap();
            std::thread::sleep(delay);
            // SAFETY: signalling our own child, which has not been waited for.
            unsafe { libc::kill(child.id() as libc::pid_t, signo) };
            let status = child.wait().unwrap();
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            let what = format!("{args:?}, signal {signo} after {delay:?}: {status:?} {err}");
            match status.code() {
                Some(0) => {}
                Some(c) if c == 128 + signo => killed += 1,
                _ => panic!("unexpected status, {what}"),
            }
            for name in outputs(dir.path()) {
                assert!(!name.contains("tmp"), "temporary {name} left, {what}");
                let (_, want) = reference.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("{name}, {what}"));
                let got = std::fs::read(dir.path().join(&name)).unwrap();
                assert!(
                    got == *want,
                    "{name} differs from the uninterrupted run's ({} vs {} bytes), {what}",
                    got.len(),
                    want.len()
                );
            }
        }
    }
    assert!(killed >= 6, "most runs are killed while running ({killed} of 18)");
}
