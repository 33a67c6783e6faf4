//! Workloads in fio's vocabulary.
//!
//! An I/O phase ([`IoSpec`]) is a closed loop that keeps `iodepth ×
//! numjobs` commands outstanding, with fio's options (`rw` with its
//! modifiers, `bs` per direction, `bsrange`, `bssplit`, `offset`, `size`,
//! `io_size`, `number_ios`, `loops`, `runtime`, `time_based`, `rwmixread`,
//! `thinktime`, `ramp_time`, `randseed`, `percentage_random`,
//! `random_distribution`, rate limits, `max_latency`). A [`Job`] is a
//! sequence of phases run one after the other (suites); a fio job file
//! ([`fio::JobFile`]) runs its jobs concurrently (see
//! [`crate::run::jobs`]), its `numjobs` as separate clones. ssdtwin adds options fio lacks, for
//! the review suites: `burst_size` with `duty_cycle` (issue bursts of that
//! many bytes, then idle so that the drive is busy that fraction of the
//! time), an idle phase (`idle=60s`: no I/O, background work may run) and
//! `apst=1` (the host enables autonomous power state transitions for the
//! phase and the idle phases after it; see [`crate::model::power`]). A
//! section with `trace=FILE` replays a block trace instead
//! ([`crate::run::trace::options`]).

pub mod fio;
pub mod generator;
mod prio;

pub use fio::{parse_job_file, JobOptions};
pub use generator::IoGenerator;
pub use prio::{BsPrio, CmdPrio, JobPrio};

use serde::{Deserialize, Serialize};

/// fio's `rw` patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Sequential trim + write pairs: each block is trimmed, then written
    /// (fio's `trimwrite`).
    TrimWrite,
    /// Random trim + write pairs: a random block (each once per pass, as
    /// fio's random map has it) is trimmed, then the same block written
    /// (fio's `randtrimwrite`).
    RandTrimWrite,
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
            "trimwrite" => RwPattern::TrimWrite,
            "randtrimwrite" => RwPattern::RandTrimWrite,
            _ => return None,
        })
    }

    /// Whether offsets are random.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwPattern::RandRead
                | RwPattern::RandWrite
                | RwPattern::RandRw
                | RwPattern::RandTrim
                | RwPattern::RandTrimWrite
        )
    }

    /// Trim + write pairs (`trimwrite`, `randtrimwrite`).
    pub fn is_trimwrite(self) -> bool {
        matches!(self, RwPattern::TrimWrite | RwPattern::RandTrimWrite)
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
            RwPattern::TrimWrite => "trimwrite",
            RwPattern::RandTrimWrite => "randtrimwrite",
        }
    }
}

/// Bursts separated by idle time (ssdtwin extension).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    /// Bytes per burst.
    pub bytes: u64,
    /// Fraction of time the drive is busy (0 < d ≤ 1): after a burst that
    /// took `b` ns, idle `b · (1 − d) / d` ns.
    pub duty_cycle: f64,
}

/// Block sizes of one direction: a fixed size, or fio's `bsrange` /
/// `bssplit` choices drawn per command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeChoice {
    /// (size in bytes, weight in percent); one entry = a fixed size. For a
    /// `bsrange`, every multiple of the smallest size in the range with
    /// equal weights.
    pub choices: Vec<(u32, u32)>,
}

/// Where random offsets land (fio's `random_distribution`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Uniform (fio's `random`, the default).
    #[default]
    Random,
    /// Zipf with exponent θ: the k-th most popular block is accessed with
    /// probability ∝ 1/k^θ.
    Zipf(f64),
    /// Pareto with power h (fio's `pareto:h`).
    Pareto(f64),
    /// fio's `normal:σ` (0 ≤ σ < 100): a bell around the span's middle with
    /// a standard deviation of 1/12 of the span, widened by a uniform
    /// deviation σ % of the span wide (fio 3.33's lib/gauss.c; not a
    /// Gaussian of σ %).
    Normal(f64),
    /// Zones: (percent of accesses, share of the span) in order from the
    /// span's start; fio's `zoned:` (share in percent of the span, stored
    /// here as a fraction) and `zoned_abs:` (share in bytes, converted to a
    /// fraction of the span when the phase is built).
    Zoned(Vec<(f64, f64)>),
    /// fio's `sequence:b0,b1,...` (fio 3.41): the `i`-th command of a
    /// direction goes to block `blocks[i mod len]`, plus, with `stride`
    /// (`random_sequence_stride`), `len` blocks per time through the list.
    Sequence {
        /// The block indices (at most 64, as fio).
        blocks: Vec<u32>,
        /// `random_sequence_stride=1`.
        stride: bool,
    },
}

