//! The fio options that steer a job from inside or log it: the latency
//! target (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`), steady-state detection (`ss`, `ss_dur`, `ss_ramp` and
//! their long spellings) and the log files (`write_bw_log`,
//! `write_iops_log`, `write_lat_log`, `write_hist_log`, `log_avg_msec`,
//! `log_hist_msec`, `log_hist_coarseness`, `per_job_logs`, `log_offset`).
//! What they do is in [`crate::run::control`] and [`crate::run::logs`].

use super::options::Entry;
use super::values::parse_time;
use crate::error::JobError;
use crate::run::control::{LatencyTarget, SsMetric, SteadyState};
use crate::run::logs::LogSpec;
use crate::run::workload::IoSpec;

/// Longest steady-state window (`ss_dur`), s: one day of per-second
/// samples.
const MAX_SS_DUR_S: u64 = 86_400;

/// The options as read so far (later ones win).
#[derive(Debug, Default)]
pub(super) struct Control {
    target_ns: u64,
    window_ns: u64,
    percentile: Option<f64>,
    keep_running: bool,
    ss: Option<(SsMetric, bool, f64, bool)>,
    ss_dur_s: u64,
    ss_ramp_ns: u64,
    /// `steadystate_check_interval`, ms, and where it was written.
    ss_interval: Option<(u64, String)>,
    logs: LogSpec,
    per_job_given: bool,
}

fn invalid(at: &str, option: &str, reason: impl Into<String>) -> JobError {
    JobError::Invalid { origin: at.to_string(), option: option.to_string(), reason: reason.into() }
}

fn flag(v: &str, at: &str, key: &str) -> Result<bool, JobError> {
    match v {
        "" | "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(invalid(at, key, format!("`{v}` is not 0 or 1"))),
    }
}

impl Control {
    /// Read one option (`key` is one the table gives to this module:
    /// [`super::table::Reader::Control`]).
    pub(super) fn apply(&mut self, (key, v, at): &Entry) -> Result<(), JobError> {
        let key = key.as_str();
        let time = |unit: u64| parse_time(v, unit).map_err(|r| invalid(at, key, r));
        let int = || v.parse::<u64>().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number")));
        match key {
            // fio's defaults: microseconds for the latency options.
            "latency_target" => self.target_ns = time(1_000)?,
            "latency_window" => self.window_ns = time(1_000)?,
            "latency_percentile" => {
                let p: f64 = v.parse().map_err(|_| invalid(at, key, format!("`{v}` is not a percentage")))?;
                if !(p > 0.0 && p <= 100.0) {
                    return Err(invalid(at, key, format!("{p} is not in (0, 100]")));
                }
                self.percentile = Some(p);
            }
            "latency_run" => self.keep_running = flag(v, at, key)?,
            "ss" | "steadystate" => {
                let (name, limit) = v
                    .split_once(':')
                    .ok_or_else(|| invalid(at, key, format!("`{v}` is not CRITERION:LIMIT (e.g. iops_slope:0.1%)")))?;
                let (metric, slope) = match name {
                    "iops" => (SsMetric::Iops, false),
                    "iops_slope" => (SsMetric::Iops, true),
                    "bw" => (SsMetric::Bw, false),
                    "bw_slope" => (SsMetric::Bw, true),
                    "lat" => (SsMetric::Lat, false),
                    "lat_slope" => (SsMetric::Lat, true),
                    _ => {
                        return Err(invalid(
                            at,
                            key,
                            format!("`{name}` is not one of iops, iops_slope, bw, bw_slope, lat, lat_slope"),
                        ))
                    }
                };
                let (num, percent) = match limit.trim().strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (limit.trim(), false),
                };
                let limit: f64 = num.parse().map_err(|_| invalid(at, key, format!("`{limit}` is not a number")))?;
                if limit.is_nan() || limit < 0.0 {
                    return Err(invalid(at, key, "the limit must not be negative"));
                }
                self.ss = Some((metric, slope, limit, percent));
            }
            // Whole seconds, as fio keeps them.
            "ss_dur" | "steadystate_duration" => {
                self.ss_dur_s = time(1_000_000_000)? / 1_000_000_000;
                // The window keeps (and the JSON prints) one sample per
                // second of it.
                if self.ss_dur_s > MAX_SS_DUR_S {
                    return Err(invalid(
                        at,
                        key,
                        format!(
                            "{} s is longer than {MAX_SS_DUR_S} s (one day), the longest window kept",
                            self.ss_dur_s
                        ),
                    ));
                }
            }
            "ss_ramp" | "steadystate_ramp_time" => self.ss_ramp_ns = time(1_000_000_000)?,
            "steadystate_check_interval" | "ss_interval" => {
                let ms = time(1_000_000_000)? / 1_000_000;
                // fio divides ss_dur by the interval's whole seconds.
                if ms < 1000 {
                    return Err(invalid(
                        at,
                        key,
                        format!("{ms} ms is below 1 s: fio's window (ss_dur / (interval_ms / 1000) samples) would divide by zero"),
                    ));
                }
                self.ss_interval = Some((ms, at.clone()));
            }
            "write_bw_log" => self.logs.bw = Some(v.clone()),
            "write_iops_log" => self.logs.iops = Some(v.clone()),
            "write_lat_log" => self.logs.lat = Some(v.clone()),
            "write_hist_log" => self.logs.hist = Some(v.clone()),
            "log_avg_msec" => self.logs.avg_msec = int()?,
            "log_hist_msec" => self.logs.hist_msec = int()?,
            "log_hist_coarseness" => {
                let c = int()?;
                if c > 6 {
                    return Err(invalid(at, key, format!("{c} is not between 0 and 6")));
                }
                self.logs.hist_coarseness = c as u32;
            }
            "per_job_logs" => {
                self.logs.per_job = flag(v, at, key)?;
                self.per_job_given = true;
            }
            "log_offset" => self.logs.offset = flag(v, at, key)?,
            _ => unreachable!("`{key}` is a control option"),
        }
        Ok(())
    }

    /// Put what was read into the job.
    pub(super) fn finish(mut self, spec: &mut IoSpec) -> Result<(), JobError> {
        if self.target_ns > 0 {
            spec.latency_target = Some(LatencyTarget {
                target_ns: self.target_ns,
                window_ns: self.window_ns,
                percentile: self.percentile.unwrap_or(100.0),
                keep_running: self.keep_running,
            });
        }
        // As in fio, steady-state detection runs when `ss_dur` is set; the
        // criterion defaults to `iops_slope:0.01%`.
        if self.ss_dur_s > 0 {
            let (metric, slope, limit, percent) = self.ss.unwrap_or((SsMetric::Iops, true, 0.01, true));
            spec.steadystate = Some(SteadyState {
                metric,
                slope,
                limit,
                percent,
                duration_s: self.ss_dur_s.min(u32::MAX as u64) as u32,
                ramp_ns: self.ss_ramp_ns,
                interval_ms: self.ss_interval.as_ref().map_or(1000, |i| i.0),
            });
            if let (Some((ms, at)), Some(ss)) = (&self.ss_interval, &spec.steadystate) {
                if ss.intervals() == 0 {
                    return Err(invalid(
                        at,
                        "steadystate_check_interval",
                        format!(
                            "{} s is longer than ss_dur ({} s): the window would have no sample",
                            ms / 1000,
                            self.ss_dur_s
                        ),
                    ));
                }
            }
        }
        if !self.per_job_given {
            self.logs.per_job = true;
        }
        if self.logs.any() {
            spec.logs = Some(self.logs);
        }
        Ok(())
    }
}
