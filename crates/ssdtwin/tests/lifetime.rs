//! Long simulated time in bounded memory, retention and lifetime (`age`)
//! phases.
//!
//! A sparse job (one 4 KiB write every 10 s) over a long simulated time
//! keeps a bounded time series however long it runs: at ten times the
//! simulated time it stores no more points, its counts and energy still
//! add up to the phase's, and idle stretches cost O(1).

use ssdtwin::run::stats::MAX_SERIES_POINTS;
use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::{Drive, IoKind, PhaseResult, Simulator};

use crate::common::{scratch_dir, small_slc_model};

/// One 4 KiB random write every `think_s` seconds for `runtime_s`.
fn sparse(runtime_s: u64, think_s: u64) -> Phase {
    let mut s = IoSpec::new("sparse", RwPattern::RandWrite);
    s.time_based = true;
    s.runtime_ns = Some(runtime_s * 1_000_000_000);
    s.thinktime_ns = think_s * 1_000_000_000;
    Phase::Io(s)
}

fn run_sparse(runtime_s: u64) -> PhaseResult {
    let mut sim = Simulator::new(Drive::new(small_slc_model(&[])));
    sim.run_phase(&sparse(runtime_s, 10), 0, 1)
}

/// The series of a phase adds up to the phase: commands, bytes, time
/// covered and energy.
fn check_series_adds_up(r: &PhaseResult) {
    let s = &r.series;
    let writes: u64 = s.seconds.iter().map(|p| p.write_ios).sum();
    assert_eq!(writes, r.dirs[IoKind::Write as usize].ios, "writes in the series");
    for (i, p) in s.seconds.iter().enumerate() {
        assert_eq!(p.t_s, i as u64 * s.resolution_s, "point {i} starts on the grid");
        assert_eq!(p.span_s, s.resolution_s, "point {i} spans the resolution");
    }
    let elapsed_s = (r.end_ns - r.start_ns) as f64 / 1e9;
    let energy: f64 =
        s.seconds.iter().map(|p| p.power_w.unwrap() * (p.span_s as f64).min(elapsed_s - p.t_s as f64)).sum();
    let e = r.energy_j.unwrap();
    assert!((energy - e).abs() < 1e-6 * e, "energy over the points {energy} J vs the phase's {e} J");
}

/// Check 6 at small scale: ten times the simulated time stores no more
/// series points (coarser ones instead), and the points still add up.
#[test]
fn memory_does_not_grow_with_simulated_time() {
    let short = run_sparse(1_000_000);
    let long = run_sparse(10_000_000);
    let writes = long.dirs[IoKind::Write as usize].ios;
    assert!((999_000..=1_000_000).contains(&writes), "one write per 10 s (and its latency): {writes}");
    for r in [&short, &long] {
        assert!(r.series.seconds.len() <= MAX_SERIES_POINTS, "{} points", r.series.seconds.len());
        check_series_adds_up(r);
    }
    assert_eq!(short.series.resolution_s, 60, "11.6 days at one point a minute");
    assert_eq!(long.series.resolution_s, 3600, "116 days at one point an hour");
    assert!(long.series.seconds.len() <= short.series.seconds.len(), "no more points at 10× the time");
}

const DAY_NS: u64 = 86_400_000_000_000;

fn age_phase(days: &str, per_day: &str) -> Phase {
    let text = format!("[aging]\nage={days}\nper_day={per_day}\nrw=randwrite\nbs=4k\n");
    let file =
        ssdtwin::run::workload::fio::parse_job_file(&text, "age.fio", 3_199_995_904, &Default::default()).unwrap();
    file.jobs[0].phase.clone()
}

/// An age phase writes its bytes a day at a time through the FTL (GC,
/// SLC folding, wear) and moves the clock a day per day; wear grows in
/// proportion to the writes once the drive is full; the health log and
/// the phase's summary agree.
#[test]
fn aging_writes_a_day_at_a_time_and_wears_in_proportion() {
    let mut sim = Simulator::new(Drive::new(small_slc_model(&[])));
    let user = sim.drive().user_bytes();
    let first = sim.run_phase(&age_phase("40d", "0.1DWPD"), 0, 2);
    let second = sim.run_phase(&age_phase("40d", "0.1DWPD"), 1, 2);
    for r in [&first, &second] {
        let a = r.age.expect("an age summary");
        assert_eq!(a.days, 40);
        assert!(r.end_ns - r.start_ns >= 40 * DAY_NS && r.end_ns - r.start_ns < 40 * DAY_NS + 1_000_000_000);
        let per_day = (0.1 * user as f64).round() as u64;
        assert!(a.host_bytes_written >= 40 * per_day && a.host_bytes_written < 40 * (per_day + 4096));
        assert!(a.waf > 1.0, "folding and GC write more than the host: {}", a.waf);
        assert_eq!(r.energy_j, Some(0.0), "untimed days draw no modelled energy");
    }
    let health = ssdtwin::model::health::Health::of(sim.drive());
    let (u1, u2) = (first.age.unwrap().percentage_used.unwrap(), second.age.unwrap().percentage_used.unwrap());
    assert_eq!(Some(u2), health.percentage_used);
    // The second 40 days wear the drive as much as the first, within 15%
    // (the first filled a fresh drive, with less GC).
    let ratio = (u2 - u1) / u1;
    assert!(
        (0.85..1.6).contains(&ratio),
        "wear of the second 40 days / the first: {ratio:.3} ({u1:.3}% then {u2:.3}%)"
    );
}

