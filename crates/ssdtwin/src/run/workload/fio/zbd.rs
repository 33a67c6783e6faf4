//! fio's options of `zonemode=zbd` (HOWTO "I/O zones"; zbd.c):
//! `max_open_zones`, `job_max_open_zones`, `ignore_zone_limits`,
//! `zone_reset_threshold`, `zone_reset_frequency`, `read_beyond_wp`,
//! `zonecapacity` (ignored, as fio ignores it on a zoned block device: the
//! capacity is the drive's), `write_zone_remainder` (which sets
//! `norandommap`, as fio's init.c does; `norandommap=0` with it is fio's
//! error), `recover_zbd_write_error` (which needs `continue_on_error`;
//! [`crate::run::source`]'s module `failed`) and `write_mode` (`write`, or `zone_append`, which fio's
//! io_uring_cmd engine allows with `zonemode=zbd` only). What they do is
//! [`crate::run::zbd`].

use super::options::Entry;
use super::values::invalid;
use crate::error::JobError;
use crate::run::workload::Zbd;

/// The options as read so far (later ones win), with where each was
/// written.
#[derive(Debug, Default)]
pub(super) struct ZbdOptions {
    max_open: u32,
    job_max_open: Option<(u32, String)>,
    ignore_limits: bool,
    threshold: f64,
    frequency: f64,
    read_beyond_wp: bool,
    write_zone_remainder: bool,
    recover_write_error: bool,
    append: Option<String>,
    /// `offset`, `size`, `io_size` given in zones (`Nz`), and where.
    zones: [Option<(u64, String)>; 3],
}

/// fio's size in zones: `N` followed by `z` (options.c's `size_nz`).
pub(super) fn zones_of(v: &str) -> Option<u64> {
    v.trim().strip_suffix('z').and_then(|n| n.trim().parse::<u64>().ok())
}

fn fraction(v: &str, at: &str, key: &str) -> Result<f64, JobError> {
    match v.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(invalid(at, key, format!("`{v}` is not a number between 0 and 1"))),
    }
}

fn flag(v: &str, at: &str, key: &str) -> Result<bool, JobError> {
    match v {
        "" | "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(invalid(at, key, format!("`{v}` is not 0 or 1"))),
    }
}

impl ZbdOptions {
    /// Read one option (one the table gives to this module:
    /// [`super::table::Reader::Zoned`]).
    pub(super) fn apply(&mut self, (key, v, at): &Entry) -> Result<(), JobError> {
        let key = key.as_str();
        let count = || match v.parse::<u32>() {
            Ok(n) => Ok(n),
            Err(_) => Err(invalid(at, key, format!("`{v}` is not a whole number"))),
        };
        match key {
            "max_open_zones" => self.max_open = count()?,
            "job_max_open_zones" => self.job_max_open = Some((count()?, at.clone())),
            "ignore_zone_limits" => self.ignore_limits = flag(v, at, key)?,
            "zone_reset_threshold" => self.threshold = fraction(v, at, key)?,
            "zone_reset_frequency" => self.frequency = fraction(v, at, key)?,
            "read_beyond_wp" => self.read_beyond_wp = flag(v, at, key)?,
            "write_zone_remainder" => self.write_zone_remainder = flag(v, at, key)?,
            "recover_zbd_write_error" => self.recover_write_error = flag(v, at, key)?,
            // fio takes the capacity from a zoned block device and ignores
            // the option (HOWTO, zonecapacity).
            "zonecapacity" => {}
            "write_mode" => match v.as_str() {
                "write" => self.append = None,
                "zone_append" => self.append = Some(at.clone()),
                _ => {
                    return Err(invalid(
                        at,
                        key,
                        format!("`{v}`: only write and zone_append are modelled (not uncor, zeroes, verify or a mix)"),
                    ))
                }
            },
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// `offset` (0), `size` (1) or `io_size` (2) given as `n` zones at `at`.
    pub(super) fn in_zones(&mut self, i: usize, n: u64, at: &str) {
        self.zones[i] = Some((n, at.to_string()));
    }

    /// The job's `zonemode=zbd` (`zbd_at`: where it was written; `None`
    /// without it), or the error fio gives for the combination.
    /// `zone_size`: `zonesize` as given (0: not given).
    pub(super) fn finish(self, zbd_at: Option<String>, zone_size: u64) -> Result<Option<Zbd>, JobError> {
        let Some(at) = zbd_at else {
            if let Some((_, a)) = self.zones.iter().flatten().next() {
                return Err(invalid(a, "size", "a size in zones (Nz) needs zonemode=zbd"));
            }
            if let Some(a) = self.append {
                // engines/io_uring.c: "zone append ... requires zonemode=zbd".
                return Err(invalid(&a, "write_mode", "zone_append needs zonemode=zbd (as in fio)"));
            }
            return Ok(None);
        };
        if let Some((_, jat)) = self.job_max_open.as_ref().filter(|(n, _)| self.max_open > 0 && *n > self.max_open) {
            return Err(invalid(jat, "job_max_open_zones", "is larger than max_open_zones"));
        }
        Ok(Some(Zbd {
            max_open_zones: self.max_open,
            job_max_open_zones: self.job_max_open.map_or(0, |j| j.0),
            ignore_zone_limits: self.ignore_limits,
            reset_threshold: self.threshold,
            reset_frequency: self.frequency,
            read_beyond_wp: self.read_beyond_wp,
            append: self.append.is_some(),
            write_zone_remainder: self.write_zone_remainder,
            recover_write_error: self.recover_write_error,
            zone_size,
            in_zones: self.zones.map(|z| z.map(|(n, _)| n)),
            at,
        }))
    }
}
