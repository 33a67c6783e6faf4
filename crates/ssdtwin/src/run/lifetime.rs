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

use crate::error::{JobError, TraceError};
use crate::model::drive::{Command, IoKind};
use crate::model::ftl::extrapolate::WearMark;
use crate::model::health::Health;
use crate::run::device::{Completion, Device};
use crate::run::driver::{drive, Workload};
use crate::run::sim::PhaseResult;
use crate::run::stats::Counters;
use crate::run::trace::{LoopedTrace, TraceSpec};
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

/// Where an aging phase's commands come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgeWorkload {
    /// A fio job's generator (the section's I/O options).
    Io(Box<IoSpec>),
    /// A trace or a synthetic client generator (`trace=`), in order and
    /// from its start again when it ends.
    Trace(TraceSpec),
}

/// The commands of an aging workload.
enum AgeCommands {
    Io(Box<IoGenerator>),
    Trace(Box<LoopedTrace>),
}

impl AgeCommands {
    fn open(w: &AgeWorkload, capacity: u64) -> Result<AgeCommands, TraceError> {
        Ok(match w {
            AgeWorkload::Io(spec) => AgeCommands::Io(Box::new(IoGenerator::new(spec, capacity))),
            AgeWorkload::Trace(spec) => AgeCommands::Trace(Box::new(LoopedTrace::open(spec, capacity)?)),
        })
    }

