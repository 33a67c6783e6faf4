//! Drive states to start a test from (see methodology: "Drive states").
//!
//! - `fresh`: secure-erased, nothing mapped;
//! - `filled:N`: N% of the user capacity written sequentially (128 KiB,
//!   QD32) after a secure erase;
//! - `full`: `filled:100`;
//! - `steady`: full, then random 4 KiB writes (with replacement, QD32) of
//!   twice the user capacity (SNIA-style steady state), built from its
//!   statistics ([`steady`]);
//! - `steady-exact`: the same writes, replayed through the FTL.
//!
//! A zoned drive ([`fill_zoned`]) is filled zone by zone, each sequential
//! zone to its capacity; `steady` is `full` there.
//!
//! Each state is defined by the I/O phases that produce it
//! ([`DriveState::phases`]). The exact fast path ([`apply_phases_exact`])
//! feeds exactly those phases' commands, in the same order, through the
//! FTL without giving its NAND operations times. Since the FTL's decisions
//! never depend on time, the resulting mapping, valid counts and block
//! states are those that simulating the phases leaves (a test checks it);
//! only the clock and the NAND operation counters differ.
//!
//! The steady state's random writes (twice the span) would take minutes
//! to replay on a terabyte drive, so [`apply_phases_fast`] builds it from
//! its statistics instead ([`steady`]) on page-mapped drives: the same
//! distribution of block contents, not the same bits (a test compares it
//! with the exact replay).

pub mod steady;

use std::fmt;
use std::str::FromStr;

use crate::model::drive::{Drive, IoKind};
use crate::run::workload::{IoGenerator, IoSpec, Phase, RwPattern};

/// A starting state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DriveState {
    /// Secure-erased.
    Fresh,
    /// This percentage of the capacity written sequentially.
    Filled(f64),
    /// Full, then randomly overwritten twice (built statistically where
    /// the drive allows).
    Steady,
    /// As `Steady`, every write replayed through the FTL.
    SteadyExact,
}

impl FromStr for DriveState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fresh" => Ok(DriveState::Fresh),
            "full" => Ok(DriveState::Filled(100.0)),
            "steady" => Ok(DriveState::Steady),
            "steady-exact" => Ok(DriveState::SteadyExact),
            _ => {
                let n = s
                    .strip_prefix("filled:")
                    .ok_or_else(|| format!("`{s}` is not fresh, full, filled:N, steady or steady-exact"))?;
                let pct: f64 =
                    n.trim_end_matches('%').parse().map_err(|_| format!("`{n}` in `{s}` is not a percentage"))?;
                if !(0.0..=100.0).contains(&pct) {
                    return Err(format!("`{s}`: {pct} is not between 0 and 100"));
                }
                Ok(DriveState::Filled(pct))
            }
        }
    }
}

impl fmt::Display for DriveState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriveState::Fresh => write!(f, "fresh"),
            DriveState::Filled(p) if *p == 100.0 => write!(f, "full"),
            DriveState::Filled(p) => write!(f, "filled:{p}"),
            DriveState::Steady => write!(f, "steady"),
            DriveState::SteadyExact => write!(f, "steady-exact"),
        }
    }
}

impl DriveState {
    /// The I/O phases that produce this state on a secure-erased drive of
    /// `capacity` bytes, seeded by `seed`.
    pub fn phases(&self, capacity: u64, seed: u64) -> Vec<IoSpec> {
        let fill = |pct: f64| {
            let mut s = IoSpec::new("precondition-fill", RwPattern::Write);
            s.bs = 128 * 1024;
            s.iodepth = 32;
            // Whole 128 KiB blocks; the last partial block is dropped.
            s.size = Some(((capacity as f64 * pct / 100.0) as u64) / s.bs as u64 * s.bs as u64);
            s
        };
        match *self {
            DriveState::Fresh => vec![],
            DriveState::Filled(p) => {
                let s = fill(p);
                if s.size == Some(0) {
                    vec![]
                } else {
                    vec![s]
                }
            }
            DriveState::Steady | DriveState::SteadyExact => {
                // The name tells the fast path which construction to use.
                let name = if *self == DriveState::Steady { STEADY_RANDOM } else { "precondition-random-exact" };
                let mut r = IoSpec::new(name, RwPattern::RandWrite);
                r.iodepth = 32;
                r.norandommap = true;
                r.size = Some(capacity / 4096 * 4096);
                r.io_size = Some(capacity / 4096 * 4096 * 2);
                r.randseed = seed;
                vec![fill(100.0), r]
            }
        }
    }

    /// The same phases as a job, for running them in simulated time.
    pub fn as_phases(&self, capacity: u64, seed: u64) -> Vec<Phase> {
        self.phases(capacity, seed).into_iter().map(Phase::Io).collect()
    }

    /// Build the state directly: secure erase, then the phases' writes
    /// through the FTL without timing. The drive's clock state is reset.
    pub fn apply_fast(&self, drive: &mut Drive, seed: u64) {
        if drive.is_zoned() {
            fill_zoned(drive, self.zoned_fill());
            return;
        }
        let phases = self.phases(drive.user_bytes(), seed);
        apply_phases_fast(drive, &phases);
    }

    /// The share of a zoned drive's writable capacity the state holds, %:
    /// a zoned drive has no random-overwrite steady state (its sequential
    /// zones are only written at their write pointers), so `steady` is
    /// `full` there.
    pub fn zoned_fill(&self) -> f64 {
        match *self {
            DriveState::Fresh => 0.0,
            DriveState::Filled(p) => p,
            DriveState::Steady | DriveState::SteadyExact => 100.0,
        }
    }
}

