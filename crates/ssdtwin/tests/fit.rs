//! `ssdtwin fit` (issue 34): the battery run on a twin whose parameters
//! are known and not the base's, fitted from the base, recovers those
//! parameters and predicts workloads the battery did not run; bad input
//! is named.

use std::path::Path;

use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::run::{execute, RunOptions, RunResults};
use ssdtwin::study::fio_out::FioReport;
use ssdtwin::study::fit::params::{dies, shrink, Param};
use ssdtwin::study::fit::{battery, fit, measure, FitError, FitOptions};
use ssdtwin::{Drive, DriveSpec, DriveState, IoKind};

use crate::common::scratch_dir;

/// Time scale of the battery on the small drives (its idle pauses and
/// runtimes; its sizes are shares of the drive): long enough for the
/// random writes to use up the free blocks and for the long idle to
/// fold the static cache empty.
const SCALE: f64 = 0.1;

/// A preset scaled to 16 GB (`params::shrink`).
fn small(preset: &str) -> DriveSpec {
    let mut spec = DriveSpec::load(preset, &[]).expect("preset");
    shrink(&mut spec, 16e9);
    spec
}

/// Run `text` (a job file) on `spec` from `state`; the jobs' results.
fn run(spec: &DriveSpec, state: DriveState, text: &str) -> Vec<ssdtwin::run::jobs::JobResult> {
    let model = spec.build("t").unwrap();
    let cap = model.user_lpns as u64 * 4096;
    let mut drive = Drive::new(model);
    if state != DriveState::Fresh {
        state.apply_fast(&mut drive, 1);
    }
    let file = parse_job_file(text, "t.fio", cap, &JobOptions::new()).unwrap();
    match execute(drive, &file, RunOptions::default()).unwrap().results {
        RunResults::Jobs(j) => j,
        RunResults::Phases(_) => panic!("jobs run concurrently"),
    }
}

/// `text` (a job file) run on `spec` from `state` as `ssdtwin run
/// --job-file --state` runs it, its JSON written to `path`.
fn measure_jobs(spec: &DriveSpec, state: DriveState, text: &str, path: &Path) {
    let model = spec.build("t").unwrap();
    let cap = model.user_lpns as u64 * 4096;
    let mut drive = Drive::new(model);
    if state != DriveState::Fresh {
        state.apply_fast(&mut drive, 1);
    }
    let file = parse_job_file(text, "sweep.fio", cap, &JobOptions::new()).unwrap();
    let outcome = execute(drive, &file, RunOptions::default()).unwrap();
    let RunResults::Jobs(jobs) = &outcome.results else { panic!("jobs run concurrently") };
    let report = FioReport {
        drive: spec,
        state: state.to_string(),
        seed: 1,
        global: &file.global,
        jobs,
        health: &outcome.health,
    };
    std::fs::write(path, serde_json::to_string_pretty(&report.to_json(false)).unwrap()).unwrap();
}

/// A queue-depth sweep of 4 KiB random reads on a full drive, as users
/// measure drives without the battery: QD 1 to 64, one after another,
/// and QD32 issued by one thread and by four threads of QD8.
fn qd_sweep() -> String {
    let mut text = String::from("[global]\nrw=randread\nbs=4k\nruntime=150ms\nstonewall\n");
    for qd in [1, 2, 4, 8, 16, 64] {
        text.push_str(&format!("[qd{qd}]\niodepth={qd}\n"));
    }
    text.push_str("[qd32-1thread]\niodepth=32\n[qd32-4threads]\niodepth=8\nnumjobs=4\n");
    text
}

