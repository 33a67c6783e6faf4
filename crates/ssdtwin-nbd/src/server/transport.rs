//! The transport's delay per connection, so that a client sees the
//! drive's latency rather than the drive's plus the transport's.
//!
//! A client's latency for one command is `a + (sent − arrived) + b`: `a`
//! from the client's submission until the server has read the request
//! (the client library, the socket, the server's read), `b` from the
//! server starting to send the reply until the client has reaped it.
//! Replies are due at the simulated completion mapped onto the wall clock;
//! with the transport's delay `D ≈ a + b` known, each reply is sent `D`
//! earlier (never before its request arrived), so that the client
//! observes the simulated latency wherever the drive is slower than the
//! transport, and the transport's floor `a + b` where it is not.
//!
//! `D` is one of ([`TransportDelay`]):
//! - **measured** (`auto`, the default): the mean *idle round trip* of
//!   the connection, stalls left out: the time from the server starting
//!   to send a reply that left the connection with nothing outstanding
//!   until the next request has arrived — `b`, the client's own
//!   turnaround between two commands, and `a`. The handshake's option
//!   round trips (their minimum) give the first estimate; once 16 idle
//!   round trips of the transmission phase have been seen, the estimate
//!   is the mean of those of the latest 128 that are at most [`STALL`]
//!   times their median, updated every 16 (so that it follows a change of
//!   load). The mean, because a client's mean latency is the drive's plus
//!   the transport's *mean* delay less the estimate: the round trip has a
//!   tail (its mean is 3–7 % above its median over loopback TCP), and an
//!   estimate at the median left fio's mean of 77.6 µs reads 2–3 % high
//!   while its median was right. Stalls left out: the scheduler's
//!   occasional delays (milliseconds on a loaded machine; over TCP the
//!   loopback's receive work deferred to `ksoftirqd`, an ordinary thread
//!   that waits behind other processes' work) would pull the mean far
//!   above what most requests see, and a reply sent that early arrives
//!   before the drive would have answered, while the stalled one was late
//!   anyway; nothing sent ahead of time makes up for them. Not the
//!   minimum either, which sits below what most requests see by the
//!   transport's jitter. Until a connection has its
//!   own, it takes the latest estimate another connection measured when
//!   that is below its handshake's: an option round trip includes the
//!   client's own work between options, milliseconds on a loaded machine
//!   (fio's nbd engine opens a connection per job, and a job that keeps
//!   its queue full never idles, so it would keep that figure and send
//!   replies milliseconds early, faster than the drive). The estimate includes the
//!   client's turnaround between commands (about a microsecond for fio),
//!   so a client may see up to that much less than the drive's latency.
//!   A connection that never idles (a deep queue throughout) keeps the
//!   handshake's estimate.
//! - **given** (`--transport-delay 15us`): the same for every connection;
//! - **off** (`--transport-delay 0`): replies at the simulated completion
//!   (the client sees the drive's latency plus the transport's).
//!
//! The kernel's TCP round-trip estimate (`TCP_INFO`'s `tcpi_rtt`) is not
//! used: it is smoothed, counted in whole microseconds, and on loopback
//! mostly measures the delayed-ACK path rather than the request path; a
//! Unix socket has none.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How the transport's delay is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportDelay {
    /// Measured per connection (idle round trips).
    Auto,
    /// Given by the user (zero: no compensation).
    Fixed(Duration),
}

impl std::str::FromStr for TransportDelay {
    type Err = String;

    /// `auto`, `off`, or a duration: `15us`, `0.02ms`, `20000ns`, `0`.
    fn from_str(s: &str) -> Result<TransportDelay, String> {
        let s = s.trim();
        if s == "auto" {
            return Ok(TransportDelay::Auto);
        }
        if s == "off" {
            return Ok(TransportDelay::Fixed(Duration::ZERO));
        }
        let (num, unit_ns) = [("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)]
            .iter()
            .find_map(|&(u, f)| s.strip_suffix(u).map(|n| (n, f)))
            .unwrap_or((s, 1e3));
        match num.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 && x * unit_ns < 1e9 => {
                Ok(TransportDelay::Fixed(Duration::from_nanos((x * unit_ns).round() as u64)))
            }
            _ => Err(format!(
                "{s:?}: expected auto, off or a duration below 1 s such as 15us, 0.02ms, 20000ns (a bare number is µs)"
            )),
        }
    }
}

/// What the reader and the writer of one connection share to measure idle
/// round trips: requests outstanding, and when the connection last became
/// idle.
#[derive(Debug)]
pub(super) struct Idle {
    origin: Instant,
    in_flight: AtomicU64,
    /// ns since `origin` when the last reply that left nothing
    /// outstanding started to be sent.
    since_ns: AtomicU64,
}

impl Idle {
    pub(super) fn new() -> Idle {
        Idle { origin: Instant::now(), in_flight: AtomicU64::new(0), since_ns: AtomicU64::new(0) }
    }

