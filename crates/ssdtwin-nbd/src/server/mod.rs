//! The NBD server: listening socket, one reader and one writer thread per
//! connection, the twin shared behind a mutex, replies paced onto the
//! wall clock.
//!
//! **Threads.** The accept loop waits on the listener with `poll` (waking
//! every 50 ms to see a stop request). Each connection gets a reader
//! thread (handshake, then requests: reads a request and its payload,
//! takes the twin's lock, runs the command in virtual time, builds the
//! reply) and, with a time scale above 0, a writer thread (holds replies
//! until their wall-clock due time, sends them in due order); at time
//! scale 0 the reader sends the replies itself, flushed whenever no
//! further request is already buffered. A connection is one host queue; any
//! number of commands may be outstanding on it, and any number of
//! connections share the twin (`NBD_FLAG_CAN_MULTI_CONN`: a flush covers
//! every connection's writes).
//!
//! **Time.** With time scale `s > 0`, virtual time runs `1/s` as fast as
//! the wall clock from the server's start: a request is submitted at the
//! virtual time its arrival maps to (or the twin's clock, if that is
//! ahead), and its reply is sent when the wall clock reaches its
//! simulated completion time (at once if the server is late). With
//! `s = 0` nothing waits: a request is submitted at the completion time
//! of the earliest reply the writer has sent on that connection and not
//! yet matched with a request — a closed loop, as fio's: at queue depth 1
//! the twin sees exactly the submission times `ssdtwin run` would give
//! it; at higher depths the first requests of a burst are all submitted
//! at once, then each new request takes the place of a completed one.
//!
//! **Bad clients.** A broken handshake or request magic, an option or
//! payload above the bounds in [`crate::proto`], or a vanished client
//! ends that connection (with a log line); a request out of range, too
//! large or of an unknown type gets
//! `NBD_EINVAL` and the session continues. No length field is allocated
//! before it is checked, and a connection queues at most 64 MiB of
//! replies (a client that does not read them waits). Other connections
//! are not affected.
//!
//! Left out: several exports.

use std::collections::BinaryHeap;
use std::io::{self, BufReader, BufWriter, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::proto::*;
use crate::twin::Twin;

mod handshake;
mod options;
mod power;
mod stream;
mod structured;
mod tls;
#[cfg(feature = "tls-psk")]
mod tls_psk;
mod transmission;
mod transport;
pub mod wire;

use handshake::{handshake, Handshake};
pub use options::{Listen, ServeOptions, ServeOutcome, ServerCounters};
use power::CutPlan;
pub use power::{power_cut_on_sigusr1, ReloadImage};
use stream::{Listener, Stream};
use tls::TlsStream;
pub use tls::{load_certificates, TlsMode};
#[cfg(feature = "tls-psk")]
pub use tls_psk::load_psk_file;
use transmission::{transmission, writer, Queued, Reply, Sink};
pub use transport::TransportDelay;
use transport::{DelayEstimate, Idle};
use wire::WireLog;

/// The clock mapping between wall time and virtual time.
#[derive(Debug, Clone, Copy)]
struct Clock {
    origin: Instant,
    origin_virt: u64,
    scale: f64,
}

impl Clock {
    /// Virtual time of the wall instant `at` (scale > 0).
    fn virt_of(&self, at: Instant) -> u64 {
        self.origin_virt + (at.saturating_duration_since(self.origin).as_nanos() as f64 / self.scale) as u64
    }

    /// Wall instant of virtual time `v` (scale > 0).
    fn wall_of(&self, v: u64) -> Instant {
        self.origin + Duration::from_nanos((v.saturating_sub(self.origin_virt) as f64 * self.scale) as u64)
    }
}

struct Shared {
    twin: Mutex<Twin>,
    /// Export size, bytes.
    size: u64,
    clock: Clock,
    opts: ServeOptions,
    stop: Arc<AtomicBool>,
    counters: Arc<ServerCounters>,
    /// Live connections (to shut them down at stop), by id.
    live: Mutex<Vec<(u64, Stream)>>,
    /// When the next power cut falls.
    cut_plan: Mutex<CutPlan>,
    /// A power cut asked for (SIGUSR1).
    cut_now: Arc<AtomicBool>,
}

impl Shared {
    fn log(&self, msg: std::fmt::Arguments) {
        if self.opts.log {
            // Not `eprintln!`, which panics when standard error is a pipe
            // whose reader has gone: the log is lost, serving goes on.
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "ssdtwin serve: {msg}");
        }
    }

    fn twin(&self) -> MutexGuard<'_, Twin> {
        // A panic under the lock would be a bug; keep serving the others.
        self.twin.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn flags(&self) -> u16 {
        TFLAG_HAS_FLAGS
            | TFLAG_SEND_FLUSH
            | TFLAG_SEND_FUA
            | TFLAG_SEND_TRIM
            | TFLAG_SEND_WRITE_ZEROES
            | TFLAG_CAN_MULTI_CONN
    }
}