/// fio's `zonemode=strided` (io_u.c, `setup_strided_zone_mode`): the
/// job's I/O stays inside a zone of `range` bytes (offsets relative to
/// the zone, sequential ones wrapping at its end) until `size` bytes were
/// issued in it; the next zone starts `range + skip` bytes further, and
/// after the span's last whole zone the first again. A mixed pattern's
/// directions start each zone at its start together (fio moves only the
/// direction that switched).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Strided {
    /// Bytes of I/O per zone (`zonesize`).
    pub size: u64,
    /// Bytes a zone spans (`zonerange`, by default `zonesize`).
    pub range: u64,
    /// Bytes skipped between zones (`zoneskip`).
    pub skip: u64,
}

fn is_none3(v: &[Option<u64>; 3]) -> bool {
    v.iter().all(Option::is_none)
}

/// fio's `zonemode=zbd` on a zoned drive: writes go to zone write
/// pointers, reads to written data (see [`crate::run::zbd`]). The
/// default is fio's (the drive's limits, no threshold resets, writes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Zbd {
    /// `max_open_zones`: zones written at once (0: the drive's limit).
    pub max_open_zones: u32,
    /// `job_max_open_zones`: zones this job writes at once (0: no limit
    /// of its own).
    pub job_max_open_zones: u32,
    /// `ignore_zone_limits`: `max_open_zones` may exceed the drive's.
    pub ignore_zone_limits: bool,
    /// `zone_reset_threshold`: the share of the range holding data above
    /// which zones are reset as `zone_reset_frequency` says.
    pub reset_threshold: f64,
    /// `zone_reset_frequency`: a reset every 1 / this many writes (0: none).
    pub reset_frequency: f64,
    /// `read_beyond_wp`: reads go where the generator says.
    pub read_beyond_wp: bool,
    /// `write_mode=zone_append`: writes are Zone Appends.
    pub append: bool,
    /// `write_zone_remainder`: a zone's remainder smaller than the
    /// minimum block is written (one shorter write) instead of finished.
    #[serde(default)]
    pub write_zone_remainder: bool,
    /// `recover_zbd_write_error`: after a failed write the zone's write
    /// pointer is moved to the write's end (needs `continue_on_error`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recover_write_error: bool,
    /// `zonesize` as given (0: not given; it must be the drive's).
    pub zone_size: u64,
    /// `offset`, `size` and `io_size` given in zones (`Nz`), resolved on
    /// the drive ([`crate::run::entry::execute`]).
    #[serde(default, skip_serializing_if = "is_none3")]
    pub in_zones: [Option<u64>; 3],
    /// Where `zonemode=zbd` was written (for errors).
    #[serde(skip)]
    pub at: String,
}

/// fio's flushes and synchronous writes on a block device: `fsync=N`
/// and `fdatasync=N` (a FLUSH after every N writes issued: on a block
/// device both are the drive's Flush), `end_fsync` / `fsync_on_close`
/// (one FLUSH once the job's I/O is done) and `sync` (O_SYNC or O_DSYNC:
/// every write with Force Unit Access).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Syncs {
    /// `fsync`: a FLUSH after every this many writes (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fsync: u32,
    /// `fdatasync`: the same, checked after `fsync`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fdatasync: u32,
    /// `end_fsync` or `fsync_on_close`: a FLUSH at the job's end.
    #[serde(default)]
    pub end: bool,
    /// `sync=1` (`sync`, `dsync`): writes carry Force Unit Access.
    #[serde(default)]
    pub fua: bool,
}

impl Syncs {
    /// A FLUSH is due after the job's `writes`-th write.
    #[inline]
    pub fn due_after(&self, writes: u64) -> bool {
        let every = |n: u32| n != 0 && writes % n as u64 == 0;
        every(self.fsync) || every(self.fdatasync)
    }
}

