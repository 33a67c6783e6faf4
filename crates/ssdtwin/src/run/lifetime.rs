//! A drive's life outside the benchmark: time powered off (`retention`)
//! and years of use compressed into an untimed aging pass (`age`).
//!
//! - **Retention** (`retention=90d`): the host shuts the drive down
//!   cleanly (it waits for the work booked on the dies), the drive's
//!   clock runs on with the power off — no energy, no background work,
//!   no sensor polls; the drive cools towards ambient — and it powers up
//!   idle. Everything that ages with time since a block was programmed
//!   reads the drive's clock, which moved on by the phase's duration.
//! - **Age** (`age=5y`, `per_day=0.1DWPD` or `per_day=20g`, and the
//!   section's I/O options as the workload): each day the workload's
//!   commands are fed through the FTL without timing them until the
//!   day's bytes are written — the fast path of the drive states
//!   ([`crate::run::state::write_fast`]): the same writes, trims, garbage
//!   collection, SLC caching and folding and wear leveling the timed path
//!   would decide, since the FTL never reads the clock — then the drive
//!   idles overnight (its background work runs to the end, untimed, as a
//!   drive left idle long enough does) and the clock moves on a day.
//!   Reads do not change the FTL's state and are skipped; their read
//!   disturb is left out.
//!
//! Left out: the energy and heat of the aged days (the phase reports no
//! energy; the drive ends at ambient temperature, as after any untimed
//! preparation), the NAND operation counters of the aged days (the FTL's
//! counters, the erase counts and the health log include them) and any
//! timing effect (the queue, the buffer, throttling) on what the FTL
//! decides, which does not exist in this model.

use serde::{Deserialize, Serialize};

use crate::model::drive::IoKind;
use crate::model::health::Health;
use crate::run::device::Device;
use crate::run::sim::PhaseResult;
use crate::run::stats::Counters;
use crate::run::workload::{IoGenerator, IoSpec, Phase};

/// A day, ns.
pub const DAY_NS: u64 = 86_400_000_000_000;

/// How much an aging workload writes each day.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PerDay {
    /// Bytes per day (`per_day=20g`).
    Bytes(u64),
    /// Drive writes per day: this many times the user capacity
    /// (`per_day=0.1DWPD`).
    DriveWrites(f64),
}

impl PerDay {
    /// Bytes per day on a drive of `capacity` user bytes.
    pub fn bytes(&self, capacity: u64) -> u64 {
        match *self {
            PerDay::Bytes(b) => b,
            PerDay::DriveWrites(d) => (d * capacity as f64).round() as u64,
        }
    }

    /// Parse `0.1DWPD` (drive writes per day) or a size in fio's syntax
    /// (`parse_size` reads it).
    pub fn parse(v: &str, parse_size: impl Fn(&str) -> Result<u64, String>) -> Result<PerDay, String> {
        let t = v.trim();
        if let Some(n) = t.strip_suffix("DWPD").or_else(|| t.strip_suffix("dwpd")) {
            let d: f64 = n.trim().parse().map_err(|_| format!("`{v}` is not a number of drive writes per day"))?;
            if !(d > 0.0 && d.is_finite()) {
                return Err(format!("`{v}`: drive writes per day must be above 0"));
            }
            return Ok(PerDay::DriveWrites(d));
        }
        match parse_size(t)? {
            0 => Err(format!("`{v}`: the bytes per day must be above 0")),
            b => Ok(PerDay::Bytes(b)),
        }
    }
}

/// An aging phase: `days` days of `workload` at `per_day` a day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgeSpec {
    /// Phase name.
    pub name: String,
    /// Days of use.
    pub days: u64,
    /// Writes per day.
    pub per_day: PerDay,
    /// What is written (its writes and trims; reads are skipped).
    pub workload: IoSpec,
}

/// What an aging phase did, and the drive's wear after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AgeSummary {
    /// Days aged.
    pub days: u64,
    /// Bytes the host wrote in them.
    pub host_bytes_written: u64,
    /// Bytes programmed into the NAND in them (host data, GC, folding,
    /// wear leveling, padding, map pages).
    pub nand_bytes_written: u64,
    /// Write amplification over them.
    pub waf: f64,
    /// Rated endurance used after them, % (`None`: cycles not rated).
    pub percentage_used: Option<f64>,
    /// Most minus fewest erases of a block after them.
    pub erase_count_spread: u32,
    /// Mean native P/E cycles after them.
    pub pe_cycles_native_mean: f64,
}

/// Parse a duration in days: `90d`, `3y` (365 days a year), `12w`, or a
/// bare number of days.
pub fn parse_days(v: &str) -> Result<u64, String> {
    let t = v.trim();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let n: f64 = t[..end].parse().map_err(|_| format!("`{v}` is not a duration in days (e.g. 90d, 3y)"))?;
    let per = match t[end..].trim().to_ascii_lowercase().as_str() {
        "" | "d" | "day" | "days" => 1.0,
        "w" => 7.0,
        "y" | "year" | "years" => 365.0,
        u => return Err(format!("`{v}` has an unknown unit `{u}` (d, w or y)")),
    };
    let days = n * per;
    if days.fract() != 0.0 || days < 1.0 {
        return Err(format!("`{v}` is not a whole number of days (at least one)"));
    }
    Ok(days as u64)
}

/// Parse a retention time: a duration in fio's syntax (`parse_time`,
/// seconds by default) or in days and years (`90d`, `1y`), ns.
pub fn parse_retention(v: &str, parse_time: impl Fn(&str) -> Result<u64, String>) -> Result<u64, String> {
    match parse_time(v) {
        Ok(ns) if ns > 0 => Ok(ns),
        Ok(_) => Err(format!("`{v}`: a retention time must be above 0")),
        Err(e) => parse_days(v).map(|d| d * DAY_NS).map_err(|_| e),
    }
}

