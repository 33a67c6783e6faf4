//! Speed benchmark of the simulator itself.
//!
//! Runs the workloads that matter for speed and reports, for each: host
//! I/Os simulated, wall seconds, simulated I/Os per wall second, the
//! real-time factor (simulated seconds per wall second; above 1 means the
//! twin is faster than the drive) and the process's peak resident memory.
//! The output format is stable so that figures can be compared over time.
//!
//! The standard rows hold the whole map in DRAM (a drive file's
//! `[ftl.map_cache]` is removed for them), so that they measure the same
//! simulated work from build to build; drives that cache their map get two
//! more rows, steady-state preconditioning and random writes with the map
//! cached, whose translation-page traffic is part of the work.

use std::time::Instant;

use crate::model::drive::Drive;
use crate::run::sim::Simulator;
use crate::run::state::DriveState;
use crate::run::workload::{IoSpec, Phase, RwPattern};
use crate::spec::DriveModel;

/// One benchmark row.
#[derive(Debug, Clone)]
pub struct BenchRow {
    /// Workload name.
    pub name: String,
    /// Drive (preset or file) it ran on.
    pub drive: String,
    /// Host I/Os simulated (0 for preconditioning rows).
    pub ios: u64,
    /// Bytes written or read by the host (or by preconditioning).
    pub bytes: u64,
    /// Wall time, s.
    pub wall_s: f64,
    /// Simulated time, s (0 for preconditioning rows).
    pub sim_s: f64,
    /// Peak resident memory of the process so far, bytes.
    pub peak_rss: u64,
    /// Write amplification during the workload.
    pub waf: f64,
    /// Anonymous memory on transparent huge pages when the row ended,
    /// bytes (Linux `AnonHugePages`): the mapping tables are accessed at
    /// random, and without huge pages TLB misses roughly halve the speed.
    pub huge_page_bytes: u64,
}

impl BenchRow {
    /// Simulated I/Os per wall second.
    pub fn ios_per_wall_s(&self) -> f64 {
        self.ios as f64 / self.wall_s.max(1e-9)
    }
    /// Simulated seconds per wall second.
    pub fn realtime_factor(&self) -> f64 {
        self.sim_s / self.wall_s.max(1e-9)
    }
    /// Simulated GB per wall second.
    pub fn gb_per_wall_s(&self) -> f64 {
        self.bytes as f64 / 1e9 / self.wall_s.max(1e-9)
    }
}

/// Peak resident set size of this process (Linux `VmHWM`), bytes.
pub fn peak_rss_bytes() -> u64 {
    proc_kib("/proc/self/status", "VmHWM:") * 1024
}

/// Anonymous memory of this process on transparent huge pages (Linux
/// `AnonHugePages`), bytes.
pub fn huge_page_bytes() -> u64 {
    proc_kib("/proc/self/smaps_rollup", "AnonHugePages:") * 1024
}

/// A `key: N kB` line of a /proc file (0 when absent).
fn proc_kib(path: &str, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .unwrap_or(0)
}

#[inline(never)] // a function of its own, for callgrind's --dump-before
fn timed_state(model: &DriveModel, state: DriveState, name: &str) -> (Drive, BenchRow) {
    let mut drive = Drive::new(model.clone());
    let t = Instant::now();
    state.apply_fast(&mut drive, 1);
    let wall_s = t.elapsed().as_secs_f64();
    let bytes = drive.ftl().counters().host_slots_written * 4096;
    let row = BenchRow {
        name: name.into(),
        drive: String::new(),
        ios: 0,
        bytes,
        wall_s,
        sim_s: 0.0,
        peak_rss: peak_rss_bytes(),
        waf: drive.waf(),
        huge_page_bytes: huge_page_bytes(),
    };
    (drive, row)
}

#[inline(never)] // a function of its own, for callgrind's --dump-before
fn timed_run(drive: Drive, spec: IoSpec) -> (Drive, BenchRow) {
    let mut sim = Simulator::new(drive);
    let before = crate::run::stats::Counters::of(sim.drive());
    let t = Instant::now();
    let r = sim.run_phase(&Phase::Io(spec.clone()), 0, 1);
    let wall_s = t.elapsed().as_secs_f64();
    let waf = crate::run::stats::Counters::of(sim.drive()).since(&before).waf();
    let row = phase_row(spec.name.clone(), &r, wall_s, waf);
    (sim.into_drive(), row)
}

