//! Results of a job file in fio's output formats: `json`, `json+` and
//! `normal` (the terminal layout); `terse` is in
//! [`crate::study::fio_terse`].
//!
//! The JSON has fio's structure and field names (fio 3.33): at the top
//! `fio version`, `timestamp`, `timestamp_ms`, `time`, `global options`
//! and `jobs[]`; per job `jobname`, `groupid`, `error`, `job options`,
//! `read`/`write`/`trim` (each with `io_bytes`, `bw`, `iops`, `runtime`,
//! `total_ios`, `slat_ns`, `clat_ns`, `lat_ns`, `bw_*` and `iops_*` over
//! 500 ms samples), `sync`, `iodepth_level`, `latency_ns`/`_us`/`_ms`; in
//! json+ `clat_ns.bins` (latency in ns → count) as fio's
//! `fio_jsonplus_clat2csv` reads them. Times are virtual, so `timestamp`
//! is 0 (the virtual clock's epoch) and the same inputs give the same
//! bytes. ssdtwin's own additions keep their own keys: per job `ssdtwin`
//! (resolved job, counters, WAF, energy, per-second series), and at the
//! top `drive`, `state`, `seed`, `health` and `overall`.
//!
//! What the twin cannot have: submission latency (commands are submitted
//! the instant the host decides to, so `slat_ns` is 0 and `lat_ns` equals
//! `clat_ns`), host CPU figures (`usr_cpu`, `ctx`, ... are 0), `disk_util`
//! (omitted, as fio omits it for files).

use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

use crate::study::json_doc::{Deferred, LongArray};

use crate::model::drive::IoKind;
use crate::model::health::Health;
use crate::run::control::{LatencyTarget, SsTracker};
use crate::run::jobs::JobResult;
use crate::run::sim::PhaseResult;
use crate::run::source::{JobStats, PrioLat, SAMPLE_NS};
use crate::run::stats::{DirStats, Running, Samples};
use crate::run::workload::Phase;
use crate::spec::DriveSpec;
use crate::study::report::{fmt_ns, RunReport, PERCENTILES};

/// The fio version whose JSON layout this follows.
pub const FIO_VERSION: &str = "fio-3.33";

/// A job file's results with what is needed to report them.
pub struct FioReport<'a> {
    /// Drive as simulated.
    pub drive: &'a DriveSpec,
    /// Starting state, as given.
    pub state: String,
    /// Seed.
    pub seed: u64,
    /// `[global]` options as written.
    pub global: &'a [(String, String)],
    /// Job results in file order.
    pub jobs: &'a [JobResult],
    /// Health log at the end.
    pub health: &'a Health,
}

/// One reported entry: a job, or a group merged by `group_reporting`.
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) groupid: u32,
    pub(crate) error: i32,
    pub(crate) options: Vec<(String, String)>,
    pub(crate) dirs: [DirStats; 3],
    /// The FLUSHes of `fsync`/`fdatasync` (fio's `sync` section).
    pub(crate) sync: DirStats,
    /// Each direction's runtime when they differ (a verify phase).
    pub(crate) dir_ns: Option<[u64; 3]>,
    /// Latency per priority (`cmdprio*`).
    pub(crate) prios: Option<PrioLat>,
    pub(crate) samples: Samples,
    pub(crate) depth_levels: [u64; 7],
    pub(crate) measured_ns: u64,
    pub(crate) elapsed_ns: u64,
    /// fio's `job_runtime`: the members' times after their ramps, summed
    /// (stat.c's `total_run_time`).
    pub(crate) run_sum_ns: u64,
    pub(crate) jobs: usize,
    /// The first job's result (ssdtwin additions).
    pub(crate) first: PhaseResult,
    pub(crate) latency_depth: u32,
    pub(crate) latency_target: Option<LatencyTarget>,
    pub(crate) steadystate: Option<SsTracker>,
    /// `continue_on_error`'s count (fio's `total_err`, `first_error`).
    pub(crate) errors: Option<crate::run::source::ErrorCount>,
}