/// A retention phase moves the clock with the power off: no energy, no
/// NAND work, the drive cools to ambient, and the data reads back after.
#[test]
fn retention_moves_the_clock_with_the_power_off() {
    let mut sim = Simulator::new(Drive::new(small_slc_model(&[])));
    let mut fill = IoSpec::new("fill", RwPattern::Write);
    fill.bs = 128 * 1024;
    fill.size = Some(1 << 30);
    let w = sim.run_phase(&Phase::Io(fill), 0, 3);
    assert!(w.dirs[IoKind::Write as usize].ios > 0);
    let r = sim.run_phase(&Phase::Retention { name: "off".into(), duration_ns: 90 * DAY_NS }, 1, 3);
    assert!(r.start_ns >= w.end_ns);
    assert!(r.end_ns - r.start_ns >= 90 * DAY_NS && r.end_ns - r.start_ns < 90 * DAY_NS + 1_000_000_000);
    assert_eq!(r.energy_j, Some(0.0));
    assert_eq!(r.counters.nand_programs_native + r.counters.nand_programs_slc + r.counters.gc_blocks, 0);
    let t = sim.drive().temperatures().unwrap();
    assert!((t.composite_c - 25.0).abs() < 0.01, "cooled to ambient: {}", t.composite_c);
    let mut read = IoSpec::new("read", RwPattern::RandRead);
    read.size = Some(1 << 30);
    read.io_size = Some(16 << 20);
    let rd = sim.run_phase(&Phase::Io(read), 2, 3);
    assert_eq!(rd.counters.unmapped_reads, 0, "the data is still mapped");
    let e = rd.energy_j.unwrap();
    let secs = (rd.end_ns - rd.start_ns) as f64 / 1e9;
    assert!(e > 0.0 && e < 10.0 * secs, "energy after power-up counts from power-up: {e} J in {secs} s");
}

fn age_phase_exact(days: &str, per_day: &str, exact: bool) -> Phase {
    let text = format!(
        "[aging]\nage={days}\nper_day={per_day}\nrw=randwrite\nbs=4k\nnorandommap=1\nage_exact={}\n",
        u8::from(exact)
    );
    let file =
        ssdtwin::run::workload::fio::parse_job_file(&text, "age.fio", 3_199_995_904, &Default::default()).unwrap();
    file.jobs[0].phase.clone()
}

/// Carrying stationary wear forward agrees with running every day: over
/// 300 days the extrapolated run skips most days, and its endurance used,
/// mean P/E, host and NAND bytes (so WAF) are within a few percent of the
/// exact run's; the clock ends at the same day.
#[test]
fn extrapolated_aging_agrees_with_exact_aging() {
    let run = |exact: bool| {
        let mut sim = Simulator::new(Drive::new(small_slc_model(&[])));
        let r = sim.run_phase(&age_phase_exact("300d", "0.1DWPD", exact), 0, 1);
        let health = ssdtwin::model::health::Health::of(sim.drive());
        (r, health)
    };
    let (exact, exact_health) = run(true);
    let (fast, fast_health) = run(false);
    let (e, f) = (exact.age.unwrap(), fast.age.unwrap());
    eprintln!("exact: {e:?}\nextrapolated: {f:?}");
    assert_eq!(e.days_extrapolated, 0);
    assert!(f.days_extrapolated >= 200, "most days carried forward: {}", f.days_extrapolated);
    assert_eq!(exact.end_ns - exact.start_ns, fast.end_ns - fast.start_ns, "the same days pass");
    let close = |what: &str, a: f64, b: f64, tol: f64| {
        assert!((a - b).abs() <= tol * a.abs().max(b.abs()), "{what}: exact {a} vs extrapolated {b}");
    };
    close("percentage used", e.percentage_used.unwrap(), f.percentage_used.unwrap(), 0.03);
    close("native P/E mean", e.pe_cycles_native_mean, f.pe_cycles_native_mean, 0.03);
    close("host bytes", e.host_bytes_written as f64, f.host_bytes_written as f64, 0.01);
    close("WAF", e.waf, f.waf, 0.03);
    close("health host bytes", exact_health.data_units_written as f64, fast_health.data_units_written as f64, 0.01);
}

