//! `ssdtwin._ssdtwin`: the Python extension module behind the `ssdtwin`
//! package (`python/ssdtwin`). Thin: each function converts its arguments,
//! releases the GIL while the library works, and returns JSON text (see
//! [`glue`]); library errors become `ssdtwin.SsdtwinError` with the
//! library's message (file, field, option named).

#![deny(missing_docs)]

mod glue;
mod stepper;

use glue::{DriveSource, JobSource, SuiteArgs};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyTuple};
use stepper::{Columns, Record, Stepper};

create_exception!(_ssdtwin, SsdtwinError, PyValueError, "An error reported by the ssdtwin library.");

fn err(e: anyhow::Error) -> PyErr {
    SsdtwinError::new_err(format!("{e:#}"))
}

fn drive(source: String, is_text: bool, set: Vec<String>) -> DriveSource {
    DriveSource { source, is_text, set }
}

/// Names of the drive presets shipped in the library.
#[pyfunction]
fn presets() -> Vec<String> {
    glue::presets()
}

/// Names of the built-in benchmark suites.
#[pyfunction]
fn suites() -> Vec<String> {
    glue::suites()
}

/// Presets that have published figures (`validate`).
#[pyfunction]
fn figure_presets() -> Vec<String> {
    glue::figure_presets()
}

/// Load and validate a drive: `(name, resolved TOML, spec JSON)`.
#[pyfunction]
#[pyo3(signature = (source, is_text, set))]
fn resolve_drive(
    py: Python<'_>,
    source: String,
    is_text: bool,
    set: Vec<String>,
) -> PyResult<(String, String, String)> {
    let d = drive(source, is_text, set);
    py.allow_threads(|| glue::resolve_drive(&d)).map_err(err)
}

/// Run a job (phases of fio options, or a job file's text, which may
/// replay a trace) on a drive from a state, by the code path of `ssdtwin
/// run`: the JSON text `ssdtwin run --json` writes. `progress(fraction)` is
/// called during a trace replay.
#[pyfunction]
#[pyo3(signature = (source, is_text, set, state, seed, phases=None, job_text=None, job_origin=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    source: String,
    is_text: bool,
    set: Vec<String>,
    state: String,
    seed: u64,
    phases: Option<Vec<Vec<(String, String)>>>,
    job_text: Option<String>,
    job_origin: Option<String>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let d = drive(source, is_text, set);
    let job = match (phases, job_text) {
        (Some(p), None) => JobSource::Phases(p),
        (None, Some(text)) => JobSource::File { text, origin: job_origin.unwrap_or_else(|| "<job text>".into()) },
        _ => return Err(SsdtwinError::new_err("give either phases or job_text")),
    };
    // Progress goes to a Python callable, taking the GIL only for the call.
    let progress = progress.map(|cb| {
        Box::new(move |x: f64| {
            Python::with_gil(|py| {
                let _ = cb.call1(py, (x,));
            })
        }) as Box<dyn FnMut(f64) + Send>
    });
    py.allow_threads(|| glue::run(&d, &state, seed, &job, progress)).map_err(err)
}

/// Run a suite: `(JSON text, report page path or None)`.
#[pyfunction]
#[pyo3(signature = (suite, drives, state=None, seed=1, scale=1.0, time_scale=None, only=Vec::new(), threads=1, out=None, repeat=1))]
#[allow(clippy::too_many_arguments)]
fn run_suite(
    py: Python<'_>,
    suite: String,
    drives: Vec<(String, bool, Vec<String>)>,
    state: Option<String>,
    seed: u64,
    scale: f64,
    time_scale: Option<f64>,
    only: Vec<String>,
    threads: usize,
    out: Option<String>,
    repeat: u32,
) -> PyResult<(String, Option<String>)> {
    let a = SuiteArgs {
        suite,
        drives: drives.into_iter().map(|(s, t, set)| drive(s, t, set)).collect(),
        state,
        seed,
        scale,
        time_scale,
        only,
        threads,
        out,
        repeat,
    };
    py.allow_threads(|| glue::run_suite(&a)).map_err(err)
}

/// Measure a preset's published figures: JSON list of verdicts.
#[pyfunction]
#[pyo3(signature = (preset, quick=false))]
fn validate(py: Python<'_>, preset: String, quick: bool) -> PyResult<String> {
    py.allow_threads(|| glue::validate(&preset, quick)).map_err(err)
}