impl FioReport<'_> {
    pub(crate) fn entries(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        for j in self.jobs {
            let merge = self.jobs.iter().any(|o| o.groupid == j.groupid && o.group_reporting);
            let empty = JobStats {
                dirs: Default::default(),
                series: Default::default(),
                samples: Samples::new(false),
                depth_levels: [0; 7],
                busy_ns: 0,
                stalls: Default::default(),
                sync: None,
                dir_ns: None,
                prios: None,
            };
            let st = j.stats.as_ref().unwrap_or(&empty);
            let r = &j.result;
            if merge {
                if let Some(e) = out.iter_mut().find(|e| e.groupid == j.groupid) {
                    for (a, b) in e.dirs.iter_mut().zip(&st.dirs) {
                        a.merge(b);
                    }
                    if let Some(s) = &st.sync {
                        e.sync.merge(s);
                    }
                    match (&mut e.prios, &st.prios) {
                        (Some(a), Some(b)) => a.merge(b),
                        (None, Some(b)) => e.prios = Some((**b).clone()),
                        _ => {}
                    }
                    e.samples.add_kept(&st.samples);
                    for k in 0..7 {
                        e.depth_levels[k] += st.depth_levels[k];
                    }
                    e.measured_ns = e.measured_ns.max(r.measured_ns);
                    if let (Some(a), Some(b)) = (&mut e.dir_ns, st.dir_ns) {
                        for k in 0..3 {
                            a[k] = a[k].max(b[k]);
                        }
                    }
                    e.elapsed_ns = e.elapsed_ns.max(r.end_ns - r.start_ns);
                    e.run_sum_ns += r.measured_ns;
                    e.error = e.error.max(j.fio_error());
                    if let (Some(a), Some(b)) = (&mut e.errors, j.errors) {
                        // stat.c: counts add up, the last job's first error.
                        a.total += b.total;
                        a.first = b.first;
                    }
                    e.jobs += 1;
                    // fio keeps a group's steady-state data in its last job.
                    if j.steadystate.is_some() {
                        e.steadystate = j.steadystate.clone();
                    }
                    continue;
                }
            }
            out.push(Entry {
                name: j.name.clone(),
                groupid: j.groupid,
                error: j.fio_error(),
                errors: j.errors,
                options: j.options.clone(),
                dirs: st.dirs.clone(),
                sync: st.sync.clone().unwrap_or_default(),
                prios: st.prios.as_deref().cloned(),
                dir_ns: st.dir_ns,
                samples: st.samples.clone(),
                depth_levels: st.depth_levels,
                measured_ns: r.measured_ns,
                elapsed_ns: r.end_ns - r.start_ns,
                run_sum_ns: r.measured_ns,
                jobs: 1,
                first: r.clone(),
                latency_depth: j.latency_depth,
                latency_target: j.latency_target,
                steadystate: j.steadystate.clone(),
            });
        }
        out
    }

    /// fio's JSON (`plus`: json+, with latency bins).
    pub fn to_json(&self, plus: bool) -> Value {
        let mut long = Deferred::default();
        let doc = self.to_json_deferred(plus, &mut long);
        long.fill(doc)
    }

    /// Write fio's JSON pretty-printed, streaming the series (see
    /// [`crate::study::json_doc`]).
    pub fn write_json(&self, plus: bool, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut long = Deferred::default();
        let doc = self.to_json_deferred(plus, &mut long);
        long.write_pretty(&doc, w)
    }

    /// fio's JSON with its series held back in `long`.
    pub fn to_json_deferred(&self, plus: bool, long: &mut Deferred) -> Value {
        let entries = self.entries();
        // Group totals of bandwidth, for `bw_agg`.
        let mut group_bw: std::collections::BTreeMap<u32, [f64; 3]> = Default::default();
        for e in &entries {
            let g = group_bw.entry(e.groupid).or_default();
            for (gk, d) in g.iter_mut().zip(&e.dirs) {
                *gk += rate(d.bytes as f64, e.measured_ns);
            }
        }
        let jobs: Vec<Value> = entries.iter().map(|e| entry_json(e, plus, &group_bw[&e.groupid], long)).collect();
        let mut top = Map::new();
        top.insert("fio version".into(), json!(FIO_VERSION));
        top.insert("timestamp".into(), json!(0));
        top.insert("timestamp_ms".into(), json!(0));
        top.insert("time".into(), json!("Thu Jan  1 00:00:00 1970"));
        if !self.global.is_empty() {
            top.insert("global options".into(), options_json(self.global));
        }
        top.insert("jobs".into(), Value::Array(jobs));
        // ssdtwin's additions, as in `ssdtwin run`'s other output.
        let phases: Vec<PhaseResult> = self.jobs.iter().map(|j| j.result.clone()).collect();
        let run = RunReport {
            drive: self.drive,
            state: self.state.clone(),
            seed: self.seed,
            phases: &phases,
            health: self.health,
        }
        .to_json_deferred(long);
        top.insert("ssdtwin_version".into(), json!(env!("CARGO_PKG_VERSION")));
        for key in ["drive", "state", "seed", "health", "overall"] {
            top.insert(key.into(), run[key].clone());
        }
        Value::Object(top)
    }

    /// fio's terminal layout, then ssdtwin's flash, power and health lines.
    pub fn normal(&self) -> String {
        let entries = self.entries();
        let mut out = format!(
            "drive: {} — {}\nstate: {}   seed: {}\n\n",
            self.drive.name, self.drive.description, self.state, self.seed
        );
        for e in &entries {
            out.push_str(&entry_text(e));
        }
        let groups: std::collections::BTreeSet<u32> = entries.iter().map(|e| e.groupid).collect();
        for g in groups {
            out.push_str(&format!("\nRun status group {g} (all jobs):\n"));
            for (k, label) in [(0, "READ"), (1, "WRITE"), (2, "TRIM")] {
                let members: Vec<&Entry> = entries.iter().filter(|e| e.groupid == g && e.dirs[k].ios > 0).collect();
                if members.is_empty() {
                    continue;
                }
                let bytes: u64 = members.iter().map(|e| e.dirs[k].bytes).sum();
                let run_max = members.iter().map(|e| e.measured_ns).max().unwrap_or(0);
                let run_min = members.iter().map(|e| e.measured_ns).min().unwrap_or(0);
                let bws: Vec<f64> = members.iter().map(|e| rate(e.dirs[k].bytes as f64, e.measured_ns)).collect();
                let lo = bws.iter().cloned().fold(f64::INFINITY, f64::min);
                let hi = bws.iter().cloned().fold(0.0, f64::max);
                let agg = rate(bytes as f64, run_max);
                out.push_str(&format!(
                    "{label:>7}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec\n",
                    bin_rate(agg),
                    si_rate(agg),
                    bin_rate(lo),
                    bin_rate(hi),
                    si_rate(lo),
                    si_rate(hi),
                    bin_size(bytes as f64),
                    si_size(bytes as f64),
                    run_min / 1_000_000,
                    run_max / 1_000_000
                ));
            }
        }
        let phases: Vec<PhaseResult> = self.jobs.iter().map(|j| j.result.clone()).collect();
        let run = RunReport {
            drive: self.drive,
            state: self.state.clone(),
            seed: self.seed,
            phases: &phases,
            health: self.health,
        };
        out.push_str("\nssdtwin (drive counters over each job's lifetime):");
        let text = run.summary();
        // The run summary without its drive/state header.
        out.push_str(text.split_once('\n').and_then(|(_, r)| r.split_once('\n')).map_or("", |(_, r)| r));
        out
    }
}

