//! The fit's prediction check (issue 34, item 3): drives drawn at random
//! around the preset families, measured with the battery (plus ±3% noise
//! on every number and log line), fitted from a base preset, then the
//! fitted and the true drive compared on workloads the battery did not
//! run — the 2018 client suite's scores (its synthetic traces included)
//! and steady-state random writes with 20% of the drive left unused.
//!
//! ```text
//! family (truth around ──► fit from)      drawn per drive
//! QLC     intel-660p-1tb ─► intel-660p-512gb   dies ×½/×1/×2, native and pSLC tR/tPROG ×0.75–1.35,
//! TLC HMB toshiba-rc100  ─► toshiba-rc100      command overhead ×0.6–1.6, channel rate ×0.75–1.3,
//! TLC     intel-600p     ─► intel-600p         blocks per plane ×0.97–1.08 (spare), cache max and
//! MLC     smi-sm2260     ─► smi-sm2260         static ×0.6–1.5, idle folding's room ×0.5–2 (QLC)
//! ```
//!
//! Not drawn (the fit keeps the base's, so a draw would only measure
//! that): the link, the cache curve's shape, pSLC tR, planes and cores.
//! Not drawn either, but fitted: the DRAM or HMB size (the QLC truths,
//! scaled from the 1 TB, hold a quarter of their map in DRAM where the
//! base, scaled from the 512 GB, holds half). Drives are scaled to `--gb`
//! GB (pages per block and blocks per plane reduced, cache sizes, idle
//! folding's room and DRAM scaled alike) and the battery's times by
//! `--time-scale`, so that the check runs in minutes.
//!
//! `cargo run --release -p ssdtwin --example fit_check -- [--drives 10] [--gb 16] [--seed 1] [--family MLC]`
//! (`--family`: only the drives of that family, e.g. `"TLC HMB"`;
//! `--keep DIR`: write each drive's truth and fitted drive files, the
//! fit's report and its scores, `DIR/drive-N-{truth,fitted}.toml`,
//! `DIR/drive-N-fit.txt` and `DIR/drive-N-scores.csv`, to look at a miss
//! with `ssdtwin suite --only`; `--only N`: fit and compare drive N alone,
//! the drives before it drawn only, so that it is the same drive with the
//! same noise as in the full run; `--no-scores`: the fit
//! alone, its report in `--keep DIR`, no comparison; `--verbose`: the
//! fit's stages on stderr as they start).
//!
//! The truths and the noise come from separate random streams: the truths
//! from one generator seeded with `--seed`, drawn one drive after another
//! and nothing else, the noise from a generator of each drive's own
//! (seeded with `--seed` and the drive's number). A battery with other
//! jobs, or other log lines, therefore measures the same truths (before,
//! the noise of drive N's battery was drawn from the truths' generator,
//! and every truth after it moved with the battery).

use std::path::Path;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use serde_json::Value;
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::run::{execute, RunOptions, RunResults};
use ssdtwin::study::fio_out::FioReport;
use ssdtwin::study::fit::params::{dies, set_dies, shrink, Param};
use ssdtwin::study::fit::{battery, fit, measure, FitOptions};
use ssdtwin::study::suite::{self, json::suite_record, run_suite, DriveUnderTest, SuiteOptions};
use ssdtwin::{Drive, DriveSpec, DriveState, IoKind};