/// The row of a timed phase: its I/Os and bytes, simulated and wall time,
/// `waf`, and the process's memory now.
fn phase_row(name: String, r: &crate::run::sim::PhaseResult, wall_s: f64, waf: f64) -> BenchRow {
    BenchRow {
        name,
        drive: String::new(),
        ios: r.dirs.iter().map(|d| d.ios).sum(),
        bytes: r.dirs.iter().map(|d| d.bytes).sum(),
        wall_s,
        sim_s: (r.end_ns - r.start_ns) as f64 / 1e9,
        peak_rss: peak_rss_bytes(),
        waf,
        huge_page_bytes: huge_page_bytes(),
    }
}

/// Replay `n` random 4 KiB reads at QD32 from an MQSim trace file written
/// to the temporary directory first (not timed): the trace reader, the
/// address mapping and the replay loop on top of the same device core.
fn timed_trace(mut drive: Drive, n: u64) -> (Drive, BenchRow) {
    use std::io::Write;
    // The replay's clock starts at 0: forget the previous row's timing.
    drive.reset_time();
    let pages = drive.user_bytes() / 4096;
    let path = std::env::temp_dir().join(format!("ssdtwin-bench-{}.mqsim", std::process::id()));
    /// Removes the trace file when dropped: after the replay, and also
    /// when writing or replaying it panics.
    struct RemoveFile<'a>(&'a std::path::Path);
    impl Drop for RemoveFile<'_> {
        fn drop(&mut self) {
            crate::fsio::remove_temp(self.0);
        }
    }
    let trace_file = RemoveFile(&path);
    {
        let mut f = std::io::BufWriter::new(crate::fsio::create_temp(&path).expect("temporary trace file"));
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            writeln!(f, "{} 0 {} 8 1", i * 1000, (x % pages) * 8).expect("temporary trace file");
        }
    }
    let mut spec = crate::run::trace::TraceSpec::new("4k randread qd32, trace replay", &path.display().to_string());
    spec.mode = Some(crate::run::trace::ReplayMode::Closed { depth: 32 });
    let mut sim = Simulator::new(drive);
    let t = Instant::now();
    let r = sim.try_run_phase(&Phase::Trace(spec.clone()), 0, 1).expect("the generated trace replays");
    let wall_s = t.elapsed().as_secs_f64();
    drop(trace_file);
    let row = phase_row(spec.name, &r, wall_s, r.counters.waf());
    (sim.into_drive(), row)
}

/// Replay the synthetic Destroyer (`atsb-destroyer-synthetic`, its first
/// `n` requests) as the client-2018 suite does: a secure-erased drive,
/// dependent playback with idle capped at 25 ms, addresses scaled onto the drive when its span is
/// larger. Generation is timed with the replay (the trace is never
/// materialised).
fn timed_synthetic(model: &DriveModel, n: u64) -> BenchRow {
    use crate::run::trace::{OutOfRange, ReplayMode, TraceSpec};
    let mut spec = TraceSpec::new("atsb-destroyer-synthetic, dependent:25", "atsb-destroyer-synthetic");
    spec.mode = Some(ReplayMode::Dependent { max_idle_ns: 25_000_000 });
    spec.address.out_of_range = OutOfRange::Scale;
    spec.max_requests = Some(n);
    let t = Instant::now();
    let mut sim = Simulator::new(Drive::new(model.clone()));
    let r = sim.try_run_phase(&Phase::Trace(spec.clone()), 0, 1).expect("the built-in generator replays");
    let wall_s = t.elapsed().as_secs_f64();
    phase_row(spec.name, &r, wall_s, r.counters.waf())
}

