//! Results as JSON (fio's field names where fio has one) and as a
//! readable terminal summary.
//!
//! Per phase, like one fio job: `read`, `write` and `trim` each with
//! `io_bytes`, `bw_bytes`, `iops`, `total_ios`, `runtime` (ms) and
//! `clat_ns` (`min`, `max`, `mean`, `stddev`, `N`, `percentile` with fio's
//! default percentile list and keys like `"99.000000"`). ssdtwin adds
//! `counters`, `waf`, `time_series` and, at the top, the resolved drive,
//! the starting state, the seed and the tool version, so that any run can
//! be reproduced. Nothing in the JSON depends on wall-clock time, so the
//! same inputs give byte-identical output.

use serde_json::Value;

use crate::model::drive::IoKind;
use crate::model::health::Health;
use crate::run::sim::PhaseResult;
use crate::run::stats::{Counters, DirStats, Second};
use crate::run::workload::Phase;
use crate::spec::DriveSpec;
use crate::study::json_doc::{Deferred, LongArray};
use crate::study::metric::{Dir, Metric, OUTLIER_THRESHOLDS_NS, STALL_THRESHOLDS_NS};
use crate::study::record::{
    self, DirRecord, JobOptions, LatencyRecord, OutlierRecord, OverallRecord, PhaseKind, PhaseRecord, RunRecord,
    SeriesPoint, StallRecord,
};

pub use crate::units::fmt_ns;

/// fio's default completion-latency percentiles.
pub const PERCENTILES: &[f64] =
    &[1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// Everything about a run needed to report and reproduce it.
pub struct RunReport<'a> {
    /// Drive as simulated (overrides applied).
    pub drive: &'a DriveSpec,
    /// Starting state, as given.
    pub state: String,
    /// Seed of the state and the workload.
    pub seed: u64,
    /// Results per phase.
    pub phases: &'a [PhaseResult],
    /// The drive's health log at the end of the run.
    pub health: &'a Health,
}

/// The record of one direction over `measured_ns`.
pub fn dir_record(d: &DirStats, measured_ns: u64) -> DirRecord {
    let secs = measured_ns as f64 / 1e9;
    let rate = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    DirRecord {
        io_bytes: d.bytes,
        io_kbytes: d.bytes / 1024,
        bw_bytes: rate(d.bytes as f64).round() as u64,
        bw: (rate(d.bytes as f64) / 1024.0).round() as u64,
        iops: rate(d.ios as f64),
        runtime: measured_ns / 1_000_000,
        total_ios: d.ios,
        clat_ns: LatencyRecord {
            min: if d.ios == 0 { 0 } else { d.lat_min_ns },
            max: d.lat_max_ns,
            mean: d.mean_ns(),
            stddev: if d.ios == 0 { 0.0 } else { d.hist.stdev() },
            n: d.ios,
            percentile: PERCENTILES.iter().map(|&p| (format!("{p:.6}"), d.percentile_ns(p))).collect(),
        },
    }
}

/// The record of one phase.
pub fn phase_record(r: &PhaseResult) -> PhaseRecord {
    let (kind, job_options) = match &r.phase {
        Phase::Io(s) => (PhaseKind::Io, JobOptions::Io(s.clone())),
        Phase::Idle { duration_ns, apst, .. } => {
            (PhaseKind::Idle, JobOptions::Idle { idle_ns: *duration_ns, apst: *apst })
        }
        Phase::SecureErase { .. } => (PhaseKind::SecureErase, JobOptions::SecureErase { secure_erase: true }),
        Phase::Trace(t) => (PhaseKind::Trace, JobOptions::Trace(t.clone())),
        Phase::Retention { duration_ns, .. } => {
            (PhaseKind::Retention, JobOptions::Retention { retention_ns: *duration_ns })
        }
        Phase::Age(a) => (PhaseKind::Age, JobOptions::Age(a.clone())),
    };
    PhaseRecord {
        jobname: r.phase.name().to_string(),
        kind,
        job_options,
        start_ns: r.start_ns,
        elapsed_ns: r.end_ns - r.start_ns,
        measured_ns: r.measured_ns,
        job_runtime: (r.end_ns - r.start_ns) / 1_000_000,
        bursts: r.bursts,
        busy_ns: r.busy_ns,
        duty_cycle: r.duty_cycle(),
        read: dir_record(&r.dirs[IoKind::Read as usize], r.measured_ns),
        write: dir_record(&r.dirs[IoKind::Write as usize], r.measured_ns),
        trim: dir_record(&r.dirs[IoKind::Trim as usize], r.measured_ns),
        counters: r.counters,
        waf: r.counters.waf(),
        map_hit_rate: r.counters.map_hit_rate(),
        energy_j: r.energy_j,
        power_w: r.power_w(),
        time_series: r.series.seconds.clone(),
        trace: r.trace.as_ref().map(|t| t.to_json()),
        age: r.age,
        thermal: r.thermal,
        latency_outliers: match r.phase {
            Phase::Io(_) | Phase::Trace(_) => outlier_records(r),
            _ => Vec::new(),
        },
        stalls: match r.phase {
            Phase::Io(_) | Phase::Trace(_) => stall_records(r),
            _ => Vec::new(),
        },
        placement: r.placement.clone(),
    }
}

