//! `ssdtwin._ssdtwin`: the Python extension module behind the `ssdtwin`
//! package (`python/ssdtwin`). Thin: each function converts its arguments,
//! releases the GIL while the library works, and returns JSON text (see
//! [`glue`]); library errors become `ssdtwin.SsdtwinError` with the
//! library's message (file, field, option named).

#![deny(missing_docs)]

mod glue;

use glue::{DriveSource, JobSource, SuiteArgs};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

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
#[pyo3(signature = (suite, drives, state=None, seed=1, scale=1.0, time_scale=None, only=Vec::new(), threads=1, out=None))]
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
    };
    py.allow_threads(|| glue::run_suite(&a)).map_err(err)
}

/// Measure a preset's published figures: JSON list of verdicts.
#[pyfunction]
#[pyo3(signature = (preset, quick=false))]
fn validate(py: Python<'_>, preset: String, quick: bool) -> PyResult<String> {
    py.allow_threads(|| glue::validate(&preset, quick)).map_err(err)
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
    Ok(())
}
