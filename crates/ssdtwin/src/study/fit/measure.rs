//! Measurements: fio's JSON (`--output-format=json` or `json+`, from real
//! fio or from `ssdtwin run`) and the bandwidth logs beside it, read into
//! [`JobRecord`]s, and the numbers the fit compares taken from each job
//! ([`metrics`]) — the same code reads the real drive's results and the
//! candidate twin's, so the two are measured alike.
//!
//! Read from the JSON: per job `jobname`, `error`, `job options` (with the
//! file's `global options`), and per direction `total_ios`, `io_bytes`,
//! `iops`, `bw_bytes` and `clat_ns.mean`. From a `write_bw_log` (named
//! `PREFIX_bw.N.log` or, with `per_job_logs=0`, `PREFIX_bw.log`, in the
//! JSON's directory): `time_ms, KiB/s, direction, bs, ...` lines, averaged
//! windows with `log_avg_msec` (a window in which nothing completed has no
//! line: it counts as zero), else one line per command (then binned by
//! second). Left out: latency percentiles (the fit matches means and
//! rates), the per-second series only ssdtwin writes (a real drive has
//! none).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::FitError;

/// One direction of a job's results.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DirRecord {
    /// Commands completed.
    pub ios: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Commands per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Mean completion latency, ns.
    pub clat_mean_ns: f64,
    /// Median completion latency, ns (0: not recorded).
    pub clat_p50_ns: f64,
    /// 99th percentile of the completion latency, ns (0: not recorded).
    pub clat_p99_ns: f64,
}

/// One job of a fio result.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    /// `jobname`.
    pub name: String,
    /// Where it was read (`FILE: job NAME`), for messages.
    pub origin: String,
    /// The file's `global options`, as written.
    pub global: Vec<(String, String)>,
    /// The job's own `job options`, as written.
    pub options: Vec<(String, String)>,
    /// Read and write results.
    pub dirs: [DirRecord; 2],
    /// The bandwidth log: (end of the window in s, bytes per s), if the job
    /// wrote one and it was found.
    pub bw_log: Option<Vec<(f64, f64)>>,
    /// fio's `error` for the job (an errno; 0: it ran). A job that failed
    /// measured nothing; the fit refuses it where it was to measure and
    /// warns where it only prepared the drive.
    pub error: i64,
    /// fio's thread number of the job (of its first clone): its place in
    /// the file, 1-based, clones counted, which seeds its random offsets.
    /// Read as the entry's place in the JSON's `jobs` (an entry that
    /// reports `numjobs` clones together counts them all); 0: not known.
    pub thread: u64,
}

impl JobRecord {
    /// The option's value: the job's own, else the global one.
    pub fn option(&self, key: &str) -> Option<&str> {
        fn find<'a>(v: &'a [(String, String)], key: &str) -> Option<&'a str> {
            v.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
        }
        find(&self.options, key).or_else(|| find(&self.global, key))
    }

    /// The access pattern (`rw`, fio's default `read`).
    pub fn rw(&self) -> &str {
        self.option("rw").or_else(|| self.option("readwrite")).unwrap_or("read")
    }

    /// The result file it was read from (its origin before the job).
    pub fn file(&self) -> &str {
        self.origin.split(": job `").next().unwrap_or(&self.origin)
    }

    /// Whether the pattern is random.
    pub fn random(&self) -> bool {
        self.rw().starts_with("rand")
    }

    /// Outstanding commands: `iodepth × numjobs`.
    pub fn depth(&self) -> u64 {
        let n = |k: &str| self.option(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(1);
        n("iodepth") * n("numjobs")
    }
}

