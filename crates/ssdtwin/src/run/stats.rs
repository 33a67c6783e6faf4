//! Measurements of a run: latency histograms per direction, a per-second
//! time series, and the drive's counters.
//!
//! Memory does not grow with simulated time: the histograms have fixed
//! bounds and the time series keeps at most [`MAX_SERIES_POINTS`] points.
//! A series starts at one point per second; when a phase outlasts that
//! many points, neighbouring points are merged into points of a minute,
//! then an hour, a day, ten days and so on ([`SERIES_SPANS_S`]). Each
//! point says how long it is (`span_s`): counts and bytes are sums over
//! the point, the mean and maximum latency are over its commands, power
//! is its mean, and the drive's state (free blocks, WAF, SLC, temperature)
//! is sampled when the point began.
//!
//! Latency is measured as fio's completion latency: from the moment the
//! workload submits a command (including any wait for a free slot in the
//! drive's queue) to its completion. Histograms are HDR histograms with 3
//! significant digits from 1 ns to one hour; the mean and maximum are
//! exact.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub use crate::model::counters::Counters;
use crate::model::drive::Drive;
use crate::run::placement_stats::ZoneStates;

/// Latency and volume of one direction (read, write or trim).
#[derive(Debug, Clone)]
pub struct DirStats {
    /// Completed commands.
    pub ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Latency histogram, ns.
    pub hist: Histogram<u64>,
    /// Exact sum of latencies, ns.
    pub lat_sum_ns: u128,
    /// Exact minimum latency, ns.
    pub lat_min_ns: u64,
    /// Exact maximum latency, ns.
    pub lat_max_ns: u64,
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats {
            ios: 0,
            bytes: 0,
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds"),
            lat_sum_ns: 0,
            lat_min_ns: u64::MAX,
            lat_max_ns: 0,
        }
    }
}

impl DirStats {
    /// Record one completed command.
    #[inline]
    pub fn record(&mut self, bytes: u64, lat_ns: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.hist.saturating_record(lat_ns.max(1));
        self.lat_sum_ns += lat_ns as u128;
        self.lat_min_ns = self.lat_min_ns.min(lat_ns);
        self.lat_max_ns = self.lat_max_ns.max(lat_ns);
    }

    /// Add another direction's measurements (for totals over phases).
    pub fn merge(&mut self, other: &DirStats) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.hist.add(&other.hist).expect("histograms have equal bounds");
        self.lat_sum_ns += other.lat_sum_ns;
        self.lat_min_ns = self.lat_min_ns.min(other.lat_min_ns);
        self.lat_max_ns = self.lat_max_ns.max(other.lat_max_ns);
    }

    /// Mean latency, ns.
    pub fn mean_ns(&self) -> f64 {
        if self.ios == 0 {
            0.0
        } else {
            self.lat_sum_ns as f64 / self.ios as f64
        }
    }

    /// Latency at percentile `p` (0–100), ns.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        if self.ios == 0 {
            0
        } else {
            self.hist.value_at_percentile(p)
        }
    }

    /// Commands whose latency exceeded `threshold_ns` (to the histogram's
    /// 3 significant digits: a latency within 0.1% of the threshold may
    /// count on either side).
    pub fn count_above(&self, threshold_ns: u64) -> u64 {
        if self.ios == 0 || threshold_ns >= self.lat_max_ns {
            return 0;
        }
        self.ios - self.hist.count_between(0, threshold_ns).min(self.ios)
    }

    /// Share of commands whose latency exceeded `threshold_ns`, %
    /// (`None` without commands): the reviews' latency outliers.
    pub fn share_above(&self, threshold_ns: u64) -> Option<f64> {
        (self.ios > 0).then(|| 100.0 * self.count_above(threshold_ns) as f64 / self.ios as f64)
    }
}

/// Stalls: intervals in which commands were outstanding and none
/// completed, from the last completion (or the submission that ended an
/// idle) to the next completion. Only intervals of at least
/// [`Stalls::MIN_NS`] are kept, in a histogram allocated at the first one
/// (3 significant digits from 1 µs to an hour, about 100 KB), so
/// recording costs nothing while the drive keeps completing.
#[derive(Debug, Clone, Default)]
pub struct Stalls {
    hist: Option<Box<Histogram<u32>>>,
}

impl Stalls {
    /// Shortest interval kept, ns (1 ms).
    pub const MIN_NS: u64 = 1_000_000;

    /// An interval of `gap_ns` without a completion ended.
    #[inline]
    pub fn record(&mut self, gap_ns: u64) {
        if gap_ns >= Self::MIN_NS {
            self.hist
                .get_or_insert_with(|| {
                    Box::new(Histogram::new_with_bounds(1_000, 3_600_000_000_000, 3).expect("valid histogram bounds"))
                })
                .saturating_record(gap_ns);
        }
    }