/// A trace test of vendor-2018 on a secure-erased drive as the suite runs
/// it: the wall time of the whole test, its I/Os and the simulated time of
/// its steps. `pcmark8-storage`: 16 GB of test data written, 5 minutes of
/// idle, then a warm-up and three scored rounds of the ten synthetic
/// PCMark 8 traces, their idle replayed whole (about an hour simulated,
/// as the benchmark takes on a real drive); `pcmark10-data-drive`: 5
/// minutes of idle, then three passes of the three file copies.
fn timed_trace_test(model: &DriveModel, name: &str, test: &str) -> BenchRow {
    use crate::study::suite::{self, run_suite, DriveUnderTest, SuiteOptions};
    let suite = suite::load("vendor-2018").expect("vendor-2018 is built in");
    let dut = DriveUnderTest { name: name.into(), overrides: Vec::new(), model: model.clone() };
    let opts = SuiteOptions { only: vec![test.into()], ..SuiteOptions::default() };
    let t = Instant::now();
    let result = run_suite(&suite, std::slice::from_ref(&dut), &opts, None).expect("the trace tests fit a preset");
    let wall_s = t.elapsed().as_secs_f64();
    let steps: Vec<_> = result.runs.iter().flat_map(|r| &r.tests).flat_map(|t| &t.steps).map(|s| &s.io).collect();
    let waf = steps.last().map_or(0.0, |r| r.counters.waf());
    BenchRow {
        name: format!("{test} (vendor-2018)"),
        drive: String::new(),
        ios: steps.iter().map(|r| r.dirs.iter().map(|d| d.ios).sum::<u64>()).sum(),
        bytes: steps.iter().map(|r| r.dirs.iter().map(|d| d.bytes).sum::<u64>()).sum(),
        wall_s,
        sim_s: steps.iter().map(|r| (r.end_ns - r.start_ns) as f64 / 1e9).sum(),
        peak_rss: peak_rss_bytes(),
        waf,
        huge_page_bytes: huge_page_bytes(),
    }
}

/// Reset this process's peak resident memory to what it holds now (Linux
/// 4.0 and later: `5` written to `/proc/self/clear_refs`), so that a row's
/// peak is its own, not an earlier row's. Returns whether it could.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// `ssdtwin review` of `drive` as the command runs it (client-2018, its
/// standard and full passes in parallel on two threads, then the JSON
/// document built), its peak memory measured from a reset high-water mark.
/// `time_scale` shortens the timed steps and trace tests (sizes stay, so
/// the memory is the review's).
fn timed_review(drive: &(String, DriveModel), time_scale: f64) -> BenchRow {
    use crate::study::suite::{self, run_suite, DriveUnderTest, SuiteOptions};
    let suite = suite::load("client-2018").expect("client-2018 is built in");
    let dut = DriveUnderTest { name: drive.0.clone(), overrides: Vec::new(), model: drive.1.clone() };
    let opts = SuiteOptions {
        threads: 2,
        time_scale: time_scale.min(1.0),
        trace_scale: time_scale.min(1.0),
        ..SuiteOptions::default()
    };
    let peak_is_own = reset_peak_rss();
    let t = Instant::now();
    let result = run_suite(&suite, std::slice::from_ref(&dut), &opts, None).expect("client-2018 fits a preset");
    let doc = suite::json::suite_json(&result);
    let wall_s = t.elapsed().as_secs_f64();
    drop(doc);
    let phases = result.runs.iter().flat_map(|r| &r.tests).flat_map(|t| &t.steps).map(|s| &s.io);
    let (mut ios, mut bytes, mut sim_ns) = (0, 0, 0);
    for r in phases {
        ios += r.dirs.iter().map(|d| d.ios).sum::<u64>();
        bytes += r.dirs.iter().map(|d| d.bytes).sum::<u64>();
        sim_ns += r.end_ns - r.start_ns;
    }
    BenchRow {
        name: if peak_is_own { "review (client-2018, 2 passes)" } else { "review (peak: whole process)" }.into(),
        drive: String::new(),
        ios,
        bytes,
        wall_s,
        sim_s: sim_ns as f64 / 1e9,
        peak_rss: peak_rss_bytes(),
        waf: 0.0,
        huge_page_bytes: huge_page_bytes(),
    }
}