/// What a metric measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Quantity {
    /// Reads per second.
    ReadIops,
    /// Mean read latency, µs (QD1 jobs).
    ReadLatUs,
    /// Read MB/s (sequential jobs).
    ReadMbps,
    /// Writes per second (random jobs).
    WriteIops,
    /// Write MB/s (sequential jobs).
    WriteMbps,
    /// Write MB/s before the bandwidth log's knee (into the SLC cache).
    CacheMbps,
    /// GB written before the knee (all the job wrote when there is none).
    CacheGb,
    /// Write MB/s after the knee.
    PostCacheMbps,
    /// Writes per second late in a random write's log: the median, over
    /// its second half, of the rate smoothed over spans of a fiftieth of
    /// the log ([`gc_knee`]).
    LateWriteIops,
    /// GB a random write's log shows written before garbage collection
    /// started ([`gc_knee`]; none when it did not start).
    FreeGb,
    /// Median read latency, µs.
    ReadP50Us,
    /// 99th percentile of the read latency, µs.
    ReadP99Us,
    /// Mean write latency, µs.
    WriteLatUs,
    /// Median write latency, µs.
    WriteP50Us,
    /// 99th percentile of the write latency, µs.
    WriteP99Us,
}

impl Quantity {
    /// Name and unit, as printed.
    pub fn label(self) -> (&'static str, &'static str) {
        match self {
            Quantity::ReadIops => ("read IOPS", "IOPS"),
            Quantity::ReadLatUs => ("read latency", "µs"),
            Quantity::ReadMbps => ("read", "MB/s"),
            Quantity::WriteIops => ("write IOPS", "IOPS"),
            Quantity::WriteMbps => ("write", "MB/s"),
            Quantity::CacheMbps => ("write before the knee", "MB/s"),
            Quantity::CacheGb => ("written before the knee", "GB"),
            Quantity::PostCacheMbps => ("write after the knee", "MB/s"),
            Quantity::LateWriteIops => ("write IOPS, late median", "IOPS"),
            Quantity::FreeGb => ("written before GC started", "GB"),
            Quantity::ReadP50Us => ("read latency p50", "µs"),
            Quantity::ReadP99Us => ("read latency p99", "µs"),
            Quantity::WriteLatUs => ("write latency", "µs"),
            Quantity::WriteP50Us => ("write latency p50", "µs"),
            Quantity::WriteP99Us => ("write latency p99", "µs"),
        }
    }
}

/// A bandwidth log's shape: the rate into the cache, where it dropped and
/// the rate after.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knee {
    /// Rate before the knee, bytes/s.
    pub cache_rate: f64,
    /// Bytes written before the knee (all the log's bytes when the rate
    /// never dropped).
    pub bytes: f64,
    /// Rate after the knee, bytes/s (`None`: no knee).
    pub post_rate: Option<f64>,
}

/// The knee of a sequential write's bandwidth log: the rate smoothed over
/// a sliding span of `max(3, n / 1000)` windows (a drive that folds or
/// collects stalls for whole short windows); the cache's rate `hi` is the
/// highest smoothed rate in the first half, the post-cache rate `lo` the
/// mean rate over the last third. When `lo` is above 70% of `hi` there is
/// no knee (the log is one rate); else the knee is where the smoothed rate
/// first falls below their mean after its peak (the middle of that span),
/// the cache the bytes written before it, the rates the means before and
/// after it. `None` with fewer than three windows.
pub fn knee(log: &[(f64, f64)]) -> Option<Knee> {
    let n = log.len();
    if n < 3 {
        return None;
    }
    let c = Cumulative::of(log)?;
    let rate = |i: usize, j: usize| c.rate(i, j);
    let m = (n / 1000).max(3).min(n);
    let (smooth, peak, hi) = c.smoothed(m);
    let lo = rate(n - n / 3, n);
    if lo > 0.7 * hi {
        return Some(Knee { cache_rate: rate(0, n), bytes: c.bytes[n], post_rate: None });
    }
    let thr = (hi + lo) / 2.0;
    let Some(k) = (peak..smooth.len()).find(|&i| smooth[i] < thr) else {
        return Some(Knee { cache_rate: rate(0, n), bytes: c.bytes[n], post_rate: None });
    };
    let d = (k + m / 2).clamp(1, n - 1);
    Some(Knee { cache_rate: rate(0, d), bytes: c.bytes[d], post_rate: Some(rate(d, n)) })
}

