//! The results' schema: the typed records that `ssdtwin run` and
//! `ssdtwin suite`/`review` write as JSON, that the HTML report and the
//! Python package read back, and that tests compare.
//!
//! One record per document: [`RunRecord`] (a run of phases, fio's field
//! names where fio has one) and [`SuiteRecord`] (a suite over drives and
//! passes). They are built from the simulator's results by
//! [`crate::study::report::RunReport::record`] and
//! [`crate::study::suite::json::suite_record`], serialise with serde and
//! deserialise back into the same types, so a writer and a reader cannot
//! disagree about a key. Written JSON goes through [`to_json`], which
//! sorts every object's keys: the same inputs give byte-identical files.
//!
//! Leaves out: fio's own JSON layout (`--output-format=json`), which
//! follows fio's structure field for field in [`crate::study::fio_out`],
//! and a trace phase's statistics, which the trace module writes as its
//! own sub-document ([`PhaseRecord::trace`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::health::Health;
use crate::run::device::ThermalWindow;
use crate::run::lifetime::{AgeSpec, AgeSummary};
use crate::run::placement_stats::PlacementWindow;
use crate::run::stats::{Counters, Second};
use crate::run::trace::TraceSpec;
use crate::run::workload::IoSpec;
use crate::spec::DriveSpec;
use crate::study::suite::def::SuiteFile;
use crate::study::suite::score::ScoreValue;

/// A record as JSON with every object's keys sorted (the form written to
/// files, so that the same inputs give the same bytes).
pub fn to_json<T: Serialize>(record: &T) -> Value {
    serde_json::to_value(record).expect("records serialise: no maps with non-string keys, no NaN")
}

/// Completion latency of one direction, as fio's `clat_ns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRecord {
    /// Shortest, ns (0 when nothing completed).
    pub min: u64,
    /// Longest, ns.
    pub max: u64,
    /// Mean, ns.
    pub mean: f64,
    /// Standard deviation, ns.
    pub stddev: f64,
    /// Commands counted.
    #[serde(rename = "N")]
    pub n: u64,
    /// fio's default percentiles, keyed as fio keys them (`"99.000000"`).
    pub percentile: BTreeMap<String, u64>,
}

/// One direction (read, write or trim) of a phase, as fio's `read` /
/// `write` / `trim` objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirRecord {
    /// Bytes transferred.
    pub io_bytes: u64,
    /// KiB transferred.
    pub io_kbytes: u64,
    /// Bytes per second over the measured time.
    pub bw_bytes: u64,
    /// KiB per second.
    pub bw: u64,
    /// Commands per second.
    pub iops: f64,
    /// Measured time, ms.
    pub runtime: u64,
    /// Commands completed.
    pub total_ios: u64,
    /// Completion latency.
    pub clat_ns: LatencyRecord,
}

impl DirRecord {
    /// Mean latency, µs.
    pub fn mean_lat_us(&self) -> f64 {
        self.clat_ns.mean / 1e3
    }

    /// A percentile's latency, µs (`key` as fio writes it, e.g.
    /// `"99.000000"`; 0 when absent).
    pub fn percentile_us(&self, key: &str) -> f64 {
        self.clat_ns.percentile.get(key).map_or(0.0, |&ns| ns as f64 / 1e3)
    }
}

/// What kind of phase a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    /// Closed-loop or rate-limited I/O.
    Io,
    /// No host I/O.
    Idle,
    /// A user-data erase.
    SecureErase,
    /// A replayed block trace.
    Trace,
    /// Time powered off.
    Retention,
    /// Days of use, untimed.
    Age,
}

