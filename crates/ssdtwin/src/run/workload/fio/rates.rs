//! fio's rate options (options.c): the limits `rate` and `rate_iops`, the
//! minimums `rate_min` and `rate_iops_min` with their averaging period
//! `rate_cycle`, `rate_process` and `rate_ignore_thinktime`, each with a
//! value per direction (`rate=1m,4m`; `rate=,4m` limits only the writes,
//! `rate=1m,` only the reads, `rate=1m` both). fio's checks that need
//! several of them (init.c) are here too. The schedule a limit gives is
//! [`crate::run::source`]'s; the minimum-rate check is
//! [`crate::run::control`]'s.

use super::options::Entry;
use super::values::{invalid, parse_bool, parse_size, per_direction};
use crate::error::JobError;
use crate::run::workload::{IoSpec, MinRate, Rate};

/// The rate options as read so far (later ones win).
#[derive(Debug)]
pub(super) struct RateOptions {
    rate: Rate,
    rate_given: bool,
    /// Where `rate`, `rate_iops`, `rate_min` and `rate_iops_min` were last
    /// written (fio makes each pair exclusive).
    at: [Option<String>; 4],
    min_rate: MinRate,
    min_rate_given: bool,
}

impl Default for RateOptions {
    fn default() -> RateOptions {
        RateOptions {
            rate: Rate { bytes_per_s: [0; 3], iops: [0; 3], poisson: false, ignore_thinktime: false },
            rate_given: false,
            at: Default::default(),
            min_rate: MinRate { bytes_per_s: [0; 3], iops: [0; 3], cycle_ms: 1000 },
            min_rate_given: false,
        }
    }
}

impl RateOptions {
    /// Read one option (one the table gives to this module:
    /// [`super::table::Reader::Rate`]); sizes in `kb_base` units.
    pub(super) fn apply(&mut self, (k, v, at): &Entry, kb_base: u64, capacity: u64) -> Result<(), JobError> {
        let key = k.as_str();
        match key {
            "rate" | "rate_iops" | "rate_min" | "rate_iops_min" => {
                let (bytes, iops) = if key.ends_with("_min") {
                    self.min_rate_given = true;
                    (&mut self.min_rate.bytes_per_s, &mut self.min_rate.iops)
                } else {
                    self.rate_given = true;
                    (&mut self.rate.bytes_per_s, &mut self.rate.iops)
                };
                for (i, part) in per_direction(v).into_iter().enumerate() {
                    let Some(p) = part else { continue };
                    if key.starts_with("rate_iops") {
                        iops[i] = p.parse().map_err(|_| invalid(at, key, format!("`{p}` is not a whole number")))?;
                    } else {
                        bytes[i] = parse_size(p, kb_base, capacity).map_err(|r| invalid(at, key, r))?;
                    }
                }
                let slot = ["rate", "rate_iops", "rate_min", "rate_iops_min"].iter().position(|o| *o == key);
                self.at[slot.expect("one of the four")] = Some(at.clone());
            }
            "rate_cycle" => {
                let ms = v.parse::<u64>().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number")))?;
                if ms == 0 {
                    return Err(invalid(at, key, "must be at least 1 (ms)"));
                }
                self.min_rate.cycle_ms = ms;
            }
            "rate_process" => {
                self.rate.poisson = match v.as_str() {
                    "linear" => false,
                    "poisson" => true,
                    _ => return Err(invalid(at, key, format!("`{v}` is not linear or poisson"))),
                }
            }
            "rate_ignore_thinktime" => {
                self.rate.ignore_thinktime = parse_bool(v).map_err(|r| invalid(at, key, r))?;
            }
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// Check the options together and put them in `spec`.
    pub(super) fn finish(self, spec: &mut IoSpec) -> Result<(), JobError> {
        check_rates(&self.rate, &self.min_rate, &self.at)?;
        if self.rate_given {
            spec.rate = Some(self.rate);
        }
        if self.min_rate_given
            && (self.min_rate.bytes_per_s.iter().any(|&b| b > 0) || self.min_rate.iops.iter().any(|&n| n > 0))
        {
            spec.rate_min = Some(self.min_rate);
        }
        Ok(())
    }
}

/// fio's checks of the rate options (init.c): a byte rate and an IOPS
/// rate exclude each other, as do the two minimums, and a minimum above
/// the direction's limit is an error. `at` holds where `rate`,
/// `rate_iops`, `rate_min` and `rate_iops_min` were written.
fn check_rates(rate: &Rate, min: &MinRate, at: &[Option<String>; 4]) -> Result<(), JobError> {
    let any = |x: &[u64; 3]| x.iter().any(|&v| v > 0);
    let here = |i: usize| at[i].as_deref().unwrap_or("command line");
    if any(&rate.bytes_per_s) && any(&rate.iops) {
        return Err(invalid(here(1), "rate_iops", "rate and rate_iops are mutually exclusive (as in fio)"));
    }
    if any(&min.bytes_per_s) && any(&min.iops) {
        return Err(invalid(here(3), "rate_iops_min", "rate_min and rate_iops_min are mutually exclusive (as in fio)"));
    }
    for d in 0..3 {
        if rate.bytes_per_s[d] > 0 && rate.bytes_per_s[d] < min.bytes_per_s[d] {
            let why = format!("the minimum {} B/s exceeds the rate {} B/s", min.bytes_per_s[d], rate.bytes_per_s[d]);
            return Err(invalid(here(2), "rate_min", why));
        }
        if rate.iops[d] > 0 && rate.iops[d] < min.iops[d] {
            let why = format!("the minimum {} IOPS exceeds the rate {} IOPS", min.iops[d], rate.iops[d]);
            return Err(invalid(here(3), "rate_iops_min", why));
        }
    }
    Ok(())
}
