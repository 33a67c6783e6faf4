//! A read-only view of the suite-run JSON (`ssdtwin::study::suite::json`): the
//! drives, the passes, the runs (drive × pass) and the tests in suite
//! order, with helpers to reach a test's steps, metrics, latency
//! percentiles and per-second time series.

use serde_json::Value;

use crate::ReportError;

/// One run: a drive in one pass.
pub struct Run<'a> {
    /// Index into [`Doc::drives`].
    pub drive: usize,
    /// Index into [`Doc::passes`].
    pub pass: usize,
    /// The run's tests as written.
    pub tests: &'a [Value],
}

/// One test of the suite.
pub struct Test<'a> {
    /// Test name (as in the suite).
    pub name: String,
    /// Test title.
    pub title: String,
    /// The test as the suite file wrote it (for the score rule).
    pub def: Option<&'a Value>,
}

/// The suite-run document.
pub struct Doc<'a> {
    /// The whole document.
    pub root: &'a Value,
    /// Drive names in run order.
    pub drives: Vec<String>,
    /// Pass names in suite order.
    pub passes: Vec<String>,
    /// Runs in document order.
    pub runs: Vec<Run<'a>>,
    /// Tests in suite order.
    pub tests: Vec<Test<'a>>,
}

/// A string field, or "".
pub fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// A number field, or 0.
pub fn f(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

fn arr<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v.get(k).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

impl<'a> Doc<'a> {
    /// Read the document; fails if it is not a suite run.
    pub fn new(root: &'a Value) -> Result<Doc<'a>, ReportError> {
        let bad = |what: &str| ReportError::NotASuiteRun(what.to_string());
        if root.get("runs").and_then(Value::as_array).is_none() || root.get("suite").is_none() {
            return Err(bad("no `suite` or `runs` (is this the JSON of `ssdtwin suite` or `ssdtwin review`?)"));
        }
        let drives: Vec<String> = arr(root, "drives").iter().map(|d| s(d, "name").to_string()).collect();
        let passes: Vec<String> = arr(root, "passes").iter().map(|p| s(p, "name").to_string()).collect();
        let defs = root.pointer("/suite/definition/test").and_then(Value::as_array);
        let mut runs = Vec::new();
        let mut tests: Vec<Test> = Vec::new();
        for r in arr(root, "runs") {
            let drive = drives.iter().position(|d| d == s(r, "drive")).ok_or_else(|| bad("run of an unknown drive"))?;
            let pass = passes.iter().position(|p| p == s(r, "pass")).ok_or_else(|| bad("run of an unknown pass"))?;
            for t in arr(r, "tests") {
                let name = s(t, "name");
                if !tests.iter().any(|x| x.name == name) {
                    let def = defs.and_then(|d| d.iter().find(|x| s(x, "name") == name));
                    tests.push(Test { name: name.to_string(), title: s(t, "title").to_string(), def });
                }
            }
            runs.push(Run { drive, pass, tests: arr(r, "tests") });
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
    pub fn test(&self, name: &str) -> Option<&'a Value> {
        self.tests.iter().find(|t| s(t, "name") == name)
    }
}

/// The steps of a test result.
pub fn steps(t: &Value) -> &[Value] {
    arr(t, "steps")
}

/// The scores of a test result.
pub fn scores(t: &Value) -> &[Value] {
    arr(t, "scores")
}

/// The direction (`read` or `write`) with more I/Os in a step's result.
pub fn main_dir(result: &Value) -> &'static str {
    let ios = |d: &str| result.pointer(&format!("/{d}/total_ios")).and_then(Value::as_u64).unwrap_or(0);
    if ios("write") > ios("read") {
        "write"
    } else {
        "read"
    }
}

/// Completion-latency percentile (fio key such as `99.900000`) in µs of
/// the main direction of a step, or the maximum for `max`.
pub fn latency_us(result: &Value, key: &str) -> f64 {
    let d = main_dir(result);
    let ns = if key == "max" {
        result.pointer(&format!("/{d}/clat_ns/max"))
    } else {
        result.pointer(&format!("/{d}/clat_ns/percentile/{key}"))
    };
    ns.and_then(Value::as_f64).unwrap_or(0.0) / 1e3
}

/// One second of a test's time line.
pub struct Second<'a> {
    /// Seconds since the test's first step started.
    pub t: f64,
    /// Length of this point in s: its `span_s` (1 unless the phase was
    /// long enough for its series to be coarsened), less for the last
    /// point of a phase.
    pub dur: f64,
    /// The second as the JSON wrote it.
    pub v: &'a Value,
}

/// Every second of a test (steps and the idle after them) on one time
/// line starting at the first step.
pub fn timeline(t: &Value) -> Vec<Second<'_>> {
    let mut out = Vec::new();
    let first = steps(t).first().and_then(|st| st.pointer("/result/start_ns")).and_then(Value::as_f64);
    let Some(first) = first else { return out };
    for st in steps(t) {
        for ph in [st.get("result"), st.get("idle")].into_iter().flatten().filter(|p| !p.is_null()) {
            let start = (f(ph, "start_ns") - first) / 1e9;
            let elapsed = f(ph, "elapsed_ns") / 1e9;
            for sec in arr(ph, "time_series") {
                let dur = (elapsed - f(sec, "t_s")).clamp(1e-3, span_s(sec));
                out.push(Second { t: start + f(sec, "t_s"), dur, v: sec });
            }
        }
    }
    out
}

/// Seconds of the step result `result` alone, from its start.
pub fn step_seconds(result: &Value) -> Vec<Second<'_>> {
    let elapsed = f(result, "elapsed_ns") / 1e9;
    arr(result, "time_series")
        .iter()
        .map(|v| Second { t: f(v, "t_s"), dur: (elapsed - f(v, "t_s")).clamp(1e-3, span_s(v)), v })
        .collect()
}

/// Length of a series point, s (`span_s`; 1 in files written before
/// series were coarsened).
pub fn span_s(point: &Value) -> f64 {
    point.get("span_s").and_then(Value::as_f64).unwrap_or(1.0).max(1e-3)
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
