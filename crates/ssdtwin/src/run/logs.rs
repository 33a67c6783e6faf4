//! fio's log files (`write_bw_log`, `write_iops_log`, `write_lat_log`,
//! `write_hist_log`), written as fio 3.33 writes them, in virtual time, so
//! that fio's own tools (`fiologparser.py`, `fio2gnuplot`,
//! `fiologparser_hist.py`) read them.
//!
//! Names: `PREFIX_bw.N.log`, `PREFIX_iops.N.log`, `PREFIX_lat.N.log`,
//! `PREFIX_clat.N.log`, `PREFIX_slat.N.log`, `PREFIX_clat_hist.N.log`,
//! where PREFIX is the option's value (the job's name when empty) and N
//! the job's number in the file (1 for the first; `numjobs` clones count
//! one each); with `per_job_logs=0` the `.N` is left out and every job
//! using the name appends to one file (in job order). Files are written
//! to a temporary name beside the final one and renamed at the end.
//!
//! Lines: `time_ms, value, direction, bs, priority` (with `log_offset=1`,
//! the offset before the priority); direction 0 read, 1 write, 2 trim.
//! Time is milliseconds of virtual time since the job's statistics began
//! (the end of `ramp_time`, as fio's epoch).
//!
//! - Without `log_avg_msec`, one line per command: the latency in ns
//!   (`lat`, `clat`; `slat` is 0: the twin submits instantly), 1 for
//!   `iops`, and for `bw` the command's bytes per ms of its latency
//!   (fio's per-command bandwidth).
//! - With `log_avg_msec=N`: latency logs write each direction's mean
//!   (rounded) when a completion closes an N ms window, at that
//!   completion's time, with bs 0; `bw` (KiB/s) and `iops` logs write the
//!   rate of each whole window at its end, with the job's block size when
//!   it is fixed and 0 otherwise. A last partial window of `bw`/`iops` is
//!   not written.
//! - `write_hist_log` with `log_hist_msec=N`: at a completion N ms or more
//!   after the previous line of its direction, the completion latencies of
//!   the direction since then in fio's 1856 histogram bins (summed in
//!   groups of 2^`log_hist_coarseness`): `time_ms, direction, bs, bins...`.
//!
//! The priority column is always 0 (no I/O priorities in the twin).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// fio's histogram (3.33): 29 groups of 64 bins.
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Bins of fio's latency histogram (`FIO_IO_U_PLAT_NR`).
pub const PLAT_NR: usize = 29 * PLAT_VAL as usize;

/// fio's histogram bin of a latency in ns (`plat_val_to_idx`): exact below
/// 128 ns, then 64 bins per power of two.
pub fn plat_bin(ns: u64) -> usize {
    let msb = if ns == 0 { 0 } else { 63 - ns.leading_zeros() };
    if msb <= PLAT_BITS {
        return ns as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as u64) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (ns >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// Which logs a job writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct LogSpec {
    /// `write_bw_log` prefix.
    pub bw: Option<String>,
    /// `write_iops_log` prefix.
    pub iops: Option<String>,
    /// `write_lat_log` prefix (lat, clat and slat files).
    pub lat: Option<String>,
    /// `write_hist_log` prefix.
    pub hist: Option<String>,
    /// `log_avg_msec` (0: one line per command).
    pub avg_msec: u64,
    /// `log_hist_msec` (0: no histogram lines).
    pub hist_msec: u64,
    /// `log_hist_coarseness` (0–6).
    pub hist_coarseness: u32,
    /// `per_job_logs` (true: one file per job).
    pub per_job: bool,
    /// `log_offset`: add each command's offset.
    pub offset: bool,
}

impl LogSpec {
    /// Whether any log is asked for.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bw,
    Iops,
    Lat,
    Clat,
    Slat,
    Hist,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Bw => "bw",
            Kind::Iops => "iops",
            Kind::Lat => "lat",
            Kind::Clat => "clat",
            Kind::Slat => "slat",
            Kind::Hist => "clat_hist",
        }
    }
}

/// A mean over a window of one direction (latency logs with
/// `log_avg_msec`).
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    sum: u128,
    n: u64,
    last_ms: u64,
}