    fn next(&mut self) -> Result<Command, TraceError> {
        match self {
            AgeCommands::Io(g) => Ok(g.next_command()),
            AgeCommands::Trace(t) => t.next_command(),
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
    pub workload: AgeWorkload,
    /// Run every day exactly (`age_exact=1`) instead of carrying
    /// stationary wear forward.
    #[serde(default)]
    pub exact: bool,
}

/// What an aging phase did, and the drive's wear after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AgeSummary {
    /// Days aged.
    pub days: u64,
    /// Of them, days whose wear was carried forward from a window of
    /// exactly simulated days once it was stationary (0: every day ran
    /// exactly).
    #[serde(default)]
    pub days_extrapolated: u64,
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

/// An aging section's own options (`age`, `per_day`, `age_exact`), as a
/// job section's parser meets them; [`AgeOptions::finish`] checks that
/// they come together. Shared by fio sections and trace sections.
#[derive(Debug, Default)]
pub(crate) struct AgeOptions {
    age: Option<(u64, String)>,
    per_day: Option<(PerDay, String)>,
    exact: Option<(bool, String)>,
}

/// What a finished [`AgeOptions`] holds: days, amount per day, whether
/// every day runs exactly, and where `age` was written.
pub(crate) type AgeOptionValues = (u64, PerDay, bool, String);

impl AgeOptions {
    /// Take `key = value` (written at `at`) if it is an aging option;
    /// `parse_size` reads `per_day`'s sizes. Returns whether it was one.
    pub(crate) fn take(
        &mut self,
        key: &str,
        value: &str,
        at: &str,
        parse_size: impl Fn(&str) -> Result<u64, String>,
    ) -> Result<bool, JobError> {
        let bad = |r: String| JobError::Invalid { origin: at.to_string(), option: key.to_string(), reason: r };
        match key {
            "age" => self.age = Some((parse_days(value).map_err(bad)?, at.to_string())),
            "per_day" => self.per_day = Some((PerDay::parse(value, parse_size).map_err(bad)?, at.to_string())),
            "age_exact" => {
                let exact = crate::run::workload::fio::parse_bool(value).map_err(bad)?;
                self.exact = Some((exact, at.to_string()));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The aging phase's values, `None` when the section does not age; an
    /// error when the options do not come together.
    pub(crate) fn finish(self) -> Result<Option<AgeOptionValues>, JobError> {
        let bad = |at: String, option: &str, reason: &str| JobError::Invalid {
            origin: at,
            option: option.to_string(),
            reason: reason.to_string(),
        };
        match (self.age, self.per_day, self.exact) {
            (Some((days, at)), Some((per_day, _)), exact) => Ok(Some((days, per_day, exact.is_some_and(|e| e.0), at))),
            (Some((_, at)), None, _) => Err(bad(at, "age", "an age phase needs per_day (e.g. 0.1DWPD or 20g)")),
            (None, Some((_, at)), _) => Err(bad(at, "per_day", "per_day belongs to an age phase (age=3y)")),
            (None, None, Some((_, at))) => Err(bad(at, "age_exact", "age_exact belongs to an age phase (age=3y)")),
            (None, None, None) => Ok(None),
        }
    }
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

/// Host writes before an aging workload's wear may count as stationary,
/// in drive capacities: the rule of thumb for random writes' steady state
/// (the same two drive writes as `--state steady`).
const SETTLE_DRIVE_WRITES: u64 = 2;

/// How far the erases (per cell mode) of two consecutive drive writes may
/// differ for the wear to count as stationary.
const STATIONARY_TOLERANCE: f64 = 0.05;

/// Days in a window over which wear is measured: enough for a quarter of
/// the capacity to be written, and at least one.
fn window_days(capacity: u64, per_day: u64) -> u64 {
    (capacity / 4).div_ceil(per_day.max(1)).max(1)
}

/// Run an aging phase on `dev` now (nothing outstanding): the [`Aging`]
/// workload through the one loop ([`drive`]).
///
/// Days run exactly (every write through the FTL) until the workload's
/// wear is stationary: it has written [`SETTLE_DRIVE_WRITES`] capacities,
/// and the windows ([`window_days`]) of its last drive write erased as
/// much, per cell mode and within [`STATIONARY_TOLERANCE`], as those of
/// the drive write before (spans that long average out one window's noise
/// and show a slow drift). The days from there to one window before the
/// end are then carried forward from the last drive write's windows
/// ([`crate::model::ftl::extrapolate`]), and the last window runs exactly
/// on the worn drive. `age_exact=1` runs every day exactly.
/// `progress` is told each day simulated (the days done so far).
pub(crate) fn run_age(
    dev: &mut Device,
    phase: &Phase,
    spec: &AgeSpec,
    progress: &mut dyn FnMut(u64),
) -> Result<PhaseResult, TraceError> {
    let start = dev.now();
    let before = Counters::of(dev.drive());
    let capacity = dev.drive().user_bytes();
    let per_day = spec.per_day.bytes(capacity);
    let window = window_days(capacity, per_day);
    let since = dev.drive().ftl().wear_mark();
    let mut aging = Aging {
        spec,
        gen: AgeCommands::open(&spec.workload, capacity)?,
        capacity,
        per_day,
        window,
        // Windows in a span of one drive write: the wear of consecutive
        // spans is compared, and the last span is the pattern carried
        // forward.
        span: capacity.div_ceil(window * per_day).max(1) as usize,
        marks: std::collections::VecDeque::from([since.clone()]),
        since,
        history: Vec::new(),
        day: 0,
        day_start: dev.drive().idle_since().max(start),
        host_bytes: 0,
        extrapolated_days: 0,
        progress,
    };
    drive(dev, &mut aging)?;
    let end = dev.now();
    let counters = Counters::of(dev.drive()).since(&before);
    let health = Health::of(dev.drive());
    let summary = AgeSummary {
        days: spec.days,
        days_extrapolated: aging.extrapolated_days,
        host_bytes_written: counters.host_slots_written * 4096,
        nand_bytes_written: counters.ftl_slots_programmed() * 4096,
        waf: counters.waf(),
        percentage_used: health.percentage_used,
        erase_count_spread: health.erase_count_spread,
        pe_cycles_native_mean: health.pe_cycles_native_mean,
    };
    Ok(quiet_result(dev, phase, start, end, before, Some(summary)))
}

/// An aging phase as the loop's workload: it submits no timed command;
/// it wakes at once each morning (the night before moved the clock on a
/// day), writes the day's bytes untimed ([`age_one_day`]), powers the
/// drive off for the night, and judges whether the wear is stationary.
struct Aging<'a, 'p> {
    spec: &'a AgeSpec,
    gen: AgeCommands,
    capacity: u64,
    per_day: u64,
    window: u64,
    span: usize,
    /// The wear when the phase began.
    since: WearMark,
    /// The starts of the last `span` windows (and the current one's).
    marks: std::collections::VecDeque<WearMark>,
    /// The erases (per cell mode) of every window since the workload
    /// settled.
    history: Vec<[u64; 2]>,
    day: u64,
    day_start: u64,
    host_bytes: u64,
    extrapolated_days: u64,
    progress: &'p mut dyn FnMut(u64),
}

impl Workload for Aging<'_, '_> {
    type Error = TraceError;

    fn on_completion(&mut self, _dev: &mut Device, _c: &Completion) -> Result<(), TraceError> {
        Ok(())
    }

    fn wake_at(&self, dev: &Device) -> u64 {
        dev.now()
    }

    fn on_wake(&mut self, dev: &mut Device) -> Result<(), TraceError> {
        self.host_bytes += age_one_day(dev, &mut self.gen, self.per_day, self.day_start)?;
        dev.power_off(self.day_start, self.day_start + DAY_NS);
        self.day_start += DAY_NS;
        self.day += 1;
        (self.progress)(self.day);
        if !self.spec.exact && self.extrapolated_days == 0 && self.day % self.window == 0 {
            self.window_ended(dev);
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.day >= self.spec.days
    }
}

impl Aging<'_, '_> {
    /// A window of days ended: keep its erases and, once the wear is
    /// stationary, carry it forward to one window before the end.
    fn window_ended(&mut self, dev: &mut Device) {
        let erases = dev.drive().ftl().erases_since(self.marks.back().expect("a mark"));
        self.marks.push_back(dev.drive().ftl().wear_mark());
        if self.marks.len() > self.span + 1 {
            self.marks.pop_front();
        }
        if self.host_bytes < SETTLE_DRIVE_WRITES * self.capacity {
            return;
        }
        self.history.push(erases);
        let (n, span) = (self.history.len(), self.span);
        if n < 2 * span {
            return;
        }
        let sum = |windows: &[[u64; 2]], m: usize| windows.iter().map(|w| w[m]).sum::<u64>() as f64;
        let (last, before) = (&self.history[n - span..], &self.history[n - 2 * span..n - span]);
        let stationary = (0..2).all(|m| {
            let (a, b) = (sum(last, m), sum(before, m));
            (a - b).abs() <= STATIONARY_TOLERANCE * a.max(b)
        });
        // Whole days, keeping the last window to run exactly.
        let skip = self.spec.days.saturating_sub(self.day + self.window);
        if stationary && skip > 0 {
            let shift = skip * DAY_NS;
            let pattern_days = (span as u64 * self.window) as f64;
            // The draws are seeded by the day the extrapolation starts.
            let seed = 0x5eed_a9e0 ^ self.day;
            let pattern = &self.marks[0];
            dev.drive_mut().untimed().extrapolate_wear(&self.since, pattern, skip as f64 / pattern_days, shift, seed);
            dev.power_off(self.day_start, self.day_start + shift);
            self.day_start += shift;
            self.day += skip;
            self.extrapolated_days = skip;
        }
    }
}

/// One day of an aging workload, starting at `day_start` (device clock):
/// its commands fed through the FTL untimed until `per_day` bytes are
/// written, spread evenly over the day (the blocks they open are stamped
/// with that time, the start of their data's retention), then the night's
/// background work. Returns the bytes written.
fn age_one_day(dev: &mut Device, gen: &mut AgeCommands, per_day: u64, day_start: u64) -> Result<u64, TraceError> {
    let drive = dev.drive_mut();
    let day_begins = drive.drive_time_ns(day_start);
    let mut drive = drive.untimed();
    let mut written = 0u64;
    while written < per_day {
        let into_day = (DAY_NS as u128 * written as u128 / per_day as u128) as u64;
        drive.set_clock(day_begins + into_day);
        let cmd = gen.next()?;
        let first = (cmd.offset / 4096) as u32;
        let pages = (cmd.offset + cmd.len as u64).div_ceil(4096) as u32 - first;
        match cmd.kind {
            IoKind::Write => {
                for lpn in first..first + pages {
                    drive.write(lpn);
                }
                written += cmd.len as u64;
            }
            IoKind::Trim => {
                // Whole pages only, as the timed path trims.
                let whole = (cmd.offset.div_ceil(4096) as u32)..((cmd.offset + cmd.len as u64) / 4096) as u32;
                for lpn in whole {
                    drive.trim(lpn);
                }
            }
            IoKind::Read => {}
        }
    }
    // Overnight the drive idles long enough to finish its background
    // work (folding down to its idle target, GC up to its watermark).
    while drive.background_step() {}
    Ok(written)
}

/// The result of a retention or aging phase ([`PhaseResult::untimed`]).
fn quiet_result(
    dev: &Device,
    phase: &Phase,
    start: u64,
    end: u64,
    before: Counters,
    age: Option<AgeSummary>,
) -> PhaseResult {
    let counters = Counters::of(dev.drive()).since(&before);
    let power_model = dev.drive().energy_j(end).is_some();
    PhaseResult { age, ..PhaseResult::untimed(phase.clone(), start, end, counters, power_model) }
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
            let carried = match a.days_extrapolated {
                0 => String::new(),
                d => format!(" ({} simulated write by write, {d} carried forward from them)", a.days - d),
            };
            format!(
                "\n[{}] aged {} days{carried} at {:.2} GB/day: host wrote {:.1} TB, NAND {:.1} TB, WAF {:.2}{used}, \
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
