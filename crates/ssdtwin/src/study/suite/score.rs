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
    }
}

fn metric_label(m: Metric) -> String {
    m.label()
}