struct LogFile {
    kind: Kind,
    path: PathBuf,
    tmp: PathBuf,
    out: BufWriter<File>,
    windows: [Window; 3],
}

/// Completion-latency histogram of one direction for the hist log.
struct HistDir {
    now: Vec<u64>,
    before: Vec<u64>,
    last_ms: u64,
}

/// A job's open log files.
pub(crate) struct JobLogs {
    spec: LogSpec,
    files: Vec<LogFile>,
    hist: Option<[HistDir; 3]>,
    /// Fixed block size per direction (0 when it varies), for rate logs.
    fixed_bs: [u64; 3],
    /// Bytes and commands of the current rate window, per direction.
    rate_window: [(u64, u64); 3],
    rate_window_end_ms: u64,
    error: Option<crate::Error>,
    /// fio's `log_prio`.
    log_prio: bool,
}

/// A finished log: its final name and where it was written.
pub(crate) struct FinishedLog {
    pub(crate) path: PathBuf,
    pub(crate) tmp: PathBuf,
}

impl JobLogs {
    /// Open the logs of job number `job_no` (1-based) named `name`.
    pub(crate) fn open(spec: &LogSpec, job_no: usize, name: &str, fixed_bs: [u64; 3]) -> Result<JobLogs, crate::Error> {
        let mut files = Vec::new();
        let mut wanted: Vec<(Kind, &Option<String>)> = vec![(Kind::Bw, &spec.bw), (Kind::Iops, &spec.iops)];
        wanted.extend([(Kind::Lat, &spec.lat), (Kind::Clat, &spec.lat), (Kind::Slat, &spec.lat)]);
        wanted.push((Kind::Hist, &spec.hist));
        for (kind, prefix) in wanted {
            let Some(prefix) = prefix else { continue };
            let prefix = if prefix.is_empty() { name } else { prefix.as_str() };
            let path = if spec.per_job {
                PathBuf::from(format!("{prefix}_{}.{job_no}.log", kind.suffix()))
            } else {
                PathBuf::from(format!("{prefix}_{}.log", kind.suffix()))
            };
            let tmp = PathBuf::from(format!("{}.ssdtwin-{}-{job_no}.tmp", path.display(), std::process::id()));
            let file = crate::fsio::create_temp(&tmp).map_err(|e| log_error(&tmp, e))?;
            files.push(LogFile { kind, path, tmp, out: BufWriter::new(file), windows: Default::default() });
        }
        let hist = spec
            .hist
            .as_ref()
            .map(|_| std::array::from_fn(|_| HistDir { now: vec![0; PLAT_NR], before: vec![0; PLAT_NR], last_ms: 0 }));
        Ok(JobLogs {
            spec: spec.clone(),
            files,
            hist,
            fixed_bs,
            rate_window: [(0, 0); 3],
            rate_window_end_ms: spec.avg_msec,
            error: None,
            log_prio: false,
        })
    }

    /// fio's `log_prio`: the last column is each command's ioprio value
    /// (`0x%04x`) rather than whether its class is real time.
    pub(crate) fn set_log_prio(&mut self, on: bool) {
        self.log_prio = on;
    }

