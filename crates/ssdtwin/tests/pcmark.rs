//! The PCMark benchmarks' synthetic traces and scores: each generated
//! PCMark 8 trace has its published counts of sequential and random reads
//! and writes, its bytes and its duration; each PCMark Vantage trace its
//! published read share; the scores of both, on tiny traces replayed on a
//! drive whose every request takes a fixed, known time, are the ones
//! computed by hand from the benchmarks' rules; the runs are
//! deterministic; and a trace benchmark's score moves far less than the
//! drive's speed (the scores compress the differences between drives).
//! PCMark 10's Data Drive traces copy UL's published files and bytes, in
//! the passes UL gives, each copy's side where it belongs, and their
//! score is UL's rule computed by hand.

use ssdtwin::run::trace::synth::{self, Generator};
use ssdtwin::run::trace::{GroupMark, TraceOp};
use ssdtwin::study::suite::json::suite_json;
use ssdtwin::study::suite::{self, DriveUnderTest, SuiteOptions, SuiteResult};

use crate::common::{scratch_dir, small_model};

/// PCMark 8's ten traces as Tom's Hardware published them ("How We Test
/// HDDs And SSDs", 2015, p. 9): sequential reads, random reads,
/// sequential writes, random writes, MB read, MB written; and the
/// Plextor M6e's service time, s (Tom's Hardware, the M6s/M6M review),
/// of which its storage time was the trace's bytes at its 280.57 MB/s.
const PCMARK8: [(&str, [u64; 6], f64); 10] = [
    ("photoshop-light", [1508, 17525, 18342, 1743, 313, 2336], 113.7),
    ("photoshop-heavy", [4277, 18655, 44742, 2065, 468, 5640], 359.9),
    ("indesign", [2359, 22207, 4874, 927, 401, 624], 57.5),
    ("illustrator", [1036, 21923, 682, 532, 373, 89], 72.0),
    ("after-effects", [1772, 17793, 86, 500, 311, 16], 70.8),
    ("word", [152, 4302, 748, 205, 107, 95], 28.3),
    ("excel", [72, 3148, 119, 87, 73, 15], 9.2),
    ("powerpoint", [56, 3441, 147, 107, 83, 21], 9.2),
    ("world-of-warcraft", [1415, 14927, 10, 659, 390, 5], 58.4),
    ("battlefield-3", [5782, 43487, 218, 431, 887, 28], 133.4),
];

/// What a generated trace is made of, counted as `trace stats` counts:
/// a request is sequential when it begins where the previous request of
/// its direction ended.
#[derive(Debug, Default)]
struct Tally {
    ios: [u64; 2],
    sequential: [u64; 2],
    bytes: [u64; 2],
    last_ns: u64,
}

fn tally(name: &str) -> Tally {
    let mut g = Generator::open(name).unwrap();
    let mut t = Tally::default();
    let mut end: [Option<u64>; 2] = [None; 2];
    while let Some(r) = g.next_request() {
        let d = match r.op {
            TraceOp::Read => 0,
            TraceOp::Write => 1,
            other => panic!("{name}: a {other:?}"),
        };
        t.ios[d] += 1;
        t.bytes[d] += r.len;
        t.sequential[d] += u64::from(end[d] == Some(r.offset));
        end[d] = Some(r.offset + r.len);
        t.last_ns = r.time_ns;
    }
    t
}