    /// Add another window's stalls.
    pub fn merge(&mut self, other: &Stalls) {
        if let Some(o) = &other.hist {
            match &mut self.hist {
                Some(h) => h.add(o.as_ref()).expect("histograms have equal bounds"),
                None => self.hist = Some(o.clone()),
            }
        }
    }

    /// Stalls of at least `min_ns` (`min_ns` below [`Stalls::MIN_NS`]
    /// counts from there).
    pub fn count_at_least(&self, min_ns: u64) -> u64 {
        self.hist.as_ref().map_or(0, |h| {
            h.iter_recorded().filter(|v| v.value_iterated_to() >= min_ns).map(|v| v.count_at_value() as u64).sum()
        })
    }

    /// Time spent in stalls of at least `min_ns`, ns (to the histogram's
    /// precision).
    pub fn time_at_least_ns(&self, min_ns: u64) -> u64 {
        self.hist.as_ref().map_or(0, |h| {
            h.iter_recorded()
                .filter(|v| v.value_iterated_to() >= min_ns)
                .map(|v| h.median_equivalent(v.value_iterated_to()) * v.count_at_value() as u64)
                .sum()
        })
    }

    /// The longest stall, ns (0: none of at least [`Stalls::MIN_NS`]).
    pub fn longest_ns(&self) -> u64 {
        self.hist.as_ref().map_or(0, |h| h.max())
    }
}

/// Most points a [`TimeSeries`] keeps before it coarsens: a day of
/// seconds (≈15 MB), so that phases up to a day keep one point per second.
pub const MAX_SERIES_POINTS: usize = 86_400;

/// The lengths a series' points take, s, finest first: a second, a
/// minute, an hour, a day, then ten times longer each time.
pub const SERIES_SPANS_S: [u64; 8] = [1, 60, 3600, 86_400, 864_000, 8_640_000, 86_400_000, 864_000_000];

fn one_second() -> u64 {
    1
}

/// One point of a phase's time series: a second, or a longer span once
/// the series has been coarsened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the phase started, at the point's start.
    pub t_s: u64,
    /// Length of the point, s: 1 unless the series was coarsened (a long
    /// phase), then 60, 3600, 86400, … (the last point of a phase may
    /// cover less of it: the phase ended). Files written before series
    /// were coarsened lack it: 1.
    #[serde(default = "one_second")]
    pub span_s: u64,
    /// Reads completed in this point.
    pub read_ios: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Trims completed.
    pub trim_ios: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Mean latency of the commands completed, ns.
    pub mean_lat_ns: u64,
    /// Maximum latency, ns.
    pub max_lat_ns: u64,
    /// Free blocks in the drive when the second began.
    pub free_blocks: u64,
    /// Cumulative write amplification when the second began.
    pub waf: f64,
    /// SLC cache capacity when the second began, bytes.
    pub slc_cache_bytes: u64,
    /// Bytes of SLC blocks in use when the second began.
    pub slc_used_bytes: u64,
    /// Valid data waiting in SLC to be folded when the second began, bytes.
    pub fold_backlog_bytes: u64,
    /// NAND programs in native mode issued during the second.
    pub nand_programs_native: u64,
    /// NAND programs in SLC mode issued during the second.
    pub nand_programs_slc: u64,
    /// Mean power drawn during the second, W (`None`: no power model).
    pub power_w: Option<f64>,
    /// Composite temperature when the second began, °C (drives with a
    /// thermal model only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temp_c: Option<f64>,
    /// Throttle level when the second began: 0 none, 1 warning, 2
    /// critical (drives with a thermal model only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle: Option<u8>,
    /// Zones by state when the second began (zoned drives only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<ZoneStates>,
    #[serde(skip)]
    lat_sum_ns: u128,
    /// Energy drawn from the clock's start to the second's start, J.
    #[serde(skip)]
    energy_j: Option<f64>,
}

impl Second {
    /// Commands completed in this point.
    pub fn ios(&self) -> u64 {
        self.read_ios + self.write_ios + self.trim_ios
    }

    /// Fold the next point `later` into this one (coarsening): counts
    /// add up, the state sampled at the start stays this point's.
    fn absorb(&mut self, later: &Second) {
        self.read_ios += later.read_ios;
        self.write_ios += later.write_ios;
        self.trim_ios += later.trim_ios;
        self.read_bytes += later.read_bytes;
        self.write_bytes += later.write_bytes;
        self.lat_sum_ns += later.lat_sum_ns;
        self.max_lat_ns = self.max_lat_ns.max(later.max_lat_ns);
    }
}