/// The battery run on `spec` as `ssdtwin run --job-file` runs it, its
/// JSON and logs written into `dir`; the JSON's path.
fn measure_battery(spec: &DriveSpec, dir: &Path) -> std::path::PathBuf {
    let text = battery::text(SCALE).replace("write_bw_log=", &format!("write_bw_log={}/", dir.display()));
    let model = spec.build("t").unwrap();
    let cap = model.user_lpns as u64 * 4096;
    let file = parse_job_file(&text, "battery.fio", cap, &JobOptions::new()).unwrap();
    let outcome = execute(Drive::new(model), &file, RunOptions::default()).unwrap();
    let RunResults::Jobs(jobs) = &outcome.results else { panic!("jobs run concurrently") };
    let report =
        FioReport { drive: spec, state: "fresh".into(), seed: 1, global: &file.global, jobs, health: &outcome.health };
    let path = dir.join("battery.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report.to_json(false)).unwrap()).unwrap();
    path
}

#[test]
fn battery_is_one_fio_file_of_stonewalled_jobs_the_twin_runs() {
    let text = battery::text(1.0);
    assert!(text.contains("filename=${DEV}"));
    let file = parse_job_file(&text, "battery.fio", 1 << 40, &JobOptions::new()).unwrap();
    assert_eq!(file.jobs.len(), battery::JOBS.len() + 3, "numjobs=4 makes three clones");
    assert!(file.jobs.iter().all(|j| j.stonewall || j.clone > 0), "every job waits for the one before");
    assert!(file.ignored.iter().any(|o| o == "filename"), "{:?}", file.ignored);
    // Every job says what it measures and how long it takes.
    for j in battery::JOBS {
        assert!(text.contains(&format!("[{}]", j.name)));
        assert!(!j.measures.is_empty() && !j.takes.is_empty());
    }
    assert_eq!(battery::resolve("runtime={T:30}", 0.01), "runtime=300ms");
    assert_eq!(battery::resolve("log_avg_msec={M:1000}", 0.01), "log_avg_msec=10");
}

/// The battery's job `name` alone, its times scaled and its log left out.
fn battery_job(name: &str, scale: f64) -> String {
    let j = battery::job(name).unwrap();
    let opts: Vec<String> = j
        .options
        .iter()
        .filter(|o| !o.starts_with("write_bw_log") && !o.starts_with("log_avg"))
        .map(|o| battery::resolve(o, scale))
        .collect();
    format!("[{name}]\n{}\n", opts.join("\n"))
}

/// The battery's random writes tell a large spare from a larger one: on
/// the RC100 scaled to 16 GB with 200 and 215 blocks per plane (both
/// more than the preset's 187) the full drive's random writes differ by
/// more than 10%. Over 10% of the drive and not `time_based` (the
/// battery before), both wrote 75,356 IOPS: the job ended once it had
/// written its 10%, before GC cost anything.
#[test]
fn the_random_writes_tell_a_large_spare_from_a_larger_one() {
    let text = battery_job("randwrite", 0.05);
    let iops = |bpp: f64| {
        let mut s = small("toshiba-rc100-480gb");
        Param::BlocksPerPlane.set(&mut s, bpp);
        run(&s, DriveState::Filled(100.0), &text)[0].result.iops(IoKind::Write)
    };
    let (a, b) = (iops(200.0), iops(215.0));
    assert!(b > 1.1 * a, "200 blocks per plane: {a:.0} IOPS, 215: {b:.0}");
    // The 16 KiB QD1 reads take longer than the 4 KiB ones by the
    // transfer of 12 KiB, which a slower channel lengthens.
    let lat = |mts: f64, job: &str| {
        let mut s = small("intel-660p-1tb");
        Param::ChannelMts.set(&mut s, mts);
        Param::BlocksPerPlane.set(&mut s, 182.0);
        let r = &run(&s, DriveState::Filled(100.0), &battery_job(job, 0.01))[0].result;
        1.0 / r.iops(IoKind::Read)
    };
    let gap = |mts: f64| lat(mts, "randread-16k-qd1") - lat(mts, "randread-qd1");
    let (fast, slow) = (gap(600.0), gap(300.0));
    assert!(slow > 1.6 * fast && fast > 0.0, "the 16 KiB reads' extra time: {fast:e} s at 600 MT/s, {slow:e} at 300");
}

/// `shrink` scales every size of the SLC cache with the drive, the room
/// idle folding makes included (the 660p's is its static part: it stays
/// so, and the static pool's parameter carries it along); the map cache's
/// memory parameter is the memory the map is cached in (DRAM, else the
/// host memory buffer) and carries the map journal that lives there.
#[test]
fn small_twins_keep_their_cache_sizes_and_the_map_memory_carries_its_journal() {
    let qlc = small("intel-660p-1tb");
    let c = qlc.slc_cache.as_ref().unwrap();
    assert!(c.static_bytes < 200_000_000, "{}", c.static_bytes);
    assert_eq!(c.idle_fold_room_bytes, Some(c.static_bytes), "the room is the static part, scaled alike");
    let mut t = qlc.clone();
    Param::CacheStatic.set(&mut t, 0.1e9);
    assert_eq!(t.slc_cache.as_ref().unwrap().idle_fold_room_bytes, Some(100_000_000));
    let journal = |s: &DriveSpec| s.ftl.map_cache.as_ref().unwrap().journal_entries.unwrap();
    let dram = qlc.controller.dram_bytes.unwrap();
    assert_eq!(Param::MapMemory.get(&qlc), Some(dram as f64));
    let mut half = qlc.clone();
    Param::MapMemory.set(&mut half, dram as f64 / 2.0);
    assert_eq!(half.controller.dram_bytes, Some((dram as f64 / 2.0).round() as u64));
    assert!((journal(&half) as f64 / journal(&qlc) as f64 - 0.5).abs() < 1e-3, "{} {}", journal(&half), journal(&qlc));
    // Valid with the memory halved (the small 1 TB needs a few more
    // blocks per plane to hold its reserves, as the fit's draws give it).
    let bpp = Param::BlocksPerPlane.get(&half).unwrap();
    Param::BlocksPerPlane.set(&mut half, bpp * 1.05);
    half.build("half").unwrap();
    let hmb = small("toshiba-rc100-480gb");
    assert_eq!(Param::MapMemory.get(&hmb), Some(hmb.host.hmb_bytes.unwrap() as f64), "DRAM-less: the HMB");
    assert_eq!(Param::MapMemory.get(&small("intel-600p-512gb")), None, "the whole map in DRAM: nothing to fit");
}

/// The fit test's truth: the 1 TB 660p's 8 dies with other timings,
/// cache sizes and spare (`blocks_per_plane`), fitted from the 512 GB's 4
/// dies (both scaled to 16 GB).
fn known_drive(blocks_per_plane: u32) -> DriveSpec {
    let mut truth = small("intel-660p-1tb");
    for (p, v) in [
        (Param::NativeTr, 135_000.0),
        (Param::CmdOverhead, 12_000.0),
        (Param::SlcTprog, 400_000.0),
        (Param::NativeTprog, 24_000_000.0),
        (Param::CacheMax, 1.6e9),
        (Param::CacheStatic, 0.25e9),
        // Idle folding's room apart from the static part (the presets tie
        // them): only the pause half-way through the fill tells them apart.
        (Param::IdleFoldRoom, 0.5e9),
        (Param::BlocksPerPlane, blocks_per_plane as f64),
    ] {
        p.set(&mut truth, v);
    }
    truth
}

/// What the battery's random writes wrote before GC started measures the
/// free room, one block per plane at a time, and a replay from the fit's
/// full drive (with the battery's earlier writes and pauses) measures the
/// same: on the fit test's drive at 180 to 186 blocks per plane (0.5% of
/// the blocks each, a few percent of spare after the static pool) the
/// knee grows by one block per plane's bytes a block, where the late rate
/// the spare was fitted to before (the last quarter's mean: 208, 309,
/// 1,536 and 1,567 IOPS at 180, 182, 184, 186, and 1,264 at 179) jumps
/// with whether a burst of the static pool's cache falls in it, and a
/// replay at the truth's own parameters gave it −16%.
#[test]
fn the_random_writes_knee_measures_the_free_room() {
    use ssdtwin::study::fit::battery::{prepared_before, Unit};
    use ssdtwin::study::fit::replay::{run_plan, Plan};
    let dir = scratch_dir("fit-knee");
    let mut knees = Vec::new();
    for bpp in [180, 182, 184, 186] {
        let truth = known_drive(bpp);
        let sub = dir.path().join(bpp.to_string());
        std::fs::create_dir_all(&sub).unwrap();
        let jobs = measure::read_file(&measure_battery(&truth, &sub)).unwrap();
        let rw = jobs.iter().find(|j| j.name == "randwrite").unwrap();
        let of = |m: &[(measure::Quantity, f64)]| m.iter().find(|q| q.0 == measure::Quantity::FreeGb).map(|q| q.1);
        let measured = of(&measure::metrics(rw)).expect("GC started within the job");
        let unit = Unit::RandomWrite;
        let plan = Plan {
            unit,
            state: unit.state(),
            prepare: prepared_before(unit, "randwrite")
                .into_iter()
                .filter_map(|n| jobs.iter().find(|j| j.name == n))
                .collect(),
            jobs: vec![rw],
            runtime_cap_ns: None,
            size_cap: None,
        };
        let obs = run_plan(&truth, &plan, 1).unwrap();
        let replayed = obs.iter().find(|o| o.quantity == measure::Quantity::FreeGb).expect("GC started").value;
        assert!((replayed / measured - 1.0).abs() < 0.03, "{bpp} blocks per plane: {measured} GB, replayed {replayed}");
        let g = &truth.geometry;
        let block = (dies(&truth) * g.planes_per_die) as f64 * (g.pages_per_block * g.page_bytes) as f64 / 1e9;
        knees.push((bpp, measured, block));
    }
    for w in knees.windows(2) {
        let ((a, ka, block), (b, kb, _)) = (w[0], w[1]);
        let per_block = (kb - ka) / (b - a) as f64;
        assert!(per_block > 0.7 * block && per_block < 1.3 * block, "{a} → {b}: {ka} → {kb} GB ({block} GB a block)");
    }
}

/// The mix measures what a twin near the truth reproduces: it runs
/// before the random writes, on the full drive the reads left (folded in
/// their pause), so that a replay at the truth's parameters gives its
/// rates within 5% (the fast path's full drive lays the data out on
/// other pages than the battery's fill: −2.5%, −1.9% and −1.9% at 182,
/// 184 and 186 blocks per plane), and one parameter 1.5% off (as far as
/// the fit leaves them) moves them by less than 2% from that (at most
/// 1.2%). After the random writes (the battery before 2026-11-28) the
/// mix ran wherever GC's cycle of floor and bursts stood when they ended:
/// the truth's replay gave +4.7%, +17.1% and −2.0% (replays without the
/// battery's thread numbers), and one parameter 1.5% off moved it by −73%
/// to +67% from that (the static pool at 184: 739 reads per second
/// measured, 865 replayed at the truth, 1,448 with the pool 1.5%
/// smaller).
#[test]
fn the_mix_is_measured_where_nearby_drives_agree() {
    use ssdtwin::study::fit::battery::{prepared_before, Unit};
    use ssdtwin::study::fit::replay::{run_plan, Plan};
    let dir = scratch_dir("fit-mix");
    for bpp in [182, 184, 186] {
        let truth = known_drive(bpp);
        let sub = dir.path().join(bpp.to_string());
        std::fs::create_dir_all(&sub).unwrap();
        let jobs = measure::read_file(&measure_battery(&truth, &sub)).unwrap();
        let mix = jobs.iter().find(|j| j.name == "mixed").unwrap();
        let unit = Unit::RandomWrite;
        let plan = Plan {
            unit,
            state: unit.state(),
            prepare: prepared_before(unit, "mixed")
                .into_iter()
                .filter_map(|n| jobs.iter().find(|j| j.name == n))
                .collect(),
            jobs: vec![mix],
            runtime_cap_ns: None,
            size_cap: None,
        };
        let rates = |spec: &DriveSpec| {
            let obs = run_plan(spec, &plan, 1).unwrap();
            [measure::Quantity::ReadIops, measure::Quantity::WriteIops]
                .map(|q| obs.iter().find(|o| o.job == "mixed" && o.quantity == q).expect("the mix's rates").value)
        };
        let measured = [measure::Quantity::ReadIops, measure::Quantity::WriteIops]
            .map(|q| measure::metrics(mix).into_iter().find(|m| m.0 == q).expect("the mix's rates").1);
        let at_truth = rates(&truth);
        for (m, t) in measured.iter().zip(at_truth) {
            assert!((t / m - 1.0).abs() < 0.05, "{bpp} blocks per plane: the mix {m:.0}/s, replayed {t:.0}/s");
        }
        let nearby = [
            (Param::NativeTprog, 1.015),
            (Param::SlcTprog, 1.015),
            (Param::NativeTr, 1.015),
            (Param::CacheStatic, 0.985),
        ];
        for (p, f) in nearby {
            let mut s = truth.clone();
            p.set(&mut s, p.get(&truth).unwrap() * f);
            for (t, n) in at_truth.iter().zip(rates(&s)) {
                assert!((n / t - 1.0).abs() < 0.02, "{bpp} blocks per plane, {p:?} × {f}: the mix {t:.0}/s → {n:.0}/s");
            }
        }
    }
}

/// The fit recovers a known drive's parameters from the base (the same
/// family with other timings and cache sizes) and predicts workloads the
/// battery did not run.
#[test]
fn fit_recovers_a_known_drive_and_predicts_what_it_did_not_see() {
    let dir = scratch_dir("fit");
    let truth = known_drive(182);
    let base = small("intel-660p-512gb");
    let json = measure_battery(&truth, dir.path());
    let jobs = measure::read_file(&json).unwrap();
    let result = fit(&base, &jobs, &FitOptions::default()).unwrap();
    let report = ssdtwin::study::fit::report::text(&result);
    let close = |p: Param, tol: f64| {
        let (t, f) = (p.get(&truth).unwrap(), p.get(&result.spec).unwrap());
        assert!((f / t - 1.0).abs() <= tol, "{p:?}: true {t}, fitted {f} (±{tol})\n{report}");
    };
    close(Param::NativeTr, 0.10);
    // The reads alone trade the command overhead against tR (they are
    // die-bound); the QD1 writes into the write buffer pin it.
    close(Param::CmdOverhead, 0.10);
    close(Param::NativeTprog, 0.15);
    close(Param::SlcTprog, 0.20);
    close(Param::CacheMax, 0.15);
    close(Param::CacheStatic, 0.30);
    close(Param::IdleFoldRoom, 0.20);
    assert_eq!(dies(&result.spec), 8, "{report}");
    // Every measurement within 15% on the fitted twin, the mix too (a
    // check with no parameter of its own). It was left out while the
    // replays drew the twin's own offsets where the battery had fio's:
    // with the random writes over the whole drive the mix then jumped
    // between regimes (7,904 reads per second on the truth, 618 on a
    // fitted twin whose parameters were all within 4% of the truth's).
    for r in &result.rows {
        let e = r.error().unwrap_or(1.0);
        assert!(e.abs() < 0.15, "{} {:?}: {e:+.3}\n{report}", r.job, r.quantity);
    }
    // Workloads outside the battery: QD8 random reads on the full drive,
    // a sequential write of half the fresh drive at QD4, 16 KiB random
    // writes at QD8 on the fresh drive.
    let unseen = [
        (DriveState::Filled(100.0), "[r]\nrw=randread\nbs=4k\niodepth=8\nruntime=300ms\n", IoKind::Read),
        (DriveState::Fresh, "[w]\nrw=write\nbs=256k\niodepth=4\nsize=50%\n", IoKind::Write),
        (DriveState::Fresh, "[w]\nrw=randwrite\nbs=16k\niodepth=8\nsize=20%\nruntime=500ms\n", IoKind::Write),
    ];
    for (state, job, kind) in unseen {
        let t = run(&truth, state, job)[0].result.bw_bytes(kind);
        let f = run(&result.spec, state, job)[0].result.bw_bytes(kind);
        assert!((f / t - 1.0).abs() < 0.15, "{job}: true {t:.0} B/s, fitted {f:.0} B/s\n{report}");
    }
}

#[test]
fn bad_results_are_named() {
    let dir = scratch_dir("fit-bad");
    let spec = small("intel-660p-512gb");
    let json = measure_battery(&spec, dir.path());
    let text = std::fs::read_to_string(&json).unwrap();
    let err = |t: &str| -> String {
        let p = dir.path().join("bad.json");
        std::fs::write(&p, t).unwrap();
        match measure::read_file(&p).and_then(|jobs| fit(&spec, &jobs, &FitOptions::default()).map(|_| ())) {
            Err(e) => e.to_string(),
            Ok(()) => panic!("accepted bad input"),
        }
    };
    // The jobs' places in fio's JSON.
    let at = |name: &str| -> usize {
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        doc["jobs"].as_array().unwrap().iter().position(|j| j["jobname"] == name).expect("a battery job")
    };
    let (qd1, span) = (at("randread-qd1"), at("randread-span-qd1"));
    // Truncated JSON: the file and line, and that it ends early.
    let e = err(&text[..text.len() / 2]);
    assert!(e.contains("bad.json:") && e.contains("ends early"), "{e}");
    // A job with fio's error field set.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["jobs"][qd1]["error"] = 5.into();
    let e = err(&doc.to_string());
    assert!(e.contains("job `randread-qd1`") && e.contains("error 5"), "{e}");
    // The trim only prepares the drive: its error (fio 3.33 cannot trim a
    // regular file: ENOTTY) is a warning that says so, not a refusal.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["jobs"][0]["jobname"], "trim");
    doc["jobs"][0]["error"] = 25.into();
    let jobs = measure::from_json(&doc, "t.json", Some(dir.path())).unwrap();
    let (ms, warnings) = ssdtwin::study::fit::measurements(&jobs, spec.ftl.user_capacity_bytes).unwrap();
    assert!(
        warnings.iter().any(|w| w.contains("job `trim`") && w.contains("error 25") && w.contains("only prepares")),
        "{warnings:?}"
    );
    assert!(ms.iter().any(|m| m.job == "fill"), "the jobs after the trim are still measurements");
    // A block size other than the battery's.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["jobs"][qd1]["job options"]["bs"] = "8k".into();
    let e = err(&doc.to_string());
    assert!(e.contains("randread-qd1") && e.contains("bs=8k") && e.contains("bs=4096"), "{e}");
    // An option the twin cannot replay.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["jobs"][qd1]["job options"]["sprandom"] = "1".into();
    let e = err(&doc.to_string());
    assert!(e.contains("randread-qd1") && e.contains("cannot replay") && e.contains("sprandom"), "{e}");
    // Jobs outside the battery are measurements of their own, unless fio
    // reported an error for them or the twin cannot replay them: each a
    // warning saying it is not used and why.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    for (i, j) in doc["jobs"].as_array_mut().unwrap().iter_mut().enumerate() {
        j["jobname"] = format!("x-{}", j["jobname"].as_str().unwrap()).into();
        match i {
            i if i == qd1 => j["job options"]["sprandom"] = "1".into(),
            i if i == span => j["job options"]["bs"] = "8k".into(),
            _ => j["error"] = 5.into(),
        }
    }
    let jobs = measure::from_json(&doc, "t.json", Some(dir.path())).unwrap();
    let (ms, warnings) = ssdtwin::study::fit::measurements(&jobs, spec.ftl.user_capacity_bytes).unwrap();
    assert!(ms.iter().all(|m| m.job == "x-randread-span-qd1"), "the 8k job is a measurement: {ms:?}");
    assert!(
        warnings.iter().any(|w| w.contains("x-randread-qd1") && w.contains("sprandom") && w.contains("not used")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("x-fill") && w.contains("error 5") && w.contains("not used")),
        "{warnings:?}"
    );
    assert!(!warnings.iter().any(|w| w.contains("is missing")), "no battery run, no battery job missing: {warnings:?}");
    // Nothing usable at all.
    for j in doc["jobs"].as_array_mut().unwrap() {
        j["error"] = 5.into();
    }
    let e = err(&doc.to_string());
    assert!(e.contains("no job in the results the fit can use") && e.contains("error 5"), "{e}");
    // Missing jobs are warnings naming what is then not measured.
    let jobs = measure::read_file(&json).unwrap();
    let some: Vec<_> = jobs.into_iter().filter(|j| j.name.starts_with("randread")).collect();
    let (_, warnings) = ssdtwin::study::fit::measurements(&some, spec.ftl.user_capacity_bytes).unwrap();
    assert!(warnings.iter().any(|w| w.contains("`fill` is missing") && w.contains("cache")), "{warnings:?}");
    assert!(matches!(
        measure::read_file(&dir.path().join("none.json")),
        Err(FitError::Input { origin, .. }) if origin.ends_with("none.json")
    ));
}