/// (family, the truth's preset, the base preset).
const FAMILIES: &[(&str, &str, &str)] = &[
    ("QLC", "intel-660p-1tb", "intel-660p-512gb"),
    ("TLC HMB", "toshiba-rc100-480gb", "toshiba-rc100-480gb"),
    ("TLC", "intel-600p-512gb", "intel-600p-512gb"),
    ("MLC", "smi-sm2260-mlc-512gb", "smi-sm2260-mlc-512gb"),
];

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A valid drive drawn around `spec` (draws that are not a possible
/// drive, e.g. too few blocks for twice the dies' reserves, are drawn
/// again).
fn draw(spec: &DriveSpec, rng: &mut Pcg64) -> DriveSpec {
    loop {
        let s = draw_once(spec, rng);
        if s.build("truth").is_ok() {
            return s;
        }
    }
}

fn draw_once(spec: &DriveSpec, rng: &mut Pcg64) -> DriveSpec {
    let mut s = spec.clone();
    let mut u = |lo: f64, hi: f64| lo * (hi / lo).powf(rng.random::<f64>());
    let d = dies(&s);
    let choice = [d / 2, d, d * 2][(u(1.0, 3.0) as usize - 1).min(2)].max(1);
    if choice != d {
        set_dies(&mut s, choice);
    }
    for (p, lo, hi) in [
        (Param::NativeTr, 0.75, 1.35),
        (Param::NativeTprog, 0.75, 1.35),
        (Param::SlcTprog, 0.75, 1.35),
        (Param::CmdOverhead, 0.6, 1.6),
        (Param::ChannelMts, 0.75, 1.3),
        (Param::BlocksPerPlane, 0.97, 1.08),
        (Param::CacheMax, 0.6, 1.5),
        (Param::CacheStatic, 0.6, 1.5),
        // Drawn apart from the static part, which the presets tie it to
        // (drawing the static part moved it along).
        (Param::IdleFoldRoom, 0.5, 2.0),
    ] {
        if let Some(v) = p.get(&s) {
            p.set(&mut s, v * u(lo, hi));
        }
    }
    s
}

/// The generator of drive `i`'s measurement noise: its own stream, apart
/// from the truths' (so that the truths do not depend on the battery).
fn noise_rng(seed: u64, i: usize) -> Pcg64 {
    Pcg64::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (0x6E6F_6973_6500_0000 + i as u64))
}

/// The battery on `spec`, its JSON and logs in `dir` with ±3% noise on
/// every rate, latency and log line; the JSON's path.
fn measure_battery(spec: &DriveSpec, dir: &Path, time_scale: f64, rng: &mut Pcg64) -> std::path::PathBuf {
    let text = battery::text(time_scale).replace("write_bw_log=", &format!("write_bw_log={}/", dir.display()));
    let model = spec.build("truth").expect("a drawn drive is valid");
    let cap = model.user_lpns as u64 * 4096;
    let file = parse_job_file(&text, "battery.fio", cap, &JobOptions::new()).expect("the battery parses");
    let outcome = execute(Drive::new(model), &file, RunOptions::default()).expect("the battery runs");
    let RunResults::Jobs(jobs) = &outcome.results else { unreachable!("jobs run concurrently") };
    let report =
        FioReport { drive: spec, state: "fresh".into(), seed: 1, global: &file.global, jobs, health: &outcome.health };
    let mut doc = report.to_json(false);
    let mut noise = || 1.0 + rng.random_range(-0.03..0.03);
    for j in doc["jobs"].as_array_mut().expect("jobs") {
        for d in ["read", "write"] {
            let n = noise();
            for k in ["iops", "bw_bytes", "bw"] {
                let v = j[d][k].as_f64().unwrap_or(0.0) * n;
                j[d][k] = Value::from(v);
            }
            let v = j[d]["clat_ns"]["mean"].as_f64().unwrap_or(0.0) / n;
            j[d]["clat_ns"]["mean"] = Value::from(v);
        }
    }
    for e in std::fs::read_dir(dir).expect("scratch dir").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "log") {
            let text = std::fs::read_to_string(&p).expect("log");
            let out: String = text
                .lines()
                .map(|l| {
                    let mut f: Vec<String> = l.split(", ").map(str::to_string).collect();
                    if let Some(v) = f.get(1).and_then(|v| v.parse::<f64>().ok()) {
                        f[1] = format!("{}", (v * noise()).round() as u64);
                    }
                    f.join(", ") + "\n"
                })
                .collect();
            std::fs::write(&p, out).expect("log written");
        }
    }
    let path = dir.join("battery.json");
    std::fs::write(&path, serde_json::to_string(&doc).expect("json")).expect("json written");
    path
}