pub(crate) fn rate(x: f64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        x * 1e9 / ns as f64
    }
}

fn options_json(opts: &[(String, String)]) -> Value {
    let mut m = Map::new();
    for (k, v) in opts {
        m.insert(k.clone(), json!(v));
    }
    Value::Object(m)
}

/// Statistics of one kind of sample: how many, and (min, max, mean,
/// stddev), all 0 without samples.
pub(crate) struct SampleSummary {
    pub(crate) n: u64,
    pub(crate) summary: (f64, f64, f64, f64),
}

/// fio's bandwidth (KiB/s) and IOPS samples of direction `k` of an
/// entry: whole 500 ms samples only, as fio takes them; none for a
/// direction without I/O.
pub(crate) fn sample_stats(e: &Entry, k: usize) -> (SampleSummary, SampleSummary) {
    let whole = e.measured_ns / SAMPLE_NS;
    let secs = SAMPLE_NS as f64 / 1e9;
    let (bytes, ios) = e.samples.stats(k, whole);
    let of = |r: Running, scale: f64| {
        if e.dirs[k].ios == 0 || r.n == 0 {
            SampleSummary { n: 0, summary: (0.0, 0.0, 0.0, 0.0) }
        } else {
            SampleSummary { n: r.n, summary: (r.min * scale, r.max * scale, r.mean * scale, r.stddev() * scale) }
        }
    };
    (of(bytes, 1.0 / 1024.0 / secs), of(ios, 1.0 / secs))
}

