//! fio's in-job controllers: the latency-target queue-depth search
//! (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`), steady-state detection (`ss`, `ss_dur`, `ss_ramp`) and
//! the minimum-rate check (`rate_min`, `rate_iops_min`, `rate_cycle`).
//!
//! All follow fio 3.33's rules, in virtual time:
//!
//! - **Latency target.** The job starts at queue depth 1. A completion
//!   slower than the target, with `latency_percentile=100`, halves the way
//!   down at once (fio's ramp-down: the depth goes to the middle of the
//!   last good depth and this one, the commands in flight drain first);
//!   with a lower percentile it only counts as a miss. Once a window of
//!   `latency_window` has passed, the share of commands within the target
//!   decides: at least `latency_percentile` % is a success (the depth
//!   doubles until a failure, then bisects between the last good and the
//!   first bad depth), less is a failure (ramp-down). When a success
//!   leaves the depth where it was, the search has converged: the
//!   commands drain, the job's statistics restart and it runs one more
//!   window at that depth, then ends (unless `latency_run`, which keeps
//!   adjusting until the job's other limits). A miss at depth 1 with
//!   `latency_percentile=100` ends the job with fio's ETIMEDOUT (110).
//!   fio's JSON reports the depth reached as `latency_depth`.
//! - **Steady state.** Every second (`steadystate_check_interval`, fio
//!   3.35) after `ss_ramp`, the job's IOPS and bandwidth over that
//!   interval, per second, are kept for the last `ss_dur / interval`
//!   intervals (fio's integer division by whole seconds);
//!   once the window is full, the criterion is checked: `iops`/`bw`, the
//!   largest deviation from the window's mean; `iops_slope`/`bw_slope`,
//!   the least-squares slope of the window, each as a value or, with `%`,
//!   relative to the mean. Below the limit, the job has reached steady
//!   state and ends (its commands in flight complete).
//!
//! - **Minimum rates.** `rate_min` / `rate_iops_min`, averaged over
//!   `rate_cycle` ms, checked from 2 s after the ramp; a direction below
//!   its minimum ends the job with fio's EIO (5) and fio's message.
//!
//! With `group_reporting`, steady state is judged on the reporting
//! group's summed rate by one tracker (the group's last job keeps it, as
//! fio's does; see [`crate::run::driver`]), and the whole group ends when
//! it is reached; fio rejects a group whose jobs' steady-state settings
//! differ, and so does the job-file parser.
//!
//! Left out: completions while a ramp-down drains are not judged again
//! (fio may ramp down further while it drains); fio samples the rates on a
//! wall-clock second common to all jobs, ssdtwin on each job's (or the
//! group's last job's) seconds since its ramp.

use serde::{Deserialize, Serialize};

use crate::run::workload::MinRate;

/// fio's latency target options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    /// Latency a command must stay within, ns (`latency_target`).
    pub target_ns: u64,
    /// Window over which the share within target is judged, ns
    /// (`latency_window`).
    pub window_ns: u64,
    /// Share of commands that must stay within the target, %
    /// (`latency_percentile`).
    pub percentile: f64,
    /// Keep searching until the job's other limits instead of ending once
    /// converged (`latency_run`).
    pub keep_running: bool,
}

/// What the search asks the job to do after a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LatAction {
    /// Go on at [`LatSearch::depth`].
    Go,
    /// Let the commands in flight drain, then call [`LatSearch::drained`].
    Drain,
    /// The target cannot be met at depth 1: end with ETIMEDOUT.
    Fatal,
    /// Converged and the final window has run: end the job.
    Done,
}

/// The queue-depth search of one job.
#[derive(Debug, Clone)]
pub(crate) struct LatSearch {
    spec: LatencyTarget,
    max_depth: u32,
    depth: u32,
    high: u32,
    low: u32,
    stable: u32,
    window_start_ns: u64,
    window_start_ios: u64,
    missed: u64,
    final_run: bool,
    /// The search is over (the commands still in flight are not judged).
    done: bool,
    draining: bool,
    /// Restart the job's statistics once the drain is over.
    reset_after_drain: bool,
}