/// Time series of a phase: one point per second, coarsened past
/// [`MAX_SERIES_POINTS`] points (see the module's documentation).
#[derive(Debug, Clone)]
pub struct TimeSeries {
    /// Virtual time at which the phase (and its first point) began, ns.
    pub start_ns: u64,
    /// Length of every point, s (the last may cover less of the phase).
    pub resolution_s: u64,
    /// Points, from the phase's start.
    pub seconds: Vec<Second>,
}

impl Default for TimeSeries {
    fn default() -> Self {
        TimeSeries::new(0)
    }
}

impl TimeSeries {
    /// An empty series of one-second points starting at `start_ns`.
    pub fn new(start_ns: u64) -> TimeSeries {
        TimeSeries { start_ns, resolution_s: 1, seconds: Vec::new() }
    }

    /// Length of a point, ns.
    #[inline]
    pub fn point_ns(&self) -> u64 {
        self.resolution_s * 1_000_000_000
    }

    /// Time from the start at which the next point (not yet open) begins, ns.
    #[inline]
    pub fn next_point_ns(&self) -> u64 {
        self.seconds.len() as u64 * self.point_ns()
    }

    /// Merge points into the next longer span until `idx_ns` (from the
    /// start) falls within [`MAX_SERIES_POINTS`] points.
    fn coarsen_for(&mut self, rel_ns: u64) {
        while rel_ns / self.point_ns() >= MAX_SERIES_POINTS as u64 {
            let next = SERIES_SPANS_S.iter().copied().find(|&s| s > self.resolution_s);
            let next = next.unwrap_or(self.resolution_s * 10);
            let k = (next / self.resolution_s) as usize;
            let merged: Vec<Second> = self
                .seconds
                .chunks(k)
                .map(|c| {
                    let mut m = c[0];
                    for later in &c[1..] {
                        m.absorb(later);
                    }
                    // A last chunk short of points not opened yet covers
                    // them too (nothing completed in them).
                    m.span_s = next;
                    m
                })
                .collect();
            self.seconds = merged;
            self.resolution_s = next;
        }
    }

    /// Make sure the point holding `rel_ns` exists; returns its index.
    /// Points skipped over (nothing completed in them) are opened now
    /// with the drive's state as it is now, in O(1) each, and a series
    /// never holds more than [`MAX_SERIES_POINTS`] of them.
    #[inline]
    pub fn touch(&mut self, rel_ns: u64, drive: &Drive) -> usize {
        // Completions come in time order, so most fall in the last point
        // opened: found without dividing.
        let open_end = self.next_point_ns();
        if rel_ns < open_end && rel_ns >= open_end - self.point_ns() {
            return self.seconds.len() - 1;
        }
        if rel_ns / self.point_ns() >= MAX_SERIES_POINTS as u64 {
            self.coarsen_for(rel_ns);
        }
        let idx = (rel_ns / self.point_ns()) as usize;
        while self.seconds.len() <= idx {
            // Programs are stored cumulatively here and turned into
            // per-point counts by `finish`.
            let p = &drive.flash().counters.programs;
            let began = self.start_ns + self.next_point_ns();
            let temps = drive.temperatures();
            self.seconds.push(Second {
                temp_c: temps.map(|t| (t.composite_c * 100.0).round() / 100.0),
                throttle: temps.map(|t| t.throttle),
                energy_j: drive.energy_j(began),
                t_s: self.seconds.len() as u64 * self.resolution_s,
                span_s: self.resolution_s,
                free_blocks: drive.ftl().blocks().total_free(),
                waf: drive.waf(),
                slc_cache_bytes: drive.ftl().slc_cache_bytes(),
                slc_used_bytes: drive.ftl().slc_used_bytes(),
                fold_backlog_bytes: drive.ftl().fold_backlog_bytes(),
                nand_programs_native: p[0],
                nand_programs_slc: p[1],
                zones: ZoneStates::of(drive),
                ..Second::default()
            });
        }
        idx
    }

    /// Record a completion `rel_ns` after the phase start.
    #[inline]
    pub fn record(&mut self, rel_ns: u64, kind: usize, bytes: u64, lat_ns: u64, drive: &Drive) {
        let i = self.touch(rel_ns, drive);
        let s = &mut self.seconds[i];
        match kind {
            0 => {
                s.read_ios += 1;
                s.read_bytes += bytes;
            }
            1 => {
                s.write_ios += 1;
                s.write_bytes += bytes;
            }
            _ => s.trim_ios += 1,
        }
        s.lat_sum_ns += lat_ns as u128;
        s.max_lat_ns = s.max_lat_ns.max(lat_ns);
    }

