//! How a server is configured ([`ServeOptions`]), what it counts while it
//! serves ([`ServerCounters`]) and what it hands back when it stops
//! ([`ServeOutcome`]). Left out: options of the command line that only
//! build these (`ssdtwin serve` in the CLI crate).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::power::ReloadImage;
use super::tls::TlsMode;
use super::transport::TransportDelay;
use super::wire::WireLog;
use crate::twin::Twin;

/// Where to listen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix socket path (created; removed when the server stops).
    Unix(PathBuf),
}

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where to listen.
    pub listen: Listen,
    /// Allow a TCP address other than loopback.
    pub allow_remote: bool,
    /// Wall seconds per simulated second (0: as fast as possible).
    pub time_scale: f64,
    /// The export's name (clients asking for "" get it too).
    pub export_name: String,
    /// The export's description (`NBD_OPT_LIST`, `NBD_INFO_DESCRIPTION`).
    pub description: String,
    /// Stop when the last client disconnects after at least one entered
    /// transmission.
    pub once: bool,
    /// Log lines on stderr (connections, bad clients).
    pub log: bool,
    /// Cut the power after this many requests (see
    /// [`Twin::power_cut`]): unflushed data not yet on flash is lost, every
    /// connection is dropped (the N-th request gets no reply), and the
    /// server goes on serving the restarted drive.
    pub power_loss_after: Option<u64>,
    /// Cut the power at this simulated time, ns (see `power.rs`).
    pub power_loss_at: Option<u64>,
    /// Cut the power at moments drawn from this seed, the next one falling
    /// in the second half of the window (ns) after each (re)start.
    pub power_loss_random: Option<(u64, u64)>,
    /// After a cut, save the drive to this image and load it again.
    pub reload: Option<ReloadImage>,
    /// Cuts may be asked for ([`Server::power_cutter`], SIGUSR1).
    pub power_loss_by_signal: bool,
    /// The drive has power-loss protection: a cut loses nothing
    /// acknowledged.
    pub plp: bool,
    /// How early to send replies so that they reach the client at their
    /// simulated completion (time scale > 0; see `transport.rs`).
    pub transport_delay: TransportDelay,
    /// Whether TLS is offered or required (`tls.rs`).
    pub tls: TlsMode,
    /// The certificates (needed unless `tls` is off).
    pub tls_config: Option<Arc<rustls::ServerConfig>>,
    /// Pre-shared keys (`--tls-psk`, feature `tls-psk`): used instead of
    /// the certificates when given.
    #[cfg(feature = "tls-psk")]
    pub tls_psk: Option<Arc<openssl::ssl::SslContext>>,
    /// Listen on a non-loopback address without requiring TLS (with
    /// `allow_remote`): the waiver.
    pub remote_without_tls: bool,
    /// Keep the wire log ([`ServerCounters::wire`], `wire.rs`): every
    /// request, reply and cut, for a campaign's audit.
    pub wire_log: bool,
}

impl ServeOptions {
    /// Defaults: `127.0.0.1:10809`, real time, export `ssdtwin`.
    pub fn new() -> ServeOptions {
        ServeOptions {
            listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 10809))),
            allow_remote: false,
            time_scale: 1.0,
            export_name: "ssdtwin".into(),
            description: "ssdtwin simulated SSD".into(),
            once: false,
            log: true,
            power_loss_after: None,
            power_loss_at: None,
            power_loss_random: None,
            reload: None,
            power_loss_by_signal: false,
            plp: false,
            transport_delay: TransportDelay::Auto,
            tls: TlsMode::Off,
            tls_config: None,
            #[cfg(feature = "tls-psk")]
            tls_psk: None,
            remote_without_tls: false,
            wire_log: false,
        }
    }
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions::new()
    }
}

/// Counters of a serving session.
#[derive(Debug, Default)]
pub struct ServerCounters {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections that reached transmission.
    pub sessions: AtomicU64,
    /// Requests served (all types).
    pub requests: AtomicU64,
    /// Requests answered with an error.
    pub errors: AtomicU64,
    /// Connections ended for a protocol violation.
    pub violations: AtomicU64,
    /// Wall time spent holding the twin's lock (simulating and moving
    /// bytes), ns.
    pub twin_ns: AtomicU64,
    /// Wall time TLS readers spent polling their sockets for input before
    /// sleeping (`Stream::read_polled`), with the reads that ended the
    /// polls, ns: CPU spent waiting, not serving.
    pub tls_poll_ns: AtomicU64,
    /// Power cuts simulated.
    pub power_cuts: AtomicU64,
    /// Pages whose unflushed data a power cut lost.
    pub lost_pages: AtomicU64,
    /// The most pages one power cut lost.
    pub worst_cut_lost_pages: AtomicU64,
    /// The logical pages (4 KiB) each power cut lost, ascending, one list
    /// per cut in order (for a campaign to check against what its clients
    /// left unflushed).
    pub cut_losses: Mutex<Vec<Vec<u64>>>,
    /// The transport delay each paced session ended with, ns (time
    /// scale > 0).
    pub transport_delays_ns: Mutex<Vec<u64>>,
    /// The latest transport delay measured from idle round trips by any
    /// connection, ns (0: none yet): a new connection's first estimate
    /// when it is below that connection's handshake round trip.
    pub measured_delay_ns: AtomicU64,
    /// The wire log (empty unless [`ServeOptions::wire_log`]).
    pub wire: WireLog,
}

/// What a stopped server hands back.
#[derive(Debug)]
pub struct ServeOutcome {
    /// The twin (statistics, data).
    pub twin: Twin,
    /// Counters.
    pub counters: Arc<ServerCounters>,
    /// Wall time served.
    pub wall: Duration,
}
