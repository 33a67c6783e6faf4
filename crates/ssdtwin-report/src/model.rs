//! A read-only view of a suite run's record
//! ([`ssdtwin::study::record::SuiteRecord`], the document `ssdtwin suite`
//! and `ssdtwin review` write): the drives, the passes, the runs (drive ×
//! pass) and the tests in suite order, with helpers to reach a test's
//! steps, latency percentiles and per-second time series.

use ssdtwin::run::stats::Second as SecondRecord;
use ssdtwin::study::record::{PhaseRecord, SuiteRecord, TestRecord};
use ssdtwin::study::suite::def::TestDef;

use crate::ReportError;

/// One run: a drive in one pass.
pub struct Run<'a> {
    /// Index into [`Doc::drives`].
    pub drive: usize,
    /// Index into [`Doc::passes`].
    pub pass: usize,
    /// The run's tests.
    pub tests: &'a [TestRecord],
}

/// One test of the suite.
pub struct Test<'a> {
    /// Test name (as in the suite).
    pub name: String,
    /// Test title.
    pub title: String,
    /// The test as the suite file wrote it (for the score rule).
    pub def: Option<&'a TestDef>,
}

/// The suite-run document.
pub struct Doc<'a> {
    /// The whole record.
    pub root: &'a SuiteRecord,
    /// Drive names in run order.
    pub drives: Vec<String>,
    /// Pass names in suite order.
    pub passes: Vec<String>,
    /// Runs in document order.
    pub runs: Vec<Run<'a>>,
    /// Tests in suite order.
    pub tests: Vec<Test<'a>>,
}

impl<'a> Doc<'a> {
    /// Index the record; fails if a run names a drive or pass the record
    /// does not list.
    pub fn new(root: &'a SuiteRecord) -> Result<Doc<'a>, ReportError> {
        let bad = |what: &str| ReportError::NotASuiteRun(what.to_string());
        let drives: Vec<String> = root.drives.iter().map(|d| d.name.clone()).collect();
        let passes: Vec<String> = root.passes.iter().map(|p| p.name.clone()).collect();
        let defs = &root.suite.definition.tests;
        let mut runs = Vec::new();
        let mut tests: Vec<Test> = Vec::new();
        for r in &root.runs {
            let drive = drives.iter().position(|d| *d == r.drive).ok_or_else(|| bad("run of an unknown drive"))?;
            let pass = passes.iter().position(|p| *p == r.pass).ok_or_else(|| bad("run of an unknown pass"))?;
            for t in &r.tests {
                if !tests.iter().any(|x| x.name == t.name) {
                    let def = defs.iter().find(|x| x.name == t.name);
                    tests.push(Test { name: t.name.clone(), title: t.title.clone(), def });
                }
            }
            runs.push(Run { drive, pass, tests: &r.tests });
        }
        Ok(Doc { root, drives, passes, runs, tests })
    }

    /// Legend label of a run: the drive, and the pass when there are several.
    pub fn label(&self, r: &Run) -> String {
        if self.passes.len() > 1 {
            format!("{} · {}", self.drives[r.drive], self.passes[r.pass])
        } else {
            self.drives[r.drive].clone()
        }
    }
}

impl<'a> Run<'a> {
    /// This run's result of test `name`.
    pub fn test(&self, name: &str) -> Option<&'a TestRecord> {
        self.tests.iter().find(|t| t.name == name)
    }
}

/// Completion-latency percentile (fio key such as `99.900000`) in µs of
/// the main direction of a step, or the maximum for `max`.
pub fn latency_us(result: &PhaseRecord, key: &str) -> f64 {
    let d = result.main_dir();
    if key == "max" {
        d.clat_ns.max as f64 / 1e3
    } else {
        d.percentile_us(key)
    }
}

/// One second of a test's time line.
pub struct Second<'a> {
    /// Seconds since the test's first step started.
    pub t: f64,
    /// Length of this point in s: its `span_s` (1 unless the phase was
    /// long enough for its series to be coarsened), less for the last
    /// point of a phase.
    pub dur: f64,
    /// The second as recorded.
    pub v: &'a SecondRecord,
}

/// Every second of a test (steps and the idle after them) on one time
/// line starting at the first step.
pub fn timeline(t: &TestRecord) -> Vec<Second<'_>> {
    let mut out = Vec::new();
    let Some(first) = t.steps.first().map(|st| st.result.start_ns as f64) else { return out };
    for st in &t.steps {
        for ph in std::iter::once(&st.result).chain(st.idle.as_ref()) {
            let start = (ph.start_ns as f64 - first) / 1e9;
            let elapsed = ph.elapsed_ns as f64 / 1e9;
            for sec in &ph.time_series {
                let dur = (elapsed - sec.t_s as f64).clamp(1e-3, span_s(sec));
                out.push(Second { t: start + sec.t_s as f64, dur, v: sec });
            }
        }
    }
    out
}

/// Seconds of the step result `result` alone, from its start.
pub fn step_seconds(result: &PhaseRecord) -> Vec<Second<'_>> {
    let elapsed = result.elapsed_ns as f64 / 1e9;
    result
        .time_series
        .iter()
        .map(|v| Second { t: v.t_s as f64, dur: (elapsed - v.t_s as f64).clamp(1e-3, span_s(v)), v })
        .collect()
}

/// Length of a series point, s (`span_s`; 1 in files written before
/// series were coarsened).
pub fn span_s(point: &SecondRecord) -> f64 {
    (point.span_s as f64).max(1e-3)
}

/// A duration as the suite files write it ("400s", "500ms", "2min", "1h") in s.
pub fn parse_secs(text: &str) -> Option<f64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
    let n: f64 = t[..split].replace('_', "").parse().ok()?;
    let mult = match t[split..].trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Some(n * mult)
}
