//! Speed benchmark of the simulator itself.
//!
//! Runs the workloads that matter for speed and reports, for each: host
//! I/Os simulated, wall seconds, simulated I/Os per wall second, the
//! real-time factor (simulated seconds per wall second; above 1 means the
//! twin is faster than the drive) and the process's peak resident memory.
//! The output format is stable so that figures can be compared over time.

use std::time::Instant;

use crate::drive::Drive;
use crate::sim::Simulator;
use crate::spec::DriveModel;
use crate::state::DriveState;
use crate::workload::{IoSpec, Phase, RwPattern};

/// One benchmark row.
#[derive(Debug, Clone)]
pub struct BenchRow {
    /// Workload name.
    pub name: String,
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
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn timed_state(model: &DriveModel, state: DriveState, name: &str) -> (Drive, BenchRow) {
    let mut drive = Drive::new(model.clone());
    let t = Instant::now();
    state.apply_fast(&mut drive, 1);
    let wall_s = t.elapsed().as_secs_f64();
    let bytes = drive.ftl.counters.host_slots_written * 4096;
    let row =
        BenchRow { name: name.into(), ios: 0, bytes, wall_s, sim_s: 0.0, peak_rss: peak_rss_bytes(), waf: drive.waf() };
    (drive, row)
}

fn timed_run(drive: Drive, spec: IoSpec) -> (Drive, BenchRow) {
    let mut sim = Simulator::new(drive);
    let before = crate::stats::Counters::of(&sim.drive);
    let t = Instant::now();
    let r = sim.run_phase(&Phase::Io(spec.clone()), 0, 1);
    let wall_s = t.elapsed().as_secs_f64();
    let ios: u64 = r.dirs.iter().map(|d| d.ios).sum();
    let bytes: u64 = r.dirs.iter().map(|d| d.bytes).sum();
    let waf = crate::stats::Counters::of(&sim.drive).since(&before).waf();
    let row = BenchRow {
        name: spec.name.clone(),
        ios,
        bytes,
        wall_s,
        sim_s: (r.end_ns - r.start_ns) as f64 / 1e9,
        peak_rss: peak_rss_bytes(),
        waf,
    };
    (sim.drive, row)
}

/// Run the benchmark set on a drive. `scale` multiplies the I/O counts
/// (1.0 is the standard set).
pub fn run(model: &DriveModel, scale: f64, mut on_row: impl FnMut(&BenchRow)) -> Vec<BenchRow> {
    let n = |x: f64| ((x * scale) as u64).max(1000);
    let capacity = model.user_lpns as u64 * 4096;
    let mut rows = Vec::new();
    let mut push = |row: BenchRow, rows: &mut Vec<BenchRow>| {
        on_row(&row);
        rows.push(row);
    };

    let (drive, row) = timed_state(model, DriveState::Filled(100.0), "precondition full (fast path)");
    push(row, &mut rows);
    let mut rr = IoSpec::new("4k randread qd32, full drive", RwPattern::RandRead);
    rr.iodepth = 32;
    rr.io_size = Some(n(2_000_000.0) * 4096);
    let (_, row) = timed_run(drive, rr);
    push(row, &mut rows);

    let (drive, row) = timed_state(model, DriveState::Steady, "precondition steady (fast path)");
    push(row, &mut rows);
    let mut rw = IoSpec::new("4k randwrite qd32, steady state", RwPattern::RandWrite);
    rw.iodepth = 32;
    rw.norandommap = true;
    rw.io_size = Some(n(1_000_000.0) * 4096);
    let (_, row) = timed_run(drive, rw);
    push(row, &mut rows);

    let drive = Drive::new(model.clone());
    let mut sw = IoSpec::new("128k seqwrite qd32, fresh drive", RwPattern::Write);
    sw.bs = 128 * 1024;
    sw.iodepth = 32;
    sw.io_size = Some((n(200_000.0) * 128 * 1024).min(capacity / (128 * 1024) * 128 * 1024));
    let (_, row) = timed_run(drive, sw);
    push(row, &mut rows);
    rows
}

/// Header of the benchmark table.
pub const HEADER: &str = "workload                                 sim I/Os     wall s   I/Os per wall s   sim GB/wall s   sim s  realtime×    WAF  peak RSS MiB";

/// One row of the benchmark table.
pub fn format_row(r: &BenchRow) -> String {
    format!(
        "{:<40} {:>9} {:>10.3} {:>17.0} {:>15.2} {:>7.2} {:>10.2} {:>6.2} {:>13.0}",
        r.name,
        r.ios,
        r.wall_s,
        r.ios_per_wall_s(),
        r.gb_per_wall_s(),
        r.sim_s,
        r.realtime_factor(),
        r.waf,
        r.peak_rss as f64 / 1048576.0
    )
}