/// A bound server, ready to [`Server::run`].
pub struct Server {
    listener: Listener,
    shared: Arc<Shared>,
}

impl Server {
    /// Bind the listening socket. A non-loopback TCP address needs
    /// `allow_remote`; the time scale must be finite and ≥ 0.
    pub fn bind(mut twin: Twin, opts: ServeOptions) -> io::Result<Server> {
        // What a cut needs is kept only when one can come (it costs a
        // copy of each page written until the next flush).
        if opts.power_loss_after.is_some()
            || opts.power_loss_at.is_some()
            || opts.power_loss_random.is_some()
            || opts.power_loss_by_signal
        {
            twin.track_power_loss(opts.plp);
        }
        if !(opts.time_scale.is_finite() && opts.time_scale >= 0.0) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "the time scale must be a number ≥ 0"));
        }
        let listener = match &opts.listen {
            Listen::Tcp(addr) => {
                if !addr.ip().is_loopback() && !opts.allow_remote {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!("{addr} is not a loopback address: pass --allow-remote (with --tls=require) to listen there"),
                    ));
                }
                if !addr.ip().is_loopback() && opts.tls != TlsMode::Require && !opts.remote_without_tls {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!("{addr} is not a loopback address: remote clients need --tls=require (with --tls-certificates DIR); pass --allow-remote-without-tls to serve them in the clear"),
                    ));
                }
                Listener::Tcp(TcpListener::bind(addr)?)
            }
            Listen::Unix(path) => Listener::Unix(UnixListener::bind(path)?, path.clone()),
        };
        #[cfg(feature = "tls-psk")]
        let credentials = opts.tls_config.is_some() || opts.tls_psk.is_some();
        #[cfg(not(feature = "tls-psk"))]
        let credentials = opts.tls_config.is_some();
        if opts.tls != TlsMode::Off && !credentials {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "TLS needs certificates (--tls-certificates DIR) or pre-shared keys (--tls-psk FILE)",
            ));
        }
        match &listener {
            Listener::Tcp(l) => l.set_nonblocking(true)?,
            Listener::Unix(l, _) => l.set_nonblocking(true)?,
        }
        let origin_virt = twin.now();
        let cut_plan = CutPlan::new(opts.power_loss_at, opts.power_loss_random, origin_virt);
        let wire = WireLog::new(opts.wire_log);
        Ok(Server {
            listener,
            shared: Arc::new(Shared {
                size: twin.user_bytes(),
                twin: Mutex::new(twin),
                clock: Clock { origin: Instant::now(), origin_virt, scale: opts.time_scale },
                opts,
                stop: Arc::new(AtomicBool::new(false)),
                counters: Arc::new(ServerCounters { wire, ..Default::default() }),
                live: Mutex::new(Vec::new()),
                cut_plan: Mutex::new(cut_plan),
                cut_now: Arc::new(AtomicBool::new(false)),
            }),
        })
    }

    /// The TCP address bound (port 0 resolved), if TCP.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match &self.listener {
            Listener::Tcp(l) => l.local_addr().ok(),
            Listener::Unix(..) => None,
        }
    }

    /// A flag that stops the server when set (from any thread or a signal
    /// handler's watcher).
    pub fn stopper(&self) -> Arc<AtomicBool> {
        self.shared.stop.clone()
    }

    /// A flag that cuts the power when set (SIGUSR1's watcher); the
    /// server clears it when it has cut.
    pub fn power_cutter(&self) -> Arc<AtomicBool> {
        self.shared.cut_now.clone()
    }

    /// Counters, readable while the server runs.
    pub fn counters(&self) -> Arc<ServerCounters> {
        self.shared.counters.clone()
    }

    /// Serve until stopped (the stop flag, or with `once` the last client
    /// gone). On stop the listening socket is closed first, then every
    /// connection's reading side; replies already computed are still sent
    /// (for up to 2 s), then the connections are closed. Returns the twin.
    pub fn run(self) -> io::Result<ServeOutcome> {
        self.run_with(|_| {})
    }

    /// As [`Server::run`], calling `tick` about every 50 ms of wall time
    /// with the twin locked (a status line).
    pub fn run_with(self, mut tick: impl FnMut(&Twin)) -> io::Result<ServeOutcome> {
        let Server { listener, shared } = self;
        let mut handles: Vec<JoinHandle<()>> = Vec::new();
        let mut next_id = 0u64;
        let active = Arc::new(AtomicU64::new(0));
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                break;
            }
            // Power cuts asked for, or due by the wall clock.
            let virt_now =
                if shared.clock.scale > 0.0 { shared.clock.virt_of(Instant::now()) } else { shared.twin().now() };
            if shared.cut_now.swap(false, Ordering::AcqRel) {
                shared.power_cut(virt_now, "asked for");
            } else if let Some(at) = shared.cut_due(virt_now).filter(|_| shared.clock.scale > 0.0) {
                shared.power_cut(at, "at its simulated time");
            }
            if shared.opts.once
                && shared.counters.sessions.load(Ordering::Relaxed) > 0
                && active.load(Ordering::Acquire) == 0
            {
                break;
            }
            let accepted = match &listener {
                Listener::Tcp(l) => l.accept().map(|(s, _)| {
                    let _ = s.set_nodelay(true);
                    Stream::Tcp(s)
                }),
                Listener::Unix(l, _) => l.accept().map(|(s, _)| Stream::Unix(s)),
            };
            match accepted {
                Ok(stream) => {
                    stream.set_nonblocking(false)?;
                    let id = next_id;
                    next_id += 1;
                    shared.counters.connections.fetch_add(1, Ordering::Relaxed);
                    if let Ok(c) = stream.try_clone() {
                        shared.live.lock().unwrap_or_else(|e| e.into_inner()).push((id, c));
                    }
                    active.fetch_add(1, Ordering::AcqRel);
                    let sh = shared.clone();
                    let act = active.clone();
                    handles.retain(|h| !h.is_finished());
                    handles.push(thread::spawn(move || {
                        connection(&sh, id, stream);
                        sh.live.lock().unwrap_or_else(|e| e.into_inner()).retain(|(i, _)| *i != id);
                        act.fetch_sub(1, Ordering::AcqRel);
                    }));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // Wait for a connection (or 50 ms, to see a stop).
                    let fd = match &listener {
                        Listener::Tcp(l) => l.as_raw_fd(),
                        Listener::Unix(l, _) => l.as_raw_fd(),
                    };
                    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                    // SAFETY: one valid pollfd for the call's duration.
                    unsafe { libc::poll(&mut pfd, 1, if shared.opts.once { 5 } else { 50 }) };
                    tick(&shared.twin());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    shared.log(format_args!("accept failed: {e}"));
                    thread::sleep(Duration::from_millis(50));
                }
            }
        }
        // Close the listening socket first, then the clients' reading side.
        if let Listener::Unix(_, path) = &listener {
            let _ = std::fs::remove_file(path);
        }
        drop(listener);
        for (_, s) in shared.live.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            s.shutdown(std::net::Shutdown::Read);
        }
        // Replies under way get 2 s to go out; a client that does not read
        // them must not keep the server from stopping.
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && !handles.iter().all(|h| h.is_finished()) {
            thread::sleep(Duration::from_millis(10));
        }
        for (_, s) in shared.live.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            s.shutdown(std::net::Shutdown::Both);
        }
        for h in handles {
            let _ = h.join();
        }
        let wall = shared.clock.origin.elapsed();
        let counters = shared.counters.clone();
        let shared = Arc::try_unwrap(shared).map_err(|_| io::Error::other("connection threads still hold the twin"))?;
        let twin = shared.twin.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok(ServeOutcome { twin, counters, wall })
    }
}