fn lat_json(d: &DirStats, percentiles: bool, bins: bool) -> Value {
    let mut m = Map::new();
    m.insert("min".into(), json!(if d.ios == 0 { 0 } else { d.lat_min_ns }));
    m.insert("max".into(), json!(d.lat_max_ns));
    m.insert("mean".into(), json!(d.mean_ns()));
    m.insert("stddev".into(), json!(if d.ios == 0 { 0.0 } else { d.hist.stdev() }));
    m.insert("N".into(), json!(d.ios));
    if percentiles && d.ios > 0 {
        let mut pct = Map::new();
        for &p in PERCENTILES {
            pct.insert(format!("{p:.6}"), json!(d.percentile_ns(p)));
        }
        m.insert("percentile".into(), Value::Object(pct));
    }
    if bins && d.ios > 0 {
        let mut b = Map::new();
        for v in d.hist.iter_recorded() {
            b.insert(d.hist.highest_equivalent(v.value_iterated_to()).to_string(), json!(v.count_at_value()));
        }
        m.insert("bins".into(), Value::Object(b));
    }
    Value::Object(m)
}

fn dir_json(e: &Entry, k: usize, plus: bool, group_bw: f64) -> Value {
    let d = &e.dirs[k];
    let ns = e.dir_ns.map_or(e.measured_ns, |r| r[k]);
    let bw = rate(d.bytes as f64, ns);
    let (bws, iops) = sample_stats(e, k);
    let (bmin, bmax, bmean, bdev) = bws.summary;
    let (imin, imax, imean, idev) = iops.summary;
    let mut clat = lat_json(d, true, plus);
    if d.ios == 0 {
        clat = json!({ "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 });
        if plus {
            clat["percentile"] = json!({});
        }
    }
    let mut v = json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw.round() as u64,
        "bw": (bw / 1024.0).round() as u64,
        "iops": rate(d.ios as f64, ns),
        "runtime": if d.ios > 0 { ns / 1_000_000 } else { 0 },
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": json!({ "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": d.ios }),
        "clat_ns": clat,
        "lat_ns": lat_json(d, false, false),
        "bw_min": bmin.round() as u64,
        "bw_max": bmax.round() as u64,
        "bw_agg": if group_bw > 0.0 { bw / group_bw * 100.0 } else { 0.0 },
        "bw_mean": bmean,
        "bw_dev": bdev,
        "bw_samples": bws.n,
        "iops_min": imin.round() as u64,
        "iops_max": imax.round() as u64,
        "iops_mean": imean,
        "iops_stddev": idev,
        "iops_samples": iops.n,
    });
    // stat.c: per-priority latency when at least two priorities of the
    // direction have samples, each with samples listed.
    if let Some(list) = e.prios.as_ref().and_then(|p| p.dirs.get(k)) {
        let used: Vec<_> = list.iter().filter(|(_, s)| s.ios > 0).collect();
        if used.len() >= 2 {
            let prios: Vec<Value> = used
                .iter()
                .map(|(p, s)| json!({ "prioclass": p >> 13, "prio": p & 7, "clat_ns": lat_json(s, true, plus) }))
                .collect();
            v["prios"] = Value::Array(prios);
        }
    }
    v
}