/// fio's verification of written data (`verify`, `do_verify`,
/// `verify_backlog`, `verify_backlog_batch`, `verify_only`): the blocks a
/// write job wrote are read back, each once, after each loop's writes or
/// (with a backlog) between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verify {
    /// `verify_backlog`: after every this many writes, read back some of
    /// those written (0: all after the write phase).
    #[serde(default, skip_serializing_if = "is_zero64")]
    pub backlog: u64,
    /// `verify_backlog_batch`: how many (0: `backlog`).
    #[serde(default, skip_serializing_if = "is_zero64")]
    pub batch: u64,
    /// `verify_only`: the writes are not issued (fio's dry run counts
    /// them), only read back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only: bool,
    /// Whether written blocks are read back (`verify` set and `do_verify`
    /// on; `verify_only` alone only skips the writes, as fio's dry run).
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub read_back: bool,
}

fn yes() -> bool {
    true
}

/// fio's SanDisk pseudo-random preconditioning (`sprandom=1`, fio 3.41):
/// random writes in an order that leaves the drive in the steady state of
/// uniform random writes after writing the span once plus `op` of it
/// (the algorithm: the generator's `sprandom` module).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sprandom {
    /// `spr_op`: the over-provisioning the order is made for (0.15).
    pub op: f64,
    /// `spr_num_regions`: regions of the physical size (100).
    pub regions: u32,
    /// `spr_cs`: the drive's write cache, bytes (0: none): rewrites wait
    /// until the end of the next region.
    pub cache: u64,
}

fn is_zero64(n: &u64) -> bool {
    *n == 0
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// fio's data placement (`fdp=1`): every write carries a placement
/// identifier of the drive's `[fdp]` configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// `plids`: indices into the drive's placement identifiers (empty:
    /// all of them), sorted.
    pub ids: Vec<u32>,
    /// `plid_select=random` (else round robin, one per write, or the
    /// scheme's).
    pub random: bool,
    /// `plid_select=scheme`: the `dp_scheme` file's entries, byte ranges
    /// `[start, end)` of write offsets and the placement identifier their
    /// writes carry (the first entry holding the offset; none: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<Vec<SchemeEntry>>,
    /// Where `fdp` (or `dataplacement`) was written (for errors).
    #[serde(skip)]
    pub at: String,
}

/// One line of fio's `dp_scheme` file (`start,end,plid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemeEntry {
    /// First byte of the range.
    pub start: u64,
    /// Byte after the range.
    pub end: u64,
    /// The placement identifier of writes starting in it.
    pub plid: u32,
}

/// How the offset modifier of `rw=...:N` changes offsets (fio's
/// `rw_sequencer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sequencer {
    /// Random patterns draw a new offset every N commands and continue
    /// sequentially in between; sequential patterns skip N bytes after
    /// each command (N < 0: step back, from the span's end when the step
    /// would go before its start, as fio's `ddir_seq_add`).
    Sequential,
    /// The same offset is used N times.
    Identical,
}

/// Rate limits per direction (fio's `rate`, `rate_iops`, `rate_process`,
/// `rate_ignore_thinktime`): each direction's commands are issued no
/// faster than its rate, on fio's schedule
/// (`crate::run::source`'s rate module), and never more than `iodepth`
/// at a time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Bytes per second per direction (read, write, trim); 0 = no limit.
    pub bytes_per_s: [u64; 3],
    /// Commands per second per direction; 0 = no limit.
    pub iops: [u64; 3],
    /// Exponential inter-arrival times (fio's `rate_process=poisson`)
    /// instead of evenly spaced ones.
    pub poisson: bool,
    /// Think time does not count against the rate: the job does not
    /// catch up after it (fio's `rate_ignore_thinktime`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_thinktime: bool,
}

/// The minimum rates a job must keep (fio's `rate_min`, `rate_iops_min`,
/// `rate_cycle`): after a 2 s settle past the ramp, the rate of each
/// direction is averaged over every `rate_cycle`, and a direction below
/// its minimum ends the job with fio's EIO (see
/// [`crate::run::control::MinRateCheck`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinRate {
    /// Bytes per second per direction (read, write, trim); 0 = no check.
    pub bytes_per_s: [u64; 3],
    /// Commands per second per direction; 0 = no check.
    pub iops: [u64; 3],
    /// Averaging period, ms (fio's default 1000).
    pub cycle_ms: u64,
}