/// One connection: handshake, then transmission.
fn connection(sh: &Arc<Shared>, id: u64, stream: Stream) {
    let Ok(wstream) = stream.try_clone() else { return };
    let Ok(raw) = stream.try_clone() else { return };
    let mut r = BufReader::with_capacity(1 << 16, stream);
    let mut w = BufWriter::with_capacity(1 << 16, wstream);
    let mut delay = DelayEstimate::new(sh.opts.transport_delay)
        .with_prior(Some(sh.counters.measured_delay_ns.load(Ordering::Relaxed)).filter(|&d| d > 0));
    let mut tls = false;
    let mut no_zeroes = false;
    let neg = loop {
        match handshake(sh, &mut r, &mut w, &mut delay, tls, &mut no_zeroes) {
            Ok(Handshake::Go(neg)) => break neg,
            Ok(Handshake::Abort) => return,
            Ok(Handshake::StartTls) => {
                // Bytes the client sent after its option start its TLS
                // handshake; the NBD handshake then starts again inside.
                let early = r.buffer().to_vec();
                let Ok(sock) = raw.try_clone() else { return };
                match start_tls(sh, sock, &early) {
                    Ok(t) => {
                        // The TLS library buffers the plaintext itself: no
                        // second buffer (it would copy each payload once
                        // more).
                        let Ok(reader) = t.try_clone() else { return };
                        r = BufReader::with_capacity(0, reader);
                        w = BufWriter::with_capacity(1 << 16, t);
                        tls = true;
                    }
                    Err(e) => {
                        sh.log(format_args!("connection {id}: TLS handshake: {e}"));
                        return;
                    }
                }
            }
            Err(ProtoError::Io(e)) => {
                if e.kind() != io::ErrorKind::UnexpectedEof {
                    sh.log(format_args!("connection {id}: handshake: {e}"));
                }
                return;
            }
            Err(e @ ProtoError::Violation(_)) => {
                sh.counters.violations.fetch_add(1, Ordering::Relaxed);
                sh.log(format_args!("connection {id}: handshake: {e}; disconnecting"));
                return;
            }
        }
    };
    sh.counters.sessions.fetch_add(1, Ordering::Relaxed);
    sh.log(format_args!("connection {id}: transmission"));
    let seen = Arc::new(Mutex::new(BinaryHeap::new()));
    let end = if sh.clock.scale > 0.0 {
        // Paced: a writer thread holds each reply until its due time.
        let (tx, rx) = mpsc::channel::<Reply>();
        let out = Arc::new(Mutex::new(w));
        let out_w = out.clone();
        let queued = Arc::new(Queued::default());
        let queued_w = queued.clone();
        // Idle round trips count from the end of the handshake.
        let idle = Arc::new(Idle::new());
        let idle_w = idle.clone();
        let counters = sh.counters.clone();
        let writer = thread::spawn(move || writer(out_w, rx, queued_w, idle_w, &counters.wire, id));
        let sink = &mut Sink::Thread { tx: &tx, queued: &queued, idle: &idle, delay: &mut delay, out: &out };
        let end = transmission(sh, id, neg, &mut r, sink, &seen);
        drop(tx);
        let _ = writer.join();
        let d = delay.delay_ns();
        sh.counters.transport_delays_ns.lock().unwrap_or_else(|e| e.into_inner()).push(d);
        sh.log(format_args!("connection {id}: transport delay {:.1} µs ({})", d as f64 / 1e3, delay.source()));
        end
    } else {
        // As fast as possible: replies go out from this thread, flushed
        // whenever no more requests are already buffered.
        let end = transmission(sh, id, neg, &mut r, &mut Sink::Direct(&mut w), &seen);
        let _ = w.flush();
        end
    };
    match end {
        Ok(()) => sh.log(format_args!("connection {id}: closed")),
        Err(ProtoError::Io(e)) => sh.log(format_args!("connection {id}: client gone ({e})")),
        Err(e @ ProtoError::Violation(_)) => {
            sh.counters.violations.fetch_add(1, Ordering::Relaxed);
            sh.log(format_args!("connection {id}: {e}; disconnecting"));
        }
    }
    r.get_ref().close_tls();
    r.get_ref().shutdown(std::net::Shutdown::Both);
}