    /// A completion `rel_ns` after the job's epoch: direction `dir`,
    /// `bytes` at `offset`, latency `lat_ns`, Linux ioprio `ioprio`.
    pub(crate) fn record(&mut self, rel_ns: u64, dir: usize, bytes: u64, offset: u64, lat_ns: u64, ioprio: u16) {
        if self.error.is_some() {
            return;
        }
        let ms = rel_ns / 1_000_000;
        let avg = self.spec.avg_msec;
        if avg > 0 {
            while ms >= self.rate_window_end_ms {
                self.close_rate_window();
            }
            self.rate_window[dir].0 += bytes;
            self.rate_window[dir].1 += 1;
        }
        let mut result = Ok(());
        for f in &mut self.files {
            let value = match f.kind {
                Kind::Bw if avg == 0 => bytes * 1_000_000 / lat_ns.max(1),
                Kind::Iops if avg == 0 => 1,
                Kind::Bw | Kind::Iops | Kind::Hist => continue,
                Kind::Lat | Kind::Clat => lat_ns,
                Kind::Slat => 0,
            };
            if avg == 0 {
                let prio = Prio { log_prio: self.log_prio, ioprio };
                result = write_line(&mut f.out, ms, value, dir, bytes, self.spec.offset.then_some(offset), prio);
            } else {
                // fio's inline average: add, then write the mean when the
                // window is over.
                let w = &mut f.windows[dir];
                w.sum += value as u128;
                w.n += 1;
                if ms >= w.last_ms + avg {
                    let mean = (w.sum as f64 / w.n as f64 + 0.5) as u64;
                    let prio = Prio { log_prio: self.log_prio, ioprio: 0 };
                    result = write_line(&mut f.out, ms, mean, dir, 0, self.spec.offset.then_some(0), prio);
                    *w = Window { sum: 0, n: 0, last_ms: ms - ms % avg };
                }
            }
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = self.record_hist(ms, dir, bytes, lat_ns);
        }
        if let Err(e) = result {
            self.fail(e);
        }
    }

    fn record_hist(&mut self, ms: u64, dir: usize, bytes: u64, lat_ns: u64) -> std::io::Result<()> {
        let Some(hist) = &mut self.hist else { return Ok(()) };
        let h = &mut hist[dir];
        h.now[plat_bin(lat_ns)] += 1;
        if self.spec.hist_msec == 0 {
            return Ok(());
        }
        if h.last_ms == 0 {
            h.last_ms = ms;
        }
        let window = ms - h.last_ms;
        if window < self.spec.hist_msec {
            return Ok(());
        }
        let f = self.files.iter_mut().find(|f| f.kind == Kind::Hist).expect("hist log open");
        write!(f.out, "{ms}, {dir}, {bytes}")?;
        let stride = 1usize << self.spec.hist_coarseness;
        for group in 0..PLAT_NR / stride {
            let range = group * stride..(group + 1) * stride;
            let n: u64 = range.map(|i| h.now[i] - h.before[i]).sum();
            write!(f.out, ", {n}")?;
        }
        writeln!(f.out)?;
        h.before.copy_from_slice(&h.now);
        h.last_ms = ms - (window - self.spec.hist_msec);
        Ok(())
    }

    fn close_rate_window(&mut self) {
        let end = self.rate_window_end_ms;
        let avg = self.spec.avg_msec;
        for f in &mut self.files {
            if !matches!(f.kind, Kind::Bw | Kind::Iops) {
                continue;
            }
            for dir in 0..3 {
                let (bytes, ios) = self.rate_window[dir];
                if ios == 0 {
                    continue;
                }
                let value = if f.kind == Kind::Bw { bytes * 1000 / avg / 1024 } else { ios * 1000 / avg };
                let prio = Prio { log_prio: self.log_prio, ioprio: 0 };
                let r =
                    write_line(&mut f.out, end, value, dir, self.fixed_bs[dir], self.spec.offset.then_some(0), prio);
                if let Err(e) = r {
                    self.error.get_or_insert(log_error(&f.tmp, e));
                    return;
                }
            }
        }
        self.rate_window = [(0, 0); 3];
        self.rate_window_end_ms += avg;
    }

    fn fail(&mut self, e: std::io::Error) {
        let tmp = self.files.first().map(|f| f.tmp.clone()).unwrap_or_default();
        self.error.get_or_insert(log_error(&tmp, e));
    }