/// Run a retention phase on `dev` now (nothing outstanding).
pub(crate) fn run_retention(dev: &mut Device, phase: &Phase, duration_ns: u64) -> PhaseResult {
    let start = dev.now();
    let before = Counters::of(dev.drive());
    let off = dev.drive().idle_since().max(start);
    dev.power_off(off, off + duration_ns);
    let end = dev.now();
    quiet_result(dev, phase, start, end, before, None)
}

/// Run an aging phase on `dev` now (nothing outstanding).
pub(crate) fn run_age(dev: &mut Device, phase: &Phase, spec: &AgeSpec) -> PhaseResult {
    let start = dev.now();
    let before = Counters::of(dev.drive());
    let capacity = dev.drive().user_bytes();
    let per_day = spec.per_day.bytes(capacity);
    let mut gen = IoGenerator::new(&spec.workload, capacity);
    let mut day_start = dev.drive().idle_since().max(start);
    for _ in 0..spec.days {
        let drive = dev.drive_mut();
        drive.ftl.set_emit_ops(false);
        let mut written = 0u64;
        while written < per_day {
            let cmd = gen.next_command();
            let first = (cmd.offset / 4096) as u32;
            let pages = (cmd.offset + cmd.len as u64).div_ceil(4096) as u32 - first;
            match cmd.kind {
                IoKind::Write => {
                    for lpn in first..first + pages {
                        drive.ftl.write(lpn);
                    }
                    written += cmd.len as u64;
                }
                IoKind::Trim => {
                    // Whole pages only, as the timed path trims.
                    let whole = (cmd.offset.div_ceil(4096) as u32)..((cmd.offset + cmd.len as u64) / 4096) as u32;
                    for lpn in whole {
                        drive.ftl.trim(lpn);
                    }
                }
                IoKind::Read => {}
            }
        }
        // Overnight the drive idles long enough to finish its background
        // work (folding down to its idle target, GC up to its watermark).
        while drive.ftl.background_step() {}
        drive.ftl.set_emit_ops(true);
        // The day passes; untimed, so without energy or heat.
        dev.power_off(day_start, day_start + DAY_NS);
        day_start += DAY_NS;
    }
    let end = dev.now();
    let counters = Counters::of(dev.drive()).since(&before);
    let health = Health::of(dev.drive());
    let summary = AgeSummary {
        days: spec.days,
        host_bytes_written: counters.host_slots_written * 4096,
        nand_bytes_written: counters.ftl_slots_programmed() * 4096,
        waf: counters.waf(),
        percentage_used: health.percentage_used,
        erase_count_spread: health.erase_count_spread,
        pe_cycles_native_mean: health.pe_cycles_native_mean,
    };
    quiet_result(dev, phase, start, end, before, Some(summary))
}

fn quiet_result(
    dev: &Device,
    phase: &Phase,
    start: u64,
    end: u64,
    before: Counters,
    age: Option<AgeSummary>,
) -> PhaseResult {
    PhaseResult {
        phase: phase.clone(),
        start_ns: start,
        end_ns: end,
        measured_ns: end - start,
        dirs: Default::default(),
        series: crate::run::stats::TimeSeries::new(start),
        counters: Counters::of(dev.drive()).since(&before),
        bursts: 0,
        busy_ns: 0,
        energy_j: dev.drive().energy_j(end).map(|_| 0.0),
        trace: None,
        thermal: None,
        age,
    }
}

/// The options of a retention or aging phase as results show them.
pub fn options_json(phase: &Phase) -> serde_json::Value {
    match phase {
        Phase::Retention { duration_ns, .. } => serde_json::json!({ "retention_ns": duration_ns }),
        Phase::Age(a) => serde_json::to_value(a).expect("an age spec serialises"),
        _ => serde_json::Value::Null,
    }
}

/// One line (or two) of the run summary for a retention or aging phase.
pub fn summary(p: &PhaseResult) -> String {
    let days = (p.end_ns - p.start_ns) as f64 / DAY_NS as f64;
    match (&p.phase, &p.age) {
        (Phase::Age(spec), Some(a)) => {
            let used = a.percentage_used.map_or(String::new(), |u| format!(", {u:.1}% of rated endurance used"));
            format!(
                "\n[{}] aged {} days at {:.2} GB/day: host wrote {:.1} TB, NAND {:.1} TB, WAF {:.2}{used}, \
                 native P/E {:.1} mean, erase-count spread {}\n",
                spec.name,
                a.days,
                a.host_bytes_written as f64 / a.days.max(1) as f64 / 1e9,
                a.host_bytes_written as f64 / 1e12,
                a.nand_bytes_written as f64 / 1e12,
                a.waf,
                a.pe_cycles_native_mean,
                a.erase_count_spread
            )
        }
        _ => format!("\n[{}] powered off {days:.1} days (retention)\n", p.phase.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_amounts_parse() {
        assert_eq!(parse_days("3y"), Ok(1095));
        assert_eq!(parse_days("90d"), Ok(90));
        assert_eq!(parse_days("2w"), Ok(14));
        assert!(parse_days("1.5d").is_err());
        assert!(parse_days("0d").is_err());
        assert!(parse_days("5q").is_err());
        let size = |s: &str| crate::run::workload::fio::parse_size(s, 1000, 1 << 40);
        assert_eq!(PerDay::parse("0.1DWPD", size), Ok(PerDay::DriveWrites(0.1)));
        assert_eq!(PerDay::parse("20g", size), Ok(PerDay::Bytes(20_000_000_000)));
        assert!(PerDay::parse("0DWPD", size).is_err());
        assert_eq!(PerDay::DriveWrites(0.1).bytes(1_000_000), 100_000);
    }
}