/// A phase as it was specified (fio's `job options`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // one per phase
pub enum JobOptions {
    /// An I/O phase's fio options.
    Io(IoSpec),
    /// A trace phase.
    Trace(TraceSpec),
    /// An aging phase.
    Age(AgeSpec),
    /// A retention phase.
    Retention {
        /// Time powered off, ns.
        retention_ns: u64,
    },
    /// An idle phase.
    Idle {
        /// Duration, ns.
        idle_ns: u64,
        /// APST switched on or off at its start (`None`: unchanged).
        apst: Option<bool>,
    },
    /// A secure erase.
    SecureErase {
        /// Always true.
        secure_erase: bool,
    },
}

/// One phase's results, shaped like one fio job with ssdtwin's additions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// Phase name (fio's section name).
    pub jobname: String,
    /// Kind of phase.
    #[serde(rename = "type")]
    pub kind: PhaseKind,
    /// The phase as specified.
    #[serde(rename = "job options")]
    pub job_options: JobOptions,
    /// Start, ns of the run's virtual clock.
    pub start_ns: u64,
    /// Start to last completion (or end of idle), ns.
    pub elapsed_ns: u64,
    /// Time throughput is computed over (after `ramp_time`), ns.
    pub measured_ns: u64,
    /// `elapsed_ns` in ms, as fio's `job_runtime`.
    pub job_runtime: u64,
    /// Bursts run (burst phases).
    pub bursts: u32,
    /// Time with commands outstanding, ns.
    pub busy_ns: u64,
    /// `busy_ns / elapsed_ns`.
    pub duty_cycle: f64,
    /// Reads.
    pub read: DirRecord,
    /// Writes.
    pub write: DirRecord,
    /// Trims.
    pub trim: DirRecord,
    /// What the drive counted during the phase.
    pub counters: Counters,
    /// Write amplification of the phase.
    pub waf: f64,
    /// Map-cache hit rate (`None`: no map lookups).
    pub map_hit_rate: Option<f64>,
    /// Energy, J (`None`: no power model).
    pub energy_j: Option<f64>,
    /// Mean power, W (`None`: no power model).
    pub power_w: Option<f64>,
    /// Per-second series, on the phase's clock.
    pub time_series: Vec<Second>,
    /// Trace phases: the replay's counts and the trace's statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Value>,
    /// Aging phases: what the days did and the wear after them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<AgeSummary>,
    /// Drives with a thermal model: temperatures over the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal: Option<ThermalWindow>,
    /// I/O and trace phases: the share of commands slower than each of
    /// [`crate::study::metric::OUTLIER_THRESHOLDS_NS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_outliers: Vec<OutlierRecord>,
    /// I/O and trace phases: stalls of at least each of
    /// [`crate::study::metric::STALL_THRESHOLDS_NS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<StallRecord>,
    /// Zoned and FDP drives: zones by state, what each zone and each
    /// placement handle took (see [`crate::run::placement_stats`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementWindow>,
}

/// The share of a phase's commands whose completion latency exceeded a
/// threshold (`None`: no command of that direction).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OutlierRecord {
    /// The threshold, ms.
    pub threshold_ms: f64,
    /// Reads above it, % of reads.
    pub read_pct: Option<f64>,
    /// Writes above it, % of writes.
    pub write_pct: Option<f64>,
    /// Reads and writes above it, % of both.
    pub all_pct: Option<f64>,
}

/// A phase's stalls of at least a length: intervals in which commands
/// were outstanding and none completed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StallRecord {
    /// The shortest stall counted, ms.
    pub min_ms: f64,
    /// Stalls counted.
    pub count: u64,
    /// Their total length, ms.
    pub time_ms: f64,
    /// The longest, ms (0: none).
    pub longest_ms: f64,
}

impl PhaseRecord {
    /// The direction a chart of this phase is about: writes if more
    /// writes than reads completed, reads otherwise.
    pub fn main_dir(&self) -> &DirRecord {
        if self.write.total_ios > self.read.total_ios {
            &self.write
        } else {
            &self.read
        }
    }

    /// The fio options of an I/O phase.
    pub fn io_spec(&self) -> Option<&IoSpec> {
        match &self.job_options {
            JobOptions::Io(s) => Some(s),
            _ => None,
        }
    }
}