/// The characterization battery as a fio job file.
#[pyfunction]
#[pyo3(signature = (time_scale=1.0))]
fn fit_battery(time_scale: f64) -> PyResult<String> {
    glue::fit_battery(time_scale).map_err(err)
}

/// Fit a twin to fio results of the battery: JSON text (see
/// `glue::fit`). `executor`: `None` replays every candidate on this
/// machine's cores; else a callable given a list of replay tasks (JSON
/// text) that returns the answers of `fit_replay` for them, in order (the
/// Python package's Ray backend). An exception it raises ends the fit and
/// is raised again here.
#[pyfunction]
#[pyo3(signature = (source, is_text, set, results, replay_time="2s".to_string(), read_iterations=60,
                    state="fresh".to_string(), refine_iterations=40, executor=None))]
#[allow(clippy::too_many_arguments)]
fn fit(
    py: Python<'_>,
    source: String,
    is_text: bool,
    set: Vec<String>,
    results: Vec<String>,
    replay_time: String,
    read_iterations: u64,
    state: String,
    refine_iterations: u64,
    executor: Option<PyObject>,
) -> PyResult<String> {
    let d = drive(source, is_text, set);
    let raised: std::sync::Arc<std::sync::Mutex<Option<PyErr>>> = Default::default();
    let exec = executor.map(|callable| {
        let raised = raised.clone();
        Box::new(move |tasks: Vec<String>| {
            Python::with_gil(|py| {
                callable.call1(py, (tasks,)).and_then(|r| r.extract::<Vec<String>>(py)).map_err(|e| {
                    let why = e.to_string();
                    raised.lock().expect("not poisoned").get_or_insert(e);
                    why
                })
            })
        }) as ssdtwin::study::fit::remote::Executor
    });
    let how = glue::FitHow { replay_time, read_iterations, state, refine_iterations };
    let out = py.allow_threads(|| glue::fit(&d, &results, &how, exec));
    if let Some(e) = raised.lock().expect("not poisoned").take() {
        return Err(e);
    }
    out.map_err(err)
}

/// Run one replay task of a fit (JSON text, as `fit`'s executor is given
/// it) and return its answer (JSON text): what a Ray task of
/// `ssdtwin.fit(..., backend="ray")` runs.
#[pyfunction]
fn fit_replay(py: Python<'_>, task: String) -> String {
    py.allow_threads(|| ssdtwin::study::fit::remote::run_task_json(&task))
}

fn value_err(e: String) -> PyErr {
    SsdtwinError::new_err(e)
}

/// A drive's device core stepped from Python (`ssdtwin.Device` wraps it):
/// commands by op code (`OPS`), completions as columns of bytes
/// (`id`, `op`, `offset`, `length`, `submit_ns`, `complete_ns`, `status`:
/// little-endian `i64`, op and status codes `u8`). The simulation runs
/// without the GIL. Not for use by two threads at once (a second call
/// while one runs raises `RuntimeError`).
#[pyclass(module = "ssdtwin._ssdtwin", name = "Stepper")]
struct PyStepper {
    inner: Stepper,
}

fn columns<'py>(py: Python<'py>, c: &Columns) -> PyResult<Bound<'py, PyTuple>> {
    let b = |v: &[u8]| PyByteArray::new(py, v);
    PyTuple::new(py, [b(&c.id), b(&c.op), b(&c.offset), b(&c.length), b(&c.submit_ns), b(&c.complete_ns), b(&c.status)])
}

#[pymethods]
impl PyStepper {
    /// A drive brought to `state` (as `ssdtwin run --state`), at time 0.
    #[new]
    #[pyo3(signature = (source, is_text, set, state, seed))]
    fn new(
        py: Python<'_>,
        source: String,
        is_text: bool,
        set: Vec<String>,
        state: String,
        seed: u64,
    ) -> PyResult<Self> {
        let d = drive(source, is_text, set);
        let device = py.allow_threads(|| glue::device(&d, &state, seed)).map_err(err)?;
        Ok(PyStepper { inner: Stepper::new(device) })
    }

