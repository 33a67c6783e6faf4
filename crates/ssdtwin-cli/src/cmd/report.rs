//! `ssdtwin report`: the HTML report (SVG charts, CSV) of a saved suite or
//! review JSON, rendered again; the same JSON gives the same bytes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use crate::output::spinner;

/// Options of `ssdtwin report`.
#[derive(Args)]
pub struct ReportArgs {
    /// The JSON that `ssdtwin suite` or `ssdtwin review` wrote.
    pub results: PathBuf,
    /// Directory for report.html, charts/ and the CSV files (default: the JSON's directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print nothing.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Render a suite document's report into `out`; returns the page's path.
pub fn render_report(doc: &serde_json::Value, out: &Path, show: bool) -> Result<PathBuf> {
    let bar = spinner(show, "rendering the report");
    let report = ssdtwin_report::render(doc)?;
    let page = report.write(out)?;
    bar.finish_and_clear();
    Ok(page)
}

/// Run the command.
pub fn run(ReportArgs { results, out, quiet }: ReportArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&results).with_context(|| format!("reading {}", results.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", results.display()))?;
    let out =
        out.unwrap_or_else(|| results.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).into());
    let show = !quiet && std::io::stderr().is_terminal();
    let page = render_report(&doc, &out, show).with_context(|| format!("rendering {}", results.display()))?;
    if !quiet {
        outln!("report: {}", page.display());
    }
    Ok(ExitCode::SUCCESS)
}
