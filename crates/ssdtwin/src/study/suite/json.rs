//! A suite run as one JSON document, and the score table.
//!
//! Models: the document holds everything needed to reproduce and report a
//! run: the tool version, the suite (its TOML text and the parsed
//! definition), the options (seed, scale, selected tests, state), every
//! drive as resolved (overrides applied), and per run (drive × pass), per
//! test, per step: the step as run (fio options), its limits, its metrics,
//! the fio-shaped phase result ([`crate::study::record::PhaseRecord`], with the
//! per-second time series) and the idle after it. A flat `scores` list
//! (test, label, unit, drive, pass, value) is what the HTML report draws
//! as bars. No wall-clock time and no thread count appear, so the same
//! inputs give byte-identical output.
//!
//! Leaves out: HTML (the report issue builds it from this document).

use serde_json::Value;

use super::plan::{IdleRule, Metric, Prep};
use super::run::SuiteResult;
use super::score::{active_ns, step_metric};
use crate::study::metric::Dir;
use crate::study::record::{
    self, DriveRecord, IdleRuleRecord, PassRecord, ScoreRow, StepLimits, StepMetrics, StepRecord, SuiteInfo,
    SuiteOptionsRecord, SuiteRecord, SuiteRunRecord, TestRecord,
};
use crate::study::report::phase_record;

fn prep_name(p: &Prep) -> String {
    let size = |s: &Option<u64>| s.map_or(String::new(), |b| format!(":{b}"));
    match p {
        Prep::Fresh => "fresh".into(),
        Prep::Data(s) => format!("data{}", size(s)),
        Prep::Fragmented(s) => format!("fragmented{}", size(s)),
        Prep::State(st) => st.to_string(),
    }
}

/// The whole suite run as its record.
pub fn suite_record(r: &SuiteResult) -> SuiteRecord {
    let s = &r.suite;
    let o = &r.options;
    let drives = r
        .drives
        .iter()
        .map(|d| DriveRecord {
            name: d.name.clone(),
            overrides: d.overrides.clone(),
            user_capacity_bytes: d.capacity(),
            spec: d.model.spec.clone(),
        })
        .collect();
    let passes = r
        .passes
        .iter()
        .map(|p| PassRecord {
            name: p.name.clone(),
            description: p.description.clone(),
            base: p.base.map(|b| b.to_string()),
            prep_idle_ns: p.prep_idle_ns,
        })
        .collect();
    let mut flat = Vec::new();
    let mut runs = Vec::new();
    for run in &r.runs {
        let drive = &r.drives[run.drive].name;
        let pass = &r.passes[run.pass].name;
        let mut tests = Vec::new();
        for t in &run.tests {
            let plan = &s.tests[t.setup.test];
            for v in &t.scores {
                flat.push(ScoreRow {
                    test: plan.name.clone(),
                    title: plan.title.clone(),
                    label: v.label.clone(),
                    unit: v.unit.clone(),
                    drive: drive.clone(),
                    pass: pass.clone(),
                    value: v.value,
                });
            }
            let steps = t
                .steps
                .iter()
                .zip(&plan.steps)
                .zip(&t.setup.steps)
                .map(|((res, sp), step)| {
                    let (io_size, runtime_ns) = super::run::step_limits(step);
                    let total =
                        res.io.end_ns - res.io.start_ns + res.idle.as_ref().map_or(0, |i| i.end_ns - i.start_ns);
                    StepRecord {
                        step: sp.name.clone(),
                        sweep: sp.sweep.iter().cloned().collect(),
                        limits: StepLimits { io_size, runtime_ns },
                        metrics: StepMetrics {
                            iops: step_metric(res, Metric::Iops(Dir::All)),
                            mbps: step_metric(res, Metric::Mbps(Dir::All)),
                            mean_lat_us: step_metric(res, Metric::Lat(Dir::All)),
                            max_lat_us: step_metric(res, Metric::MaxLat(Dir::All)),
                            power_w: step_metric(res, Metric::Power),
                            mb_per_s_per_w: step_metric(res, Metric::Efficiency),
                            idle_power_mw: step_metric(res, Metric::IdlePower),
                            active_ns: active_ns(&res.io),
                            duty_cycle_with_idle: if total == 0 { 0.0 } else { res.io.busy_ns as f64 / total as f64 },
                        },
                        result: phase_record(&res.io),
                        idle: res.idle.as_ref().map(phase_record),
                    }
                })
                .collect();
            tests.push(TestRecord {
                name: plan.name.clone(),
                title: plan.title.clone(),
                state: prep_name(&plan.prep),
                extra_op: plan.extra_op,
                capacity_bytes: t.setup.capacity,
                prep: t.setup.prep.clone(),
                prep_idle: t.prep_idle.as_ref().map(phase_record),
                idle_rule: match plan.idle {
                    IdleRule::None => None,
                    IdleRule::Fixed(ns) => Some(IdleRuleRecord::Fixed { idle_ns: ns }),
                    IdleRule::DutyCycle(d) => Some(IdleRuleRecord::DutyCycle { duty_cycle: d }),
                },
                scores: t.scores.clone(),
                steps,
            });
        }
        runs.push(SuiteRunRecord { drive: drive.clone(), pass: pass.clone(), tests });
    }
    SuiteRecord {
        ssdtwin_version: env!("CARGO_PKG_VERSION").into(),
        suite: SuiteInfo {
            name: s.def.name.clone(),
            title: s.def.title.clone(),
            source: s.def.source.clone(),
            origin: s.origin.clone(),
            definition: s.def.clone(),
            toml: s.source.clone(),
        },
        options: SuiteOptionsRecord {
            seed: o.seed,
            scale: o.scale,
            time_scale: o.time_scale,
            only: o.only.clone(),
            state: o.state.map(|st| st.to_string()),
        },
        drives,
        passes,
        runs,
        scores: flat,
        repeat: r.repeat.clone(),
    }
}

