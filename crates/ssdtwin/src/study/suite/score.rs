//! Scores as the reviews report them, computed from per-step results.
//!
//! Models: a step's throughput is its bytes (or commands) over its active
//! time: for a burst step the time commands were outstanding (the review's
//! burst figure is the speed during the bursts, not diluted by the idle
//! between them), for a trace step likewise the time commands were
//! outstanding (the Storage Bench's "average data rate" leaves out the
//! idle between the trace's requests), otherwise the measured time of the
//! step. Percentiles are of completion latency, per direction or over
//! both (the two directions' histograms merged); `energy` is the drive's
//! energy over the step. Reads and
//! writes are added (mixed tests report total throughput). MB/s are 10^6
//! bytes per second. Latencies are completion latencies over both
//! directions. The steady-state score takes the last `window` whole seconds
//! of the step's per-second IOPS and reports their mean and
//! consistency = mean / population standard deviation (absent when the
//! deviation is zero).
//!
//! A whole-drive fill (`fill`) is scored from the step's per-second
//! series as reviews read their fill charts: the rate over the whole fill
//! (bytes over time), the data written before the rate fell for good —
//! the first of [`FILL_SUSTAIN_POINTS`] points in a row that are all
//! below [`FILL_DROP`] of the rate the fill began at (the median of its
//! first [`FILL_SUSTAIN_POINTS`] points) — and the rate from there
//! to the end. A drive whose rate never falls that far (no cache, or one
//! larger than the drive) has no cache size and no post-cache rate. The
//! threshold and the run length are ssdtwin's choices: the reviews read
//! the drop off the chart.
//!
//! Power (drives with a power model): `power` is the step's energy over
//! its whole duration (bursts and the idle between them included), and
//! `efficiency` the MB it moved per joule — MB/s per W, as reviews chart
//! it. `idle_power` is the mean power of the last whole second of the idle
//! after the step (the state the drive settled in); with APST on, that is
//! the deepest state it reached.

use serde::{Deserialize, Serialize};

use super::plan::{Metric, ScoreRule, StepPlan};
use super::run::StepResult;
use crate::run::sim::PhaseResult;

/// One reported figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreValue {
    /// What it is, e.g. `QD1–4`, `qd32`, `consistency`.
    pub label: String,
    /// The value (`None` when undefined).
    pub value: Option<f64>,
    /// Unit, e.g. `MB/s`.
    pub unit: String,
    /// Steps it was computed from.
    pub steps: Vec<String>,
}

pub use crate::study::metric::active_ns;

/// A step's value of `m` (`None` when undefined: power figures of a drive
/// without a power model, or idle power without an idle).
pub fn step_metric(r: &StepResult, m: Metric) -> Option<f64> {
    m.value(&r.io, r.idle.as_ref())
}

/// Per-second IOPS of the last `window_ns` whole seconds of a step:
/// (values, mean, population standard deviation). A step long enough to
/// have its series coarsened (an hour or more) gives its points' mean
/// IOPS over the window instead.
pub fn steady_window(r: &PhaseResult, window_ns: u64) -> (Vec<u64>, f64, f64) {
    let point_ns = r.series.point_ns();
    let whole = ((r.end_ns - r.start_ns) / point_ns) as usize;
    let want = ((window_ns as f64 / point_ns as f64).round() as usize).max(1);
    let secs = &r.series.seconds[..whole.min(r.series.seconds.len())];
    let vals: Vec<u64> =
        secs[secs.len().saturating_sub(want)..].iter().map(|s| s.ios() / r.series.resolution_s).collect();
    if vals.is_empty() {
        return (vals, 0.0, 0.0);
    }
    let n = vals.len() as f64;
    let mean = vals.iter().sum::<u64>() as f64 / n;
    let var = vals.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
    (vals, mean, var.sqrt())
}