/// fio's latency buckets: share (%) of commands in each range, in fio's
/// order: ns (2 … 1000), µs (2 … 1000), ms (2 … 2000, ≥ 2000).
pub(crate) fn latency_shares(all: &Histogram<u64>, total: u64) -> ([f64; 10], [f64; 10], [f64; 12]) {
    let share = |lo: u64, hi: u64| -> f64 {
        if total == 0 || hi <= lo {
            return 0.0;
        }
        let c: u64 = all
            .iter_recorded()
            .filter(|v| v.value_iterated_to() >= lo && v.value_iterated_to() < hi)
            .map(|v| v.count_at_value())
            .sum();
        c as f64 * 100.0 / total as f64
    };
    let mut ns = [0.0; 10];
    let mut us = [0.0; 10];
    let mut ms = [0.0; 12];
    let mut prev = 0;
    for (i, &e) in LAT_EDGES.iter().enumerate() {
        ns[i] = share(prev, e);
        prev = e;
    }
    prev = 1000;
    for (i, &e) in LAT_EDGES.iter().enumerate() {
        us[i] = share(prev, e * 1000);
        prev = e * 1000;
    }
    prev = 1_000_000;
    for (i, &e) in LAT_EDGES.iter().chain(&[2000]).enumerate() {
        ms[i] = share(prev, e * 1_000_000);
        prev = e * 1_000_000;
    }
    ms[11] = share(2_000_000_000, u64::MAX);
    (ns, us, ms)
}

/// Upper edges of fio's latency buckets within a unit.
const LAT_EDGES: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

fn latency_buckets(all: &Histogram<u64>, total: u64) -> (Value, Value, Value) {
    let (ns, us, ms) = latency_shares(all, total);
    let keys: Vec<String> = LAT_EDGES.iter().map(|e| e.to_string()).collect();
    let map = |keys: &[String], xs: &[f64]| -> Value {
        Value::Object(keys.iter().zip(xs).map(|(k, x)| (k.clone(), json!(x))).collect())
    };
    let mut ms_keys = keys.clone();
    ms_keys.extend(["2000".to_string(), ">=2000".to_string()]);
    (map(&keys, &ns), map(&keys, &us), map(&ms_keys, &ms))
}

