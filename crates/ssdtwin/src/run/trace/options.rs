//! Trace phases in fio job files: a section with `trace=FILE` replays the
//! file, with the replay options below (the command line's `--trace-*`
//! options under the same names, with `_` for `-`).
//!
//! ```ini
//! [replay]
//! trace=traces/web.blkparse.gz
//! replay=capped-idle:25
//! lba_wrap=1
//! ```
//!
//! A relative trace path is taken from the job file's directory. A trace
//! section takes no fio I/O options (its requests come from the file)
//! but fio's data placement options (`fdp`, `dataplacement`, `plids`,
//! `plid_select`, `dp_scheme` and their aliases), which fio applies to
//! the writes it replays from an iolog; `[global]` options do not apply
//! to it.

use std::path::Path;

use super::{OutOfRange, ReplayMode, TraceFormat, TraceSpec};
use crate::error::JobError;
use crate::run::workload::Phase;

/// Options of a trace section.
pub const OPTIONS: &[&str] = &[
    "trace",
    "trace_format",
    "replay",
    "time_scale",
    "sector_size",
    "trace_offset",
    "lba_wrap",
    "lba_scale",
    "trace_device",
    "blkparse_dispatch",
    "max_requests",
];

/// Set one replay option of `spec` from its text (the job-file name of
/// the option, without `trace` itself).
pub fn apply_option(spec: &mut TraceSpec, key: &str, value: &str) -> Result<(), String> {
    let int = || value.parse::<u64>().map_err(|_| format!("`{value}` is not a whole number"));
    let flag = || match value {
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("`{value}` is not 0 or 1")),
    };
    match key {
        "trace_format" => {
            spec.format = Some(
                TraceFormat::parse(value)
                    .ok_or_else(|| format!("`{value}` is not a trace format ({})", TraceFormat::known()))?,
            )
        }
        "replay" => spec.mode = Some(ReplayMode::parse(value).map_err(|e| e.to_string())?),
        "time_scale" => {
            let x: f64 = value.parse().map_err(|_| format!("`{value}` is not a number"))?;
            if !(x.is_finite() && x > 0.0) {
                return Err(format!("{x} is not above 0"));
            }
            spec.time_scale = x;
        }
        "sector_size" => {
            let n = int()?;
            if n == 0 {
                return Err("a sector has at least 1 byte".into());
            }
            spec.address.sector_bytes = Some(n);
        }
        "trace_offset" => {
            let (neg, digits) = match value.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, value),
            };
            let n = crate::run::workload::fio::parse_size(digits, 1024, u64::MAX)?;
            let n = i64::try_from(n).map_err(|_| format!("`{value}` is too large"))?;
            spec.address.offset = if neg { -n } else { n };
        }
        "lba_wrap" | "lba_scale" => {
            if flag()? {
                let policy = if key == "lba_wrap" { OutOfRange::Wrap } else { OutOfRange::Scale };
                if spec.address.out_of_range != OutOfRange::Error && spec.address.out_of_range != policy {
                    return Err("lba_wrap and lba_scale exclude each other".into());
                }
                spec.address.out_of_range = policy;
            }
        }
        "trace_device" => spec.device = Some(int()?),
        "blkparse_dispatch" => spec.blkparse_dispatch = flag()?,
        "max_requests" => spec.max_requests = Some(int()?),
        _ => return Err(format!("`{key}` is not a trace option ({})", OPTIONS.join(", "))),
    }
    Ok(())
}

/// The phase of a job-file section holding `trace=FILE`; `entries` are
/// `(option, value, "file:line")`.
pub fn job_phase(name: &str, entries: &[(String, String, String)]) -> Result<Phase, JobError> {
    let invalid = |at: &str, option: &str, reason: String| JobError::Invalid {
        origin: at.to_string(),
        option: option.to_string(),
        reason,
    };
    let mut spec = TraceSpec::new(name, "");
    let mut placement = crate::run::workload::fio::placement::PlacementOptions::default();
    // An aging phase over the trace (`age`, `per_day`, `age_exact`).
    let mut aging = crate::run::lifetime::AgeOptions::default();
    let kb_base = crate::run::workload::fio::kb_base_of(entries)?;
    for (k, v, at) in entries {
        match k.as_str() {
            "name" => spec.name = v.clone(),
            "age" | "per_day" | "age_exact" => {
                // Drive writes per day, or bytes (a percentage would need
                // the capacity: DWPD says it).
                aging.take(k, v, at, |s| match s.contains('%') {
                    true => Err(format!("`{s}`: give a share of the capacity as drive writes per day (0.1DWPD)")),
                    false => crate::run::workload::fio::parse_size(s, kb_base, u64::MAX),
                })?;
            }
            "trace" => {
                if v.is_empty() {
                    return Err(invalid(at, k, "needs a file name".into()));
                }
                // Relative to the job file's directory.
                let file = at.rsplit_once(':').map_or(at.as_str(), |(f, _)| f);
                let base = Path::new(file).parent().filter(|p| !p.as_os_str().is_empty());
                spec.file = match base {
                    // A built-in generator's name is not a path.
                    _ if super::synth::builtin_names().contains(&v.as_str()) => v.clone(),
                    Some(dir) if Path::new(v).is_relative() => dir.join(v).display().to_string(),
                    _ => v.clone(),
                };
            }
            "fdp" | "dataplacement" | "plids" | "fdp_pli" | "plid_select" | "fdp_pli_select" | "dp_scheme" => {
                let key = match k.as_str() {
                    "fdp_pli" => "plids",
                    "fdp_pli_select" => "plid_select",
                    key => key,
                };
                placement.apply(&(key.to_string(), v.clone(), at.clone()))?;
            }
            key if OPTIONS.contains(&key) => apply_option(&mut spec, key, v).map_err(|r| invalid(at, key, r))?,
            "apst" | "randseed" | "kb_base" => {}
            key if crate::run::workload::fio::HOST_ONLY.contains(&key) => {}
            key => {
                return Err(invalid(
                    at,
                    key,
                    "a trace phase takes no fio I/O options (its requests come from the file)".into(),
                ))
            }
        }
    }
    spec.placement = placement.finish()?.map(Box::new);
    let Some((days, per_day, exact, _)) = aging.finish()? else { return Ok(Phase::Trace(spec)) };
    if let Some(p) = &spec.placement {
        return Err(invalid(&p.at, "fdp", "an age phase's writes carry no placement identifiers".into()));
    }
    let name = spec.name.clone();
    let workload = crate::run::lifetime::AgeWorkload::Trace(spec);
    Ok(Phase::Age(crate::run::lifetime::AgeSpec { name, days, per_day, workload, exact }))
}