/// A phase's latency outliers above each of [`OUTLIER_THRESHOLDS_NS`].
pub fn outlier_records(r: &PhaseResult) -> Vec<OutlierRecord> {
    OUTLIER_THRESHOLDS_NS
        .iter()
        .map(|&t| {
            let share = |d: Dir| Metric::Over(d, t).value(r, None);
            OutlierRecord {
                threshold_ms: t as f64 / 1e6,
                read_pct: share(Dir::Read),
                write_pct: share(Dir::Write),
                all_pct: share(Dir::All),
            }
        })
        .collect()
}

/// A phase's stalls of at least each of [`STALL_THRESHOLDS_NS`].
pub fn stall_records(r: &PhaseResult) -> Vec<StallRecord> {
    STALL_THRESHOLDS_NS
        .iter()
        .map(|&t| StallRecord {
            min_ms: t as f64 / 1e6,
            count: r.stalls.count_at_least(t),
            time_ms: r.stalls.time_at_least_ns(t) as f64 / 1e6,
            longest_ms: r.stalls.longest_ns() as f64 / 1e6,
        })
        .collect()
}

/// JSON of one phase (its record, keys sorted).
pub fn phase_json(r: &PhaseResult) -> Value {
    record::to_json(&phase_record(r))
}

/// A run's phases added up.
struct Totals {
    counters: Counters,
    /// Read, write, trim over the I/O phases.
    dirs: [DirStats; 3],
    /// Measured time of the I/O phases, ns.
    measured: u64,
    /// First phase's start to last phase's end, ns.
    elapsed: u64,
    /// Energy of all phases, J (`None`: no power model).
    energy: Option<f64>,
}