    fn ns(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.origin).as_nanos() as u64
    }

    /// The reader has a request (at `at`): the idle round trip it ends,
    /// if the connection was idle.
    pub(super) fn arrived(&self, at: Instant) -> Option<u64> {
        let was = self.in_flight.fetch_add(1, Ordering::AcqRel);
        (was == 0).then(|| self.ns(at).saturating_sub(self.since_ns.load(Ordering::Acquire)))
    }

    /// The writer starts sending a reply at `at`.
    pub(super) fn sending(&self, at: Instant) {
        if self.in_flight.load(Ordering::Acquire) == 1 {
            self.since_ns.store(self.ns(at), Ordering::Release);
        }
    }

    /// The writer has sent a reply.
    pub(super) fn sent(&self) {
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Idle round trips seen before the transmission phase's own estimate
/// replaces the handshake's.
const WARM_UP: u64 = 16;
/// Idle round trips the estimate is taken over (the latest ones).
const WINDOW: usize = 128;
/// New idle round trips between two updates of the estimate.
const UPDATE: u64 = 16;
/// An idle round trip more than this many times the window's median is
/// a stall, left out of the mean. The loopback's own tail stays in: over
/// TCP at real-time priority its 99.9th percentile was 2.5–3.5 times its
/// median (fio's QD1 reads against `--time-scale 0`), stalls 15 times
/// and more (0.6–36 ms against 42 µs).
pub(super) const STALL: u64 = 4;

/// The delay estimate of one connection (kept by its reader thread).
#[derive(Debug, Clone)]
pub(super) struct DelayEstimate {
    mode: TransportDelay,
    handshake_min: u64,
    /// Another connection's measured estimate when this one started.
    prior: Option<u64>,
    /// The latest idle round trips, a ring.
    ring: Box<[u64; WINDOW]>,
    /// Scratch for the median.
    sorted: Box<[u64; WINDOW]>,
    /// The measured estimate, ns.
    mean: u64,
    /// Idle round trips of the transmission phase seen.
    pub(super) samples: u64,
}

impl DelayEstimate {
    pub(super) fn new(mode: TransportDelay) -> DelayEstimate {
        DelayEstimate {
            mode,
            handshake_min: u64::MAX,
            prior: None,
            ring: Box::new([0; WINDOW]),
            sorted: Box::new([0; WINDOW]),
            mean: 0,
            samples: 0,
        }
    }

    /// Start from `prior`, an estimate another connection measured, ns.
    pub(super) fn with_prior(self, prior: Option<u64>) -> DelayEstimate {
        DelayEstimate { prior, ..self }
    }

    /// An option round trip of the handshake, ns.
    pub(super) fn handshake_sample(&mut self, ns: u64) {
        self.handshake_min = self.handshake_min.min(ns);
    }

    /// An idle round trip of the transmission phase, ns. Returns whether
    /// the measured estimate was updated.
    pub(super) fn sample(&mut self, ns: u64) -> bool {
        self.ring[(self.samples % WINDOW as u64) as usize] = ns;
        self.samples += 1;
        if self.samples >= WARM_UP && (self.samples % UPDATE == 0 || self.samples == WARM_UP) {
            let n = (self.samples as usize).min(WINDOW);
            let v = &mut self.sorted[..n];
            v.copy_from_slice(&self.ring[..n]);
            let median = *v.select_nth_unstable(n / 2).1;
            // The mean of the round trips, stalls left out.
            let cut = median.saturating_mul(STALL);
            let (sum, kept) = v.iter().filter(|&&x| x <= cut).fold((0u64, 0u64), |(s, k), &x| (s + x, k + 1));
            self.mean = sum / kept.max(1);
            return true;
        }
        false
    }

    /// Before its own measurement: the smaller of the handshake's round
    /// trip and another connection's estimate.
    fn first_estimate(&self) -> Option<u64> {
        match (self.handshake_min, self.prior) {
            (u64::MAX, p) => p,
            (h, Some(p)) => Some(h.min(p)),
            (h, None) => Some(h),
        }
    }

    /// The delay to send replies early by, ns.
    pub(super) fn delay_ns(&self) -> u64 {
        match self.mode {
            TransportDelay::Fixed(d) => d.as_nanos() as u64,
            TransportDelay::Auto if self.samples >= WARM_UP => self.mean,
            TransportDelay::Auto => self.first_estimate().unwrap_or(0),
        }
    }

    /// How the estimate was obtained, for the log.
    pub(super) fn source(&self) -> String {
        match self.mode {
            TransportDelay::Fixed(_) => "given".into(),
            TransportDelay::Auto if self.samples >= WARM_UP => {
                format!("mean of the latest idle round trips, stalls left out; {} measured", self.samples)
            }
            TransportDelay::Auto if self.prior.is_some_and(|p| p < self.handshake_min) => {
                "measured by an earlier connection (below this handshake's round trip)".into()
            }
            TransportDelay::Auto => "smallest option round trip of the handshake".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_auto_off_and_durations() {
        assert_eq!("auto".parse(), Ok(TransportDelay::Auto));
        assert_eq!("off".parse(), Ok(TransportDelay::Fixed(Duration::ZERO)));
        assert_eq!("15us".parse(), Ok(TransportDelay::Fixed(Duration::from_micros(15))));
        assert_eq!("0.02ms".parse(), Ok(TransportDelay::Fixed(Duration::from_micros(20))));
        assert_eq!("12".parse(), Ok(TransportDelay::Fixed(Duration::from_micros(12))));
        assert!("-3us".parse::<TransportDelay>().is_err());
        assert!("2s".parse::<TransportDelay>().is_err());
        assert!("fast".parse::<TransportDelay>().is_err());
    }

    #[test]
    fn the_estimate_is_the_handshake_then_a_windowed_mean() {
        let mut e = DelayEstimate::new(TransportDelay::Auto);
        assert_eq!(e.delay_ns(), 0);
        e.handshake_sample(40_000);
        e.handshake_sample(30_000);
        assert_eq!(e.delay_ns(), 30_000);
        // Scheduling delays (every fourth round trip) do not move it.
        for i in 0..WARM_UP {
            e.sample(if i % 4 == 0 { 900_000 } else { 20_000 + i });
        }
        assert!((20_000..20_016).contains(&e.delay_ns()), "{}", e.delay_ns());
        // The load changed: after a window the new round trips rule.
        for _ in 0..WINDOW {
            e.sample(25_000);
        }
        assert_eq!(e.delay_ns(), 25_000);
        assert_eq!(DelayEstimate::new(TransportDelay::Fixed(Duration::from_micros(7))).delay_ns(), 7_000);
    }

    #[test]
    fn the_estimate_is_the_mean_with_the_tail_and_without_the_stalls() {
        // The round trip's tail (a quarter of them 20 µs longer) is in the
        // mean a client sees, so in the estimate; a stall (a millisecond,
        // far beyond STALL times the median) is not.
        let mut e = DelayEstimate::new(TransportDelay::Auto);
        for i in 0..WINDOW as u64 {
            e.sample(match i % 4 {
                0 => 60_000,
                _ if i == 5 => 1_000_000,
                _ => 40_000,
            });
        }
        assert_eq!(e.delay_ns(), 45_039, "(32 × 60 + 95 × 40) / 127 µs");
        const { assert!(1_000_000 > STALL * 40_000) };
    }

    #[test]
    fn a_slow_handshake_yields_to_an_earlier_connections_measurement() {
        // Under load the handshake's option round trips take milliseconds
        // (the client's own work between options); an earlier connection
        // measured 30 µs from idle round trips: that is the first estimate.
        let e = |prior: Option<u64>, handshake: u64| {
            let mut e = DelayEstimate::new(TransportDelay::Auto).with_prior(prior);
            e.handshake_sample(handshake);
            e
        };
        assert_eq!(e(Some(30_000), 2_400_000).delay_ns(), 30_000);
        assert!(e(Some(30_000), 2_400_000).source().contains("earlier connection"));
        // A faster handshake than the prior keeps its own.
        assert_eq!(e(Some(30_000), 18_000).delay_ns(), 18_000);
        assert_eq!(e(None, 2_400_000).delay_ns(), 2_400_000);
        assert_eq!(DelayEstimate::new(TransportDelay::Auto).with_prior(Some(30_000)).delay_ns(), 30_000);
        // Once measured, the connection's own estimate rules.
        let mut m = e(Some(30_000), 2_400_000);
        let mut updated = false;
        for _ in 0..WARM_UP {
            updated |= m.sample(50_000);
        }
        assert!(updated);
        assert_eq!(m.delay_ns(), 50_000);
    }

    #[test]
    fn idle_round_trips_are_measured_only_from_an_idle_connection() {
        let idle = Idle::new();
        let t0 = idle.origin;
        assert!(idle.arrived(t0 + Duration::from_micros(5)).is_some(), "the first request");
        // A second request while the first is outstanding: no sample.
        assert!(idle.arrived(t0 + Duration::from_micros(6)).is_none());
        idle.sending(t0 + Duration::from_micros(10));
        idle.sent();
        idle.sending(t0 + Duration::from_micros(20));
        idle.sent();
        assert_eq!(idle.arrived(t0 + Duration::from_micros(37)), Some(17_000));
    }
}