/// A bandwidth log's cumulative time and bytes at each window's end, from
/// (0, 0): the rate over any run of windows, smoothed rates, for both
/// knees.
struct Cumulative {
    time: Vec<f64>,
    bytes: Vec<f64>,
}

impl Cumulative {
    /// `None` when the log covers no time or no bytes.
    fn of(log: &[(f64, f64)]) -> Option<Cumulative> {
        let n = log.len();
        let mut time = vec![0.0; n + 1];
        let mut bytes = vec![0.0; n + 1];
        for (i, &(end, r)) in log.iter().enumerate() {
            let dt = (end - time[i]).max(0.0);
            time[i + 1] = end.max(time[i]);
            bytes[i + 1] = bytes[i] + r * dt;
        }
        (time[n] > 0.0 && bytes[n] > 0.0).then_some(Cumulative { time, bytes })
    }

    /// The mean rate from window `i`'s start to window `j`'s start.
    fn rate(&self, i: usize, j: usize) -> f64 {
        let (t, b) = (&self.time, &self.bytes);
        if t[j] > t[i] {
            (b[j] - b[i]) / (t[j] - t[i])
        } else {
            0.0
        }
    }

    /// The rate smoothed over every span of `m` windows, with the
    /// highest of the first half's spans (its index and rate).
    fn smoothed(&self, m: usize) -> (Vec<f64>, usize, f64) {
        let n = self.time.len() - 1;
        let smooth: Vec<f64> = (0..=n - m).map(|i| self.rate(i, i + m)).collect();
        let half = smooth.len().div_ceil(2);
        let (peak, hi) =
            smooth[..half].iter().enumerate().fold((0, 0.0), |a, (i, &v)| if v > a.1 { (i, v) } else { a });
        (smooth, peak, hi)
    }
}

/// A random write's log: its rate late in the job, and what it wrote
/// before garbage collection started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GcKnee {
    /// The late rate, bytes/s: the median over the log's second half of
    /// the rate smoothed over spans of a fiftieth of the log.
    pub late_rate: f64,
    /// Bytes written before the rate fell to GC's (`None`: it did not
    /// fall, or not far: no knee).
    pub bytes: Option<f64>,
}

/// The knee of a random write over a full drive: the free blocks absorb
/// writes at the rate of the program path until they are used up, then
/// GC's rate, far lower on a drive with little spare, sets the pace.
/// The bytes written before that drop are the free room, a sharp and
/// monotone measure of the spare; the rate after it is not one number
/// but GC's floor broken by bursts (a drive that folds an SLC pool takes
/// writes at the cache's rate whenever a fold frees pool blocks: on the
/// fit test's 660p-like twin bursts of 70 MB every ≈ 20 s of a 54 s job,
/// so the last quarter's mean rate was 200 or 1,500 IOPS by whether a
/// burst fell in it, not by the spare).
///
/// The rate is smoothed over spans of `max(3, n / 50)` windows (short
/// dips of the program path's rate do not count); `hi` is the highest
/// smoothed rate in the first half, the late rate `lo` the median of the
/// smoothed rate over the second half (GC's floor: bursts are a minority
/// of its spans). GC started within the job when `lo` is below an eighth
/// of `hi` (the drop from the program path to GC's floor on a drive with
/// little spare is 30-fold and more; the end of an SLC pool alone, GC not
/// started, 4–6-fold on QLC); the knee is then where the smoothed rate
/// first falls below `4 lo` after its peak (the middle of that span).
/// `None` with fewer than four windows.
pub fn gc_knee(log: &[(f64, f64)]) -> Option<GcKnee> {
    let n = log.len();
    if n < 4 {
        return None;
    }
    let c = Cumulative::of(log)?;
    let m = (n / 50).max(3).min(n);
    let (smooth, peak, hi) = c.smoothed(m);
    let mut late: Vec<f64> = smooth[smooth.len() / 2..].to_vec();
    late.sort_by(f64::total_cmp);
    let lo = late[late.len() / 2];
    let knee = (lo < hi / 8.0)
        .then(|| (peak..smooth.len()).find(|&i| smooth[i] < 4.0 * lo))
        .flatten()
        .map(|k| c.bytes[(k + m / 2).clamp(1, n - 1)]);
    Some(GcKnee { late_rate: lo, bytes: knee })
}