impl LatSearch {
    /// A search up to `max_depth` (the job's `iodepth`) starting at `now`.
    pub(crate) fn new(spec: LatencyTarget, max_depth: u32, now: u64) -> LatSearch {
        LatSearch {
            spec,
            max_depth: max_depth.max(1),
            depth: 1,
            high: max_depth.max(1),
            low: 1,
            stable: 0,
            window_start_ns: now,
            window_start_ios: 0,
            missed: 0,
            final_run: false,
            done: false,
            draining: false,
            reset_after_drain: false,
        }
    }

    /// The queue depth the job may use now (0 while draining).
    #[inline]
    pub(crate) fn depth_limit(&self) -> u32 {
        if self.draining {
            0
        } else {
            self.depth
        }
    }

    /// The depth reached (fio's `latency_depth`).
    pub(crate) fn depth(&self) -> u32 {
        self.depth
    }

    /// A completion of latency `lat_ns` at `now`; `ios` is the job's
    /// completions so far (this one included); `measuring` is false during
    /// `ramp_time` (no window is judged then, as in fio).
    pub(crate) fn on_completion(&mut self, lat_ns: u64, now: u64, ios: u64, measuring: bool) -> LatAction {
        if self.draining || self.done {
            return LatAction::Go;
        }
        if lat_ns > self.spec.target_ns {
            if self.spec.percentile >= 100.0 {
                return self.ramp_down();
            }
            self.missed += 1;
        }
        if !measuring || now.saturating_sub(self.window_start_ns) < self.spec.window_ns {
            return LatAction::Go;
        }
        let n = ios - self.window_start_ios;
        if n == 0 {
            return LatAction::Go;
        }
        let within = (n - self.missed.min(n)) as f64 * 100.0 / n as f64;
        if within >= self.spec.percentile {
            self.ramp_up(now, ios)
        } else {
            match self.ramp_down() {
                // A failed window at depth 1 changes nothing (fio ignores
                // it there); the window goes on.
                LatAction::Fatal => LatAction::Go,
                a => a,
            }
        }
    }

    fn ramp_down(&mut self) -> LatAction {
        if self.depth == 1 {
            return LatAction::Fatal;
        }
        self.high = self.depth;
        if self.depth == self.low {
            self.low -= 1;
        }
        self.depth = (self.depth + self.low) / 2;
        self.stable = 0;
        self.draining = true;
        LatAction::Drain
    }

    fn ramp_up(&mut self, now: u64, ios: u64) -> LatAction {
        let before = self.depth;
        self.low = self.depth;
        if self.depth + 1 == self.high {
            // Stuck one below the first bad depth: after three successes
            // in a row, try one higher (fio's heuristic).
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.depth = if self.high != self.max_depth { (self.depth + self.high) / 2 } else { self.depth * 2 };
        self.depth = self.depth.min(self.max_depth);
        if !self.spec.keep_running && self.depth == before {
            if self.final_run {
                self.done = true;
                return LatAction::Done;
            }
            self.final_run = true;
            self.draining = true;
            self.reset_after_drain = true;
            return LatAction::Drain;
        }
        self.new_window(now, ios);
        LatAction::Go
    }

    fn new_window(&mut self, now: u64, ios: u64) {
        self.window_start_ns = now;
        self.window_start_ios = ios;
        self.missed = 0;
    }

    /// The drain asked for is over at `now`; returns whether the job's
    /// statistics restart (the final run at the depth found).
    pub(crate) fn drained(&mut self, now: u64, ios: u64) -> bool {
        self.draining = false;
        self.new_window(now, ios);
        std::mem::take(&mut self.reset_after_drain)
    }

    /// Whether a drain is under way.
    #[inline]
    pub(crate) fn draining(&self) -> bool {
        self.draining
    }
}

/// The quantity steady state is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SsMetric {
    /// Commands per second.
    Iops,
    /// Bytes per second.
    Bw,
    /// Mean completion latency over the interval, ns (fio 3.41's `lat`).
    Lat,
}

