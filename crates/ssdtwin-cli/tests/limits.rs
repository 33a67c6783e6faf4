//! Bounded memory from any input: traces of every format with absurd
//! request sizes and counts, a job file, a drive file and a suite file
//! whose fields ask for absurd amounts, each run as the `ssdtwin` binary
//! under a 1 GB address-space limit (`setrlimit(RLIMIT_AS)`) and a
//! deadline: a clear error naming file, line and field (or a bounded
//! result), never a panic, an abort or a hang.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The address-space limit every run here gets.
const LIMIT_BYTES: u64 = 1 << 30;

/// How long a run may take (they take well under a second).
const DEADLINE: Duration = Duration::from_secs(30);

/// The outcome of a limited run.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// `ssdtwin args` under [`LIMIT_BYTES`] of address space, killed at
/// [`DEADLINE`].
fn limited(args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ssdtwin"));
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).env_remove("RUST_BACKTRACE");
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: LIMIT_BYTES as libc::rlim_t, rlim_max: LIMIT_BYTES as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let t = Instant::now();
    let mut child = cmd.spawn().expect("binary runs");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let mut stderr = String::new();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ssdtwin {args:?} ran past {DEADLINE:?} under a 1 GB limit");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = err.read_to_string(&mut stderr);
    Run { code: status.code(), stdout: reader.join().unwrap(), stderr, took: t.elapsed() }
}

fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("ssdtwin-cli-limits-").tempdir().expect("temporary directory")
}