/// The drives of the benchmark set: a large one for preconditioning,
/// memory and steady-state writes, the main one for reads and the SLC
/// write path.
#[derive(Debug, Clone)]
pub struct BenchDrives {
    /// Name and model of the large drive (default `intel-660p-2tb`).
    pub large: (String, DriveModel),
    /// Name and model of the main drive (default `intel-660p-1tb`).
    pub main: (String, DriveModel),
}

/// Run the benchmark set. `scale` multiplies the I/O counts (1.0 is the
/// standard set); `large_steady` includes the steady-state
/// preconditioning of the large drive and the random writes on it.
///
/// Rows, in order (names are stable):
/// 1. `precondition full (fast path)` on the large drive: time and memory
///    of a full drive;
/// 2. `precondition steady (fast path)` on the large drive (from a
///    secure erase: fill, then random writes of twice the capacity);
/// 3. `4k randwrite qd32, steady state` on it (GC active);
/// 4. `precondition full (fast path)` on the main drive;
/// 5. `4k randread qd32, full drive` on it;
/// 6. `4k randread qd32, trace replay`: the same kind of reads from an
///    MQSim trace file replayed `closed:32` (parsing included);
/// 7. `128k seqwrite qd32, full drive` on it: on an SLC-cached drive the
///    writes go through the cache and force folding;
/// 8. `atsb-destroyer-synthetic, dependent:25` on a secure-erased main
///    drive as the suite's test runs it (its whole 49.8 M requests at
///    scale 1);
/// 9. `pcmark8-storage (vendor-2018)` and `pcmark10-data-drive
///    (vendor-2018)` on the main drive as the suite runs them (their wall
///    time; at `scale` 1 only: the traces are not scaled);
/// 10. and 11., when the large drive caches its map (and `large_steady`):
///     `precondition steady, cached map` and `4k randwrite, cached map`
///     (a tenth of row 3's writes);
/// 12. when `review`: `review (client-2018, 2 passes)` of the main drive
///     as `ssdtwin review` runs it, with the drive file's map cache: its
///     wall time and its own peak memory (the process's high-water mark is
///     reset first, every earlier drive dropped; the row's name says
///     `peak: whole process` where the kernel cannot reset it). Its I/Os
///     and simulated time are the timed steps'; `scale` below 1 shortens
///     the steps' runtimes and the traces, never the sizes;
/// 13. and after, the data-placement interfaces ([`zoned_rows`]):
///     sequential writes on the generic TLC drive conventional, zoned and
///     through FDP placement identifiers, and random reads of the
///     conventional and the zoned drive written full.
pub fn run(
    drives: &BenchDrives,
    scale: f64,
    large_steady: bool,
    review: bool,
    mut on_row: impl FnMut(&BenchRow),
) -> Vec<BenchRow> {
    let n = |x: f64| ((x * scale) as u64).max(1000);
    let mut rows = Vec::new();
    let mut push = |mut row: BenchRow, drive: &str, rows: &mut Vec<BenchRow>| {
        row.drive = drive.to_string();
        on_row(&row);
        rows.push(row);
    };

    let (large_name, large_cached) = (&drives.large.0, &drives.large.1);
    let large = &whole_map(large_cached);
    let (drive, row) = timed_state(large, DriveState::Filled(100.0), "precondition full (fast path)");
    push(row, large_name, &mut rows);
    drop(drive);
    if large_steady {
        let (drive, row) = timed_state(large, DriveState::Steady, "precondition steady (fast path)");
        push(row, large_name, &mut rows);
        let mut rw = IoSpec::new("4k randwrite qd32, steady state", RwPattern::RandWrite);
        rw.iodepth = 32;
        rw.norandommap = true;
        rw.io_size = Some(n(1_000_000.0) * 4096);
        let (_, row) = timed_run(drive, rw);
        push(row, large_name, &mut rows);
    }

    let (main_name, main) = (&drives.main.0, &whole_map(&drives.main.1));
    let (drive, row) = timed_state(main, DriveState::Filled(100.0), "precondition full (fast path)");
    push(row, main_name, &mut rows);
    let mut rr = IoSpec::new("4k randread qd32, full drive", RwPattern::RandRead);
    rr.iodepth = 32;
    rr.io_size = Some(n(2_000_000.0) * 4096);
    let (drive, row) = timed_run(drive, rr);
    push(row, main_name, &mut rows);
    let (drive, row) = timed_trace(drive, n(2_000_000.0));
    push(row, main_name, &mut rows);
    let mut sw = IoSpec::new("128k seqwrite qd32, full drive", RwPattern::Write);
    sw.bs = 128 * 1024;
    sw.iodepth = 32;
    let capacity = main.user_lpns as u64 * 4096;
    sw.io_size = Some((n(200_000.0) * 128 * 1024).min(capacity / (128 * 1024) * 128 * 1024));
    let (drive, row) = timed_run(drive, sw);
    push(row, main_name, &mut rows);
    drop(drive);
    let row = timed_synthetic(&drives.main.1, n(49_810_000.0));
    push(row, main_name, &mut rows);
    if scale >= 1.0 {
        for test in ["pcmark8-storage", "pcmark10-data-drive"] {
            let row = timed_trace_test(main, main_name, test);
            push(row, main_name, &mut rows);
        }
    }

    if large_steady && large_cached.map_cache.is_some() {
        let (drive, row) = timed_state(large_cached, DriveState::Steady, "precondition steady, cached map");
        push(row, large_name, &mut rows);
        let mut rw = IoSpec::new("4k randwrite, cached map", RwPattern::RandWrite);
        rw.iodepth = 32;
        rw.norandommap = true;
        rw.io_size = Some(n(100_000.0) * 4096);
        let (_, row) = timed_run(drive, rw);
        push(row, large_name, &mut rows);
    }
    if review {
        let row = timed_review(&drives.main, scale);
        push(row, main_name, &mut rows);
    }
    for (row, drive) in zoned_rows(n(200_000.0), n(2_000_000.0)) {
        push(row, drive, &mut rows);
    }
    rows
}

