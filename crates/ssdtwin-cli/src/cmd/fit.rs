//! `ssdtwin fit`: the characterization battery as a fio job file
//! (`--jobs DIR`), and a drive file fitted to a real drive's results of
//! it or of any jobs the twin can replay (`--base PRESET RESULTS...
//! --out DRIVE.toml`, `--state` for the state the other jobs found the
//! drive in). The work is in
//! [`ssdtwin::study::fit`]; this command reads the arguments, prints the
//! report and writes the files.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use ssdtwin::study::fit::{battery, measure, report, FitOptions};
use ssdtwin::DriveSpec;

use crate::output::write_atomically;

/// Options of `ssdtwin fit`.
#[derive(Args)]
#[command(after_help = "Steps:\n  \
    1. ssdtwin fit --jobs battery/                 (writes battery/battery.fio)\n  \
    2. cd battery && DEV=/dev/nvme0n1 fio --output-format=json+ --output=battery.json battery.fio\n     \
       (ERASES the drive; keep the *_bw.*.log files beside the JSON)\n  \
    3. ssdtwin fit --base intel-660p-1tb battery/battery.json --out my-drive.toml\n  \
    4. ssdtwin review my-drive.toml                (ask the twin what was not measured)\n\n\
    The same battery runs on a twin: ssdtwin run --drive D --job-file battery.fio --output-format=json \
    --output battery.json. The base is the preset nearest the drive (same cell type and interface): \
    its structure is the start, and what the battery cannot see (power, heat, the map cache) stays as it is.")]