#[test]
fn pcmark8_traces_have_the_published_counts_bytes_and_durations() {
    let names: Vec<&str> = synth::builtin_names().into_iter().filter(|n| n.starts_with("pcmark8-")).collect();
    assert_eq!(names.len(), PCMARK8.len());
    for (key, [seq_r, rnd_r, seq_w, rnd_w, mb_r, mb_w], secs) in PCMARK8 {
        let name = format!("pcmark8-{key}-synthetic");
        // The generator file states the published figures...
        let p = synth::load(&name).unwrap().published;
        assert_eq!((p.reads, p.writes), (seq_r + rnd_r, seq_w + rnd_w), "{name}");
        assert_eq!((p.sequential_reads, p.sequential_writes), (Some(seq_r), Some(seq_w)), "{name}");
        assert_eq!((p.read_bytes, p.write_bytes), (mb_r * 1_000_000, mb_w * 1_000_000), "{name}");
        // Its idle: the M6e's service time less the trace's bytes at the
        // M6e's 280.57 MB/s (PCMark 8 replays the idle whole).
        let idle = secs - (mb_r + mb_w) as f64 / 280.57;
        assert!((p.duration_s.unwrap() - idle).abs() < 1e-3, "{name}: idle {:?} vs {idle}", p.duration_s);
        // ... and the trace it generates has them: the counts by
        // direction exactly, the counts by kind within 2 requests or 0.5%
        // (a random request may happen to continue the previous one, a
        // sequential run restarts at the end of the span), the bytes
        // within the published rounding (whole MB) and 0.5%, the recorded
        // length (all idle: the generator records no drive) to the
        // millisecond the file rounds it to.
        let t = tally(&name);
        assert_eq!(t.ios, [seq_r + rnd_r, seq_w + rnd_w], "{name}");
        for (got, want, what) in
            [(t.sequential[0], seq_r, "sequential reads"), (t.sequential[1], seq_w, "sequential writes")]
        {
            let tol = (want as f64 * 0.005).max(2.0);
            assert!((got as f64 - want as f64).abs() <= tol, "{name}: {what} {got} vs {want}");
        }
        for (got, mb, what) in [(t.bytes[0], mb_r, "bytes read"), (t.bytes[1], mb_w, "bytes written")] {
            let want = mb as f64 * 1e6;
            assert!((got as f64 - want).abs() <= 0.5e6 + 0.005 * want, "{name}: {what} {got} vs {want}");
        }
        assert!((t.last_ns as f64 - idle * 1e9).abs() <= 1e6, "{name}: lasts {} ns, idle {idle} s", t.last_ns);
    }
}

/// PCMark Vantage's read shares, % of requests (Futuremark's whitepaper
/// as AnandTech summarised it); Media Center's and application loading's
/// are not published.
const VANTAGE: [(&str, Option<f64>); 8] = [
    ("windows-defender", Some(99.5)),
    ("gaming", Some(99.95)),
    ("photo-gallery", Some(84.0)),
    ("vista-startup", Some(85.0)),
    ("movie-maker", Some(54.0)),
    ("media-center", None),
    ("media-player", Some(78.0)),
    ("application-loading", None),
];

#[test]
fn vantage_traces_have_the_published_read_shares() {
    let (mut reads, mut all) = (0, 0);
    for (key, pct) in VANTAGE {
        let name = format!("vantage-{key}-synthetic");
        let p = synth::load(&name).unwrap().published;
        assert_eq!(p.read_percent, pct, "{name}");
        let t = tally(&name);
        assert_eq!(t.ios, [p.reads, p.writes], "{name}");
        if let Some(pct) = pct {
            let got = 100.0 * t.ios[0] as f64 / (t.ios[0] + t.ios[1]) as f64;
            assert!((got - pct).abs() < 0.01, "{name}: {got}% reads vs {pct}%");
        }
        // Bytes as the file states (chosen sizes, exact shares).
        for (got, want) in [(t.bytes[0], p.read_bytes), (t.bytes[1], p.write_bytes)] {
            assert!((got as f64 - want as f64).abs() <= 0.005 * want as f64 + 65536.0, "{name}: {got} vs {want}");
        }
        reads += t.ios[0];
        all += t.ios[0] + t.ios[1];
    }
    // "The total benchmark is roughly 87% reads and 13% writes."
    let share = 100.0 * reads as f64 / all as f64;
    assert!((share - 87.0).abs() < 0.5, "{share}% reads over the suite");
}

/// A fresh small drive: every read is of unmapped data, which the
/// controller answers without a NAND read, so a read of `len` bytes takes
/// the command's overhead on a core plus its transfer over the link.
fn fixed_latency_drive() -> DriveUnderTest {
    DriveUnderTest { name: "fixed".into(), overrides: vec![], model: small_model(300, &[]) }
}

/// Its latency for a read of `len` bytes, ns (`model/nand.rs`'s
/// `transfer_ns`: bytes × femtoseconds per byte, rounded up to a ns).
fn latency_ns(d: &DriveUnderTest, len: u64) -> u64 {
    d.model.spec.controller.cmd_overhead_ns + (len * d.model.link_fs_per_byte).div_ceil(1_000_000)
}

fn run(text: &str, d: &DriveUnderTest, opts: &SuiteOptions) -> SuiteResult {
    let s = suite::parse(text, "tiny.toml").unwrap();
    suite::run_suite(&s, std::slice::from_ref(d), opts, None).unwrap()
}