/// The client-2018 suite's scores on `spec` (sizes scaled to the drive).
fn suite_scores(spec: &DriveSpec, name: &str, time_scale: f64) -> Vec<(String, f64)> {
    let s = suite::load("client-2018").expect("client-2018 ships");
    let model = spec.build(name).expect("valid");
    let scale = spec.ftl.user_capacity_bytes as f64 / 1.024e12;
    let dut = DriveUnderTest { name: name.into(), overrides: vec![], model };
    let opts = SuiteOptions { scale, time_scale, threads: 2, ..SuiteOptions::default() };
    let r = run_suite(&s, &[dut], &opts, None).expect("the suite runs");
    suite_record(&r)
        .scores
        .into_iter()
        .filter(|row| !row.unit.contains('W') && !row.unit.contains('J'))
        .filter_map(|row| {
            let v = row.value.filter(|v| v.is_finite() && *v > 0.0)?;
            Some((format!("{}/{} {}", row.pass, row.test, row.label), v))
        })
        .collect()
}

/// Steady-state 4 KiB random writes over 80% of the full drive, IOPS.
fn steady_at_other_op(spec: &DriveSpec) -> f64 {
    let model = spec.build("t").expect("valid");
    let cap = model.user_lpns as u64 * 4096;
    let mut drive = Drive::new(model);
    DriveState::Filled(100.0).apply_fast(&mut drive, 1);
    let span = cap / 5 * 4 / 4096 * 4096;
    let text = format!(
        "[pre]\nrw=randwrite\nbs=4k\niodepth=32\nsize={span}\nio_size={}\n\
         [steady]\nstonewall\nrw=randwrite\nbs=4k\niodepth=32\nsize={span}\nio_size={}\n",
        span * 2,
        span / 4 / 4096 * 4096
    );
    let file = parse_job_file(&text, "steady.fio", cap, &JobOptions::new()).expect("parses");
    match execute(drive, &file, RunOptions::default()).expect("runs").results {
        RunResults::Jobs(j) => j[1].result.iops(IoKind::Write),
        RunResults::Phases(_) => unreachable!("jobs run concurrently"),
    }
}