fn write(dir: &TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The run failed with exit status 2, an error naming each of `needles`,
/// and no panic or abort.
fn assert_refused(r: &Run, needles: &[&str]) {
    assert_eq!(r.code, Some(2), "exit status; stderr:\n{}", r.stderr);
    for n in needles {
        assert!(r.stderr.contains(n), "stderr does not mention `{n}`:\n{}", r.stderr);
    }
    for bad in ["panicked", "memory allocation", "Aborted"] {
        assert!(!r.stderr.contains(bad), "{bad}:\n{}", r.stderr);
    }
}

/// Each text format: a valid first request, then one whose length field
/// is `n` (bytes or sectors, as the format counts), and that field's name
/// and line.
fn absurd_traces(n: u64) -> Vec<(&'static str, String, &'static str, u32)> {
    vec![
        ("mqsim", format!("0 1 0 8 1\n1000 1 8 {n} 0\n"), "size in sectors", 2),
        ("msr", format!("128166372003061629,hm,1,Read,0,4096,41\n128166372003061630,hm,1,Write,0,{n},41\n"), "Size", 2),
        (
            "blkparse",
            format!(
                "  8,0    3        1     0.000000000  4162  Q  WS 0 + 8 [jbd2]\n  8,0    3        2     0.000001000  \
                 4162  Q  D {n} + {n} [mkfs]\n"
            ),
            "count",
            2,
        ),
        ("fio-v2", format!("fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x write 0 {n}\n"), "length", 4),
        ("fio-v3", format!("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x trim 0 {n}\n"), "length", 4),
        ("spc", format!("0,0,4096,r,0.000000\n0,{n},{n},w,0.000100\n"), "Size", 2),
    ]
}

#[test]
fn absurd_request_sizes_are_refused_in_every_format() {
    let dir = temp_dir();
    let mut slowest = Duration::ZERO;
    for n in [1u64 << 55, 1 << 60, 1_000_000_000_000_000] {
        for (format, text, field, line) in absurd_traces(n) {
            let file = write(&dir, &format!("{format}-{n}.trace"), &text);
            let mut replay = vec!["run", "--drive"];
            replay.extend(SMALL_DRIVE);
            replay.extend(["--trace", &file, "-q"]);
            for cmd in
                [vec!["trace", "stats", &file], vec!["trace", "convert", &file, "/dev/null", "--to", "fio-v3"], replay]
            {
                let r = limited(&cmd);
                assert_refused(&r, &[&format!("{file}:{line}: field `{field}`"), "4 GiB"]);
                slowest = slowest.max(r.took);
            }
        }
    }
    assert!(slowest < Duration::from_secs(10), "slowest refusal {slowest:?}");
}

#[test]
fn a_sector_size_cannot_make_a_request_of_4_gib() {
    let dir = temp_dir();
    let file = write(&dir, "t.mqsim", "0 1 0 8 1\n1 1 8 8388607 0\n");
    let r = limited(&["trace", "stats", &file]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = limited(&["trace", "stats", &file, "--sector-size", "4096"]);
    assert_refused(&r, &[&format!("{file}:2: field `size`"), "--sector-size"]);
}

/// Requests just below the limit, each at its own address: every format
/// is read in bounded memory and the footprint stops at its budget (a
/// lower bound, said so).
#[test]
fn many_huge_requests_are_counted_in_bounded_memory() {
    let dir = temp_dir();
    let lines = 2100u64; // × 256 chunks of 16 MiB each: past the 2^19-chunk budget
    let max = (1u64 << 32) - 512;
    let mut traces = vec![
        ("mqsim", (0..lines).map(|i| format!("{i} 0 {} {} 1\n", i << 24, max / 512)).collect::<String>()),
        ("msr", (0..lines).map(|i| format!("{},h,0,Write,{},{max},1\n", 1000 + i, i << 33)).collect()),
        (
            "blkparse",
            (0..lines).map(|i| format!("8,0 0 {} 0.{i:09} 1 Q W {} + {} [x]\n", i + 1, i << 24, max / 512)).collect(),
        ),
        ("spc", (0..lines).map(|i| format!("0,{},{max},w,{i}.0\n", i << 24)).collect()),
    ];
    let fio = |v3: bool| {
        let head = if v3 { "fio version 3 iolog\n0 f add\n0 f open\n" } else { "fio version 2 iolog\nf add\nf open\n" };
        let body: String =
            (0..lines)
                .map(|i| {
                    if v3 {
                        format!("{i} f write {} {max}\n", i << 33)
                    } else {
                        format!("f write {} {max}\n", i << 33)
                    }
                })
                .collect();
        format!("{head}{body}")
    };
    traces.push(("fio-v2", fio(false)));
    traces.push(("fio-v3", fio(true)));
    for (format, text) in traces {
        let file = write(&dir, &format!("{format}.trace"), &text);
        let r = limited(&["trace", "stats", &file]);
        assert_eq!(r.code, Some(0), "{format}: {}", r.stderr);
        assert!(r.stdout.contains(&format!("requests: {lines},")), "{format}: {}", r.stdout);
        assert!(
            r.stdout.contains("footprint (distinct 4 KiB pages touched) at least 8796.09 GB"),
            "{format}: {}",
            r.stdout
        );
        assert!(r.took < Duration::from_secs(10), "{format}: {:?}", r.took);
    }
}

/// A drive small enough for the limit.
const SMALL_DRIVE: [&str; 5] =
    ["generic-tlc-nvme", "--set", "geometry.blocks_per_plane=32", "--set", "ftl.user_capacity_bytes=499998720"];

#[test]
fn a_job_file_cannot_ask_for_an_absurd_window() {
    let dir = temp_dir();
    let job = write(&dir, "ss.fio", "[a]\nrw=randread\nss=iops:1%\nss_dur=1000000000000\nio_size=4k\n");
    let mut args = vec!["run", "--drive"];
    args.extend(SMALL_DRIVE);
    args.extend(["--job-file", &job, "-q"]);
    let r = limited(&args);
    assert_refused(&r, &[&format!("{job}:4"), "ss_dur", "one day"]);
}

#[test]
fn a_job_file_cannot_make_more_jobs_than_fio() {
    let dir = temp_dir();
    let job = write(&dir, "many.fio", "[a]\nrw=randread\nnumjobs=4000\nio_size=4k\n[b]\nrw=read\nnumjobs=4000\n");
    let mut args = vec!["run", "--drive"];
    args.extend(SMALL_DRIVE);
    args.extend(["--job-file", &job, "-q"]);
    let r = limited(&args);
    assert_refused(&r, &[&format!("{job}:7: option `numjobs`"), "at most 4096"]);
}

#[test]
fn a_drive_file_cannot_ask_for_an_absurd_queue_or_core_count() {
    for (set, field) in [
        ("host.max_queue_depth=4000000000", "host.max_queue_depth"),
        ("controller.cores=100000000", "controller.cores"),
    ] {
        let mut args = vec!["run", "--drive"];
        args.extend(SMALL_DRIVE);
        args.extend(["--set", set, "--rw", "randread", "--io_size", "4k", "-q"]);
        let r = limited(&args);
        assert_refused(&r, &[field, "is more than"]);
    }
}

#[test]
fn a_suite_file_cannot_sweep_into_millions_of_steps() {
    let dir = temp_dir();
    let values = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
    let suite = write(
        &dir,
        "big.toml",
        &format!(
            "name = \"big\"\ntitle = \"t\"\n[[test]]\nname = \"t\"\ntitle = \"t\"\n[[test.step]]\nrw = \"randread\"\n\
             runtime = \"1s\"\niodepth = {values}\nnumjobs = {values}\nrwmixread = [10, 20, 30, 40, 50, 60, 70, 80, 90, \
             100]\nthinktime = {values}\nthinktime_blocks = {values}\nrate_iops = {values}\n[test.score]\nkind = \
             \"each\"\nmetric = \"iops\"\n"
        ),
    );
    let r = limited(&["suite", &suite, "--list"]);
    assert_refused(&r, &["big.toml", "1000000 steps", "at most 10000"]);
}