/// One closed-loop I/O phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(default = "hundred", skip_serializing_if = "is_hundred")]
    pub percentage_random: u32,
    /// Bursts with a duty cycle.
    pub burst: Option<Burst>,
    /// The host enables APST during this phase (and the idle phases that
    /// follow it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub apst: bool,
    /// The host enables link power management during this phase (and the
    /// idle phases that follow it): the drive's `[[power.link_state]]`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub link_pm: bool,
    /// Block sizes per direction (read, write, trim) when they differ from
    /// a single fixed `bs` (fio's `bs=r,w,t`, `bsrange`, `bssplit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<[SizeChoice; 3]>,
    /// Alignment of random offsets, bytes (fio's `blockalign`; default: the
    /// smallest block size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blockalign: Option<u32>,
    /// Where random offsets land (of reads, when the directions differ).
    #[serde(default, skip_serializing_if = "is_uniform")]
    pub distribution: Distribution,
    /// Where the hot spot of a skewed distribution lies, 0–1 of the span
    /// (fio's `random_distribution=zipf:θ:center`; `None`: fio's default,
    /// random for Zipf and Pareto, the middle for normal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_center: Option<f64>,
    /// Where random offsets land per direction (read, write, trim), when
    /// they differ (fio's `random_distribution=zipf:1.2,random`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distributions: Option<[Distribution; 3]>,
    /// `rw=...:N` offset modifier (N commands for random patterns, N bytes
    /// for sequential ones, negative to go backwards) and how it applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modifier: Option<(i64, Sequencer)>,
    /// fio's `zonemode=strided`: I/O inside zones of the span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strided: Option<Strided>,
    /// fio's `zonemode=zbd`: I/O at the zones' write pointers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zbd: Option<Zbd>,
    /// fio's `fdp=1`: writes carry placement identifiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// fio's flushes and FUA writes (`fsync`, `fdatasync`, `end_fsync`,
    /// `fsync_on_close`, `sync`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syncs: Option<Syncs>,
    /// fio's `continue_on_error` and `ignore_error`.
    #[serde(default, skip_serializing_if = "crate::run::io_errors::OnError::is_default")]
    pub on_error: crate::run::io_errors::OnError,
    /// fio's verify phase (`verify`, `do_verify`, `verify_backlog`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Verify>,
    /// fio's `sprandom` preconditioning order of random writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprandom: Option<Sprandom>,
    /// Rate limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Minimum rates (`rate_min`, `rate_iops_min`, `rate_cycle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_min: Option<MinRate>,
    /// Think only after every this many commands (fio's
    /// `thinktime_blocks`; 1 = after each).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub thinktime_blocks: u32,
    /// Stop after this many commands (fio's `number_ios`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,
    /// Repeat the job's bytes this many times (fio's `loops`).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub loops: u32,
    /// End the job with an error when a command takes longer, ns (fio's
    /// `max_latency`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_latency_ns: Option<u64>,
    /// fio's queue-depth search for a latency target (`latency_target`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::run::control::LatencyTarget>,
    /// fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<crate::run::control::SteadyState>,
    /// fio's log files (`write_bw_log`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs: Option<crate::run::logs::LogSpec>,
    /// fio's `write_iolog`: the file the job lists its commands in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iolog: Option<IoLogSpec>,
    /// A job read from a fio job file: fio's generators and seeds, so
    /// that its commands are fio's (`None`: the twin's own generator,
    /// seeded by `randseed`, as the suites build their phases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<FioRandom>,
    /// fio's `num_range`: ranges per trim command (one NVMe Dataset
    /// Management command with several ranges; 1: a range each).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub num_range: u32,
    /// fio's I/O priorities (`prio`, `prioclass`, `cmdprio*`): the Linux
    /// ioprio value each command carries (`None`: 0, none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prio: Option<JobPrio>,
    /// fio's flow control between jobs (`flow`, `flow_id`, `flow_sleep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
}

/// fio's flow control (flow.c): jobs with the same `flow_id` issue in the
/// ratio of their `flow` weights ([`crate::run::source`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    /// `flow_id`: the jobs sharing a counter.
    pub id: i32,
    /// `flow`: the job's weight (fio's unsigned int: `-1` is 4294967295).
    pub weight: u32,
    /// `flow_sleep`: how long a held job sleeps, µs (0: it retries at
    /// once, spinning).
    pub sleep_us: u32,
}

/// fio's `write_iolog`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoLogSpec {
    /// The log's path.
    pub path: String,
    /// The file name its lines carry: fio's `filename`, or
    /// `JOB.CLONE.0` as fio names a job's file without one.
    pub file_name: String,
}

/// fio's `random_generator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RandomGenerator {
    /// L'Ecuyer's 32-bit combined Tausworthe generator (fio's default).
    #[default]
    Tausworthe,
    /// A maximal-length linear feedback shift register: every block once,
    /// without a random map.
    Lfsr,
    /// L'Ecuyer's 64-bit combined Tausworthe generator.
    Tausworthe64,
}

