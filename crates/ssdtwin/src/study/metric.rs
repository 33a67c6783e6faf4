//! One vocabulary of measurements, shared by the suites' scores and the
//! presets' published figures (`metric = "…"` in both files).
//!
//! A workload metric is a quantity, optionally of one direction:
//! `[read_|write_]` + `iops`, `mbps`, `lat` (mean completion latency),
//! `p99_lat` or `max_lat` — `write_p99_lat`, `read_mbps`, `lat`. Without a
//! direction it is over reads and writes together (throughputs added,
//! latency histograms merged). Power metrics are of the whole step:
//! `power`, `energy`, `efficiency` (MB per joule = MB/s per W) and
//! `idle_power` (the last second of the idle after the step).
//!
//! Each metric has one canonical unit (IOPS, MB/s = 10^6 B/s, µs, W, J,
//! MB/s/W, mW). A figure states the unit of its published value; the
//! simulated value is converted into it ([`convert`]), so `write_max_lat`
//! can be published in ms and `idle_power` in mW without a second name.
//!
//! Throughput is over the phase's active time ([`active_ns`]): for burst
//! and trace phases the time commands were outstanding (the reviews' burst
//! and Storage Bench figures leave out the idle between them), otherwise
//! the measured time.

use crate::model::drive::IoKind;
use crate::run::sim::PhaseResult;
use crate::run::stats::DirStats;
use crate::run::workload::Phase;

/// Which commands a workload metric covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Reads and writes together.
    All,
    /// Reads.
    Read,
    /// Writes.
    Write,
}

/// A measurement of a step (suites) or a figure's job (validate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Commands per second.
    Iops(Dir),
    /// 10^6 bytes per second.
    Mbps(Dir),
    /// Mean completion latency, µs.
    Lat(Dir),
    /// 99th-percentile completion latency, µs.
    P99Lat(Dir),
    /// Maximum completion latency, µs.
    MaxLat(Dir),
    /// Mean power over the step, W.
    Power,
    /// Energy over the step, J.
    Energy,
    /// MB moved per joule over the step (MB/s per W).
    Efficiency,
    /// Mean power over the last second of the idle after the step, mW.
    IdlePower,
}

/// The metric names, for messages.
pub const METRICS: &str = "[read_|write_]iops, [read_|write_]mbps, [read_|write_]lat, [read_|write_]p99_lat, \
                           [read_|write_]max_lat, power, energy, efficiency or idle_power";

impl Metric {
    /// The metric named `s` (see the module docs).
    pub fn parse(s: &str) -> Option<Metric> {
        match s {
            "power" => return Some(Metric::Power),
            "energy" => return Some(Metric::Energy),
            "efficiency" => return Some(Metric::Efficiency),
            "idle_power" => return Some(Metric::IdlePower),
            _ => {}
        }
        let (dir, q) = if let Some(q) = s.strip_prefix("read_") {
            (Dir::Read, q)
        } else if let Some(q) = s.strip_prefix("write_") {
            (Dir::Write, q)
        } else {
            (Dir::All, s)
        };
        Some(match q {
            "iops" => Metric::Iops(dir),
            "mbps" => Metric::Mbps(dir),
            "lat" => Metric::Lat(dir),
            "p99_lat" => Metric::P99Lat(dir),
            "max_lat" => Metric::MaxLat(dir),
            _ => return None,
        })
    }

    /// The metric's name (as [`Metric::parse`] reads it).
    pub fn name(self) -> String {
        let (dir, q) = match self {
            Metric::Power => return "power".into(),
            Metric::Energy => return "energy".into(),
            Metric::Efficiency => return "efficiency".into(),
            Metric::IdlePower => return "idle_power".into(),
            Metric::Iops(d) => (d, "iops"),
            Metric::Mbps(d) => (d, "mbps"),
            Metric::Lat(d) => (d, "lat"),
            Metric::P99Lat(d) => (d, "p99_lat"),
            Metric::MaxLat(d) => (d, "max_lat"),
        };
        format!("{}{q}", dir_prefix(dir, "_"))
    }