/// One second of a run's series, on the run's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// The second, as its phase recorded it.
    #[serde(flatten)]
    pub second: Second,
    /// The phase it belongs to.
    pub phase: String,
    /// Seconds since the run began.
    pub run_t_s: f64,
}

/// A whole run added up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverallRecord {
    /// Reads over the I/O phases' measured time.
    pub read: DirRecord,
    /// Writes.
    pub write: DirRecord,
    /// Trims.
    pub trim: DirRecord,
    /// Counters of every phase.
    pub counters: Counters,
    /// Write amplification of the run.
    pub waf: f64,
    /// First phase's start to last phase's end, ns.
    pub elapsed_ns: u64,
    /// Measured time of the I/O phases, ns.
    pub measured_ns: u64,
    /// Energy of every phase, J.
    pub energy_j: Option<f64>,
    /// Mean power over the run, W.
    pub power_w: Option<f64>,
    /// Every phase's seconds, on the run's clock.
    pub time_series: Vec<SeriesPoint>,
}

/// The document `ssdtwin run` writes with `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Marks the phases as fio-shaped.
    #[serde(rename = "fio version")]
    pub fio_version: String,
    /// Version of the tool that ran it.
    pub ssdtwin_version: String,
    /// The drive as simulated (overrides applied).
    pub drive: DriveSpec,
    /// Starting state, as given.
    pub state: String,
    /// Seed of the state and the workload.
    pub seed: u64,
    /// Phases in order.
    pub jobs: Vec<PhaseRecord>,
    /// The health log at the end.
    pub health: Health,
    /// The run added up.
    pub overall: OverallRecord,
}

/// The suite as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteInfo {
    /// Short identifier, e.g. `client-2018`.
    pub name: String,
    /// One line saying what it is.
    pub title: String,
    /// Where its procedure comes from.
    pub source: String,
    /// Built-in name or path it was read from.
    pub origin: String,
    /// The file as parsed.
    pub definition: SuiteFile,
    /// The TOML text.
    pub toml: String,
}

/// How the suite was run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteOptionsRecord {
    /// Seed of every random offset and mix.
    pub seed: u64,
    /// Size multiplier.
    pub scale: f64,
    /// Time multiplier.
    pub time_scale: f64,
    /// Tests selected (empty: all).
    pub only: Vec<String>,
    /// State every test started from instead of the passes' (`None`: the
    /// passes').
    pub state: Option<String>,
}

/// A drive a suite ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriveRecord {
    /// Preset name or path, as given.
    pub name: String,
    /// `--set` overrides applied.
    pub overrides: Vec<String>,
    /// User capacity, bytes.
    pub user_capacity_bytes: u64,
    /// The resolved drive file.
    pub spec: DriveSpec,
}

/// A pass of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassRecord {
    /// Name, e.g. `standard`.
    pub name: String,
    /// What it means.
    pub description: String,
    /// State replacing each test's own data (`None`: the tests' own).
    pub base: Option<String>,
    /// Idle after preconditioning replacing the tests' own, ns.
    pub prep_idle_ns: Option<u64>,
}

/// What a test rests between steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IdleRuleRecord {
    /// A fixed idle after each step, ns.
    Fixed {
        /// Duration, ns.
        idle_ns: u64,
    },
    /// Idle so that the drive is busy this fraction of the time.
    DutyCycle {
        /// Busy fraction.
        duty_cycle: f64,
    },
}

/// A step's limits as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepLimits {
    /// Bytes to transfer.
    pub io_size: Option<u64>,
    /// Time limit, ns.
    pub runtime_ns: Option<u64>,
}