/// Identification keeps the drive valid: a cache read off a knee that the
/// base's spare area cannot hold beside the user capacity (a static pool
/// read off the write after the long idle, on the SM2260 whose base has
/// none: the pool is reserved out of the raw capacity) raises the raw capacity by the least that makes the drive
/// valid, and says so.
#[test]
fn identification_raises_the_raw_capacity_a_measured_cache_needs() {
    use ssdtwin::study::fit::identify::keep_valid;
    let mut spec = small("smi-sm2260-mlc-512gb");
    let user = spec.ftl.user_capacity_bytes as f64;
    Param::CacheStatic.set(&mut spec, 0.1 * user);
    assert!(spec.build("t").is_err(), "a static pool of 10% of the drive leaves the base's spare too small");
    let before = spec.geometry.blocks_per_plane;
    let mut notes = Vec::new();
    keep_valid(&mut spec, &mut notes);
    let after = spec.geometry.blocks_per_plane;
    assert!(spec.build("t").is_ok() && after > before, "{before} → {after}");
    let mut one_less = spec.clone();
    Param::BlocksPerPlane.set(&mut one_less, (after - 1) as f64);
    assert!(one_less.build("t").is_err(), "{after} is the least valid count");
    assert!(notes.iter().any(|n| n.contains(&format!("from {before} to {after}"))), "{notes:?}");
    // A valid drive is left alone.
    let mut notes = Vec::new();
    keep_valid(&mut spec, &mut notes);
    assert_eq!((spec.geometry.blocks_per_plane, notes.len()), (after, 0));
}