    /// The canonical unit of the metric's values.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Iops(_) => "IOPS",
            Metric::Mbps(_) => "MB/s",
            Metric::Lat(_) | Metric::P99Lat(_) | Metric::MaxLat(_) => "µs",
            Metric::Power => "W",
            Metric::Energy => "J",
            Metric::Efficiency => "MB/s/W",
            Metric::IdlePower => "mW",
        }
    }

    /// A short label for tables, e.g. `99th pct write lat`.
    pub fn label(self) -> String {
        let (dir, q) = match self {
            Metric::Iops(d) => (d, "IOPS"),
            Metric::Mbps(d) => (d, "MB/s"),
            Metric::Lat(d) => (d, "lat"),
            Metric::P99Lat(d) => (d, "lat"),
            Metric::MaxLat(d) => (d, "lat"),
            Metric::Power => return "power".into(),
            Metric::Energy => return "energy".into(),
            Metric::Efficiency => return "efficiency".into(),
            Metric::IdlePower => return "idle power".into(),
        };
        let stat = match self {
            Metric::Lat(_) => "avg ",
            Metric::P99Lat(_) => "99th pct ",
            Metric::MaxLat(_) => "max ",
            _ => "",
        };
        match self {
            Metric::Iops(_) | Metric::Mbps(_) => format!("{}{q}", dir_prefix(dir, " ")),
            _ => format!("{stat}{}{q}", dir_prefix(dir, " ")),
        }
    }

    /// Whether the metric is of the idle after a step rather than of the
    /// step's commands.
    pub fn needs_idle(self) -> bool {
        self == Metric::IdlePower
    }

    /// The metric's value for a phase (`idle`: the idle phase after it, for
    /// `idle_power`), in [`Metric::unit`]. `None` when undefined: a
    /// direction without commands for latencies, power figures of a drive
    /// without a power model, idle power without an idle.
    pub fn value(self, r: &PhaseResult, idle: Option<&PhaseResult>) -> Option<f64> {
        let secs = active_ns(r) as f64 / 1e9;
        let rate = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let rd = &r.dirs[IoKind::Read as usize];
        let wr = &r.dirs[IoKind::Write as usize];
        let dirs = |d: Dir| -> (u64, u64, u128) {
            match d {
                Dir::All => (rd.ios + wr.ios, rd.bytes + wr.bytes, rd.lat_sum_ns + wr.lat_sum_ns),
                Dir::Read => (rd.ios, rd.bytes, rd.lat_sum_ns),
                Dir::Write => (wr.ios, wr.bytes, wr.lat_sum_ns),
            }
        };
        Some(match self {
            Metric::Iops(d) => rate(dirs(d).0 as f64),
            Metric::Mbps(d) => rate(dirs(d).1 as f64) / 1e6,
            Metric::Lat(d) => {
                let (n, _, sum) = dirs(d);
                if n == 0 {
                    // Over both directions an empty step averages to 0 (as
                    // the suites always reported); one direction has none.
                    return (d == Dir::All).then_some(0.0);
                }
                sum as f64 / n as f64 / 1e3
            }
            Metric::MaxLat(d) => match d {
                Dir::All => rd.lat_max_ns.max(wr.lat_max_ns) as f64 / 1e3,
                Dir::Read => rd.lat_max_ns as f64 / 1e3,
                Dir::Write => wr.lat_max_ns as f64 / 1e3,
            },
            Metric::P99Lat(d) => match d {
                Dir::All => {
                    let mut both = rd.clone();
                    both.merge(wr);
                    p99_us(&both)?
                }
                Dir::Read => p99_us(rd)?,
                Dir::Write => p99_us(wr)?,
            },
            Metric::Power => r.power_w()?,
            Metric::Energy => r.energy_j?,
            Metric::Efficiency => (rd.bytes + wr.bytes) as f64 / 1e6 / r.energy_j.filter(|&e| e > 0.0)?,
            Metric::IdlePower => idle?.settled_power_w()? * 1e3,
        })
    }
}

fn dir_prefix(d: Dir, sep: &str) -> String {
    match d {
        Dir::All => String::new(),
        Dir::Read => format!("read{sep}"),
        Dir::Write => format!("write{sep}"),
    }
}

/// 99th-percentile latency of a direction, µs (`None` without requests).
fn p99_us(d: &DirStats) -> Option<f64> {
    (d.ios > 0).then(|| d.percentile_ns(99.0) as f64 / 1e3)
}

/// Time over which a phase's throughput is computed, ns: for burst and
/// trace phases the time commands were outstanding, otherwise the
/// measured time.
pub fn active_ns(r: &PhaseResult) -> u64 {
    match &r.phase {
        Phase::Io(s) if s.burst.is_some() => r.busy_ns,
        Phase::Trace(_) => r.busy_ns,
        _ => r.measured_ns,
    }
}

/// Units a figure may state, as (name, dimension, factor to the
/// dimension's base unit).
const UNITS: &[(&str, &str, f64)] = &[
    ("IOPS", "rate", 1.0),
    ("MB/s", "bandwidth", 1.0),
    ("GB/s", "bandwidth", 1e3),
    ("ns", "time", 1e-3),
    ("us", "time", 1.0),
    ("µs", "time", 1.0),
    ("ms", "time", 1e3),
    ("s", "time", 1e6),
    ("W", "power", 1e3),
    ("mW", "power", 1.0),
    ("J", "energy", 1.0),
    ("MB/s/W", "efficiency", 1.0),
    ("GB", "size", 1.0),
    ("TB", "size", 1e3),
    ("%", "share", 1.0),
];

/// `v` in unit `from` expressed in unit `to` (`None` when either unit is
/// unknown or they measure different things, e.g. ms and MB/s).
pub fn convert(v: f64, from: &str, to: &str) -> Option<f64> {
    let find = |u: &str| UNITS.iter().find(|(n, _, _)| *n == u);
    let (_, d1, f1) = find(from)?;
    let (_, d2, f2) = find(to)?;
    (d1 == d2).then(|| v * f1 / f2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back() {
        for dir in [Dir::All, Dir::Read, Dir::Write] {
            for m in [Metric::Iops(dir), Metric::Mbps(dir), Metric::Lat(dir), Metric::P99Lat(dir), Metric::MaxLat(dir)]
            {
                assert_eq!(Metric::parse(&m.name()), Some(m));
            }
        }
        for m in [Metric::Power, Metric::Energy, Metric::Efficiency, Metric::IdlePower] {
            assert_eq!(Metric::parse(&m.name()), Some(m));
        }
        for bad in ["mean_lat", "read_", "write_power", "lat_us", ""] {
            assert_eq!(Metric::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn units_convert_within_a_dimension_only() {
        assert_eq!(convert(94_200.0, "µs", "ms"), Some(94.2));
        assert_eq!(convert(1.0, "W", "mW"), Some(1000.0));
        assert_eq!(convert(2.5, "GB/s", "MB/s"), Some(2500.0));
        assert_eq!(convert(1.0, "ms", "MB/s"), None);
        assert_eq!(convert(1.0, "furlongs", "ms"), None);
    }
}