/// The numbers the fit compares, from one job: reads per second (and the
/// mean latency at QD1) of random reads, MB/s of sequential reads and
/// writes, writes per second (and the mean latency at QD1) of random writes; from a bandwidth log, the
/// knee of a sequential write ([`knee`]), or of a random one
/// ([`gc_knee`]: what it wrote before GC started and its late rate).
pub fn metrics(job: &JobRecord) -> Vec<(Quantity, f64)> {
    let mut out = Vec::new();
    let [r, w] = &job.dirs;
    if r.ios > 0 {
        if job.random() {
            out.push((Quantity::ReadIops, r.iops));
            if job.depth() == 1 {
                out.push((Quantity::ReadLatUs, r.clat_mean_ns / 1e3));
            }
        } else {
            out.push((Quantity::ReadMbps, r.bw_bytes / 1e6));
        }
    }
    if w.ios > 0 {
        if job.random() {
            out.push((Quantity::WriteIops, w.iops));
            if job.depth() == 1 {
                out.push((Quantity::WriteLatUs, w.clat_mean_ns / 1e3));
            }
        } else {
            out.push((Quantity::WriteMbps, w.bw_bytes / 1e6));
        }
    }
    if let Some(log) = &job.bw_log {
        if w.ios > 0 && !job.random() {
            if let Some(k) = knee(log) {
                out.push((Quantity::CacheMbps, k.cache_rate / 1e6));
                out.push((Quantity::CacheGb, k.bytes / 1e9));
                if let Some(p) = k.post_rate {
                    out.push((Quantity::PostCacheMbps, p / 1e6));
                }
            }
        } else if w.ios > 0 {
            if let Some(k) = gc_knee(log) {
                let bs = w.bytes as f64 / w.ios as f64;
                out.push((Quantity::LateWriteIops, k.late_rate / bs));
                if let Some(bytes) = k.bytes {
                    out.push((Quantity::FreeGb, bytes / 1e9));
                }
            }
        }
    }
    out
}

/// The numbers of a job outside the battery: per direction that moved
/// data, its rate (IOPS of a random pattern, MB/s of a sequential one),
/// and the mean, median and 99th percentile of its completion latency
/// (those recorded).
pub fn given_metrics(job: &JobRecord) -> Vec<(Quantity, f64)> {
    let mut out = Vec::new();
    let kinds = [
        (Quantity::ReadIops, Quantity::ReadMbps, Quantity::ReadLatUs, Quantity::ReadP50Us, Quantity::ReadP99Us),
        (Quantity::WriteIops, Quantity::WriteMbps, Quantity::WriteLatUs, Quantity::WriteP50Us, Quantity::WriteP99Us),
    ];
    for (d, (iops, mbps, mean, p50, p99)) in job.dirs.iter().zip(kinds) {
        if d.ios == 0 {
            continue;
        }
        if job.random() {
            out.push((iops, d.iops));
        } else {
            out.push((mbps, d.bw_bytes / 1e6));
        }
        for (q, ns) in [(mean, d.clat_mean_ns), (p50, d.clat_p50_ns), (p99, d.clat_p99_ns)] {
            if ns > 0.0 {
                out.push((q, ns / 1e3));
            }
        }
    }
    out
}