    /// The job ended `rel_ns` after its epoch: write what the windows
    /// still hold (fio's final averages of the latency logs) and close the
    /// files; the caller renames them.
    pub(crate) fn finish(mut self, rel_ns: u64) -> Result<Vec<FinishedLog>, crate::Error> {
        let ms = rel_ns / 1_000_000;
        if self.spec.avg_msec > 0 {
            while ms >= self.rate_window_end_ms && self.error.is_none() {
                self.close_rate_window();
            }
            for f in &mut self.files {
                if matches!(f.kind, Kind::Bw | Kind::Iops | Kind::Hist) {
                    continue;
                }
                for dir in 0..3 {
                    let w = f.windows[dir];
                    if w.n > 0 {
                        let mean = (w.sum as f64 / w.n as f64 + 0.5) as u64;
                        let prio = Prio { log_prio: self.log_prio, ioprio: 0 };
                        if let Err(e) = write_line(&mut f.out, ms, mean, dir, 0, self.spec.offset.then_some(0), prio) {
                            self.error.get_or_insert(log_error(&f.tmp, e));
                        }
                    }
                }
            }
        }
        let mut done = Vec::new();
        for mut f in self.files {
            if let Err(e) = f.out.flush() {
                self.error.get_or_insert(log_error(&f.tmp, e));
            }
            done.push(FinishedLog { path: f.path, tmp: f.tmp });
        }
        match self.error {
            Some(e) => {
                for f in &done {
                    crate::fsio::remove_temp(&f.tmp);
                }
                Err(e)
            }
            None => Ok(done),
        }
    }
}

/// A log line's last column (fio 3.33 iolog.c `flush_samples`): the
/// ioprio value as `0x%04x` under `log_prio`, else 1 for a real-time
/// class and 0 otherwise.
#[derive(Clone, Copy)]
struct Prio {
    log_prio: bool,
    ioprio: u16,
}

fn write_line(
    out: &mut BufWriter<File>,
    ms: u64,
    value: u64,
    dir: usize,
    bs: u64,
    offset: Option<u64>,
    prio: Prio,
) -> std::io::Result<()> {
    let rt = u16::from(crate::model::arbitration::ioprio::class(prio.ioprio) == 1);
    match (offset, prio.log_prio) {
        (None, false) => writeln!(out, "{ms}, {value}, {dir}, {bs}, {rt}"),
        (Some(o), false) => writeln!(out, "{ms}, {value}, {dir}, {bs}, {o}, {rt}"),
        (None, true) => writeln!(out, "{ms}, {value}, {dir}, {bs}, 0x{:04x}", prio.ioprio),
        (Some(o), true) => writeln!(out, "{ms}, {value}, {dir}, {bs}, {o}, 0x{:04x}", prio.ioprio),
    }
}

fn log_error(path: &std::path::Path, e: std::io::Error) -> crate::Error {
    crate::Error::Log { path: path.display().to_string(), source: e }
}

/// Move finished logs to their names: one job's file is renamed; the
/// parts of a file shared by several jobs (`per_job_logs=0`) are joined in
/// the order given.
pub(crate) fn install(logs: Vec<FinishedLog>) -> Result<(), crate::Error> {
    let mut order: Vec<PathBuf> = Vec::new();
    for l in &logs {
        if !order.contains(&l.path) {
            order.push(l.path.clone());
        }
    }
    for path in order {
        let parts: Vec<&FinishedLog> = logs.iter().filter(|l| l.path == path).collect();
        if parts.len() == 1 {
            crate::fsio::install(&parts[0].tmp, &path).map_err(|e| log_error(&path, e))?;
            continue;
        }
        let joined = PathBuf::from(format!("{}.ssdtwin-{}.tmp", path.display(), std::process::id()));
        let mut out = crate::fsio::create_temp(&joined).map_err(|e| log_error(&joined, e))?;
        for p in &parts {
            let mut f = File::open(&p.tmp).map_err(|e| log_error(&p.tmp, e))?;
            std::io::copy(&mut f, &mut out).map_err(|e| log_error(&joined, e))?;
            crate::fsio::remove_temp(&p.tmp);
        }
        drop(out);
        crate::fsio::install(&joined, &path).map_err(|e| log_error(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_follow_fio() {
        // Exact below 128 ns, then 64 bins per power of two.
        assert_eq!(plat_bin(0), 0);
        assert_eq!(plat_bin(127), 127);
        assert_eq!(plat_bin(128), 128);
        assert_eq!(plat_bin(130), 129);
        assert_eq!(plat_bin(256), 192);
        assert_eq!(plat_bin(u64::MAX), PLAT_NR - 1);
        // A bin's values share the index.
        assert_eq!(plat_bin(1000), plat_bin(1007));
        assert_ne!(plat_bin(1000), plat_bin(1008));
    }
}