/// The scores of a test from its steps' results (`time_scale` scales the
/// steady-state window as it scaled the runtime).
pub fn compute(rule: &ScoreRule, steps: &[StepPlan], results: &[&StepResult], time_scale: f64) -> Vec<ScoreValue> {
    match rule {
        ScoreRule::Mean { metric, filter, label, also } => {
            let chosen: Vec<usize> = (0..steps.len())
                .filter(|&i| filter.iter().all(|(f, vals)| steps[i].field(f).is_some_and(|x| vals.contains(&x))))
                .collect();
            let names: Vec<String> = chosen.iter().map(|&i| steps[i].name.clone()).collect();
            std::iter::once(metric)
                .chain(also)
                .enumerate()
                .map(|(k, m)| {
                    let vals: Option<Vec<f64>> = chosen.iter().map(|&i| step_metric(results[i], *m)).collect();
                    ScoreValue {
                        label: if k == 0 { label.clone() } else { format!("{label} {}", metric_label(*m)) },
                        value: vals.map(|v| v.iter().sum::<f64>() / v.len() as f64),
                        unit: m.unit().into(),
                        steps: names.clone(),
                    }
                })
                .collect()
        }
        ScoreRule::SteadyState { window_ns, label } => {
            let window = ((*window_ns as f64) * time_scale).round() as u64;
            let (_, mean, sd) = steady_window(&results[0].io, window);
            let step = vec![steps[0].name.clone()];
            vec![
                ScoreValue { label: label.clone(), value: Some(mean), unit: "IOPS".into(), steps: step.clone() },
                ScoreValue {
                    label: "consistency".into(),
                    value: (sd > 0.0).then(|| mean / sd),
                    unit: "mean/σ".into(),
                    steps: step,
                },
            ]
        }
        ScoreRule::Each { metric, also } => {
            let mut out = Vec::new();
            for (s, r) in steps.iter().zip(results) {
                for (k, m) in std::iter::once(metric).chain(also).enumerate() {
                    out.push(ScoreValue {
                        label: if k == 0 { s.name.clone() } else { format!("{} {}", s.name, metric_label(*m)) },
                        value: step_metric(r, *m),
                        unit: m.unit().into(),
                        steps: vec![s.name.clone()],
                    });
                }
            }
            out
        }
        ScoreRule::Fill => {
            let (average, cache_gb, post) = fill_scores(&results[0].io);
            let step = vec![steps[0].name.clone()];
            let value = |label: &str, value: Option<f64>, unit: &str| ScoreValue {
                label: label.into(),
                value,
                unit: unit.into(),
                steps: step.clone(),
            };
            vec![
                value("average", Some(average), "MB/s"),
                value("cache size", cache_gb, "GB"),
                value("after the cache", post, "MB/s"),
            ]
        }
        ScoreRule::Pick(items) => items
            .iter()
            .map(|(i, m, label)| ScoreValue {
                label: label.clone(),
                value: step_metric(results[*i], *m),
                unit: m.unit().into(),
                steps: vec![steps[*i].name.clone()],
            })
            .collect(),
        ScoreRule::Pcmark8(rule) => super::pcmark::pcmark8(rule, steps, results),
        ScoreRule::PcmarkVantage(rule) => super::pcmark::vantage(rule, steps, results),
        ScoreRule::Pcmark10(rule) => super::pcmark::pcmark10(rule, steps, results),
    }
}

/// A fill's rate must fall below this share of its initial rate to count
/// as the end of the cache.
pub const FILL_DROP: f64 = 0.7;

/// Points (seconds) in a row the fall must last, and the points the
/// initial rate is the median of.
pub const FILL_SUSTAIN_POINTS: usize = 5;

/// The points of a fill: (GB written at the point's start, GB at its end,
/// MB/s over the point), GB = 10^9 bytes.
pub fn fill_curve(r: &PhaseResult) -> Vec<(f64, f64, f64)> {
    let elapsed_s = (r.end_ns - r.start_ns) as f64 / 1e9;
    let mut gb = 0.0;
    r.series
        .seconds
        .iter()
        .map(|p| {
            let dur = (elapsed_s - p.t_s as f64).clamp(1e-3, p.span_s.max(1) as f64);
            let start = gb;
            gb += p.write_bytes as f64 / 1e9;
            (start, gb, p.write_bytes as f64 / 1e6 / dur)
        })
        .collect()
}

/// The fill's scores: average rate (MB/s), cache size (GB written before
/// the fall; `None` without one) and post-cache rate (MB/s; `None`
/// without a fall).
pub fn fill_scores(r: &PhaseResult) -> (f64, Option<f64>, Option<f64>) {
    let curve = fill_curve(r);
    let elapsed_s = (r.end_ns - r.start_ns) as f64 / 1e9;
    let total_gb = curve.last().map_or(0.0, |p| p.1);
    let average = if elapsed_s > 0.0 { total_gb * 1e3 / elapsed_s } else { 0.0 };
    let n = FILL_SUSTAIN_POINTS;
    if curve.len() < 2 * n {
        return (average, None, None);
    }
    let mut first: Vec<f64> = curve[..n].iter().map(|p| p.2).collect();
    first.sort_by(f64::total_cmp);
    let initial = first[n / 2];
    let fall = (0..=curve.len() - n).find(|&i| curve[i..i + n].iter().all(|p| p.2 < FILL_DROP * initial));
    let Some(i) = fall else { return (average, None, None) };
    let cache_gb = curve[i].0;
    let after_s: f64 = elapsed_s - r.series.seconds[i].t_s as f64;
    let post = (after_s > 0.0).then(|| (total_gb - cache_gb) * 1e3 / after_s);
    (average, Some(cache_gb), post)
}

fn metric_label(m: Metric) -> String {
    m.label()
}
