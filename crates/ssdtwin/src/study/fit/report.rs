//! The fit's report: each measurement beside the fitted twin's value and
//! the error, and each parameter with its uncertainty and the measurement
//! that constrains it most.
//!
//! Uncertainty is the linearised least-squares estimate: the sensitivity
//! matrix J (d ln measurement / d ln parameter, by a +5% step of each
//! fitted parameter replayed on the units it can move), the measurements'
//! relative error σ (the fit's own root-mean-square log error, at least
//! 3%: run-to-run noise of a real drive), and the parameters' covariance
//! σ²(JᵀJ)⁻¹. A parameter whose column of J is zero is reported as not
//! determined by the measurements. The step assumes the model is smooth
//! over 5%; where a parameter acts through a threshold (a cache that ends
//! within the step) the estimate is rough.

use super::battery::Unit;
use super::measure::Quantity;
use super::params::{dies, Param};
use super::replay::{Observation, Plan};
use super::search::{log_error, Ctx};
use super::{FitError, Measurement};
use crate::spec::DriveSpec;

/// One measurement and the fitted twin's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Residual {
    /// Job.
    pub job: String,
    /// What.
    pub quantity: Quantity,
    /// Measured.
    pub measured: f64,
    /// The fitted twin's (`None`: it gave none).
    pub twin: Option<f64>,
}

impl Residual {
    /// twin / measured − 1.
    pub fn error(&self) -> Option<f64> {
        self.twin.map(|t| t / self.measured - 1.0)
    }
}

/// One parameter of the fit.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamFit {
    /// Which.
    pub param: Param,
    /// The base's value.
    pub base: f64,
    /// The fitted value.
    pub fitted: f64,
    /// Relative standard uncertainty (`None`: not determined by the
    /// measurements).
    pub sigma: Option<f64>,
    /// The measurement that moves most with it, and d ln m / d ln p.
    pub constrained_by: Option<(String, f64)>,
}

/// Relative step of the sensitivities.
const STEP: f64 = 0.05;

/// The units a parameter can move (the others' sensitivities are taken as
/// zero, which saves the slowest replays).
fn units_of(p: Param) -> &'static [Unit] {
    match p {
        Param::NativeTr | Param::CmdOverhead | Param::ChannelMts | Param::MapMemory => {
            &[Unit::ReadLow, Unit::ReadHigh, Unit::RandomWrite]
        }
        Param::SlcTprog | Param::NativeTprog => &[Unit::Fill, Unit::FillIdle, Unit::Idle, Unit::RandomWrite],
        Param::BlocksPerPlane => &[Unit::RandomWrite],
        Param::CacheMax => &[Unit::Fill, Unit::FillIdle],
        Param::IdleFoldRoom => &[Unit::FillIdle, Unit::Idle],
        Param::CacheStatic => &[Unit::Fill, Unit::Idle],
    }
}

/// Replay every unit on the fitted drive, and each fitted parameter's
/// step: the residuals and the parameters with their uncertainties.
pub(super) fn assess(
    ctx: &Ctx,
    base: &DriveSpec,
    spec: &DriveSpec,
    fitted: &[Param],
) -> Result<(Vec<Residual>, Vec<ParamFit>), FitError> {
    let plans: Vec<Plan> = Unit::ALL.iter().filter_map(|&u| ctx.plan(u, None, None)).collect();
    let mut tasks: Vec<(DriveSpec, Plan)> = plans.iter().map(|p| (spec.clone(), p.clone())).collect();
    let mut owner: Vec<Option<usize>> = vec![None; tasks.len()];
    let mut params: Vec<Param> = fitted.to_vec();
    params.dedup();
    let mut steps = vec![STEP; params.len()];
    for (j, &p) in params.iter().enumerate() {
        let Some((s, h)) = stepped(spec, p) else { continue };
        steps[j] = h;
        for plan in plans.iter().filter(|pl| units_of(p).contains(&pl.unit)) {
            tasks.push((s.clone(), plan.clone()));
            owner.push(Some(j));
        }
    }
    let results = ctx.run(&tasks);
    let mut base_obs: Vec<Observation> = Vec::new();
    let mut step_obs: Vec<Vec<Observation>> = vec![Vec::new(); params.len()];
    for (r, o) in results.into_iter().zip(&owner) {
        let obs = r?;
        match o {
            None => base_obs.extend(obs),
            Some(j) => step_obs[*j].extend(obs),
        }
    }
    let rows: Vec<Residual> = ctx
        .measured
        .iter()
        .map(|m| Residual {
            job: m.job.clone(),
            quantity: m.quantity,
            measured: m.value,
            twin: base_obs.iter().find(|o| o.job == m.job && o.quantity == m.quantity).map(|o| o.value),
        })
        .collect();
    // Sensitivities: rows are measurements, columns parameters.
    let ms: &[Measurement] = &ctx.measured;
    let value =
        |obs: &[Observation], m: &Measurement| log_error(obs, &m.job, m.quantity, m.value).map(|e| m.value * e.exp());
    let at: Vec<Option<f64>> = ms.iter().map(|m| value(&base_obs, m)).collect();
    let moved: Vec<Vec<Option<f64>>> = (0..params.len())
        .map(|j| ms.iter().map(|m| value(&step_obs[j], m).filter(|_| units_of(params[j]).contains(&m.unit))).collect())
        .collect();
    let jac = sensitivities(&at, &moved, &steps);
    let labels: Vec<String> = ms.iter().map(|m| format!("{} {}", m.job, m.quantity.label().0)).collect();
    let out = param_table(base, spec, &params, &jac, &labels, measurement_sigma(&rows));
    Ok((rows, out))
}

