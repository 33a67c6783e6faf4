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
}

/// Run the command.
pub fn run(ValidateArgs { drives, quick, quiet }: ValidateArgs) -> Result<ExitCode> {
    let drives: Vec<String> = if drives.is_empty() {
        ssdtwin::study::figures::FIGURES.iter().map(|(n, _)| n.to_string()).collect()
    } else {
        drives
    };
    let mut failed = 0;
    let show = !quiet && std::io::stderr().is_terminal();
    for name in &drives {
        let set = ssdtwin::study::figures::figures_for(name).with_context(|| {
            let have: Vec<_> = ssdtwin::study::figures::FIGURES.iter().map(|(n, _)| *n).collect();
            format!("no published figures for `{name}` (presets with figures: {})", have.join(", "))
        })??;
        let spec = DriveSpec::load(&set.drive, &[])?;
        let model = spec.build(&set.drive)?;
        outln!("\n{} — {}{}", spec.name, spec.description, if quick { " (quick)" } else { "" });
        outln!("{}", ssdtwin::study::figures::HEADER);
        for fig in &set.figures {
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