pub struct FitArgs {
    /// Write the battery's job file into this directory (created if needed).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["base", "results", "out"])]
    pub jobs: Option<PathBuf>,
    /// Multiply the battery's runtimes and idle pauses (with --jobs; below
    /// 1 only to try the battery on a small twin).
    #[arg(long, default_value_t = 1.0, requires = "jobs")]
    pub time_scale: f64,
    /// The preset (or drive file) to start from.
    #[arg(long, short = 'd', value_name = "PRESET")]
    pub base: Option<String>,
    /// Override a field of the base, e.g. a known capacity
    /// `--set ftl.user_capacity_bytes=512110190592` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// fio's JSON output (json or json+), from real fio or `ssdtwin run`:
    /// of the battery (the bandwidth logs are read from beside it), of any
    /// other jobs the twin can replay, or both.
    #[arg(value_name = "RESULTS")]
    pub results: Vec<PathBuf>,
    /// Refit the base preset's free parameters to its own published
    /// figures (those `ssdtwin validate` checks, measured as `validate
    /// --quick` does: timed jobs capped at 5 simulated seconds) instead of
    /// fio results.
    #[arg(long, conflicts_with_all = ["results", "jobs"])]
    pub figures: bool,
    /// Write the fitted drive file here.
    #[arg(long, value_name = "DRIVE.toml")]
    pub out: Option<PathBuf>,
    /// Name of the fitted drive (default: the output file's stem).
    #[arg(long)]
    pub name: Option<String>,
    /// Longest simulated time of a stationary job's replay (reads).
    #[arg(long, default_value = "2s", value_name = "TIME")]
    pub replay_time: String,
    /// Most Nelder–Mead iterations of the read stage.
    #[arg(long, default_value_t = 60)]
    pub read_iterations: u64,
    /// The state the drive was in when the jobs outside the battery were
    /// measured: fresh, full, filled:N, steady or steady-exact (as `run
    /// --state`).
    #[arg(long, default_value = "fresh")]
    pub state: String,
    /// Most Nelder–Mead iterations of the refinement on jobs outside the
    /// battery.
    #[arg(long, default_value_t = 40)]
    pub refine_iterations: u64,
    /// Seed of the replays' starting states.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// No progress lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Run the command.
pub fn run(args: FitArgs) -> Result<ExitCode> {
    if let Some(dir) = &args.jobs {
        if !(args.time_scale > 0.0 && args.time_scale.is_finite()) {
            bail!("--time-scale {} must be a positive number", args.time_scale);
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(battery::FILE_NAME);
        write_atomically(&path, battery::text(args.time_scale).as_bytes())?;
        outln!("wrote {} ({} jobs)", path.display(), battery::JOBS.len());
        return Ok(ExitCode::SUCCESS);
    }
    let Some(base_name) = &args.base else {
        bail!("give --jobs DIR (write the battery) or --base PRESET RESULTS... --out DRIVE.toml (fit)");
    };
    if args.figures {
        return figures(&args, base_name);
    }
    if args.results.is_empty() {
        bail!("give fio JSON result(s) (the battery's, or any jobs') after --base {base_name}");
    }
    let Some(out) = &args.out else { bail!("give --out DRIVE.toml: where the fitted drive is written") };
    let base = DriveSpec::load(base_name, &args.set)?;
    let runtime_cap_ns = ssdtwin::run::workload::fio::parse_time(&args.replay_time, 1_000_000_000)
        .map_err(|e| anyhow::anyhow!("--replay-time {}: {e}", args.replay_time))?;
    let state: ssdtwin::DriveState = args.state.parse().map_err(|e: String| anyhow::anyhow!("--state {e}"))?;
    let mut jobs = Vec::new();
    for path in &args.results {
        jobs.extend(measure::read_file(path)?);
    }
    let quiet = args.quiet;
    let opts = FitOptions {
        runtime_cap_ns,
        seed: args.seed,
        read_iterations: args.read_iterations,
        state,
        refine_iterations: args.refine_iterations,
        executor: None,
        progress: Some(Box::new(move |line: &str| {
            if !quiet {
                errln!("fit: {line}");
            }
        })),
    };
    let mut fit = ssdtwin::study::fit::fit(&base, &jobs, &opts)?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| out.file_stem().map_or("fitted".into(), |s| s.to_string_lossy().into_owned()));
    fit.spec.name = name.clone();
    fit.spec.description = format!("{name}: fitted by ssdtwin fit from base {base_name}");
    out!("{}", report::text(&fit));
    let results: Vec<String> = args.results.iter().map(|p| p.display().to_string()).collect();
    write_atomically(out, report::drive_toml(&fit, base_name, &results).as_bytes())?;
    outln!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// `--figures`: the base preset refitted to its published figures.
fn figures(args: &FitArgs, base_name: &str) -> Result<ExitCode> {
    use ssdtwin::study::figures::figures_for;
    use ssdtwin::study::fit::figures::fit_figures;
    let set = figures_for(base_name).with_context(|| {
        let have: Vec<_> = ssdtwin::study::figures::FIGURES.iter().map(|(n, _)| *n).collect();
        format!("no published figures for `{base_name}` (presets with figures: {})", have.join(", "))
    })??;
    let base = DriveSpec::load(&set.drive, &args.set)?;
    let fit = fit_figures(&base, &set, args.refine_iterations, true)?;
    outln!("{:<50} {:>14} {:>10} {:>7} {:>10} {:>7}", "figure", "published", "preset", "error", "refitted", "error");
    let cell = |v: Option<(f64, f64)>| {
        v.map_or(("—".to_string(), "—".to_string()), |(v, e)| (format!("{v:.4}"), format!("{:.1}%", e * 100.0)))
    };
    for r in &fit.rows {
        let (b, be) = cell(r.before);
        let (a, ae) = cell(r.after);
        outln!(
            "{:<50} {:>14} {:>10} {:>7} {:>10} {:>7}",
            r.figure.name,
            format!("{} {}", r.figure.published, r.figure.unit),
            b,
            be,
            a,
            ae
        );
    }
    outln!("\n{:<32} {:>12} {:>12} {:>10}  {}", "parameter", "preset", "refitted", "± (1σ)", "constrained most by");
    for p in &fit.params {
        let (field, unit) = p.param.field();
        let sigma = p.sigma.map_or("not determined".to_string(), |s| format!("{:.1}%", s * 100.0));
        let by = p.constrained_by.as_ref().map_or(String::new(), |(m, d)| format!("{m} ({d:+.2})"));
        outln!(
            "{:<32} {:>12.4} {:>12.4} {:>10}  {}",
            format!("{field} [{unit}]"),
            p.param.display(p.base),
            p.param.display(p.fitted),
            sigma,
            by
        );
    }
    for n in &fit.notes {
        outln!("note: {n}");
    }
    outln!("\n{} figure measurements in {:.1} s", fit.evaluations, fit.wall_s);
    if let Some(out) = &args.out {
        let mut spec = fit.spec.clone();
        let name = args.name.clone().unwrap_or_else(|| format!("{}-refitted", set.drive));
        spec.name = name.clone();
        spec.description = format!("{name}: {} refitted to its published figures by ssdtwin fit --figures", set.drive);
        let mut text =
            format!("# Refitted by `ssdtwin fit --base {base_name} --figures` to the preset's published figures.\n");
        for n in &fit.notes {
            text.push_str(&format!("# note: {n}\n"));
        }
        text.push_str(&spec.to_toml());
        write_atomically(out, text.as_bytes())?;
        outln!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