/// Secure-erase `drive` and bring it into the state the write-only
/// `phases` leave (the fast path of [`DriveState::apply_fast`], for any
/// preconditioning writes, e.g. a suite's test data): the steady-state
/// phases (span filled, then random 4 KiB writes of twice the span) are
/// built statistically ([`steady`]) where the drive allows, everything
/// else exactly ([`apply_phases_exact`]). The drive's clock state is reset.
pub fn apply_phases_fast(drive: &mut Drive, phases: &[IoSpec]) {
    match steady_span(phases) {
        Some((span, random, seed)) if steady::supported(drive) => {
            drive.secure_erase();
            steady::build(drive, span, random, seed);
            drive.reset_time();
        }
        _ => apply_phases_exact(drive, phases),
    }
}

/// Secure-erase `drive`, then feed the commands of the write-only
/// `phases`, in order, through the FTL without timing them. The drive's
/// clock state is reset.
pub fn apply_phases_exact(drive: &mut Drive, phases: &[IoSpec]) {
    drive.secure_erase();
    for spec in phases {
        write_fast(drive, spec);
    }
    drive.reset_time();
}

/// Secure-erase a zoned drive, then write its conventional zones whole
/// and its sequential zones one after another, each to its capacity, in
/// 128 KiB commands through the untimed FTL, until `pct`% of the writable
/// capacity (whole zones, rounded down) holds data: every zone written is
/// full, none is left open. The drive's clock state is reset.
pub fn fill_zoned(drive: &mut Drive, pct: f64) {
    drive.secure_erase();
    let Some(m) = drive.ftl().zoned().map(|z| *z.zones().model()) else { return };
    let writable = |z: u32| if z < m.conventional { m.zone_lpns } else { m.zone_cap_lpns };
    let total: u64 = (0..m.zones).map(|z| writable(z) as u64).sum();
    let target = (total as f64 * pct.clamp(0.0, 100.0) / 100.0) as u64;
    let mut untimed = drive.untimed();
    let mut done = 0u64;
    for z in 0..m.zones {
        let pages = writable(z);
        if done + pages as u64 > target {
            break;
        }
        let start = z * m.zone_lpns;
        let mut at = 0;
        while at < pages {
            let n = (pages - at).min(32);
            if untimed.zone_write(start + at, n).is_err() {
                break;
            }
            for lpn in start + at..start + at + n {
                untimed.write(lpn);
            }
            at += n;
        }
        done += pages as u64;
    }
    drop(untimed);
    drive.reset_time();
}

/// Name of the random phase of `steady` (the statistical construction
/// applies to phases named so).
const STEADY_RANDOM: &str = "precondition-random";

/// If `phases` are `steady`'s — a sequential fill of `[0, S)`, then uniform
/// random 4 KiB writes with replacement over `[0, S)` named
/// [`STEADY_RANDOM`] — the span in pages, the random slots and the seed.
fn steady_span(phases: &[IoSpec]) -> Option<(u32, u64, u64)> {
    let [fill, random] = phases else { return None };
    let plain = |s: &IoSpec| s.offset == 0 && s.burst.is_none() && s.thinktime_ns == 0 && s.ramp_time_ns == 0;
    let span = random.size?;
    let fill_ok = fill.rw == RwPattern::Write
        && plain(fill)
        && fill.io_size.is_none()
        && fill.size.is_some_and(|f| f <= span && span - f < fill.bs as u64);
    let random_ok = random.name == STEADY_RANDOM
        && random.rw == RwPattern::RandWrite
        && plain(random)
        && random.bs == 4096
        && random.norandommap
        && random.percentage_random == 100
        && !random.time_based
        && span % 4096 == 0;
    let slots = random.io_size? / 4096;
    (fill_ok && random_ok && slots > 0).then_some(((span / 4096) as u32, slots, random.randseed))
}

/// Feed a write phase's commands through the FTL without timing them (the
/// fast path: same order, same FTL decisions, no NAND operation times).
pub fn write_fast(drive: &mut Drive, spec: &IoSpec) {
    let capacity = drive.user_bytes();
    let mut gen = IoGenerator::new(spec, capacity);
    let span = spec.size.unwrap_or(capacity - spec.offset);
    let total = spec.io_size.unwrap_or(span);
    let zoned = drive.is_zoned();
    let mut untimed = drive.untimed();
    let mut done = 0u64;
    // Commands are taken in batches so that the map entries they will touch
    // can be requested from memory before they are needed (random writes
    // over a large drive are bound by memory latency). Same commands, same
    // order, same state.
    const BATCH: usize = 32;
    let mut batch = [(0u32, 0u32); BATCH];
    while done < total && !untimed.read_only() {
        let mut n = 0;
        while n < BATCH && done < total {
            let cmd = gen.next_command();
            debug_assert_eq!(cmd.kind, IoKind::Write);
            batch[n] = ((cmd.offset / 4096) as u32, cmd.len / 4096);
            done += cmd.len as u64;
            n += 1;
        }
        for &(first, _) in &batch[..n] {
            untimed.prefetch_write(first);
        }
        for &(first, pages) in &batch[..n] {
            // A zoned drive takes only writes its zone rules allow.
            if zoned && untimed.zone_write(first, pages).is_err() {
                continue;
            }
            for lpn in first..first + pages {
                untimed.write(lpn);
            }
        }
    }
}