/// fio's steady-state options (`ss=METRIC[_slope]:LIMIT[%]`, `ss_dur`,
/// `ss_ramp`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// IOPS or bandwidth.
    pub metric: SsMetric,
    /// Judge the slope (`_slope`) rather than the largest deviation.
    pub slope: bool,
    /// The limit.
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
    /// Window, whole seconds (`ss_dur`).
    pub duration_s: u32,
    /// Time before the first second is kept, ns (`ss_ramp`).
    pub ramp_ns: u64,
    /// How often the rates are sampled, ms (`steadystate_check_interval`,
    /// fio 3.35; whole seconds count, as fio divides `ss_dur` by them).
    #[serde(default = "one_second", skip_serializing_if = "is_one_second")]
    pub interval_ms: u64,
}

fn one_second() -> u64 {
    1000
}

fn is_one_second(ms: &u64) -> bool {
    *ms == 1000
}

impl SteadyState {
    /// The window's samples: fio's `ss_dur / (interval_ms / 1000)`.
    pub fn intervals(&self) -> usize {
        (self.duration_s as u64 / (self.interval_ms / 1000).max(1)) as usize
    }
}

impl SteadyState {
    /// fio's spelling, e.g. `iops_slope:0.100000%`.
    pub fn fio_name(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            match self.metric {
                SsMetric::Iops => "iops",
                SsMetric::Bw => "bw",
                SsMetric::Lat => "lat",
            },
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.percent { "%" } else { "" }
        )
    }
}

/// Steady-state detection of one job: per-second rates and the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct SsTracker {
    /// The options.
    pub spec: SteadyState,
    /// Bandwidth of the seconds in the window, oldest first, bytes/s.
    pub bw: Vec<u64>,
    /// IOPS of the seconds in the window, oldest first.
    pub iops: Vec<u64>,
    /// The window's slope (last check).
    pub slope: f64,
    /// The window's largest deviation from its mean (last check).
    pub deviation: f64,
    /// The value compared with the limit (last check).
    pub criterion: f64,
    /// Whether steady state was reached.
    pub attained: bool,
    #[serde(skip)]
    second: u64,
    #[serde(skip)]
    bytes: u64,
    #[serde(skip)]
    ios: u64,
    /// Mean latency of the intervals in the window, ns (`lat`).
    #[serde(skip)]
    lat: Vec<u64>,
    #[serde(skip)]
    lat_sum: u128,
}

impl SsTracker {
    /// A detector for `spec`, counting seconds from the job's start.
    pub(crate) fn new(spec: SteadyState) -> SsTracker {
        SsTracker {
            spec,
            bw: Vec::with_capacity(spec.intervals()),
            iops: Vec::with_capacity(spec.intervals()),
            slope: 0.0,
            deviation: 0.0,
            criterion: 0.0,
            attained: false,
            second: 0,
            bytes: 0,
            ios: 0,
            lat: Vec::new(),
            lat_sum: 0,
        }
    }

    /// A completion of `bytes` taking `lat_ns` at `rel_ns` after the
    /// job's start (in time order). Closes the intervals before it first;
    /// returns true when steady state is reached.
    pub(crate) fn on_completion(&mut self, rel_ns: u64, bytes: u64, lat_ns: u64) -> bool {
        if self.attained {
            return false;
        }
        let every = self.spec.interval_ms;
        let sec = rel_ns / (every * 1_000_000);
        let mut reached = false;
        while self.second < sec && !reached {
            // The interval [second, second + 1) is over; fio's rate over
            // it, per second (steadystate.c: rate_time · Δ / (interval² /
            // 1000), rate_time being the interval).
            if self.second * every * 1_000_000 >= self.spec.ramp_ns {
                let per_s = |n: u64| every * n / (every * every / 1000);
                let lat = if self.ios == 0 { 0 } else { (self.lat_sum / self.ios as u128) as u64 };
                reached = self.push(per_s(self.bytes), per_s(self.ios), lat);
            }
            self.second += 1;
            self.bytes = 0;
            self.ios = 0;
            self.lat_sum = 0;
        }
        if reached {
            self.attained = true;
            return true;
        }
        self.bytes += bytes;
        self.ios += 1;
        self.lat_sum += lat_ns as u128;
        false
    }