/// A drive far smaller than the base (a 2 GiB file fitted from a 512 GB
/// preset) gets smaller blocks rather than a handful of blocks per plane
/// (fewer than GC's reserves, which no spare adjustment could mend), and
/// identification leaves it valid.
#[test]
fn identification_of_a_small_drive_keeps_enough_blocks_per_plane() {
    use ssdtwin::study::fit::identify::{capacity, keep_valid};
    use ssdtwin::study::fit::measure::{DirRecord, JobRecord};
    let mut spec = DriveSpec::load("generic-tlc-nvme", &[]).unwrap();
    let bytes = 2u64 << 30;
    let written = DirRecord { ios: bytes / 131072, bytes, iops: 1.0, bw_bytes: 1.0, ..DirRecord::default() };
    let fill = JobRecord {
        name: "fill".into(),
        origin: "t.json: job `fill`".into(),
        global: Vec::new(),
        options: Vec::new(),
        dirs: [DirRecord::default(), written],
        bw_log: None,
        error: 0,
        thread: 2,
    };
    let mut notes = Vec::new();
    capacity(&mut spec, &[fill], &mut notes);
    assert_eq!(spec.ftl.user_capacity_bytes, bytes);
    assert!(spec.geometry.blocks_per_plane >= 16, "{} blocks per plane", spec.geometry.blocks_per_plane);
    assert!(notes.iter().any(|n| n.contains("pages per block 768 → 192")), "{notes:?}");
    keep_valid(&mut spec, &mut notes);
    spec.build("t").expect("the identified small drive is valid");
}