fn entry_json(e: &Entry, plus: bool, group_bw: &[f64; 3], long: &mut Deferred) -> Value {
    let mut all = DirStats::default();
    for d in &e.dirs {
        all.merge(d);
    }
    let (lat_ns, lat_us, lat_ms) = latency_buckets(&all.hist, all.ios);
    let submits: u64 = e.depth_levels.iter().sum();
    let mut levels = Map::new();
    for (i, key) in ["1", "2", "4", "8", "16", "32", ">=64"].iter().enumerate() {
        let p = if submits == 0 { 0.0 } else { e.depth_levels[i] as f64 * 100.0 / submits as f64 };
        levels.insert(key.to_string(), json!(p));
    }
    let depth_hist = |keys: &[&str]| {
        let mut m = Map::new();
        for k in keys {
            m.insert(k.to_string(), json!(0.0));
        }
        Value::Object(m)
    };
    let dist_keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    let mut submit = depth_hist(&dist_keys);
    let mut complete = depth_hist(&dist_keys);
    if submits > 0 {
        // One command per submission and per completion event.
        submit["4"] = json!(100.0);
        complete["4"] = json!(100.0);
    }
    let r = &e.first;
    let options = match &r.phase {
        Phase::Io(s) => serde_json::to_value(s).expect("IoSpec serialises"),
        Phase::Idle { duration_ns, apst, .. } => json!({ "idle_ns": duration_ns, "apst": apst }),
        Phase::SecureErase { .. } => json!({ "secure_erase": true }),
        Phase::Trace(_) => json!({ "trace": true }),
        Phase::Retention { .. } | Phase::Age(_) => crate::run::lifetime::options_json(&r.phase),
    };
    let mut job = json!({
        "jobname": e.name,
        "groupid": e.groupid,
        "error": e.error,
        "eta": 0,
        "elapsed": e.elapsed_ns.div_ceil(1_000_000_000),
        "job options": options_json(&e.options),
        "read": dir_json(e, 0, plus, group_bw[0]),
        "write": dir_json(e, 1, plus, group_bw[1]),
        "trim": dir_json(e, 2, plus, group_bw[2]),
        "sync": { "total_ios": e.sync.ios, "lat_ns": lat_json(&e.sync, true, false) },
        "job_runtime": e.run_sum_ns / 1_000_000,
        "usr_cpu": 0.0,
        "sys_cpu": 0.0,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": levels,
        "iodepth_submit": submit,
        "iodepth_complete": complete,
        "latency_ns": lat_ns,
        "latency_us": lat_us,
        "latency_ms": lat_ms,
        "latency_depth": e.latency_depth,
        "latency_target": e.latency_target.map_or(0, |t| t.target_ns),
        "latency_percentile": e.latency_target.map_or(100.0, |t| t.percentile),
        "latency_window": e.latency_target.map_or(0, |t| t.window_ns / 1000),
        "ssdtwin": {
            "type": r.phase.kind(),
            "age": r.age,
            "jobs": e.jobs,
            "job": options,
            "start_ns": r.start_ns,
            "elapsed_ns": r.end_ns - r.start_ns,
            "measured_ns": r.measured_ns,
            "bursts": r.bursts,
            "busy_ns": r.busy_ns,
            "counters": r.counters,
            "waf": r.counters.waf(),
            "energy_j": r.energy_j,
            "power_w": r.power_w(),
            "time_series": long.defer(LongArray::Seconds(r.series.seconds.clone())),
        },
    });
    if let Some(c) = e.errors {
        job["total_err"] = json!(c.total);
        job["first_error"] = json!(c.first);
    }
    job["ssdtwin"]["stalls"] = json!(crate::study::report::stall_records(r));
    if let Some(p) = &r.placement {
        job["ssdtwin"]["placement"] = json!(p);
    }
    if let Some(ss) = &e.steadystate {
        job["steadystate"] = steadystate_json(ss);
    }
    job
}

/// fio's `steadystate` object.
fn steadystate_json(ss: &SsTracker) -> Value {
    let (bw, iops) = ss.window();
    let n = bw.len().max(1) as u64;
    json!({
        "ss": ss.spec.fio_name(),
        "duration": ss.spec.duration_s,
        "attained": i32::from(ss.attained),
        "criterion": format!("{:.6}{}", ss.criterion as f32, if ss.spec.percent { "%" } else { "" }),
        "max_deviation": ss.deviation,
        "slope": ss.slope,
        "data": {
            "bw_mean": bw.iter().sum::<u64>() / n,
            "iops_mean": iops.iter().sum::<u64>() / n,
            "iops": iops,
            "bw": bw,
        },
    })
}

fn bin_rate(b: f64) -> String {
    format!("{}/s", bin_size(b))
}

fn si_rate(b: f64) -> String {
    format!("{}/s", si_size(b))
}

fn bin_size(b: f64) -> String {
    scaled_size(b, 1024.0, ["B", "KiB", "MiB", "GiB", "TiB"])
}

fn si_size(b: f64) -> String {
    scaled_size(b, 1000.0, ["B", "kB", "MB", "GB", "TB"])
}