fn main() {
    let n = arg("--drives", 10.0) as usize;
    let gb = arg("--gb", 16.0);
    let seed = arg("--seed", 1.0) as u64;
    let time_scale = arg("--time-scale", 0.05);
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut all: Vec<f64> = Vec::new();
    println!("drive  family   dies  fit s  replays  scores  median |err|  max |err|  worst score");
    let args: Vec<String> = std::env::args().collect();
    let only = args.iter().position(|a| a == "--family").and_then(|i| args.get(i + 1)).cloned();
    let only_drive = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse::<usize>().unwrap_or_else(|_| panic!("--only takes a drive number, not {v:?}")));
    let keep = args.iter().position(|a| a == "--keep").and_then(|i| args.get(i + 1)).map(std::path::PathBuf::from);
    let n = only_drive.map_or(n, |d| d + 1);
    let no_scores = args.iter().any(|a| a == "--no-scores");
    let verbose = args.iter().any(|a| a == "--verbose");
    if let Some(k) = &keep {
        std::fs::create_dir_all(k).expect("--keep DIR can be made");
    }
    let families: Vec<_> = FAMILIES.iter().filter(|f| only.as_ref().is_none_or(|o| f.0 == o.as_str())).collect();
    assert!(!families.is_empty(), "--family must be one of {:?}", FAMILIES.iter().map(|f| f.0).collect::<Vec<_>>());
    for i in 0..n {
        let &&(family, truth_of, base_of) = &families[i % families.len()];
        let mut t0 = DriveSpec::load(truth_of, &[]).expect("preset");
        shrink(&mut t0, gb * 1e9);
        let truth = draw(&t0, &mut rng);
        if only_drive.is_some_and(|d| d != i) {
            continue;
        }
        let mut base = DriveSpec::load(base_of, &[]).expect("preset");
        shrink(&mut base, gb * 1e9);
        let dir = std::env::temp_dir().join(format!("ssdtwin-fit-check-{}-{i}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let json = measure_battery(&truth, &dir, time_scale, &mut noise_rng(seed, i));
        let jobs = measure::read_file(&json).expect("results read");
        let mut opts = FitOptions::default();
        if verbose {
            let t0 = std::time::Instant::now();
            opts.progress = Some(Box::new(move |l: &str| eprintln!("[{:6.1} s] {l}", t0.elapsed().as_secs_f64())));
        }
        let fitted = fit(&base, &jobs, &opts).expect("fit");
        let _ = std::fs::remove_dir_all(&dir);
        if let Some(k) = &keep {
            std::fs::write(k.join(format!("drive-{i}-truth.toml")), truth.to_toml()).expect("written");
            std::fs::write(k.join(format!("drive-{i}-fitted.toml")), fitted.spec.to_toml()).expect("written");
            std::fs::write(k.join(format!("drive-{i}-fit.txt")), ssdtwin::study::fit::report::text(&fitted))
                .expect("written");
        }
        if no_scores {
            println!(
                "{i:>5}  {family:<7} {:>2}/{:<2} {:>6.0} {:>8}  (--no-scores)",
                dies(&truth),
                dies(&fitted.spec),
                fitted.wall_s,
                fitted.evaluations
            );
            continue;
        }
        let a = suite_scores(&truth, "truth", time_scale);
        let b = suite_scores(&fitted.spec, "fitted", time_scale);
        let mut errs: Vec<(String, f64)> = a
            .iter()
            .filter_map(|(k, v)| b.iter().find(|(k2, _)| k2 == k).map(|(_, w)| (k.clone(), (w / v - 1.0).abs())))
            .collect();
        let (st, sf) = (steady_at_other_op(&truth), steady_at_other_op(&fitted.spec));
        errs.push(("steady 4k random write, 20% unused".into(), (sf / st - 1.0).abs()));
        if let Some(k) = &keep {
            let mut csv = String::from("score,truth,fitted,abs_error\n");
            for (k, v) in &a {
                if let Some((_, w)) = b.iter().find(|(k2, _)| k2 == k) {
                    csv += &format!("\"{k}\",{v},{w},{}\n", (w / v - 1.0).abs());
                }
            }
            csv += &format!("\"steady 4k random write, 20% unused\",{st},{sf},{}\n", (sf / st - 1.0).abs());
            std::fs::write(k.join(format!("drive-{i}-scores.csv")), csv).expect("written");
        }
        let mut e: Vec<f64> = errs.iter().map(|x| x.1).collect();
        e.sort_by(f64::total_cmp);
        let worst = errs.iter().max_by(|x, y| x.1.total_cmp(&y.1)).expect("scores");
        println!(
            "{i:>5}  {family:<7} {:>2}/{:<2} {:>6.0} {:>8} {:>7} {:>12.1}% {:>9.1}%  {} ({:.1}%)",
            dies(&truth),
            dies(&fitted.spec),
            fitted.wall_s,
            fitted.evaluations,
            e.len(),
            e[e.len() / 2] * 100.0,
            e[e.len() - 1] * 100.0,
            worst.0,
            worst.1 * 100.0
        );
        all.extend(e);
    }
    if all.is_empty() {
        return;
    }
    all.sort_by(f64::total_cmp);
    let q = |p: f64| all[((all.len() - 1) as f64 * p).round() as usize] * 100.0;
    println!(
        "all {} scores: median |error| {:.1}%, 90th percentile {:.1}%, max {:.1}%, within 15%: {:.0}%",
        all.len(),
        q(0.5),
        q(0.9),
        q(1.0),
        all.iter().filter(|&&x| x <= 0.15).count() as f64 * 100.0 / all.len() as f64
    );
}
