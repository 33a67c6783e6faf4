//! One vocabulary of measurements, shared by the suites' scores and the
//! presets' published figures (`metric = "…"` in both files).
//!
//! A workload metric is a quantity, optionally of one direction:
//! `[read_|write_]` + `iops`, `mbps`, `lat` (mean completion latency),
//! `p99_lat` or `max_lat` — `write_p99_lat`, `read_mbps`, `lat` — or
//! `over_<T>`, the share of commands slower than T (`over_10ms`,
//! `read_over_100ms`: the latency outliers AnandTech's Storage Bench
//! reports as the percentage of I/Os above 10 ms and 100 ms). Without a
//! direction it is over reads and writes together (throughputs added,
//! latency histograms merged). `stalls_<T>` counts the step's stalls of
//! at least T: intervals in which commands were outstanding and none
//! completed (`stalls_100ms`; [`crate::run::stats::Stalls`]). Power metrics are of the whole step:
//! `power`, `energy`, `efficiency` (MB per joule = MB/s per W) and
//! `idle_power` (the last second of the idle after the step).
//!
//! Each metric has one canonical unit (IOPS, MB/s = 10^6 B/s, µs, W, J,
//! MB/s/W, mW, % for outliers, a count for stalls). Thresholds are
//! written with a unit: `ns`, `us`, `ms` or `s`. A figure states the unit of its published value; the
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

/// The latency thresholds every I/O phase's results report outliers
/// above, ns: 10 ms and 100 ms, the two AnandTech's Storage Bench charts
/// (2014–2015 reviews: "percentage of I/Os above 10 ms / 100 ms").
pub const OUTLIER_THRESHOLDS_NS: [u64; 2] = [10_000_000, 100_000_000];

/// The stall lengths every I/O phase's results count stalls of, ns:
/// 100 ms and 1 s, the limits of a response that feels instantaneous and
/// of one that keeps the user's flow of thought (Nielsen, *Usability
/// Engineering*, 1993, ch. 5): a stall of 100 ms is a noticeable hitch, a
/// stall of a second the "pause" the 2008 reviews complained of.
pub const STALL_THRESHOLDS_NS: [u64; 2] = [100_000_000, 1_000_000_000];

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
    /// Share of commands whose completion latency exceeded the threshold
    /// (ns), %.
    Over(Dir, u64),
    /// Stalls of at least the threshold (ns): intervals in which commands
    /// were outstanding and none completed.
    Stalls(u64),
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
                           [read_|write_]max_lat, [read_|write_]over_<T> (e.g. over_10ms), stalls_<T> (e.g. \
                           stalls_100ms), power, energy, efficiency or idle_power";

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
        if let Some(t) = s.strip_prefix("stalls_") {
            return parse_threshold_ns(t).map(Metric::Stalls);
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
            _ => Metric::Over(dir, parse_threshold_ns(q.strip_prefix("over_")?)?),
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
            Metric::Over(d, t) => return format!("{}over_{}", dir_prefix(d, "_"), threshold_name(t)),
            Metric::Stalls(t) => return format!("stalls_{}", threshold_name(t)),
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
            Metric::Over(..) => "%",
            Metric::Stalls(_) => "stalls",
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
            Metric::Over(d, t) => return format!("{}I/Os above {}", dir_prefix(d, " "), threshold_label(t)),
            Metric::Stalls(t) => return format!("stalls ≥ {}", threshold_label(t)),
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
            Metric::Over(d, t) => {
                let (n, over) = match d {
                    Dir::All => (rd.ios + wr.ios, rd.count_above(t) + wr.count_above(t)),
                    Dir::Read => (rd.ios, rd.count_above(t)),
                    Dir::Write => (wr.ios, wr.count_above(t)),
                };
                if n == 0 {
                    return None;
                }
                100.0 * over as f64 / n as f64
            }
            Metric::Stalls(t) => r.stalls.count_at_least(t) as f64,
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

/// A threshold written with its unit (`10ms`, `1s`, `500us`, `2000ns`),
/// ns; `None` for a missing or unknown unit, a zero or a fraction of a ns.
pub fn parse_threshold_ns(s: &str) -> Option<u64> {
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = s.split_at(split);
    let factor = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    let v: f64 = num.parse().ok()?;
    let ns = v * factor;
    (ns >= 1.0 && ns.fract() == 0.0 && ns < 1e18).then_some(ns as u64)
}

/// A threshold as [`parse_threshold_ns`] reads it, in the largest unit
/// that writes it whole (`10ms`, `1s`).
pub fn threshold_name(ns: u64) -> String {
    match ns {
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// A threshold for labels: `10 ms`, `1 s`, `500 µs`.
fn threshold_label(ns: u64) -> String {
    let name = threshold_name(ns);
    let unit_at = name.find(|c: char| !c.is_ascii_digit()).unwrap_or(name.len());
    let (n, u) = name.split_at(unit_at);
    format!("{n} {}", if u == "us" { "µs" } else { u })
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
    ("stalls", "count", 1.0),
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
        for (name, m) in [
            ("over_10ms", Metric::Over(Dir::All, 10_000_000)),
            ("read_over_100ms", Metric::Over(Dir::Read, 100_000_000)),
            ("write_over_1s", Metric::Over(Dir::Write, 1_000_000_000)),
            ("over_250us", Metric::Over(Dir::All, 250_000)),
            ("stalls_100ms", Metric::Stalls(100_000_000)),
            ("stalls_1s", Metric::Stalls(1_000_000_000)),
        ] {
            assert_eq!(Metric::parse(name), Some(m), "{name}");
            assert_eq!(m.name(), name);
        }
        assert_eq!(Metric::parse("stalls_0.5s"), Some(Metric::Stalls(500_000_000)));
        assert_eq!(Metric::Stalls(500_000_000).label(), "stalls ≥ 500 ms");
        assert_eq!(Metric::Over(Dir::Read, 10_000_000).label(), "read I/Os above 10 ms");
        for bad in [
            "mean_lat",
            "read_",
            "write_power",
            "lat_us",
            "",
            "over_10",
            "over_ms",
            "over_10min",
            "stalls_0s",
            "write_stalls_1s",
            "over_0.5ns",
        ] {
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
