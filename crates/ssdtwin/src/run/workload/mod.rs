//! Workloads in fio's vocabulary.
//!
//! A [`Job`] is a sequence of phases run one after the other (as if every
//! fio section had `stonewall`). An I/O phase ([`IoSpec`]) is a closed loop
//! that keeps `iodepth × numjobs` commands outstanding, with fio's options:
//! `rw`, `bs`, `iodepth`, `numjobs`, `offset`, `size`, `io_size`,
//! `runtime`, `time_based`, `rwmixread`, `thinktime`, `ramp_time`,
//! `randseed`, `percentage_random`. ssdtwin adds options fio lacks, for
//! the review suites: `burst_size` with `duty_cycle` (issue bursts of that
//! many bytes, then idle so that the drive is busy that fraction of the
//! time), an idle phase (`idle=60s`: no I/O, background work may run) and
//! `apst=1` (the host enables autonomous power state transitions for the
//! phase and the idle phases after it; see [`crate::model::power`]). A
//! section with `trace=FILE` replays a block trace instead
//! ([`crate::run::trace::options`]).

pub mod fio;
pub mod generator;

pub use fio::{parse_job_file, JobOptions};
pub use generator::IoGenerator;

use serde::Serialize;

/// fio's `rw` patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RwPattern {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes (`rw` / `readwrite`).
    #[serde(rename = "rw")]
    ReadWrite,
    /// Random mixed reads and writes.
    RandRw,
    /// Sequential trims.
    Trim,
    /// Random trims.
    RandTrim,
}

impl RwPattern {
    /// Parse fio's spelling.
    pub fn parse(s: &str) -> Option<RwPattern> {
        Some(match s {
            "read" => RwPattern::Read,
            "write" => RwPattern::Write,
            "randread" => RwPattern::RandRead,
            "randwrite" => RwPattern::RandWrite,
            "rw" | "readwrite" => RwPattern::ReadWrite,
            "randrw" => RwPattern::RandRw,
            "trim" => RwPattern::Trim,
            "randtrim" => RwPattern::RandTrim,
            _ => return None,
        })
    }

    /// Whether offsets are random.
    pub fn is_random(self) -> bool {
        matches!(self, RwPattern::RandRead | RwPattern::RandWrite | RwPattern::RandRw | RwPattern::RandTrim)
    }

    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            RwPattern::Read => "read",
            RwPattern::Write => "write",
            RwPattern::RandRead => "randread",
            RwPattern::RandWrite => "randwrite",
            RwPattern::ReadWrite => "rw",
            RwPattern::RandRw => "randrw",
            RwPattern::Trim => "trim",
            RwPattern::RandTrim => "randtrim",
        }
    }
}

/// Bursts separated by idle time (ssdtwin extension).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Burst {
    /// Bytes per burst.
    pub bytes: u64,
    /// Fraction of time the drive is busy (0 < d ≤ 1): after a burst that
    /// took `b` ns, idle `b · (1 − d) / d` ns.
    pub duty_cycle: f64,
}

/// One closed-loop I/O phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoSpec {
    /// Phase name (fio's section name).
    pub name: String,
    /// Access pattern.
    pub rw: RwPattern,
    /// Block size, bytes (a multiple of 512).
    pub bs: u32,
    /// Outstanding commands per job.
    pub iodepth: u32,
    /// Jobs (workers), each with `iodepth` outstanding; modelled as one
    /// closed loop of `iodepth × numjobs` over the same span.
    pub numjobs: u32,
    /// First byte of the span.
    pub offset: u64,
    /// Bytes of the span (`None`: to the end of the drive).
    pub size: Option<u64>,
    /// Bytes to transfer (`None`: `size` when no runtime is given).
    pub io_size: Option<u64>,
    /// Time limit, ns (after the ramp).
    pub runtime_ns: Option<u64>,
    /// Keep going until `runtime` even after `io_size` bytes.
    pub time_based: bool,
    /// Percentage of reads in mixed patterns.
    pub rwmixread: u32,
    /// Pause between a completion and the next submission, ns.
    pub thinktime_ns: u64,
    /// Time at the start whose I/Os are not counted, ns.
    pub ramp_time_ns: u64,
    /// Seed of the offset and mix generator.
    pub randseed: u64,
    /// Draw random offsets with replacement (fio's `norandommap`); by
    /// default every block of the span is visited once per pass, in a
    /// seeded random order, as fio's random map does.
    pub norandommap: bool,
    /// Percentage of commands of a random pattern that go to a random
    /// offset (fio's `percentage_random`); the others continue
    /// sequentially from the previous command of the same direction.
    /// 100 (the default) is fully random.
    #[serde(skip_serializing_if = "is_hundred")]
    pub percentage_random: u32,
    /// Bursts with a duty cycle.
    pub burst: Option<Burst>,
    /// The host enables APST during this phase (and the idle phases that
    /// follow it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub apst: bool,
}

impl IoSpec {
    /// A phase with fio's defaults: `bs=4k`, `iodepth=1`, whole drive.
    pub fn new(name: &str, rw: RwPattern) -> IoSpec {
        IoSpec {
            name: name.to_string(),
            rw,
            bs: 4096,
            iodepth: 1,
            numjobs: 1,
            offset: 0,
            size: None,
            io_size: None,
            runtime_ns: None,
            time_based: false,
            rwmixread: 50,
            thinktime_ns: 0,
            ramp_time_ns: 0,
            randseed: 0x5eed,
            norandommap: false,
            percentage_random: 100,
            burst: None,
            apst: false,
        }
    }

    /// Outstanding commands in total.
    pub fn outstanding(&self) -> u32 {
        self.iodepth * self.numjobs
    }
}

fn is_hundred(p: &u32) -> bool {
    *p == 100
}

/// One phase of a job.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Phase {
    /// Closed-loop I/O.
    Io(IoSpec),
    /// No host I/O for a while (background work may run).
    Idle {
        /// Phase name.
        name: String,
        /// Duration, ns.
        duration_ns: u64,
        /// APST on or off from the start of the idle (`None`: as the
        /// phase before left it).
        #[serde(skip_serializing_if = "Option::is_none")]
        apst: Option<bool>,
    },
    /// The host formats the drive with a user-data erase (NVMe Format
    /// with Secure Erase Settings 1, ATA SECURITY ERASE UNIT): every
    /// block holding data is erased through the NAND, then the map is
    /// empty. The phase lasts until the last erase completes.
    SecureErase {
        /// Phase name.
        name: String,
    },
    /// A block trace replayed (see [`crate::run::trace`]).
    Trace(crate::run::trace::TraceSpec),
}

impl Phase {
    /// The phase's name.
    pub fn name(&self) -> &str {
        match self {
            Phase::Io(s) => &s.name,
            Phase::Trace(t) => &t.name,
            Phase::Idle { name, .. } | Phase::SecureErase { name } => name,
        }
    }
}

/// A sequence of phases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    /// Phases in order.
    pub phases: Vec<Phase>,
}