    fn push(&mut self, bw: u64, iops: u64, lat: u64) -> bool {
        let n = self.spec.intervals();
        if self.bw.len() == n {
            self.bw.remove(0);
            self.iops.remove(0);
            if !self.lat.is_empty() {
                self.lat.remove(0);
            }
        }
        self.bw.push(bw);
        self.iops.push(iops);
        if self.spec.metric == SsMetric::Lat {
            self.lat.push(lat);
        }
        if self.bw.len() < n {
            return false;
        }
        let ys = match self.spec.metric {
            SsMetric::Iops => &self.iops,
            SsMetric::Bw => &self.bw,
            SsMetric::Lat => &self.lat,
        };
        let dur = n as u64;
        let sum_y: u64 = ys.iter().sum();
        if self.spec.slope {
            // Least squares over x = 0..dur with integer sums (as fio).
            let sum_x = dur * (dur - 1) / 2;
            let sum_x_sq = (dur - 1) * dur * (2 * dur - 1) / 6;
            let sum_xy: u64 = ys.iter().enumerate().map(|(i, &y)| i as u64 * y).sum();
            self.slope = (sum_xy as f64 - sum_x as f64 * sum_y as f64 / dur as f64)
                / (sum_x_sq as f64 - sum_x as f64 * sum_x as f64 / dur as f64);
            self.criterion = if self.spec.percent { 100.0 * self.slope / (sum_y / dur) as f64 } else { self.slope };
            self.criterion.abs() < self.spec.limit
        } else {
            let mean = sum_y as f64 / dur as f64;
            self.deviation = ys.iter().map(|&y| (y as f64 - mean).abs()).fold(0.0, f64::max);
            self.criterion = if self.spec.percent { 100.0 * self.deviation / mean } else { self.deviation };
            self.criterion < self.spec.limit
        }
    }

    /// The window as fio reports it: `ss_dur` entries, oldest first,
    /// zeros for seconds not yet measured.
    pub fn window(&self) -> (Vec<u64>, Vec<u64>) {
        let n = self.spec.intervals();
        let mut bw = self.bw.clone();
        let mut iops = self.iops.clone();
        bw.resize(n, 0);
        iops.resize(n, 0);
        (bw, iops)
    }
}

/// fio's settle time before the minimum rates are checked (backend.c:
/// "allow a 2 second settle period in the beginning").
const MIN_RATE_SETTLE_NS: u64 = 2_000_000_000;

/// The minimum-rate check of one job (`rate_min`, `rate_iops_min`,
/// `rate_cycle`), as fio 3.33's `check_min_rate`: from 2 s after the ramp,
/// each direction that has completed I/O and has a minimum is checked at
/// every completion; the first check only notes the counts and time, and
/// each later one, once at least `rate_cycle` ms (whole ms, as fio counts)
/// have passed since the last, compares the average since then with the
/// minimum (bytes when `rate_min` is set for the direction, else
/// commands), in fio's integer arithmetic.
#[derive(Debug, Clone)]
pub(crate) struct MinRateCheck {
    spec: MinRate,
    /// Bytes completed per direction since the ramp's end.
    bytes: [u64; 3],
    /// Commands completed per direction since the ramp's end.
    ios: [u64; 3],
    /// Per direction: time (ns since the ramp's end), bytes and commands
    /// at the last check.
    last: [Option<(u64, u64, u64)>; 3],
}

impl MinRateCheck {
    /// A check of `spec`, from the ramp's end.
    pub(crate) fn new(spec: MinRate) -> MinRateCheck {
        MinRateCheck { spec, bytes: [0; 3], ios: [0; 3], last: [None; 3] }
    }