/// `b` bytes in the largest unit (steps of `base`) that keeps it at least
/// 1, as fio prints sizes: whole bytes, otherwise one decimal.
fn scaled_size(b: f64, base: f64, units: [&str; 5]) -> String {
    let mut x = b;
    let mut u = 0;
    while x >= base && u + 1 < units.len() {
        x /= base;
        u += 1;
    }
    if u == 0 {
        format!("{x:.0}{}", units[u])
    } else {
        format!("{x:.1}{}", units[u])
    }
}

fn si_count(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn entry_text(e: &Entry) -> String {
    let rw = match &e.first.phase {
        Phase::Io(s) => format!(
            "(g={}): rw={}, bs=(R) {}-{}, (W) {}-{}, iodepth={}",
            e.groupid,
            s.rw.name(),
            bin_size(s.bs_of(0) as f64),
            bin_size(s.bs_of(0) as f64),
            bin_size(s.bs_of(1) as f64),
            bin_size(s.bs_of(1) as f64),
            s.iodepth
        ),
        Phase::Idle { duration_ns, .. } => format!("(g={}): idle {}", e.groupid, fmt_ns(*duration_ns as f64)),
        Phase::SecureErase { .. } => format!("(g={}): secure erase", e.groupid),
        Phase::Trace(_) => format!("(g={}): trace replay", e.groupid),
        Phase::Retention { duration_ns, .. } => format!("(g={}): retention {}", e.groupid, fmt_ns(*duration_ns as f64)),
        Phase::Age(a) => format!("(g={}): age {} days", e.groupid, a.days),
    };
    let mut out = format!("{}: {rw}\n", e.name);
    out.push_str(&format!(
        "{}: (groupid={}, jobs={}): err={:2}: pid=0: {:.3} s simulated\n",
        e.name,
        e.groupid,
        e.jobs,
        e.error,
        e.elapsed_ns as f64 / 1e9
    ));
    for (k, label) in [(0usize, "read"), (1, "write"), (2, "trim")] {
        let d = &e.dirs[k];
        if d.ios == 0 {
            continue;
        }
        let ns = e.dir_ns.map_or(e.measured_ns, |r| r[k]);
        let bw = rate(d.bytes as f64, ns);
        out.push_str(&format!(
            "  {label}: IOPS={}, BW={} ({})({}/{}msec)\n",
            si_count(rate(d.ios as f64, ns)),
            bin_rate(bw),
            si_rate(bw),
            bin_size(d.bytes as f64),
            ns / 1_000_000
        ));
        // stat.c show_ddir_status: per-priority lines when at least two
        // priorities of the direction have samples.
        let prios: Vec<&(u16, DirStats)> = e
            .prios
            .as_ref()
            .and_then(|p| p.dirs.get(k))
            .map(|l| l.iter().filter(|(_, s)| s.ios > 0).collect())
            .unwrap_or_default();
        let prios = if prios.len() >= 2 { prios } else { Vec::new() };
        let prio_name = |p: u16| format!("clat prio {}/{}", p >> 13, p & 7);
        latency_lines(&mut out, d, &["clat", " lat"]);
        for (p, s) in &prios {
            latency_lines(&mut out, s, &[&prio_name(*p)]);
        }
        percentile_lines(&mut out, d, "clat");
        for (p, s) in &prios {
            let share = 100.0 * s.ios as f64 / d.ios as f64;
            percentile_lines(&mut out, s, &format!("{} ({share:.2}% of IOs)", prio_name(*p)));
        }
        let (bws, iops) = sample_stats(e, k);
        let (a, b, c, dd) = bws.summary;
        out.push_str(&format!(
            "   bw (  KiB/s): min={a:.0}, max={b:.0}, avg={c:.2}, stdev={dd:.2}, samples={}\n",
            bws.n
        ));
        let (a, b, c, dd) = iops.summary;
        out.push_str(&format!(
            "   iops        : min={a:.0}, max={b:.0}, avg={c:.2}, stdev={dd:.2}, samples={}\n",
            iops.n
        ));
    }
    if e.sync.ios > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        latency_lines(&mut out, &e.sync, &["sync"]);
        percentile_lines(&mut out, &e.sync, "sync");
    }
    if let Some(t) = e.latency_target {
        out.push_str(&format!(
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}\n",
            t.target_ns,
            t.window_ns / 1000,
            t.percentile,
            e.latency_depth
        ));
    }
    if let Some(ss) = &e.steadystate {
        let (bw, iops) = ss.window();
        let n = bw.len().max(1) as f64;
        let bw_mean = bw.iter().sum::<u64>() as f64 / n;
        out.push_str(&format!(
            "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={:.3}{}\n",
            if ss.attained { "yes" } else { "no" },
            bin_rate(bw_mean),
            si_rate(bw_mean),
            si_count(iops.iter().sum::<u64>() as f64 / n),
            match ss.spec.metric {
                crate::run::control::SsMetric::Iops => "iops",
                crate::run::control::SsMetric::Bw => "bw",
                crate::run::control::SsMetric::Lat => "lat",
            },
            if ss.spec.slope { " slope" } else { " mean dev" },
            ss.criterion,
            if ss.spec.percent { "%" } else { "" }
        ));
    }
    let submits: u64 = e.depth_levels.iter().sum();
    if submits > 0 {
        let cells: Vec<String> = ["1", "2", "4", "8", "16", "32", ">=64"]
            .iter()
            .enumerate()
            .map(|(i, k)| format!("{k}={:.1}%", e.depth_levels[i] as f64 * 100.0 / submits as f64))
            .collect();
        out.push_str(&format!("  IO depths    : {}\n", cells.join(", ")));
        out.push_str(&format!(
            "     issued rwts: total={},{},{},{} short=0,0,0,0 dropped=0,0,0,0\n",
            e.dirs[0].ios, e.dirs[1].ios, e.dirs[2].ios, e.sync.ios
        ));
    }
    if let Some(c) = e.errors {
        let text = crate::run::io_errors::strerror(c.first);
        out.push_str(&format!("     errors    : total={}, first_error={}/<{text}>\n", c.total, c.first));
    }
    out.push('\n');
    out
}