/// The whole suite run as JSON (its record, keys sorted).
pub fn suite_json(r: &SuiteResult) -> Value {
    record::to_json(&suite_record(r))
}

fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(x) if x.abs() >= 1000.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// The scores as a compact table: one row per score, one column per
/// drive and pass.
pub fn score_table(r: &SuiteResult) -> String {
    let s = &r.suite;
    let seeds = match &r.repeat {
        Some(rep) => format!(
            "seeds {}–{} (median of {} runs; the spread is below)",
            rep.seeds[0],
            rep.seeds[rep.seeds.len() - 1],
            rep.seeds.len()
        ),
        None => format!("seed {}", r.options.seed),
    };
    let mut out = format!(
        "{} — {}\n{seeds} · scale {} · time scale {}\n\n",
        s.def.name, s.def.title, r.options.scale, r.options.time_scale
    );
    let Some(first) = r.runs.first() else {
        return out;
    };
    let mut rows: Vec<(String, String, String)> = Vec::new();
    for t in &first.tests {
        let name = &s.tests[t.setup.test].name;
        for (k, v) in t.scores.iter().enumerate() {
            rows.push((if k == 0 { name.clone() } else { String::new() }, v.label.clone(), v.unit.clone()));
        }
    }
    let w0 = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(4).max(4);
    let w1 = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(5).max(5);
    let w2 = rows.iter().map(|r| r.2.chars().count()).max().unwrap_or(4).max(4);
    let cw = r
        .drives
        .iter()
        .map(|d| d.name.chars().count() / r.passes.len().max(1) + 2)
        .chain(r.passes.iter().map(|p| p.name.len() + 2))
        .max()
        .unwrap_or(10)
        .max(11);
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    let lead = w0 + w1 + w2 + 4;
    let mut h1 = " ".repeat(lead);
    let mut h2 = format!("{}  {}  {}", pad("test", w0), pad("score", w1), pad("unit", w2));
    for d in &r.drives {
        h1.push_str(&format!("{:>w$}", d.name, w = cw * r.passes.len()));
        for p in &r.passes {
            h2.push_str(&format!("{:>cw$}", p.name));
        }
    }
    out.push_str(h1.trim_end());
    out.push('\n');
    out.push_str(&h2);
    out.push('\n');
    let mut i = 0;
    for t in &first.tests {
        for k in 0..t.scores.len() {
            let (a, b, c) = &rows[i];
            let mut line = format!("{}  {}  {}", pad(a, w0), pad(b, w1), pad(c, w2));
            for run in &r.runs {
                let v = run
                    .tests
                    .iter()
                    .find(|x| x.setup.test == t.setup.test)
                    .and_then(|x| x.scores.get(k))
                    .and_then(|x| x.value);
                line.push_str(&format!("{:>cw$}", fmt_value(v)));
            }
            out.push_str(&line);
            out.push('\n');
            i += 1;
        }
    }
    out
}