    /// A completion of `bytes` in direction `kind` at `rel_ns` after the
    /// ramp's end (in time order). Returns fio's message when a minimum is
    /// not met: the job then ends with EIO.
    pub(crate) fn on_completion(&mut self, rel_ns: u64, kind: usize, bytes: u64) -> Option<String> {
        self.bytes[kind] += bytes;
        self.ios[kind] += 1;
        if rel_ns < MIN_RATE_SETTLE_NS {
            return None;
        }
        for d in 0..3 {
            let (min_bytes, min_ios) = (self.spec.bytes_per_s[d], self.spec.iops[d]);
            if self.bytes[d] == 0 || (min_bytes == 0 && min_ios == 0) {
                continue;
            }
            if let Some((t, b, n)) = self.last[d] {
                let spent_ms = (rel_ns - t) / 1_000_000;
                if spent_ms < self.spec.cycle_ms || spent_ms == 0 {
                    continue;
                }
                if min_bytes > 0 {
                    let got = (self.bytes[d] - b) * 1000 / spent_ms;
                    if got < min_bytes {
                        return Some(format!("rate_min={min_bytes}B/s not met, got {got}B/s"));
                    }
                } else {
                    let got = (self.ios[d] - n) * 1000 / spent_ms;
                    if got < min_ios {
                        return Some(format!("rate_iops_min={min_ios} not met, got {got} IOPS"));
                    }
                }
            }
            self.last[d] = Some((rel_ns, self.bytes[d], self.ios[d]));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(slope: bool, limit: f64) -> SteadyState {
        SteadyState {
            metric: SsMetric::Iops,
            slope,
            limit,
            percent: true,
            duration_s: 4,
            ramp_ns: 0,
            interval_ms: 1000,
        }
    }

    /// Feed `per_second[i]` completions of 4 KiB evenly in second i.
    fn feed(t: &mut SsTracker, per_second: &[u64]) -> Option<usize> {
        for (s, &n) in per_second.iter().enumerate() {
            for k in 0..n {
                let at = s as u64 * 1_000_000_000 + k * 1_000_000_000 / n;
                if t.on_completion(at, 4096, 100_000) {
                    return Some(s);
                }
            }
        }
        None
    }

    #[test]
    fn deviation_and_slope_follow_fio() {
        // Rising by 10 % a second, then flat: the mean-deviation check
        // passes once four flat seconds are in the window.
        let rates = [100, 110, 121, 133, 146, 146, 146, 146, 146, 146];
        let mut t = SsTracker::new(spec(false, 1.0));
        // Seconds 4..=7 are flat; the check that closes second 7 runs at
        // the first completion of second 8.
        assert_eq!(feed(&mut t, &rates), Some(8));
        assert_eq!(t.iops, [146; 4]);
        assert_eq!(t.criterion, 0.0);
        // A steady climb has a slope of about 10 % of the mean.
        let mut t = SsTracker::new(spec(true, 5.0));
        assert_eq!(feed(&mut t, &[100, 110, 121, 133, 146, 161]), None);
        // The last window: 110, 121, 133, 146 (the sixth second never
        // closes): slope 12 / s over an integer mean of 127.
        assert!((t.criterion - 1200.0 / 127.0).abs() < 1e-9, "{}", t.criterion);
        assert_eq!(t.spec.fio_name(), "iops_slope:5.000000%");
    }

    #[test]
    fn latency_search_doubles_then_bisects() {
        let spec = LatencyTarget { target_ns: 100, window_ns: 10, percentile: 100.0, keep_running: false };
        let mut s = LatSearch::new(spec, 64, 0);
        // Latency = 20 ns per outstanding command: depth 5 is the largest
        // within 100 ns.
        let mut now = 0;
        let mut ios = 0;
        for _ in 0..10_000 {
            now += 1;
            ios += 1;
            let lat = 20 * s.depth_limit().max(1) as u64;
            match s.on_completion(lat, now, ios, true) {
                LatAction::Go => {}
                LatAction::Drain => {
                    s.drained(now, ios);
                }
                LatAction::Done => break,
                LatAction::Fatal => panic!("fatal"),
            }
        }
        assert_eq!(s.depth(), 5);
    }
}