    /// Compute per-point means and counts (call once at the end of the
    /// phase, at `end_ns`, with the drive as it is then).
    pub fn finish(&mut self, drive: &Drive, end_ns: u64) {
        let end = drive.flash().counters.programs;
        let end_energy = drive.energy_j(end_ns);
        let point_ns = self.point_ns();
        for i in 0..self.seconds.len() {
            let (next_native, next_slc) = match self.seconds.get(i + 1) {
                Some(n) => (n.nand_programs_native, n.nand_programs_slc),
                None => (end[0], end[1]),
            };
            let began = self.start_ns + i as u64 * point_ns;
            let (next_energy, len_ns) = match self.seconds.get(i + 1) {
                Some(n) => (n.energy_j, point_ns),
                None => (end_energy, end_ns.saturating_sub(began).min(point_ns)),
            };
            let s = &mut self.seconds[i];
            s.power_w = match (s.energy_j, next_energy) {
                (Some(a), Some(b)) if len_ns > 0 => Some((b - a) / (len_ns as f64 * 1e-9)),
                _ => None,
            };
            s.nand_programs_native = next_native - s.nand_programs_native;
            s.nand_programs_slc = next_slc - s.nand_programs_slc;
            let n = s.ios();
            s.mean_lat_ns = if n == 0 { 0 } else { (s.lat_sum_ns / n as u128) as u64 };
        }
    }
}

/// Running (count, mean, sum of squared deviations, min, max) of a
/// stream of values (Welford), where runs of zeros are added in O(1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Running {
    /// Values seen.
    pub n: u64,
    /// Their mean.
    pub mean: f64,
    m2: f64,
    /// Smallest value (`+∞` when empty).
    pub min: f64,
    /// Largest value (`−∞` when empty).
    pub max: f64,
}

impl Default for Running {
    fn default() -> Self {
        Running { n: 0, mean: 0.0, m2: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY }
    }
}

impl Running {
    /// Add one value.
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// Add `count` zeros at once (Chan et al.'s pairwise update).
    pub fn push_zeros(&mut self, count: u64) {
        if count == 0 {
            return;
        }
        let n = self.n as f64;
        let total = n + count as f64;
        let d = -self.mean;
        self.mean += d * count as f64 / total;
        self.m2 += d * d * n * count as f64 / total;
        self.n += count;
        self.min = self.min.min(0.0);
        self.max = self.max.max(0.0);
    }

    /// Sample standard deviation (n − 1; 0 below two values).
    pub fn stddev(&self) -> f64 {
        if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).max(0.0).sqrt()
        } else {
            0.0
        }
    }
}

/// fio's bandwidth and IOPS samples of one job: bytes and commands
/// completed per direction in each fixed interval after the ramp. Kept
/// as running statistics (memory independent of the run's length), or,
/// for a job whose samples are summed with other jobs' interval by
/// interval (`group_reporting`), as the list of intervals.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Every interval's (bytes, commands) per direction, when kept.
    pub kept: Option<Vec<[(u64, u64); 3]>>,
    /// Interval being filled and its counts.
    cur: Option<(u64, [(u64, u64); 3])>,
    /// Intervals before this one are in `bytes`/`ios`.
    closed: u64,
    bytes: [Running; 3],
    ios: [Running; 3],
}

impl Samples {
    /// Empty samples; `keep` keeps every interval.
    pub fn new(keep: bool) -> Samples {
        Samples { kept: keep.then(Vec::new), ..Samples::default() }
    }

    /// `bytes` of direction `kind` completed in interval `idx` (intervals
    /// come in order).
    #[inline]
    pub fn record(&mut self, idx: u64, kind: usize, bytes: u64) {
        if let Some(v) = &mut self.kept {
            let i = idx as usize;
            if v.len() <= i {
                v.resize(i + 1, [(0, 0); 3]);
            }
            v[i][kind].0 += bytes;
            v[i][kind].1 += 1;
            return;
        }
        match &mut self.cur {
            Some((i, c)) if *i == idx => {
                c[kind].0 += bytes;
                c[kind].1 += 1;
            }
            _ => {
                self.close_through(idx);
                let mut c = [(0, 0); 3];
                c[kind] = (bytes, 1);
                self.cur = Some((idx, c));
            }
        }
    }

