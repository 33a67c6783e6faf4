//! Reports of ssdtwin suite runs, the way a reviewer would publish them:
//! one self-contained HTML page (inline SVG and CSS; it loads nothing),
//! every chart again as its own SVG file, and the numbers as CSV.
//!
//! Everything is rendered from the suite-run JSON that `ssdtwin suite`
//! and `ssdtwin review` write (`ssdtwin::study::record::SuiteRecord`), so a
//! saved JSON renders the same report again, byte for byte: no clock,
//! no random numbers, no hash-map order.
//!
//! Per test: a bar chart of the score per drive (standard and full-drive
//! bars side by side), per-QD or per-mix curves for swept tests, IOPS per
//! second for the consistency test (whole run and steady-state window),
//! throughput and SLC cache occupancy over time for long write tests,
//! latency percentiles, and on zoned and FDP drives zones by state over
//! time and write amplification per reclaim unit handle.
//!
//! ```
//! let doc: serde_json::Value = serde_json::json!({ "not": "a suite run" });
//! assert!(ssdtwin_report::render(&doc).is_err());
//! ```
//!
//! Leaves out: JavaScript (no interactivity beyond SVG tooltips) and
//! comparisons across separate JSON files (run the drives in one suite).

#![deny(missing_docs)]

pub mod charts;
pub mod csv;
pub mod model;
pub mod page;
pub mod placement;
pub mod svg;
pub mod timecharts;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use ssdtwin::study::record::SuiteRecord;
use thiserror::Error as ThisError;

/// The report could not be rendered or written.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum ReportError {
    /// The JSON is not a suite run.
    #[error("not a suite run: {0}")]
    NotASuiteRun(String),
    /// The page template failed (a bug).
    #[error("report template: {0}")]
    Template(String),
    /// A file could not be written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
}

/// A rendered report: the page and the other files, by relative path.
pub struct Report {
    /// `report.html`.
    pub html: String,
    /// Charts (`charts/NN-test-kind.svg`) and CSV files, in a fixed order.
    pub files: Vec<(String, String)>,
}

/// Name of the page in the output directory.
pub const HTML_NAME: &str = "report.html";

/// Render the report of a suite-run document (the JSON as read from a
/// file): it must read as a [`SuiteRecord`].
pub fn render(doc: &Value) -> Result<Report, ReportError> {
    if doc.get("runs").is_none() || doc.get("suite").is_none() {
        return Err(ReportError::NotASuiteRun(
            "no `suite` or `runs` (is this the JSON of `ssdtwin suite` or `ssdtwin review`?)".into(),
        ));
    }
    let record = SuiteRecord::deserialize(doc).map_err(|e| ReportError::NotASuiteRun(e.to_string()))?;
    render_record(&record)
}

/// Render the report of a suite run's record.
pub fn render_record(record: &SuiteRecord) -> Result<Report, ReportError> {
    let d = model::Doc::new(record)?;
    let charts: Vec<Vec<charts::Chart>> = (0..d.tests.len()).map(|k| charts::test_charts(&d, k)).collect();
    let html = page::render(&d, &charts)?;
    let mut files: Vec<(String, String)> =
        charts.into_iter().flatten().map(|ch| (format!("charts/{}", ch.file), ch.svg)).collect();
    files.push(("scores.csv".into(), csv::scores_csv(&d)));
    files.push(("steps.csv".into(), csv::steps_csv(&d)));
    files.push(("timeseries.csv".into(), csv::timeseries_csv(&d)));
    Ok(Report { html, files })
}

/// Write `bytes` to a temporary file beside `path`, then rename it
/// ([`ssdtwin::fsio`]; a device or FIFO is written in place).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let io = |p: &Path, e: std::io::Error| ReportError::Io { path: p.display().to_string(), message: e.to_string() };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    ssdtwin::fsio::write_atomically(path, bytes).map_err(|e| io(path, e))
}

impl Report {
    /// Write the page and every file into `dir`; returns the page's path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ReportError> {
        for (name, text) in &self.files {
            write_atomically(&dir.join(name), text.as_bytes())?;
        }
        let page = dir.join(HTML_NAME);
        write_atomically(&page, self.html.as_bytes())?;
        Ok(page)
    }
}