impl RunReport<'_> {
    fn totals(&self) -> Totals {
        let mut t =
            Totals { counters: Counters::default(), dirs: Default::default(), measured: 0, elapsed: 0, energy: None };
        for p in self.phases {
            t.counters = t.counters.plus(&p.counters);
            if let Phase::Io(_) | Phase::Trace(_) = p.phase {
                for (a, b) in t.dirs.iter_mut().zip(&p.dirs) {
                    a.merge(b);
                }
                t.measured += p.measured_ns;
            }
        }
        t.elapsed = self.phases.last().map_or(0, |p| p.end_ns) - self.phases.first().map_or(0, |p| p.start_ns);
        t.energy = self.phases.iter().map(|p| p.energy_j).sum();
        t
    }

    /// The whole run as its record.
    pub fn record(&self) -> RunRecord {
        let Totals { counters: total, dirs, measured, elapsed, energy } = self.totals();
        let run_start = self.phases.first().map_or(0, |p| p.start_ns);
        // Every phase's seconds in one series, on the run's clock.
        let time_series = self
            .phases
            .iter()
            .flat_map(|p| {
                p.series.seconds.iter().map(move |sec| SeriesPoint {
                    second: *sec,
                    phase: p.phase.name().to_string(),
                    run_t_s: (p.start_ns - run_start) as f64 / 1e9 + sec.t_s as f64,
                })
            })
            .collect();
        RunRecord {
            fio_version: "ssdtwin-compatible".into(),
            ssdtwin_version: env!("CARGO_PKG_VERSION").into(),
            drive: self.drive.clone(),
            state: self.state.clone(),
            seed: self.seed,
            jobs: self.phases.iter().map(phase_record).collect(),
            health: self.health.clone(),
            overall: OverallRecord {
                read: dir_record(&dirs[0], measured),
                write: dir_record(&dirs[1], measured),
                trim: dir_record(&dirs[2], measured),
                counters: total,
                waf: total.waf(),
                elapsed_ns: elapsed,
                measured_ns: measured,
                energy_j: energy,
                power_w: energy.filter(|_| elapsed > 0).map(|e| e / (elapsed as f64 / 1e9)),
                time_series,
            },
        }
    }

    /// The whole run as JSON (its record, keys sorted).
    pub fn to_json(&self) -> Value {
        let mut long = Deferred::default();
        let doc = self.to_json_deferred(&mut long);
        long.fill(doc)
    }

    /// The whole run as JSON with its series held back in `long` (see
    /// [`crate::study::json_doc`]): for writing a long run's document
    /// without building its series as `Value`s.
    pub fn to_json_deferred(&self, long: &mut Deferred) -> Value {
        let mut record = self.record();
        let jobs: Vec<Vec<Second>> = record.jobs.iter_mut().map(|j| std::mem::take(&mut j.time_series)).collect();
        let overall = std::mem::take(&mut record.overall.time_series);
        let mut doc = record::to_json(&record);
        for (j, series) in doc["jobs"].as_array_mut().expect("jobs").iter_mut().zip(jobs) {
            j["time_series"] = long.defer(LongArray::Seconds(series));
        }
        doc["overall"]["time_series"] = long.defer(LongArray::Points(overall));
        doc
    }

    /// Write the whole run's JSON, pretty-printed, streaming its series.
    pub fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut long = Deferred::default();
        let doc = self.to_json_deferred(&mut long);
        long.write_pretty(&doc, w)
    }

    /// A summary in the spirit of fio's terminal output.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "drive: {} — {}\nstate: {}   seed: {}\n",
            self.drive.name, self.drive.description, self.state, self.seed
        ));
        for p in self.phases {
            out.push_str(&phase_summary(p));
        }
        if self.phases.len() > 1 {
            out.push_str(&self.overall_summary());
        }
        out.push('\n');
        out.push_str(&self.health.summary());
        out
    }

    /// The closing lines of a run of several phases: I/O over the measured
    /// time of its I/O phases, and the whole run's flash work, WAF and energy.
    fn overall_summary(&self) -> String {
        let Totals { counters: total, dirs, measured, elapsed, energy } = self.totals();
        let mut out = format!(
            "\n[all {} phases] {:.3} s simulated, {:.3} s of it measured I/O\n",
            self.phases.len(),
            elapsed as f64 / 1e9,
            measured as f64 / 1e9
        );
        let secs = measured as f64 / 1e9;
        for (kind, d) in [("read", &dirs[0]), ("write", &dirs[1]), ("trim", &dirs[2])] {
            if d.ios > 0 && secs > 0.0 {
                out.push_str(&format!(
                    "  {kind:>5}: IOPS={:.0}, BW={:.1} MB/s, {} I/Os, lat mean={} max={}\n",
                    d.ios as f64 / secs,
                    d.bytes as f64 / secs / 1e6,
                    d.ios,
                    fmt_ns(d.mean_ns()),
                    fmt_ns(d.lat_max_ns as f64)
                ));
            }
        }
        out.push_str(&flash_line(&total));
        if let Some(e) = energy.filter(|_| elapsed > 0) {
            out.push_str(&format!("  power: {:.2} W mean, {e:.1} J\n", e / (elapsed as f64 / 1e9)));
        }
        out
    }
}

/// The summary's line of NAND work and write amplification (and of the
/// map cache, when the map is cached).
fn flash_line(c: &Counters) -> String {
    let mut line = format!(
        "  flash: {} reads, {} programs, {} erases; GC moved {} × 4 KiB from {} blocks; WAF {}\n",
        c.nand_reads_native + c.nand_reads_slc,
        c.nand_programs_native + c.nand_programs_slc,
        c.nand_erases_native + c.nand_erases_slc,
        c.gc_slots_moved,
        c.gc_blocks,
        if c.host_slots_written == 0 { "n/a (no writes)".to_string() } else { format!("{:.2}", c.waf()) }
    );
    let rate = c.map_hit_rate();
    // A journalled map's writes look nothing up but still write back.
    if rate.is_some() || c.map_pages_programmed > 0 {
        let hits = rate.map_or("no lookups".to_string(), |r| format!("{:.1}% hits", r * 100.0));
        line.push_str(&format!(
            "  map cache: {hits}; {} translation pages read, {} written back\n",
            c.map_pages_read, c.map_pages_programmed
        ));
    }
    line
}