    /// Fold the open interval (if before `upto`) and the empty intervals
    /// up to `upto` into the running statistics.
    fn close_through(&mut self, upto: u64) {
        if let Some((i, c)) = self.cur {
            if i < upto {
                self.zeros(i - self.closed);
                for (k, &(bytes, ios)) in c.iter().enumerate() {
                    self.bytes[k].push(bytes as f64);
                    self.ios[k].push(ios as f64);
                }
                self.closed = i + 1;
                self.cur = None;
            }
        }
        let limit = self.cur.map_or(upto, |(i, _)| upto.min(i));
        if limit > self.closed {
            self.zeros(limit - self.closed);
            self.closed = limit;
        }
    }

    fn zeros(&mut self, n: u64) {
        for k in 0..3 {
            self.bytes[k].push_zeros(n);
            self.ios[k].push_zeros(n);
        }
    }

    /// Running statistics of (bytes, commands) per interval of direction
    /// `kind` over the first `whole` intervals (fio counts whole samples
    /// only). `whole` is at least the last interval recorded (a phase
    /// ends at its last completion, so only that one can be partial).
    pub fn stats(&self, kind: usize, whole: u64) -> (Running, Running) {
        if let Some(v) = &self.kept {
            let (mut b, mut n) = (Running::default(), Running::default());
            for s in &v[..(whole as usize).min(v.len())] {
                b.push(s[kind].0 as f64);
                n.push(s[kind].1 as f64);
            }
            return (b, n);
        }
        let mut s = self.clone();
        s.close_through(whole);
        (s.bytes[kind], s.ios[kind])
    }

    /// Add another job's kept intervals to these, interval by interval.
    ///
    /// # Panics
    /// If either does not keep its intervals.
    pub fn add_kept(&mut self, other: &Samples) {
        let (a, b) = (self.kept.as_mut().expect("kept samples"), other.kept.as_ref().expect("kept samples"));
        if a.len() < b.len() {
            a.resize(b.len(), [(0, 0); 3]);
        }
        for (x, y) in a.iter_mut().zip(b) {
            for k in 0..3 {
                x[k].0 += y[k].0;
                x[k].1 += y[k].1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streaming samples give the statistics of the full list of
    /// intervals, empty ones included, and count whole intervals only.
    #[test]
    fn streaming_samples_match_the_list() {
        let events: [(u64, usize, u64); 7] =
            [(0, 1, 4096), (0, 1, 4096), (3, 0, 8192), (3, 1, 4096), (10, 1, 4096), (11, 0, 512), (20, 1, 9)];
        let (mut streamed, mut kept) = (Samples::new(false), Samples::new(true));
        for &(i, k, b) in &events {
            streamed.record(i, k, b);
            kept.record(i, k, b);
        }
        for whole in [20, 21, 40] {
            for k in 0..3 {
                let (a, b) = (streamed.stats(k, whole), kept.stats(k, whole));
                // The list stops at its last interval; pad it as fio's
                // zero-filled samples.
                let mut listed = kept.kept.clone().unwrap();
                listed.resize(whole as usize, [(0, 0); 3]);
                let xs: Vec<f64> = listed[..whole as usize].iter().map(|s| s[k].0 as f64).collect();
                assert_eq!(a.0.n, whole, "samples counted (whole {whole})");
                if xs.is_empty() {
                    continue;
                }
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                let min = xs.iter().cloned().fold(f64::INFINITY, f64::min);
                let max = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                assert!((a.0.mean - mean).abs() < 1e-9, "mean {whole} {k}");
                assert_eq!((a.0.min, a.0.max), (min, max), "min, max {whole} {k}");
                if b.0.n == a.0.n {
                    assert!((a.0.stddev() - b.0.stddev()).abs() < 1e-9, "stddev {whole} {k}");
                }
            }
        }
    }

    /// Coarsening keeps every count and the first point's state.
    #[test]
    fn coarsening_keeps_the_sums() {
        let mut s = TimeSeries::new(0);
        for i in 0..MAX_SERIES_POINTS as u64 {
            s.seconds.push(Second {
                t_s: i,
                span_s: 1,
                write_ios: i,
                max_lat_ns: i,
                free_blocks: i,
                ..Second::default()
            });
        }
        s.coarsen_for(MAX_SERIES_POINTS as u64 * 1_000_000_000);
        assert_eq!(s.resolution_s, 60);
        assert_eq!(s.seconds.len(), MAX_SERIES_POINTS / 60);
        let n = MAX_SERIES_POINTS as u64;
        assert_eq!(s.seconds.iter().map(|p| p.write_ios).sum::<u64>(), n * (n - 1) / 2);
        assert_eq!(
            (s.seconds[1].t_s, s.seconds[1].span_s, s.seconds[1].max_lat_ns, s.seconds[1].free_blocks),
            (60, 60, 119, 60)
        );
    }
}