/// The measurements' relative error σ: the fit's own root-mean-square
/// log error, at least 3% (run-to-run noise of a real drive).
pub(super) fn measurement_sigma(rows: &[Residual]) -> f64 {
    let errs: Vec<f64> = rows.iter().filter_map(|r| r.error()).map(|e| (1.0 + e).ln()).collect();
    let rms = (errs.iter().map(|e| e * e).sum::<f64>() / errs.len().max(1) as f64).sqrt();
    rms.max(0.03)
}

/// Each parameter the drive has: base and fitted values, and for those in
/// `params` (the columns of `jac`, rows named by `labels`) the
/// uncertainty and the measurement that moves most with it.
pub(super) fn param_table(
    base: &DriveSpec,
    spec: &DriveSpec,
    params: &[Param],
    jac: &[Vec<f64>],
    labels: &[String],
    sigma_m: f64,
) -> Vec<ParamFit> {
    let sigmas = uncertainties(jac, sigma_m);
    Param::ALL
        .iter()
        .filter_map(|&p| {
            let fitted_v = p.get(spec)?;
            let base_v = p.get(base).unwrap_or(f64::NAN);
            let (sigma, constrained_by) = match params.iter().position(|&q| q == p) {
                Some(j) => {
                    let best = (0..jac.len()).max_by(|&a, &b| jac[a][j].abs().total_cmp(&jac[b][j].abs()));
                    let by = best.filter(|&i| jac[i][j] != 0.0).map(|i| (labels[i].clone(), jac[i][j]));
                    (sigmas[j], by)
                }
                None => (None, None),
            };
            Some(ParamFit { param: p, base: base_v, fitted: fitted_v, sigma, constrained_by })
        })
        .collect()
}

/// `spec` with `p` a step ([`STEP`]) up, or down where up is not a valid
/// drive, and the step in ln units; `None` when neither is valid or the
/// drive has no such part.
pub(super) fn stepped(spec: &DriveSpec, p: Param) -> Option<(DriveSpec, f64)> {
    let v = p.get(spec)?;
    // The static pool steps with the spare and the cache's size held, as
    // its stage searched it, and down first (a pool as large as the cache
    // cannot grow without the cache).
    let order = if p == Param::CacheStatic { [-STEP, STEP] } else { [STEP, -STEP] };
    order.into_iter().find_map(|h| {
        let mut s = spec.clone();
        p.set(&mut s, v * h.exp());
        if p == Param::CacheStatic {
            super::reserve::hold_cache_and_spare(spec, &mut s);
        }
        s.build(&s.name).is_ok().then_some((s, h))
    })
}

/// The sensitivity matrix: rows are measurements, columns parameters,
/// each entry d ln m / d ln p from the twin's value `at` the fitted drive
/// and `moved[j]` with parameter j stepped by `steps[j]` (ln units); 0
/// where either gave no value.
pub(super) fn sensitivities(at: &[Option<f64>], moved: &[Vec<Option<f64>>], steps: &[f64]) -> Vec<Vec<f64>> {
    (0..at.len())
        .map(|i| {
            moved
                .iter()
                .zip(steps)
                .map(|(m, &h)| match (at[i], m[i]) {
                    (Some(a), Some(b)) if a > 0.0 && b > 0.0 => (b / a).ln() / h,
                    _ => 0.0,
                })
                .collect()
        })
        .collect()
}

/// Relative standard uncertainty of each column's parameter: the square
/// roots of the diagonal of σ²(JᵀJ)⁻¹ over the determined columns
/// (`None` for a zero column, or all when JᵀJ is singular).
pub(super) fn uncertainties(jac: &[Vec<f64>], sigma: f64) -> Vec<Option<f64>> {
    let n = jac.first().map_or(0, |r| r.len());
    let live: Vec<usize> = (0..n).filter(|&j| jac.iter().any(|r| r[j].abs() > 1e-6)).collect();
    let k = live.len();
    let mut a = vec![vec![0.0; 2 * k]; k];
    for (x, &jx) in live.iter().enumerate() {
        for (y, &jy) in live.iter().enumerate() {
            a[x][y] = jac.iter().map(|r| r[jx] * r[jy]).sum::<f64>() / (sigma * sigma);
        }
        a[x][k + x] = 1.0;
    }
    if !gauss_jordan(&mut a) {
        return vec![None; n];
    }
    let mut out = vec![None; n];
    for (x, &j) in live.iter().enumerate() {
        let var = a[x][k + x];
        out[j] = (var >= 0.0).then(|| var.sqrt());
    }
    out
}