/// fio's clones of a job (`numjobs` = N without `group_reporting`: N
/// entries of the same name, one after another) merged into one entry,
/// as `group_reporting` reports them: commands, bytes and rates summed,
/// the mean latency weighted by commands, the percentiles the clones'
/// command-weighted mean (fio merges the histograms; the mean of the
/// clones' percentiles is within the spread of clones that ran alike).
pub fn merge_clones(jobs: Vec<JobRecord>) -> Vec<JobRecord> {
    let mut out: Vec<JobRecord> = Vec::with_capacity(jobs.len());
    let mut clones_left = 0u64;
    for j in jobs {
        let numjobs = j.option("numjobs").and_then(|v| v.parse::<u64>().ok()).unwrap_or(1);
        let grouped = j.option("group_reporting").is_some_and(|v| v != "0");
        if clones_left > 0 && out.last().is_some_and(|l| l.name == j.name) {
            clones_left -= 1;
            let last = out.last_mut().expect("a job before");
            for (a, b) in last.dirs.iter_mut().zip(&j.dirs) {
                let (na, nb) = (a.ios as f64, b.ios as f64);
                let w = |x: f64, y: f64| if na + nb > 0.0 { (x * na + y * nb) / (na + nb) } else { 0.0 };
                a.clat_mean_ns = w(a.clat_mean_ns, b.clat_mean_ns);
                a.clat_p50_ns = w(a.clat_p50_ns, b.clat_p50_ns);
                a.clat_p99_ns = w(a.clat_p99_ns, b.clat_p99_ns);
                a.ios += b.ios;
                a.bytes += b.bytes;
                a.iops += b.iops;
                a.bw_bytes += b.bw_bytes;
            }
            last.error = if last.error != 0 { last.error } else { j.error };
            continue;
        }
        clones_left = if numjobs > 1 && !grouped { numjobs - 1 } else { 0 };
        out.push(j);
    }
    out
}

/// Read one result file: fio's JSON, after anything fio printed before it
/// (warnings), and the bandwidth logs beside it.
pub fn read_file(path: &Path) -> Result<Vec<JobRecord>, FitError> {
    let origin = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| FitError::Input { origin: origin.clone(), reason: e.to_string() })?;
    let start = text.find('{').ok_or_else(|| FitError::Input {
        origin: origin.clone(),
        reason: "no JSON object in the file: give fio's --output-format=json (or json+) output".into(),
    })?;
    let doc: Value = serde_json::from_str(&text[start..]).map_err(|e| {
        let line = text[..start].lines().count() + e.line();
        let what = if e.is_eof() { "the JSON ends early (truncated?)" } else { "the JSON is malformed" };
        FitError::Input { origin: format!("{origin}:{line}:{}", e.column()), reason: format!("{what}: {e}") }
    })?;
    let dir = path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
    from_json(&doc, &origin, dir)
}

/// The jobs of fio's JSON document; logs are looked for in `dir`.
pub fn from_json(doc: &Value, origin: &str, dir: Option<&Path>) -> Result<Vec<JobRecord>, FitError> {
    let bad = |what: String| FitError::Input { origin: origin.to_string(), reason: what };
    let jobs = doc
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `jobs` array: not fio's JSON output".into()))?;
    let global = options_of(doc.get("global options"));
    let mut out = Vec::new();
    let mut threads = 0u64;
    for (i, j) in jobs.iter().enumerate() {
        let name =
            j.get("jobname").and_then(Value::as_str).ok_or_else(|| bad(format!("jobs[{i}] has no `jobname`")))?;
        let at = format!("{origin}: job `{name}`");
        let error = j.get("error").and_then(Value::as_i64).unwrap_or(0);
        let dir_of = |key: &str| -> Result<DirRecord, FitError> {
            let d = j
                .get(key)
                .ok_or_else(|| FitError::Input { origin: at.clone(), reason: format!("no `{key}` section") })?;
            let num = |k: &str| d.get(k).and_then(Value::as_f64);
            let pct = |p: &str| {
                d.get("clat_ns").and_then(|c| c.get("percentile")).and_then(|c| c.get(p)).and_then(Value::as_f64)
            };
            let field = |k: &str| {
                num(k).ok_or_else(|| FitError::Input { origin: at.clone(), reason: format!("`{key}.{k}` is missing") })
            };
            Ok(DirRecord {
                ios: field("total_ios")? as u64,
                bytes: field("io_bytes")? as u64,
                iops: field("iops")?,
                bw_bytes: num("bw_bytes").or_else(|| num("bw").map(|kib| kib * 1024.0)).unwrap_or(0.0),
                clat_mean_ns: d.get("clat_ns").and_then(|c| c.get("mean")).and_then(Value::as_f64).unwrap_or(0.0),
                clat_p50_ns: pct("50.000000").unwrap_or(0.0),
                clat_p99_ns: pct("99.000000").unwrap_or(0.0),
            })
        };
        let mut rec = JobRecord {
            name: name.to_string(),
            origin: at.clone(),
            global: global.clone(),
            options: options_of(j.get("job options")).into_iter().filter(|(k, _)| k != "name").collect(),
            dirs: [dir_of("read")?, dir_of("write")?],
            bw_log: None,
            error,
            thread: threads + 1,
        };
        let numjobs = rec.option("numjobs").and_then(|v| v.parse::<u64>().ok()).unwrap_or(1).max(1);
        threads += if rec.option("group_reporting").is_some_and(|v| v != "0") { numjobs } else { 1 };
        if let (0, Some(prefix), Some(dir)) = (error, rec.option("write_bw_log").map(str::to_string), dir) {
            rec.bw_log = find_log(dir, &prefix, &at)?.map(|p| read_log(&p, &rec)).transpose()?;
        }
        out.push(rec);
    }
    Ok(merge_clones(out))
}