    /// Virtual time, ns.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now()
    }

    /// Commands submitted whose completions have not been returned.
    #[getter]
    fn outstanding(&self) -> u64 {
        self.inner.outstanding()
    }

    /// Bytes the host may address.
    #[getter]
    fn capacity_bytes(&self) -> u64 {
        self.inner.user_bytes()
    }

    /// The drive's name.
    #[getter]
    fn name(&self) -> String {
        self.inner.device().drive().model().spec.name.clone()
    }

    /// Submit one command (op code, offset, length) at `at_ns` (default
    /// now), a write with an optional placement identifier; returns its id.
    #[pyo3(signature = (op, offset, length, at_ns=None, placement=None))]
    fn submit(
        &mut self,
        op: u8,
        offset: u64,
        length: u64,
        at_ns: Option<u64>,
        placement: Option<u32>,
    ) -> PyResult<u64> {
        self.inner.submit(op, offset, length, at_ns, placement).map_err(value_err)
    }

    /// Zone Management Send (a `zone_*` op code) on the zone starting at
    /// byte `zslba` (None: every zone) at `at_ns`; returns its id.
    #[pyo3(signature = (op, zslba=None, at_ns=None))]
    fn zone_management(&mut self, op: u8, zslba: Option<u64>, at_ns: Option<u64>) -> PyResult<u64> {
        self.inner.zone_management(op, zslba, at_ns).map_err(value_err)
    }

    /// Reclaim Unit Handle Update of placement identifiers `pids` at `at_ns`; returns its id.
    #[pyo3(signature = (pids, at_ns=None))]
    fn ruh_update(&mut self, pids: Vec<u32>, at_ns: Option<u64>) -> PyResult<u64> {
        self.inner.ruh_update(&pids, at_ns).map_err(value_err)
    }

    /// Report Zones: (start, capacity, write pointer or None, state) per zone, bytes.
    fn report_zones(&self) -> Vec<(u64, u64, Option<u64>, &'static str)> {
        self.inner.report_zones()
    }

    /// The zones' and placement handles' counts since the drive was made (JSON).
    fn placement(&self) -> PyResult<String> {
        glue::placement(self.inner.device()).map_err(err)
    }

    /// Submit commands given as columns (op codes; offsets, lengths and
    /// optional times as little-endian `i64` bytes); returns the first id.
    #[pyo3(signature = (ops, offsets, lengths, at_ns=None))]
    fn submit_many(
        &mut self,
        py: Python<'_>,
        ops: &[u8],
        offsets: &[u8],
        lengths: &[u8],
        at_ns: Option<&[u8]>,
    ) -> PyResult<u64> {
        let inner = &mut self.inner;
        py.allow_threads(|| inner.submit_many(ops, offsets, lengths, at_ns)).map_err(value_err)
    }

    /// Advance to `t_ns`: the completions up to then, as columns.
    fn run_until<'py>(&mut self, py: Python<'py>, t_ns: u64) -> PyResult<Bound<'py, PyTuple>> {
        let inner = &mut self.inner;
        let c = py.allow_threads(|| inner.run_until(t_ns)).map_err(value_err)?;
        columns(py, &c)
    }

    /// Run until nothing is outstanding: the completions, as columns.
    fn run_until_idle<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let inner = &mut self.inner;
        let c = py.allow_threads(|| inner.run_until_idle());
        columns(py, &c)
    }

    /// The next completion (at or before `until_ns` when given) as `(id,
    /// op, offset, length, submit_ns, complete_ns, status)`, or None.
    #[pyo3(signature = (until_ns=None))]
    #[allow(clippy::type_complexity)]
    fn next_completion(&mut self, until_ns: Option<u64>) -> PyResult<Option<(u64, u8, i64, u64, u64, u64, u8)>> {
        let r = self.inner.next_completion(until_ns).map_err(value_err)?;
        // The offset as the columns carry it: a signed 64-bit value, −1 for
        // a zone management command on every zone.
        Ok(r.map(|r: Record| (r.id, r.op, r.offset as i64, r.length, r.submit_ns, r.complete_ns, r.status)))
    }

    /// `(counters JSON, health JSON)`.
    fn counters_and_health(&self) -> PyResult<(String, String)> {
        glue::counters_and_health(self.inner.device()).map_err(err)
    }

    /// An independent copy (same drive state, clock and outstanding commands).
    fn copy(&self, py: Python<'_>) -> Self {
        let inner = &self.inner;
        PyStepper { inner: py.allow_threads(|| inner.clone()) }
    }
}

/// The extension module.
#[pymodule]
fn _ssdtwin(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SsdtwinError", m.py().get_type::<SsdtwinError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(suites, m)?)?;
    m.add_function(wrap_pyfunction!(figure_presets, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_drive, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_suite, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(fit_battery, m)?)?;
    m.add_function(wrap_pyfunction!(fit_replay, m)?)?;
    m.add_class::<PyStepper>()?;
    m.add("OPS", stepper::OPS.to_vec())?;
    m.add("STATUSES", stepper::STATUSES.to_vec())?;
    Ok(())
}