/// The TLS handshake after `NBD_OPT_STARTTLS`: with pre-shared keys when
/// the server has a key file, else with its certificates.
fn start_tls(sh: &Shared, sock: Stream, early: &[u8]) -> io::Result<Stream> {
    #[cfg(feature = "tls-psk")]
    if let Some(ctx) = &sh.opts.tls_psk {
        return Ok(Stream::Psk(tls_psk::PskStream::accept(sock, early, ctx, sh.counters.clone())?));
    }
    let config = sh.opts.tls_config.clone().ok_or_else(|| io::Error::other("TLS offered without credentials"))?;
    Ok(Stream::Tls(TlsStream::accept(sock, early, config, sh.counters.clone())?))
}

static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::SeqCst);
}

/// Catch SIGINT and SIGTERM from now on (they no longer kill the
/// process): call it early, before the socket exists, so that a signal
/// sent as soon as the server is reachable stops it gracefully.
pub fn catch_stop_signals() {
    // SAFETY: the handler only stores to an atomic, which is
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// Set `stop` when the process gets (or has got, since
/// [`catch_stop_signals`]) SIGINT or SIGTERM: a watcher thread polls a flag
/// the signal handler sets.
pub fn stop_on_signals(stop: Arc<AtomicBool>) {
    catch_stop_signals();
    thread::spawn(move || loop {
        if SIGNALLED.load(Ordering::SeqCst) {
            stop.store(true, Ordering::SeqCst);
            return;
        }
        thread::sleep(Duration::from_millis(20));
    });
}