fn score(r: &SuiteResult, label: &str) -> f64 {
    r.runs[0].tests[0].scores.iter().find(|v| v.label == label).unwrap().value.unwrap()
}

#[test]
fn scores_of_tiny_traces_are_the_hand_computed_ones() {
    let dir = scratch_dir("pcmark");
    // MQSim lines: arrival ns, device, sector, sectors, 1 = read. Each
    // request is its own group (the format records no completions); the
    // gaps (1 ms and more) are far longer than a read.
    let a = dir.path().join("a.mqsim");
    let b = dir.path().join("b.mqsim");
    std::fs::write(&a, "0 0 0 8 1\n1000000 0 64 16 1\n3000000 0 256 8 1\n").unwrap();
    std::fs::write(&b, "0 0 1024 32 1\n2000000 0 2048 8 1\n").unwrap();
    let d = fixed_latency_drive();
    let lat = |len: u64| latency_ns(&d, len) as f64;
    let (a_bytes, b_bytes) = (4096.0 + 8192.0 + 4096.0, 16384.0 + 4096.0);
    let (a_busy, b_busy) = (lat(4096) + lat(8192) + lat(4096), lat(16384) + lat(4096));

    // PCMark 8: idle replayed whole after each completion, so a trace
    // lasts its recorded idle plus all its reads; two scored rounds give
    // the same times on a drive whose reads take a fixed time.
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let pcmark8 = format!(
        r#"
name = "tiny8"
title = "t"
[[test]]
name = "t"
title = "t"
[[test.step]]
name = "warmup-a"
trace = "{a}"
replay = "think"
[[test.step]]
name = "r1-a"
trace = "{a}"
replay = "think"
[[test.step]]
name = "r1-b"
trace = "{b}"
replay = "think"
[[test.step]]
name = "r2-a"
trace = "{a}"
replay = "think"
[[test.step]]
name = "r2-b"
trace = "{b}"
replay = "think"
[test.score]
kind = "pcmark8"
traces = ["a", "b"]
rounds = ["r1", "r2"]
reference = {{ score = 1000, results = {{ a = 0.006, b = 0.004 }} }}
"#
    );
    let r = run(&pcmark8, &d, &SuiteOptions::default());
    let (ta, tb) = ((3e6 + a_busy) / 1e9, (2e6 + b_busy) / 1e9);
    let want = 1000.0 * (0.006f64 * 0.004).sqrt() / (ta * tb).sqrt();
    let close = |got: f64, want: f64| (got - want).abs() <= 1e-9 * want;
    assert!(close(score(&r, "a"), ta), "{} vs {ta}", score(&r, "a"));
    assert!(close(score(&r, "b"), tb), "{} vs {tb}", score(&r, "b"));
    assert!(close(score(&r, "storage score"), want), "{} vs {want}", score(&r, "storage score"));
    // Two rounds of each trace: bytes over the time a read was outstanding.
    let bw = 2.0 * (a_bytes + b_bytes) / 1e6 / (2.0 * (a_busy + b_busy) / 1e9);
    assert!(close(score(&r, "bandwidth"), bw), "{} vs {bw}", score(&r, "bandwidth"));
    // The warm-up round is not scored.
    assert_eq!(r.runs[0].tests[0].scores[0].steps, ["r1-a", "r2-a", "r1-b", "r2-b"]);

    // PCMark Vantage: idle removed; each trace's MB/s is its bytes over
    // its reads' time; the score the geometric mean times the factor.
    let vantage = format!(
        r#"
name = "tinyv"
title = "t"
[[test]]
name = "t"
title = "t"
[[test.step]]
name = "a"
trace = "{a}"
replay = "think:0"
[[test.step]]
name = "b"
trace = "{b}"
replay = "think:0"
[test.score]
kind = "pcmark-vantage"
traces = ["a", "b"]
scale = 100
"#
    );
    let r = run(&vantage, &d, &SuiteOptions::default());
    let (ra, rb) = (a_bytes / 1e6 / (a_busy / 1e9), b_bytes / 1e6 / (b_busy / 1e9));
    assert!(close(score(&r, "a"), ra), "{} vs {ra}", score(&r, "a"));
    assert!(close(score(&r, "b"), rb), "{} vs {rb}", score(&r, "b"));
    let want = 100.0 * (ra * rb).sqrt();
    assert!(close(score(&r, "HDD score"), want), "{} vs {want}", score(&r, "HDD score"));
    // Back to back: the trace lasts exactly its reads' time.
    let a_ns = r.runs[0].tests[0].steps[0].io.trace.as_ref().unwrap().replay.simulated_ns;
    assert_eq!(a_ns as f64, a_busy);
}