/// Only the data-placement rows of [`run`] (13. and after), with their
/// I/O counts multiplied by `scale` as there: for comparing zoned and FDP
/// runs with conventional ones without the rest of the set.
pub fn run_placement(scale: f64, mut on_row: impl FnMut(&BenchRow)) -> Vec<BenchRow> {
    let n = |x: f64| ((x * scale) as u64).max(1000);
    let mut rows = Vec::new();
    for (mut row, drive) in zoned_rows(n(200_000.0), n(2_000_000.0)) {
        row.drive = drive.to_string();
        on_row(&row);
        rows.push(row);
    }
    rows
}

/// Name of the zoned rows' drive: the generic TLC preset with a zoned
/// namespace.
const ZONED_BENCH_DRIVE: &str = "generic-tlc+zns";
/// Name of the conventional rows' drive beside them.
const GENERIC_BENCH_DRIVE: &str = "generic-tlc-nvme";
/// Name of the FDP row's drive: the generic TLC preset with four
/// initially isolated reclaim unit handles.
const FDP_BENCH_DRIVE: &str = "generic-tlc+fdp";

/// The generic TLC preset (no SLC cache, map in DRAM) with `set`: the
/// same flash, controller and link whatever the namespace.
fn generic_drive(set: &[&str], name: &str) -> DriveModel {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let spec = crate::spec::DriveSpec::load("generic-tlc-nvme", &set).expect("the generic preset loads");
    spec.build(name).expect("the generic preset takes the bench's sections")
}

/// The zoned namespace of the zoned rows: 1,000 zones of 512 MiB, each
/// with a capacity of one 24 MiB block on each of the 16 dies (384 MiB),
/// at most 14 open and 14 active (the ZN540's limits).
const ZNS: &[&str] = &[
    "ftl.user_capacity_bytes=536870912000",
    "zns.zone_size_bytes=536870912",
    "zns.zone_capacity_bytes=402653184",
    "zns.max_open_zones=14",
    "zns.max_active_zones=14",
];