/// A fit from a queue-depth sweep alone (no battery) recovers what the
/// sweep determines (tR, the die count) and reports what it cannot see
/// (program times, cache, spare) as undetermined, keeping the base's.
/// Truth and base read with the cache register: with the 660p presets'
/// plain page reads (issue 33) a die's read cycle is tR + the transfer,
/// and this sweep alone trades tR against the channel rate (fitted
/// 150.4 µs and 834 MT/s against the truth's 135 µs and 533 MT/s).
#[test]
fn a_queue_depth_sweep_alone_fits_the_read_path_and_names_the_rest() {
    let dir = scratch_dir("fit-sweep");
    let mut truth = small("intel-660p-1tb");
    truth.nand.read_cache = true;
    Param::NativeTr.set(&mut truth, 135_000.0);
    Param::CmdOverhead.set(&mut truth, 12_000.0);
    Param::BlocksPerPlane.set(&mut truth, 182.0);
    let mut base = small("intel-660p-512gb");
    base.nand.read_cache = true;
    let json = dir.path().join("sweep.json");
    measure_jobs(&truth, DriveState::Filled(100.0), &qd_sweep(), &json);
    let jobs = measure::read_file(&json).unwrap();
    assert_eq!(jobs.iter().filter(|j| j.name == "qd32-4threads").count(), 1, "fio's clones merged");
    let opts = FitOptions { state: DriveState::Filled(100.0), ..FitOptions::default() };
    let result = fit(&base, &jobs, &opts).unwrap();
    let report = ssdtwin::study::fit::report::text(&result);
    let (t, f) = (Param::NativeTr.get(&truth).unwrap(), Param::NativeTr.get(&result.spec).unwrap());
    assert!((f / t - 1.0).abs() < 0.10, "tR: true {t}, fitted {f}\n{report}");
    assert_eq!(dies(&result.spec), 8, "{report}");
    // Program times and spare are not seen by reads (the blocks per plane
    // move only with the die count, raw capacity kept).
    for p in [Param::SlcTprog, Param::NativeTprog, Param::BlocksPerPlane] {
        let row = result.params.iter().find(|r| r.param == p).unwrap();
        assert!(row.sigma.is_none(), "{p:?} is not seen by reads\n{report}");
        assert!(p == Param::BlocksPerPlane || row.fitted == row.base, "{p:?} kept\n{report}");
        assert!(report.contains(&format!("{}: not determined by the given results", p.field().0)), "{report}");
    }
    // The sweep reproduced: median error within 5%, every rate within 20%.
    let mut errs: Vec<f64> = result.rows.iter().map(|r| r.error().unwrap_or(1.0).abs()).collect();
    errs.sort_by(f64::total_cmp);
    assert!(errs[errs.len() / 2] < 0.05, "{report}");
    for r in result.rows.iter().filter(|r| r.quantity == measure::Quantity::ReadIops) {
        assert!(r.error().unwrap_or(1.0).abs() < 0.20, "{} {:?}\n{report}", r.job, r.error());
    }
    // Told the sweep ran on a fresh (empty) drive, the fit sees reads of
    // unwritten blocks, which never reach the NAND: tR is not determined.
    let fresh = FitOptions { state: DriveState::Fresh, ..FitOptions::default() };
    let result = fit(&base, &jobs, &fresh).unwrap();
    let report = ssdtwin::study::fit::report::text(&result);
    let tr = result.params.iter().find(|r| r.param == Param::NativeTr).unwrap();
    assert!(tr.sigma.is_none(), "{report}");
}