/// Summary of one phase.
pub fn phase_summary(p: &PhaseResult) -> String {
    let mut out = String::new();
    let secs = (p.end_ns - p.start_ns) as f64 / 1e9;
    match &p.phase {
        Phase::Retention { .. } | Phase::Age(_) => out.push_str(&crate::run::lifetime::summary(p)),
        Phase::Idle { name, .. } => {
            out.push_str(&format!("\n[{name}] idle {secs:.3} s"));
            if p.counters.gc_blocks > 0 {
                out.push_str(&format!(", background GC reclaimed {} blocks", p.counters.gc_blocks));
            }
            if let (Some(e), Some(w)) = (p.energy_j, p.settled_power_w()) {
                out.push_str(&format!(", {e:.2} J, {:.1} mW at the end", w * 1e3));
            }
            out.push('\n');
        }
        Phase::SecureErase { name } => {
            out.push_str(&format!(
                "\n[{name}] secure erase: {} blocks erased in {secs:.3} s",
                p.counters.nand_erases_native + p.counters.nand_erases_slc
            ));
            if let Some(e) = p.energy_j {
                out.push_str(&format!(", {e:.2} J"));
            }
            out.push('\n');
        }
        Phase::Io(s) => {
            out.push_str(&format!(
                "\n[{}] rw={} bs={} iodepth={}{} — {:.3} s simulated\n",
                s.name,
                s.rw.name(),
                s.bs,
                s.iodepth,
                if s.numjobs > 1 { format!(" numjobs={}", s.numjobs) } else { String::new() },
                secs
            ));
            out.push_str(&io_lines(p));
        }
        Phase::Trace(t) => {
            out.push_str(&format!(
                "\n[{}] trace {} — {:.3} s simulated\n",
                t.name,
                p.trace.as_ref().map_or(String::new(), |s| format!(
                    "{} ({}, {})",
                    t.file,
                    s.replay.format.name(),
                    s.replay.mode.name()
                )),
                secs
            ));
            out.push_str(&io_lines(p));
            if let Some(summary) = &p.trace {
                out.push_str(&summary.summary_lines(p));
            }
        }
    }
    if let Some(th) = &p.thermal {
        let c = &th.counters;
        out.push_str(&format!(
            "  temperature: {:.1} → {:.1} °C (peak {:.1} °C)",
            th.start.composite_c, th.end.composite_c, th.peak_c
        ));
        let throttled = c.throttled_warning_ns + c.throttled_critical_ns;
        if throttled > 0 {
            out.push_str(&format!(
                "; throttled {:.1} s ({:.1} s at critical), commands held {}",
                throttled as f64 / 1e9,
                c.throttled_critical_ns as f64 / 1e9,
                fmt_ns(c.throttle_delay_ns as f64)
            ));
        }
        out.push('\n');
    }
    out
}

/// An I/O phase's lines: each direction's rates and latency, the flash
/// work, merges, write-buffer waits and power.
fn io_lines(p: &PhaseResult) -> String {
    let mut out = String::new();
    for (kind, label) in [(IoKind::Read, "read"), (IoKind::Write, "write"), (IoKind::Trim, "trim")] {
        let d = &p.dirs[kind as usize];
        if d.ios == 0 {
            continue;
        }
        out.push_str(&format!(
            "  {label:>5}: IOPS={:.0}, BW={:.1} MB/s ({:.1} MiB/s), {} I/Os\n",
            p.iops(kind),
            p.bw_bytes(kind) / 1e6,
            p.bw_bytes(kind) / 1048576.0,
            d.ios
        ));
        out.push_str(&format!(
            "         lat: mean={} p50={} p99={} p99.9={} max={}\n",
            fmt_ns(d.mean_ns()),
            fmt_ns(d.percentile_ns(50.0) as f64),
            fmt_ns(d.percentile_ns(99.0) as f64),
            fmt_ns(d.percentile_ns(99.9) as f64),
            fmt_ns(d.lat_max_ns as f64)
        ));
    }
    let c = &p.counters;
    out.push_str(&flash_line(c));
    if let Some(pl) = &p.placement {
        out.push_str(&pl.summary_lines());
    }
    if c.switch_merges + c.partial_merges + c.full_merges > 0 {
        out.push_str(&format!(
            "  merges: {} switch, {} partial, {} full; {} × 4 KiB copied\n",
            c.switch_merges, c.partial_merges, c.full_merges, c.merge_slots_copied
        ));
    }
    if c.buffer_blocked_ns > 0 {
        out.push_str(&format!(
            "  writes waited for write-buffer space: {} (summed over commands)\n",
            fmt_ns(c.buffer_blocked_ns as f64)
        ));
    }
    if let (Some(e), Some(w)) = (p.energy_j, p.power_w()) {
        let mb = (p.dirs[0].bytes + p.dirs[1].bytes) as f64 / 1e6;
        out.push_str(&format!("  power: {w:.2} W mean, {e:.1} J"));
        if mb > 0.0 && e > 0.0 {
            out.push_str(&format!(", {:.0} MB/s per W", mb / e));
        }
        out.push('\n');
    }
    out
}
