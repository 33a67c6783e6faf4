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

use crate::common::small_slc_model;

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
