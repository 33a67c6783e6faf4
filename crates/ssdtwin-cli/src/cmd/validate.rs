//! `ssdtwin validate`: each preset's published figures (vendor specs,
//! reviews) against the simulated measurement behind each one.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use ssdtwin::DriveSpec;

use crate::output::spinner;

/// Options of `ssdtwin validate`.
#[derive(Args)]
pub struct ValidateArgs {
    /// Presets to check (default: every preset that has figures).
    pub drives: Vec<String>,
    /// Cap each timed workload at 5 simulated seconds (for CI).
    #[arg(long)]
    pub quick: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Override a field of every preset checked, e.g. `--set
    /// nand.read_cache=false` (repeatable): what a parameter change does
    /// to the published figures.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Check only the figures whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub figure: Option<String>,
}

/// Run the command.
pub fn run(ValidateArgs { drives, quick, quiet, set, figure }: ValidateArgs) -> Result<ExitCode> {
    let drives: Vec<String> = if drives.is_empty() {
        ssdtwin::study::figures::FIGURES.iter().map(|(n, _)| n.to_string()).collect()
    } else {
        drives
    };
    let mut failed = 0;
    let show = !quiet && std::io::stderr().is_terminal();
    for name in &drives {
        let figures = ssdtwin::study::figures::figures_for(name).with_context(|| {
            let have: Vec<_> = ssdtwin::study::figures::FIGURES.iter().map(|(n, _)| *n).collect();
            format!("no published figures for `{name}` (presets with figures: {})", have.join(", "))
        })??;
        let spec = DriveSpec::load(&figures.drive, &set)?;
        let model = spec.build(&figures.drive)?;
        outln!("\n{} — {}{}", spec.name, spec.description, if quick { " (quick)" } else { "" });
        outln!("{}", ssdtwin::study::figures::HEADER);
        for fig in &figures.figures {
            if figure.as_ref().is_some_and(|f| !fig.name.contains(f.as_str())) {
                continue;
            }
            let bar = spinner(show, &fig.name);
            let (b, name) = (bar.clone(), fig.name.clone());
            let hook: ssdtwin::study::figures::ProgressHook =
                std::rc::Rc::new(move |p: &ssdtwin::run::sim::Progress| {
                    b.set_message(format!("{name}: {} · {:.0} s simulated", p.phase, p.phase_ns as f64 / 1e9));
                });
            let v = ssdtwin::study::figures::measure_reporting(&model, fig, quick, show.then_some(hook))?;
            bar.finish_and_clear();
            outln!("{}", ssdtwin::study::figures::format_verdict(&v));
            if !v.pass {
                failed += 1;
            }
        }
    }
    if failed > 0 {
        outln!("\n{failed} figure(s) outside tolerance");
        return Ok(ExitCode::from(1));
    }
    outln!("\nall figures within tolerance");
    Ok(ExitCode::SUCCESS)
}