#[test]
fn bad_pcmark_scores_are_named() {
    let base = r#"
name = "s"
title = "t"
[[test]]
name = "t"
title = "t"
[[test.step]]
name = "r1-a"
trace = "pcmark8-excel-synthetic"
[test.score]
kind = "pcmark8"
traces = ["a"]
rounds = ["r1"]
reference = { score = 4971, results = { a = 9.2 } }
"#;
    assert!(suite::parse(base, "s.toml").is_ok());
    for (from, to, want) in [
        ("rounds = [\"r1\"]", "rounds = [\"r2\"]", "r2-a"),
        ("results = { a = 9.2 }", "results = { a = 9.2, b = 1.0 }", "`b`"),
        ("results = { a = 9.2 }", "results = { a = -1.0 }", "positive"),
        ("score = 4971", "score = 0", "positive"),
        ("kind = \"pcmark8\"", "kind = \"pcmark-vantage\"", "scale"),
    ] {
        let e = suite::parse(&base.replace(from, to), "s.toml").unwrap_err().to_string();
        assert!(e.contains("s.toml") && e.contains("score") && e.contains(want), "{to}: {e}");
    }
}

/// Small, quick options: a tenth of each trace (its first requests).
fn quick() -> SuiteOptions {
    SuiteOptions {
        only: vec!["pcmark8-storage".into()],
        scale: 0.01,
        trace_scale: 0.1,
        time_scale: 0.01,
        threads: 2,
        ..SuiteOptions::default()
    }
}

