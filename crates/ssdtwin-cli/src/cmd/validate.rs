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
    /// Leave-one-out errors per figure: each figure predicted by the
    /// preset refitted to its other figures (one linearised step; with
    /// --quick, figures measured as --quick measures them). Costs (k + 2) × n figure measurements
    /// per preset: k free parameters, n figures.
    #[arg(long, conflicts_with = "figure")]
    pub cv: bool,
}

/// Run the command.
pub fn run(ValidateArgs { drives, quick, quiet, set, figure, cv }: ValidateArgs) -> Result<ExitCode> {
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
        if cv {
            cross_validate(&spec, &figures, quick)?;
            continue;
        }
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
    if cv {
        return Ok(ExitCode::SUCCESS);
    }
    if failed > 0 {
        outln!("\n{failed} figure(s) outside tolerance");
        return Ok(ExitCode::from(1));
    }
    outln!("\nall figures within tolerance");
    Ok(ExitCode::SUCCESS)
}

/// `--cv`: the preset's figures, its errors, and each figure's error on
/// the drive refitted to the others.
fn cross_validate(spec: &DriveSpec, figures: &ssdtwin::study::figures::FigureSet, quick: bool) -> Result<()> {
    let start = std::time::Instant::now();
    let (rows, params, evals) = ssdtwin::study::fit::figures::cross_validate(spec, figures, quick)?;
    outln!("\n### {} — leave-one-out{}\n", spec.name, if quick { " (--quick)" } else { "" });
    outln!("| figure | published | simulated | error | held out | error |");
    outln!("|---|---|---|---|---|---|");
    let cell = |v: Option<(f64, f64)>| {
        v.map_or(("—".to_string(), "—".to_string()), |(v, e)| (format!("{v:.4}"), format!("{:.1}%", e * 100.0)))
    };
    let mut errs = (Vec::new(), Vec::new());
    for r in &rows {
        let (s, e) = cell(r.preset);
        let (h, he) = cell(r.held_out);
        errs.0.extend(r.preset.map(|p| p.1));
        errs.1.extend(r.held_out.map(|p| p.1));
        outln!("| {} | {} {} | {s} | {e} | {h} | {he} |", r.figure.name, r.figure.published, r.figure.unit);
    }
    let stats = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        let max = v.iter().copied().fold(0.0, f64::max);
        format!("mean {:.1}%, max {:.1}%", mean * 100.0, max * 100.0)
    };
    outln!("\nPreset: {}; held out: {}.", stats(&errs.0), stats(&errs.1));
    let names: Vec<&str> = params.iter().map(|p| p.field().0).collect();
    outln!(
        "Free parameters ({}): {}; {evals} figure measurements in {:.0} s.",
        params.len(),
        names.join(", "),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