/// The unit fio picks for latencies by their maximum, and its divisor.
fn lat_unit(d: &DirStats) -> (&'static str, f64) {
    if d.lat_max_ns >= 10_000_000 {
        ("msec", 1e6)
    } else if d.lat_max_ns >= 10_000 {
        ("usec", 1e3)
    } else {
        ("nsec", 1.0)
    }
}

/// fio's latency lines of the normal output (`display_lat`): each of
/// `names` with min, max, avg and stdev.
fn latency_lines(out: &mut String, d: &DirStats, names: &[&str]) {
    let (unit, div) = lat_unit(d);
    for name in names {
        out.push_str(&format!(
            "    {name} ({unit}): min={:.0}, max={:.0}, avg={:.2}, stdev={:.2}\n",
            d.lat_min_ns as f64 / div,
            d.lat_max_ns as f64 / div,
            d.mean_ns() / div,
            d.hist.stdev() / div
        ));
    }
}

/// fio's percentile table of the normal output (`show_clat_percentiles`),
/// titled `pct`.
fn percentile_lines(out: &mut String, d: &DirStats, pct: &str) {
    let (unit, div) = lat_unit(d);
    out.push_str(&format!("    {pct} percentiles ({unit}):\n"));
    for row in PERCENTILES.chunks(4) {
        let cells: Vec<String> =
            row.iter().map(|&p| format!("{:5.2}th=[{:>5.0}]", p, d.percentile_ns(p) as f64 / div)).collect();
        out.push_str(&format!("     | {},\n", cells.join(", ")));
    }
}

/// The kinds in fio's order, for callers that index results.
pub const DIRECTIONS: [IoKind; 3] = [IoKind::Read, IoKind::Write, IoKind::Trim];