/// Gauss–Jordan elimination with partial pivoting of `a`: k rows of k
/// columns, then the right-hand sides (reduced in place to the solution).
/// `false` if a pivot was (near) zero; that column is left unreduced.
pub(super) fn gauss_jordan(a: &mut [Vec<f64>]) -> bool {
    let k = a.len();
    let mut regular = true;
    for c in 0..k {
        let p = (c..k).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs())).expect("rows");
        a.swap(c, p);
        let d = a[c][c];
        if d.abs() < 1e-12 {
            regular = false;
            continue;
        }
        for v in a[c].iter_mut() {
            *v /= d;
        }
        for r in 0..k {
            if r != c {
                let f = a[r][c];
                if f != 0.0 {
                    let row = a[c].clone();
                    for (v, w) in a[r].iter_mut().zip(&row) {
                        *v -= f * w;
                    }
                }
            }
        }
    }
    regular
}

/// The report as text: measurements, then parameters, then notes.
pub fn text(fit: &super::Fit) -> String {
    let mut out = String::new();
    out.push_str(&format!("{:<18} {:<26} {:>12} {:>12} {:>8}\n", "job", "measurement", "measured", "twin", "error"));
    for r in &fit.rows {
        let (label, unit) = r.quantity.label();
        let twin = r.twin.map_or("—".to_string(), fmt_num);
        let err = r.error().map_or("—".to_string(), |e| format!("{:+.1}%", e * 100.0));
        out.push_str(&format!(
            "{:<18} {:<26} {:>12} {:>12} {:>8}\n",
            r.job,
            format!("{label} ({unit})"),
            fmt_num(r.measured),
            twin,
            err
        ));
    }
    let errs: Vec<f64> = fit.rows.iter().filter_map(|r| r.error()).map(f64::abs).collect();
    if !errs.is_empty() {
        let mut sorted = errs.clone();
        sorted.sort_by(f64::total_cmp);
        out.push_str(&format!(
            "{} measurements: median |error| {:.1}%, max {:.1}%\n",
            errs.len(),
            sorted[sorted.len() / 2] * 100.0,
            sorted[sorted.len() - 1] * 100.0
        ));
    }
    out.push_str(&format!(
        "\n{:<32} {:>12} {:>12} {:>10}  {}\n",
        "parameter", "base", "fitted", "± (1σ)", "constrained most by (d ln m / d ln p)"
    ));
    for p in &fit.params {
        let (field, unit) = p.param.field();
        let sigma = p.sigma.map_or("not determined".to_string(), |s| format!("{:.1}%", s * 100.0));
        let by = p.constrained_by.as_ref().map_or(String::new(), |(m, d)| format!("{m} ({d:+.2})"));
        out.push_str(&format!(
            "{:<32} {:>12} {:>12} {:>10}  {}\n",
            format!("{field} [{unit}]"),
            fmt_num(p.param.display(p.base)),
            fmt_num(p.param.display(p.fitted)),
            sigma,
            by
        ));
    }
    let raw = |s: &DriveSpec| {
        let g = &s.geometry;
        dies(s) as f64
            * g.planes_per_die as f64
            * g.blocks_per_plane as f64
            * g.pages_per_block as f64
            * g.page_bytes as f64
    };
    let op = raw(&fit.spec) / fit.spec.ftl.user_capacity_bytes as f64 - 1.0;
    let bpp_sigma = fit.params.iter().find(|p| p.param == Param::BlocksPerPlane).and_then(|p| p.sigma);
    out.push_str(&format!(
        "{:<32} {:>12} {:>12} {:>10}\n",
        "raw / user capacity − 1 [%]",
        "",
        format!("{:.1}", op * 100.0),
        bpp_sigma.map_or(String::new(), |s| format!("{:.1}", s * (1.0 + op) * 100.0))
    ));
    out.push_str(&format!("{:<32} {:>12} {:>12}\n", "dies", "", dies(&fit.spec)));
    if !fit.notes.is_empty() {
        out.push('\n');
        for n in &fit.notes {
            out.push_str(&format!("note: {n}\n"));
        }
    }
    out.push_str(&format!("\n{} replays in {:.1} s\n", fit.evaluations, fit.wall_s));
    out
}

/// A number with about four significant digits.
fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    let a = x.abs();
    if a >= 1e4 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

/// The fitted drive as a drive file: a header saying where it came from,
/// then the complete drive.
pub fn drive_toml(fit: &super::Fit, base_name: &str, results: &[String]) -> String {
    let mut out = format!(
        "# Fitted by `ssdtwin fit` from base `{base_name}` to {}.\n\
         # Parameters not fitted are the base's; see the fit's report for the errors and uncertainties.\n",
        results.join(", ")
    );
    for n in &fit.notes {
        out.push_str(&format!("# note: {n}\n"));
    }
    out.push_str(&fit.spec.to_toml());
    out
}