/// What fio seeds a job's generators from ([`generator`]'s fio
/// sequence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioRandom {
    /// `random_generator`.
    pub generator: RandomGenerator,
    /// `randrepeat` (default 1: offsets seeded by the job's number only).
    pub randrepeat: bool,
    /// `randseed` (fio's default 0x89).
    pub randseed: u64,
    /// fio's thread number: the job's place in the file, 1-based,
    /// `numjobs` clones counted.
    pub thread_number: u64,
    /// `tausworthe64` because the span has more than 2^32 blocks (fio
    /// 3.33's `check_rand_gen_limits`): the offsets' generator, seeded
    /// before the switch, stays the 32-bit one until a pass reseeds it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub switched64: bool,
    /// The block sizes are a `bsrange` (fio draws `min + max · r`), not a
    /// `bssplit`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bsrange: bool,
    /// `bs_unaligned`: sizes not aligned to the smallest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bs_unaligned: bool,
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
            link_pm: false,
            sizes: None,
            blockalign: None,
            distribution: Distribution::Random,
            random_center: None,
            distributions: None,
            modifier: None,
            strided: None,
            zbd: None,
            placement: None,
            syncs: None,
            on_error: Default::default(),
            verify: None,
            sprandom: None,
            rate: None,
            rate_min: None,
            thinktime_blocks: 1,
            number_ios: None,
            loops: 1,
            max_latency_ns: None,
            latency_target: None,
            steadystate: None,
            logs: None,
            iolog: None,
            fio: None,
            num_range: 1,
            flow: None,
            prio: None,
        }
    }

    /// Block size of direction `kind` (index `IoKind as usize`) when it is
    /// fixed; the largest choice otherwise.
    pub fn bs_of(&self, kind: usize) -> u32 {
        match &self.sizes {
            None => self.bs,
            Some(s) => s[kind].choices.iter().map(|c| c.0).max().unwrap_or(self.bs),
        }
    }

    /// Where random offsets of direction `kind` land.
    pub fn distribution_of(&self, kind: usize) -> &Distribution {
        match &self.distributions {
            Some(d) => &d[kind],
            None => &self.distribution,
        }
    }

    /// The smallest block size of any direction.
    pub fn min_bs(&self) -> u32 {
        match &self.sizes {
            None => self.bs,
            Some(s) => s.iter().flat_map(|d| d.choices.iter().map(|c| c.0)).min().unwrap_or(self.bs),
        }
    }

    /// Outstanding commands in total.
    pub fn outstanding(&self) -> u32 {
        self.iodepth * self.numjobs
    }
}

fn hundred() -> u32 {
    100
}

fn one() -> u32 {
    1
}

fn is_hundred(p: &u32) -> bool {
    *p == 100
}

fn is_one(p: &u32) -> bool {
    *p == 1
}

fn is_uniform(d: &Distribution) -> bool {
    *d == Distribution::Random
}

/// One phase of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[allow(clippy::large_enum_variant)] // few phases; an IoSpec is built once per phase
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
    /// The drive powered off for a while (`retention=90d`): its clock runs
    /// on, nothing else happens (see [`crate::run::lifetime`]).
    Retention {
        /// Phase name.
        name: String,
        /// Time powered off, ns.
        duration_ns: u64,
    },
    /// Days of use, untimed (`age=5y`; see [`crate::run::lifetime`]).
    Age(crate::run::lifetime::AgeSpec),
}

impl Phase {
    /// The phase's name.
    pub fn name(&self) -> &str {
        match self {
            Phase::Io(s) => &s.name,
            Phase::Trace(t) => &t.name,
            Phase::Idle { name, .. } | Phase::SecureErase { name } | Phase::Retention { name, .. } => name,
            Phase::Age(a) => &a.name,
        }
    }
}

impl Phase {
    /// The phase's type as results name it: `io`, `idle`,
    /// `secure_erase`, `trace`, `retention` or `age`.
    pub fn kind(&self) -> &'static str {
        match self {
            Phase::Io(_) => "io",
            Phase::Idle { .. } => "idle",
            Phase::SecureErase { .. } => "secure_erase",
            Phase::Trace(_) => "trace",
            Phase::Retention { .. } => "retention",
            Phase::Age(_) => "age",
        }
    }
}

/// A sequence of phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Phases in order.
    pub phases: Vec<Phase>,
}