/// The metrics a suite scores a step by (one vocabulary with
/// `validate`'s figures: see [`crate::study::suite::plan::Metric`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepMetrics {
    /// Commands per second.
    pub iops: Option<f64>,
    /// MB/s (10⁶ bytes).
    pub mbps: Option<f64>,
    /// Mean latency, µs.
    pub mean_lat_us: Option<f64>,
    /// Longest latency, µs.
    pub max_lat_us: Option<f64>,
    /// Mean power, W.
    pub power_w: Option<f64>,
    /// MB/s per W.
    pub mb_per_s_per_w: Option<f64>,
    /// Settled idle power, mW.
    pub idle_power_mw: Option<f64>,
    /// Time the step's throughput is computed over, ns.
    pub active_ns: u64,
    /// Busy fraction including the idle after the step.
    pub duty_cycle_with_idle: f64,
}

/// One step of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Step name.
    pub step: String,
    /// Values of the swept parameters (e.g. `iodepth`).
    pub sweep: BTreeMap<String, u64>,
    /// Limits as run.
    pub limits: StepLimits,
    /// Metrics.
    pub metrics: StepMetrics,
    /// The I/O phase.
    pub result: PhaseRecord,
    /// The idle after it.
    pub idle: Option<PhaseRecord>,
}

/// One test on one drive and pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRecord {
    /// Test name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Starting state, as the suite names it.
    pub state: String,
    /// Extra over-provisioning, fraction of the user capacity.
    pub extra_op: f64,
    /// Capacity the test may use, bytes.
    pub capacity_bytes: u64,
    /// Preconditioning writes, in order.
    pub prep: Vec<IoSpec>,
    /// Idle after preconditioning.
    pub prep_idle: Option<PhaseRecord>,
    /// Rest between steps.
    pub idle_rule: Option<IdleRuleRecord>,
    /// Scores.
    pub scores: Vec<ScoreValue>,
    /// Steps in order.
    pub steps: Vec<StepRecord>,
}

/// One drive × pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteRunRecord {
    /// Drive name.
    pub drive: String,
    /// Pass name.
    pub pass: String,
    /// Tests in order.
    pub tests: Vec<TestRecord>,
}

/// One score, flat (what the report draws as bars).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreRow {
    /// Test name.
    pub test: String,
    /// Test title.
    pub title: String,
    /// Score label.
    pub label: String,
    /// Unit.
    pub unit: String,
    /// Drive name.
    pub drive: String,
    /// Pass name.
    pub pass: String,
    /// Value (`None`: undefined).
    pub value: Option<f64>,
}

/// The document `ssdtwin suite` and `ssdtwin review` write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteRecord {
    /// Version of the tool that ran it.
    pub ssdtwin_version: String,
    /// The suite.
    pub suite: SuiteInfo,
    /// How it was run.
    pub options: SuiteOptionsRecord,
    /// The drives.
    pub drives: Vec<DriveRecord>,
    /// The passes.
    pub passes: Vec<PassRecord>,
    /// Every drive × pass.
    pub runs: Vec<SuiteRunRecord>,
    /// Every score, flat (with `--repeat`: the medians over the seeds).
    pub scores: Vec<ScoreRow>,
    /// `--repeat N`: every score over the N seeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatRecord>,
}

/// A suite run once per seed (`ssdtwin suite --repeat N`): each score's
/// value for every seed, their median (the reported score) and spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatRecord {
    /// The seeds, in the order run.
    pub seeds: Vec<u64>,
    /// Every score of every drive × pass.
    pub scores: Vec<RepeatedScore>,
}

/// One score over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedScore {
    /// Test name.
    pub test: String,
    /// Score label.
    pub label: String,
    /// Unit.
    pub unit: String,
    /// Drive name.
    pub drive: String,
    /// Pass name.
    pub pass: String,
    /// The value of each seed (`None`: undefined in that run).
    pub values: Vec<Option<f64>>,
    /// Median of the defined values (the mean of the middle two for an
    /// even count; `None` if no seed defined it).
    pub median: Option<f64>,
    /// Smallest defined value.
    pub min: Option<f64>,
    /// Largest defined value.
    pub max: Option<f64>,
}