fn options_of(v: Option<&Value>) -> Vec<(String, String)> {
    let Some(Value::Object(m)) = v else { return Vec::new() };
    m.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect()
}

/// The bandwidth log of `prefix` in `dir` (fio names it after the job's
/// number: `PREFIX_bw.N.log`); an error when several match.
fn find_log(dir: &Path, prefix: &str, at: &str) -> Result<Option<PathBuf>, FitError> {
    let base = Path::new(prefix).file_name().map_or(prefix.to_string(), |s| s.to_string_lossy().into_owned());
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(None) };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            n.strip_prefix(&format!("{base}_bw.")).is_some_and(|rest| {
                rest == "log" || rest.strip_suffix(".log").is_some_and(|num| num.chars().all(|c| c.is_ascii_digit()))
            })
        })
        .collect();
    found.sort();
    match found.len() {
        0 | 1 => Ok(found.pop()),
        _ => Err(FitError::Input {
            origin: at.to_string(),
            reason: format!(
                "several bandwidth logs match `{base}_bw.*.log` in {}: {}; keep the one of this run",
                dir.display(),
                found.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
        }),
    }
}

/// A bandwidth log's write windows as (end s, bytes/s).
fn read_log(path: &Path, job: &JobRecord) -> Result<Vec<(f64, f64)>, FitError> {
    let origin = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| FitError::Input { origin: origin.clone(), reason: e.to_string() })?;
    let avg_ms: u64 = job.option("log_avg_msec").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut windows: Vec<(f64, f64)> = Vec::new();
    let mut per_second: Vec<f64> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |k: usize, what: &str| -> Result<f64, FitError> {
            f.get(k).and_then(|v| v.parse::<f64>().ok()).ok_or_else(|| FitError::Input {
                origin: format!("{origin}:{}", i + 1),
                reason: format!("field {} ({what}) is missing or not a number: `{line}`", k + 1),
            })
        };
        let (t_ms, value, ddir) = (num(0, "time ms")?, num(1, "value")?, num(2, "direction")?);
        if ddir != 1.0 {
            continue;
        }
        if avg_ms > 0 {
            // A window without a completion has no line (fio's and the
            // twin's logs alike): it wrote nothing.
            let w = avg_ms as f64 / 1e3;
            let mut last = windows.last().map_or(0.0, |&(t, _)| t);
            while t_ms / 1e3 - last > 1.5 * w {
                last += w;
                windows.push((last, 0.0));
            }
            windows.push((t_ms / 1e3, value * 1024.0));
        } else {
            let s = (t_ms / 1e3) as usize;
            if per_second.len() <= s {
                per_second.resize(s + 1, 0.0);
            }
            per_second[s] += num(3, "block size")?;
        }
    }
    if avg_ms == 0 {
        windows = per_second.iter().enumerate().map(|(s, &b)| ((s + 1) as f64, b)).collect();
    }
    Ok(windows)
}