/// The data-placement rows (their names are stable), on the generic TLC
/// drive, each with the drive it ran on:
/// 13. `128k seqwrite qd32, conventional`: `seq_ios` sequential 128 KiB
///     writes on it secure-erased, to compare with
/// 14. `128k seqwrite qd32, zoned (zbd)`: the same writes as fio's
///     `zonemode=zbd` places them on the zoned drive, and
/// 15. `128k seqwrite qd32, FDP (4 RUHs)`: the same writes with fio's
///     `fdp=1`, placement identifiers 0 to 3 in turn (each command
///     switches the FTL's host stream);
/// 16. `precondition full, conventional` and 17. `4k randread qd32,
///     conventional`: `read_ios` random reads of it written full, to
///     compare with
/// 18. `precondition full, zoned`: every zone written to its capacity,
///     and 19. `4k randread qd32, zoned (zbd)`: `read_ios` random reads
///     of the written data.
fn zoned_rows(seq_ios: u64, read_ios: u64) -> Vec<(BenchRow, &'static str)> {
    let mut rows = Vec::new();
    let seq = |name: &str| {
        let mut s = IoSpec::new(name, RwPattern::Write);
        s.bs = 128 * 1024;
        s.iodepth = 32;
        s.io_size = Some(seq_ios * 128 * 1024);
        s
    };
    let rr = |name: &str| {
        let mut rr = IoSpec::new(name, RwPattern::RandRead);
        rr.iodepth = 32;
        rr.io_size = Some(read_ios * 4096);
        rr
    };
    let conventional = generic_drive(&[], GENERIC_BENCH_DRIVE);
    let (_, row) = timed_run(Drive::new(conventional.clone()), seq("128k seqwrite qd32, conventional"));
    rows.push((row, GENERIC_BENCH_DRIVE));
    let zoned = generic_drive(ZNS, ZONED_BENCH_DRIVE);
    let mut zw = seq("128k seqwrite qd32, zoned (zbd)");
    zw.zbd = Some(crate::run::workload::Zbd::default());
    let (_, row) = timed_run(Drive::new(zoned.clone()), zw);
    rows.push((row, ZONED_BENCH_DRIVE));
    let fdp = generic_drive(&["fdp.reclaim_unit_handles=4", "fdp.isolation=initially"], FDP_BENCH_DRIVE);
    let mut fw = seq("128k seqwrite qd32, FDP (4 RUHs)");
    fw.placement = Some(crate::run::workload::Placement::default());
    let (_, row) = timed_run(Drive::new(fdp), fw);
    rows.push((row, FDP_BENCH_DRIVE));
    let (drive, row) = timed_state(&conventional, DriveState::Filled(100.0), "precondition full, conventional");
    rows.push((row, GENERIC_BENCH_DRIVE));
    let (drive, row) = timed_run(drive, rr("4k randread qd32, conventional"));
    drop(drive);
    rows.push((row, GENERIC_BENCH_DRIVE));
    let (drive, row) = timed_state(&zoned, DriveState::Filled(100.0), "precondition full, zoned");
    rows.push((row, ZONED_BENCH_DRIVE));
    let mut zr = rr("4k randread qd32, zoned (zbd)");
    zr.zbd = Some(crate::run::workload::Zbd::default());
    let (_, row) = timed_run(drive, zr);
    rows.push((row, ZONED_BENCH_DRIVE));
    rows
}

/// The drive with its whole map held in DRAM (`[ftl.map_cache]` removed).
fn whole_map(model: &DriveModel) -> DriveModel {
    if model.map_cache.is_none() {
        return model.clone();
    }
    let mut spec = model.spec.clone();
    spec.ftl.map_cache = None;
    spec.build("bench drive, whole map").expect("removing the map cache keeps a valid drive")
}

/// Header of the benchmark table.
pub const HEADER: &str = "workload                         drive                 sim I/Os     wall s   I/Os per wall s   sim GB/wall s   sim s  realtime×    WAF  peak RSS MiB  THP MiB";

/// One row of the benchmark table.
pub fn format_row(r: &BenchRow) -> String {
    format!(
        "{:<32} {:<16} {:>12} {:>10.3} {:>17.0} {:>15.2} {:>7.2} {:>10.2} {:>6.2} {:>13.0} {:>8.0}",
        r.name,
        r.drive,
        r.ios,
        r.wall_s,
        r.ios_per_wall_s(),
        r.gb_per_wall_s(),
        r.sim_s,
        r.realtime_factor(),
        r.waf,
        r.peak_rss as f64 / 1048576.0,
        r.huge_page_bytes as f64 / 1048576.0
    )
}