#[test]
fn pcmark8_runs_are_deterministic() {
    let s = suite::load("vendor-2018").unwrap();
    let d = fixed_latency_drive();
    let mut o = quick();
    o.trace_scale = 0.02;
    let a = suite_json(&suite::run_suite(&s, std::slice::from_ref(&d), &o, None).unwrap());
    o.threads = 1;
    let b = suite_json(&suite::run_suite(&s, std::slice::from_ref(&d), &o, None).unwrap());
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

/// The scores compress the differences between drives: a drive whose
/// NAND and controller are four times slower moves far less data per
/// busy second (the bandwidth), but the Storage score, built from
/// service times that are mostly the traces' own idle, moves far less.
#[test]
fn trace_scores_compress_the_differences_between_drives() {
    let s = suite::load("vendor-2018").unwrap();
    let fast = fixed_latency_drive();
    let slow = DriveUnderTest {
        name: "slow".into(),
        overrides: vec![],
        model: small_model(
            300,
            &[
                "controller.cmd_overhead_ns=24000",
                "nand.native.tr_ns=[200000, 248000, 300000]",
                "nand.native.tprog_ns=[8000000]",
                "host.pcie_lanes=1",
            ],
        ),
    };
    let r = suite::run_suite(&s, &[fast, slow], &quick(), None).unwrap();
    let get =
        |i: usize, label: &str| r.runs[i].tests[0].scores.iter().find(|v| v.label == label).unwrap().value.unwrap();
    let bw = get(0, "bandwidth") / get(1, "bandwidth");
    let score = get(0, "storage score") / get(1, "storage score");
    eprintln!("bandwidth ratio {bw:.2}, score ratio {score:.3}");
    assert!(bw > 2.0, "bandwidth {bw}");
    assert!(score > 1.0 && score - 1.0 < (bw - 1.0) / 10.0, "score {score} vs bandwidth {bw}");
}

/// The three tests fit every preset as the suites run them (the full run of
/// each preset is in docs/suites.md): their test data, their steps.
#[test]
fn the_pcmark_tests_fit_every_preset() {
    for (suite_name, test, steps) in [
        ("vendor-2018", "pcmark8-storage", 40),
        ("iometer-2008", "pcmark-vantage-hdd", 8),
        ("vendor-2018", "pcmark10-data-drive", 9),
    ] {
        let s = suite::load(suite_name).unwrap();
        let ti = s.tests.iter().position(|t| t.name == test).unwrap();
        let opts = SuiteOptions::default();
        for preset in ssdtwin::spec::preset_names() {
            let d = DriveUnderTest::load(preset, &[]).unwrap();
            let pass = &suite::run::passes_for(&s, &opts)[0];
            let setup = suite::run::setup(&s, ti, pass, &d, &opts).unwrap_or_else(|e| panic!("{preset}: {e}"));
            assert_eq!(setup.steps.len(), steps, "{preset}");
        }
    }
}

/// UL's Data Drive traces: cps1 copies 339 JPEG files of 2.37 GB in all
/// to the drive, cps2 copies them on it, cps3 copies them off it; 3
/// passes; about 15 GB written (UL's overview of the storage benchmarks).
#[test]
fn pcmark10_traces_have_the_published_files_bytes_and_passes() {
    const FILES: u64 = 339;
    const BYTES: u64 = 2_370_000_000;
    let mut written_per_pass = 0;
    // The extents each trace reads and writes, by direction.
    let mut extents: Vec<[Vec<(u64, u64)>; 2]> = Vec::new();
    for (trace, sides) in [("cps1", [false, true]), ("cps2", [true, true]), ("cps3", [true, false])] {
        let name = format!("pcmark10-{trace}-synthetic");
        let p = synth::load(&name).unwrap().published;
        assert_eq!(p.files, Some(FILES), "{name}");
        let mut g = Generator::open(&name).unwrap();
        let (mut files, mut ext): (u64, [Vec<(u64, u64)>; 2]) = (0, [Vec::new(), Vec::new()]);
        let mut t = Tally::default();
        let mut end: [Option<u64>; 2] = [None; 2];
        while let Some(r) = g.next_request() {
            let d = usize::from(r.op == TraceOp::Write);
            files += u64::from(matches!(r.group, GroupMark::Starts { .. }));
            t.ios[d] += 1;
            t.bytes[d] += r.len;
            // Every request continues the previous one of its direction.
            assert!(end[d].is_none_or(|e| e == r.offset), "{name}: a jump at {}", r.offset);
            end[d] = Some(r.offset + r.len);
            ext[d].push((r.offset, r.len));
        }
        assert_eq!(files, FILES, "{name}: files");
        assert_eq!(t.ios, [p.reads, p.writes], "{name}");
        for d in 0..2 {
            let want = if sides[d] { BYTES } else { 0 };
            assert_eq!([p.read_bytes, p.write_bytes][d], want, "{name}");
            // 2.37 GB in whole 4 KiB clusters: short by less than one.
            assert!(t.bytes[d] <= want && want - t.bytes[d] < 4096, "{name}: {} bytes", t.bytes[d]);
        }
        written_per_pass += t.bytes[1];
        extents.push(ext);
    }
    // cps2 and cps3 read exactly the files cps1 wrote; cps2's copy lies
    // elsewhere.
    assert_eq!(extents[1][0], extents[0][1]);
    assert_eq!(extents[2][0], extents[0][1]);
    let files_end = extents[0][1].last().map(|&(o, l)| o + l).unwrap();
    assert_eq!(extents[1][1].first().unwrap().0, files_end);
    // Three passes of the three traces, each pass in UL's order.
    let s = suite::load("vendor-2018").unwrap();
    let test = s.tests.iter().find(|t| t.name == "pcmark10-data-drive").unwrap();
    let steps: Vec<&str> = test.steps.iter().map(|st| st.name.as_str()).collect();
    let want: Vec<String> =
        (1..=3).flat_map(|p| ["cps1", "cps2", "cps3"].map(|t| format!("p{p}-{t}"))).collect::<Vec<_>>();
    assert_eq!(steps, want);
    // About 15 GB written over the benchmark.
    let gb = 3.0 * written_per_pass as f64 / 1e9;
    assert!((14.0..=15.5).contains(&gb), "{gb} GB written");
}

/// UL's score on tiny traces of reads on a drive whose every read takes a
/// fixed, known time: bandwidth = bytes over the time a read was
/// outstanding, access time = the reads' mean latency, score =
/// sqrt(MB/s / µs), overall and per trace over its passes.
#[test]
fn pcmark10_score_of_tiny_traces_is_the_hand_computed_one() {
    let dir = scratch_dir("pcmark10");
    let a = dir.path().join("a.mqsim");
    let b = dir.path().join("b.mqsim");
    std::fs::write(&a, "0 0 0 8 1\n1000000 0 64 16 1\n3000000 0 256 8 1\n").unwrap();
    std::fs::write(&b, "0 0 1024 256 1\n2000000 0 2048 8 1\n").unwrap();
    let d = fixed_latency_drive();
    let lat = |len: u64| latency_ns(&d, len) as f64;
    let (a_lats, b_lats) = ([lat(4096), lat(8192), lat(4096)], [lat(131072), lat(4096)]);
    let (a_bytes, b_bytes) = (16384.0, 135168.0);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let mut text = String::from("name = \"tiny10\"\ntitle = \"t\"\n[[test]]\nname = \"t\"\ntitle = \"t\"\n");
    for pass in ["p1", "p2"] {
        for (t, f) in [("a", a), ("b", b)] {
            text += &format!("[[test.step]]\nname = \"{pass}-{t}\"\ntrace = \"{f}\"\nreplay = \"think\"\n");
        }
    }
    text += "[test.score]\nkind = \"pcmark10\"\ntraces = [\"a\", \"b\"]\nrounds = [\"p1\", \"p2\"]\n";
    let r = run(&text, &d, &SuiteOptions::default());
    let sum = |x: &[f64]| x.iter().sum::<f64>();
    // Each request alone (the gaps are far longer than a read): busy time
    // is the sum of the latencies, twice over (two passes).
    let bw = (a_bytes + b_bytes) / 1e6 / ((sum(&a_lats) + sum(&b_lats)) / 1e9);
    let at = (sum(&a_lats) + sum(&b_lats)) / 5.0 / 1e3;
    let close = |got: f64, want: f64| (got - want).abs() <= 1e-9 * want;
    assert!(close(score(&r, "bandwidth"), bw), "{} vs {bw}", score(&r, "bandwidth"));
    assert!(close(score(&r, "average access time"), at), "{} vs {at}", score(&r, "average access time"));
    let want = (bw / at).sqrt();
    assert!(close(score(&r, "storage score (unscaled)"), want), "{} vs {want}", score(&r, "storage score (unscaled)"));
    let b_bw = b_bytes / 1e6 / (sum(&b_lats) / 1e9);
    assert!(close(score(&r, "b bandwidth"), b_bw), "{} vs {b_bw}", score(&r, "b bandwidth"));
    let a_at = sum(&a_lats) / 3.0 / 1e3;
    assert!(close(score(&r, "a access time"), a_at), "{} vs {a_at}", score(&r, "a access time"));
    assert_eq!(r.runs[0].tests[0].scores[0].steps, ["p1-a", "p2-a", "p1-b", "p2-b"]);

    // UL's constant is not published: a scale or reference is refused.
    for extra in ["scale = 2.0\n", "reference = { score = 1, results = { a = 1.0, b = 1.0 } }\n"] {
        let e = suite::parse(&format!("{text}{extra}"), "s.toml").unwrap_err().to_string();
        assert!(e.contains("s.toml") && e.contains("unscaled"), "{e}");
    }
}

#[test]
fn pcmark10_runs_are_deterministic() {
    let s = suite::load("vendor-2018").unwrap();
    let d = fixed_latency_drive();
    let mut o = SuiteOptions { only: vec!["pcmark10-data-drive".into()], ..quick() };
    o.trace_scale = 0.02;
    let a = suite_json(&suite::run_suite(&s, std::slice::from_ref(&d), &o, None).unwrap());
    o.threads = 1;
    let r = suite::run_suite(&s, std::slice::from_ref(&d), &o, None).unwrap();
    let b = suite_json(&r);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    // Little's law: four requests always outstanding while busy, so the
    // mean access time is 4 × the mean request's bytes / the bandwidth and
    // the unscaled score is the bandwidth / sqrt(4 × mean bytes) — the
    // score orders drives by bandwidth alone (within the few percent the
    // queue's filling and draining at each trace's ends take).
    let steps = &r.runs[0].tests[0].steps;
    let (bytes, ios): (u64, u64) =
        steps.iter().flat_map(|st| &st.io.dirs).fold((0, 0), |(b, n), d| (b + d.bytes, n + d.ios));
    let mean_mb = bytes as f64 / ios as f64 / 1e6;
    let bw = score(&r, "bandwidth");
    let at = score(&r, "average access time");
    let little = 4.0 * mean_mb / bw * 1e6;
    assert!((at / little - 1.0).abs() < 0.05, "access time {at} µs vs Little's law {little} µs");
    let want = bw / (4.0 * mean_mb * 1e6).sqrt();
    let got = score(&r, "storage score (unscaled)");
    assert!((got / want - 1.0).abs() < 0.03, "score {got} vs {want}");
}