/// A result no drive can give is named and left out: the same 32
/// commands outstanding measured at half the rate when one fio thread
/// issues them than when four do (the host's submission rate).
#[test]
fn a_host_limited_result_is_flagged_and_not_fitted() {
    let dir = scratch_dir("fit-host");
    let mut truth = small("intel-660p-1tb");
    Param::BlocksPerPlane.set(&mut truth, 182.0);
    let json = dir.path().join("sweep.json");
    measure_jobs(&truth, DriveState::Filled(100.0), &qd_sweep(), &json);
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for j in doc["jobs"].as_array_mut().unwrap() {
        if j["jobname"] == "qd32-1thread" {
            let iops = j["read"]["iops"].as_f64().unwrap();
            j["read"]["iops"] = (iops / 2.0).into();
            let lat = j["read"]["clat_ns"]["mean"].as_f64().unwrap();
            j["read"]["clat_ns"]["mean"] = (lat * 2.0).into();
        }
    }
    std::fs::write(&json, doc.to_string()).unwrap();
    let jobs = measure::read_file(&json).unwrap();
    let opts = FitOptions { state: DriveState::Filled(100.0), refine_iterations: 15, ..FitOptions::default() };
    let result = fit(&truth, &jobs, &opts).unwrap();
    let report = ssdtwin::study::fit::report::text(&result);
    assert!(
        result.notes.iter().any(|n| n.contains("`qd32-1thread` is not used") && n.contains("submission rate")),
        "{report}"
    );
    assert!(!result.rows.iter().any(|r| r.job == "qd32-1thread"), "{report}");
    // The drive was not bent: the truth's tR kept within 5%.
    let (t, f) = (Param::NativeTr.get(&truth).unwrap(), Param::NativeTr.get(&result.spec).unwrap());
    assert!((f / t - 1.0).abs() < 0.05, "tR: true {t}, fitted {f}\n{report}");
}