/// An age phase can take its commands from a trace (`trace=` with `age`
/// and `per_day`): the file is replayed in order, untimed, from its start
/// again when it ends, until each day's bytes are written. A trace that
/// writes nothing is an error, not an endless loop.
#[test]
fn aging_replays_a_trace_in_a_loop() {
    let tmp = scratch_dir("age-trace");
    let dir = tmp.path().to_path_buf();
    // MQSim: arrival_ns device lba(512 B sectors) sectors type(0 write, 1 read).
    let trace = dir.join("small.trace");
    let lines: String =
        (0..1000u64).map(|i| format!("{} 0 {} 8 {}\n", i * 1000, (i * 7919 % 4096) * 8, i % 2)).collect();
    std::fs::write(&trace, lines).unwrap();
    let job = |file: &std::path::Path| {
        let text = format!("[aging]\ntrace={}\nage=3d\nper_day=64m\n", file.display());
        ssdtwin::run::workload::fio::parse_job_file(&text, "age.fio", 3_199_995_904, &Default::default()).unwrap()
    };
    let file = job(&trace);
    assert!(matches!(file.jobs[0].phase, Phase::Age(_)), "an age phase: {:?}", file.jobs[0].phase);
    let mut sim = Simulator::new(Drive::new(small_slc_model(&[])));
    let r = sim.try_run_phase(&file.jobs[0].phase, 0, 1).unwrap();
    let a = r.age.unwrap();
    // 500 writes of 4 KiB a pass: 64 MB a day is 31.25 passes.
    let per_day = 64u64 << 20;
    assert!(a.host_bytes_written >= 3 * per_day && a.host_bytes_written < 3 * (per_day + 4096), "{a:?}");
    assert_eq!(sim.drive().ftl().mapped_lpns(), 500, "the trace's 500 written pages, again and again");
    assert!(r.end_ns - r.start_ns >= 3 * DAY_NS);

    let reads = dir.join("reads.trace");
    std::fs::write(&reads, "0 0 0 8 1\n1000 0 8 8 1\n").unwrap();
    let mut sim = Simulator::new(Drive::new(small_slc_model(&[])));
    let err = sim.try_run_phase(&job(&reads).jobs[0].phase, 0, 1).unwrap_err().to_string();
    assert!(err.contains("writes or trims"), "{err}");
}

/// A built-in synthetic client generator named in a job file is not a
/// path beside the job file: it ages a drive as a trace does.
#[test]
fn a_job_file_ages_with_a_builtin_generator() {
    let text = "[client]\ntrace=atsb-light-synthetic\nlba_scale=1\nage=2d\nper_day=16m\n";
    let file =
        ssdtwin::run::workload::fio::parse_job_file(text, "/some/dir/age.fio", 3_199_995_904, &Default::default())
            .unwrap();
    let Phase::Age(a) = &file.jobs[0].phase else { panic!("an age phase: {:?}", file.jobs[0].phase) };
    let ssdtwin::run::lifetime::AgeWorkload::Trace(t) = &a.workload else { panic!("a trace workload") };
    assert_eq!(t.file, "atsb-light-synthetic");
    let mut sim = Simulator::new(Drive::new(small_slc_model(&[])));
    let r = sim.try_run_phase(&file.jobs[0].phase, 0, 1).unwrap();
    assert!(r.age.unwrap().host_bytes_written >= 2 * (16 << 20));
}

/// A rated endurance as a `validate` figure: `percentage_used` with an
/// aging job measures what the same `age` phase leaves in the health log,
/// and `published = { at_most = … }` passes at or below its bound only.
#[test]
fn a_rated_endurance_figure_ages_the_drive_and_bounds_its_wear() {
    use ssdtwin::study::figures::{measure, Figure};
    let model = small_slc_model(&[]);
    let mut sim = Simulator::new(Drive::new(model.clone()));
    let r = sim.run_phase(&age_phase("60d", "0.2DWPD"), 0, 1);
    let want = r.age.unwrap().percentage_used.unwrap();
    assert!(want > 0.0);
    let figure = |at_most: f64| -> Figure {
        toml::from_str(&format!(
            "name = \"rated\"\nsource = \"test\"\nmetric = \"percentage_used\"\n\
             job = {{ age = \"60d\", per_day = \"0.2DWPD\", rw = \"randwrite\", bs = \"4k\" }}\n\
             published = {{ at_most = {at_most} }}\nunit = \"%\"\ntolerance = 0\n"
        ))
        .unwrap()
    };
    let v = measure(&model, &figure(want * 1.01), false).unwrap();
    assert_eq!(v.simulated, want, "the figure measures what the age phase does");
    assert!(v.pass && v.error == 0.0);
    let v = measure(&model, &figure(want * 0.5), false).unwrap();
    assert!(!v.pass && (v.error - 1.0).abs() < 1e-9, "twice the bound is 100% over it: {}", v.error);
}