/// Published figures as measurements, on a small case: three figures of a
/// drive whose tR is 30% above the base's (a 16 GB generic TLC drive). Refitted to all three, the base
/// matches them; leaving out the QD1 latency, the fit to the other two
/// (QD32 random reads and sequential reads) predicts it far better than
/// the base does.
#[test]
fn figures_refit_and_leave_one_out_on_a_small_case() {
    use ssdtwin::study::figures::{measure, FigureSet};
    use ssdtwin::study::fit::figures::{cross_validate, fit_figures};
    // A drive without an SLC cache, so that the reads see the native tR.
    let base = small("generic-tlc-nvme");
    let mut truth = base.clone();
    Param::NativeTr.set(&mut truth, Param::NativeTr.get(&base).unwrap() * 1.3);
    let figure = |name: &str, metric: &str, unit: &str, job: &str| {
        format!(
            "[[figure]]\nname = \"{name}\"\nsource = \"test\"\nmetric = \"{metric}\"\nprepare = \"write-span\"\n\
             job = {{ {job}, size = \"1g\", runtime = \"200ms\", time_based = 1 }}\npublished = 1.0\nunit = \"{unit}\"\n\
             tolerance = 0.05\n"
        )
    };
    let text = format!(
        "drive = \"t\"\n{}{}{}",
        figure("QD1 latency", "read_lat", "µs", "rw = \"randread\", bs = \"4k\", iodepth = 1"),
        figure("QD32 IOPS", "read_iops", "IOPS", "rw = \"randread\", bs = \"4k\", iodepth = 32"),
        figure("Sequential read", "read_mbps", "MB/s", "rw = \"read\", bs = \"128k\", iodepth = 32"),
    );
    let mut set: FigureSet = toml::from_str(&text).unwrap();
    let model = truth.build("t").unwrap();
    for f in &mut set.figures {
        f.published = ssdtwin::study::figures::Published::Value(measure(&model, f, true).unwrap().simulated);
    }
    let (rows, params, _) = cross_validate(&base, &set, true).unwrap();
    assert!(params.contains(&Param::NativeTr));
    let lat = &rows[0];
    let (preset, held) = (lat.preset.unwrap().1, lat.held_out.unwrap().1);
    assert!(preset > 0.10, "the base is off: {preset}");
    assert!(held < preset / 2.0, "held out {held} against the base's {preset}");
    let fit = fit_figures(&base, &set, 20, true).unwrap();
    for r in &fit.rows {
        let (b, a) = (r.before.unwrap().1, r.after.unwrap().1);
        assert!(a <= b + 1e-9 && a < 0.05, "{}: {b} → {a}", r.figure.name);
    }
}
