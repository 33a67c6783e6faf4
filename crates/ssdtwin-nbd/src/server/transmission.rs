//! The NBD transmission phase of one connection: requests read and run
//! on the twin in virtual time ([`transmission`], [`execute`]), and their
//! replies sent straight away or held by a writer thread until their
//! wall-clock due time ([`writer`]), with at most [`MAX_QUEUED`] bytes
//! queued. A reply due within the writer's spin ([`SPIN`]) while nothing
//! is queued is held by the reader itself, spinning, unless the client
//! sends more meanwhile: handing it to the writer would add the writer's
//! wake-up, which varies from reply to reply, to a latency the
//! transport's delay estimate cannot know in advance (fio's QD1 read mean
//! over TCP on a 77.6 µs drive: 78.0–79.4 µs handed over, 77.6–78.4 µs
//! held by the reader; docs/nbd-latency.md). Leaves out the handshake (`handshake.rs`) and the listener and
//! threads (`mod.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::handshake::Negotiated;
use super::structured::{block_status_reply, read_reply, DATA_AT};
use super::transport::{DelayEstimate, Idle};
use super::wire::WireLog;
use super::{Shared, Stream};
use crate::proto::*;

/// A reply waiting for its wall-clock time.
pub(super) struct Reply {
    /// Wall time to send it (`None`: at once).
    due: Option<Instant>,
    /// Order received (ties).
    seq: u64,
    bytes: Vec<u8>,
}

impl PartialEq for Reply {
    fn eq(&self, o: &Reply) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl Eq for Reply {}
impl PartialOrd for Reply {
    fn partial_cmp(&self, o: &Reply) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Reply {
    fn cmp(&self, o: &Reply) -> std::cmp::Ordering {
        // Min-heap by (due, seq) through Reverse in the heap.
        (self.due, self.seq).cmp(&(o.due, o.seq))
    }
}

pub(super) type Seen = Arc<Mutex<BinaryHeap<Reverse<u64>>>>;

/// Reply bytes a connection may have queued for its writer; a client that
/// asks for more without reading its replies waits (back-pressure), so
/// that memory stays bounded.
const MAX_QUEUED: u64 = 64 << 20;

/// Bytes queued for a connection's writer, with a condition variable the
/// reader waits on.
#[derive(Default)]
pub(super) struct Queued {
    bytes: Mutex<u64>,
    drained: Condvar,
}

impl Queued {
    fn add(&self, n: u64) {
        let mut q = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        while *q > 0 && *q + n > MAX_QUEUED {
            q = self.drained.wait(q).unwrap_or_else(|e| e.into_inner());
        }
        *q += n;
    }
    fn is_empty(&self) -> bool {
        *self.bytes.lock().unwrap_or_else(|e| e.into_inner()) == 0
    }
    fn sub(&self, n: u64) {
        let mut q = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        *q -= n;
        self.drained.notify_all();
    }
}

/// How long before a reply's due time the writer stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(60);

/// The writer: sends each reply at its due time, in due order.
pub(super) fn writer(
    out: Arc<Mutex<BufWriter<Stream>>>,
    rx: Receiver<Reply>,
    queued: Arc<Queued>,
    idle: Arc<Idle>,
    wire: &WireLog,
    conn: u64,
) {
    let lock = || out.lock().unwrap_or_else(|e| e.into_inner());
    // Wake-ups as close to the due time as the kernel gives (the default
    // timer slack is 50 µs, as long as a NAND read).
    // SAFETY: PR_SET_TIMERSLACK changes only this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let mut heap: BinaryHeap<Reverse<Reply>> = BinaryHeap::new();
    let mut open = true;
    let mut failed = false;
    loop {
        // Take what has arrived.
        while let Ok(r) = rx.try_recv() {
            heap.push(Reverse(r));
        }
        let Some(Reverse(first)) = heap.peek() else {
            if !open {
                break;
            }
            let _ = lock().flush();
            match rx.recv() {
                Ok(r) => heap.push(Reverse(r)),
                Err(_) => open = false,
            }
            continue;
        };
        let now = Instant::now();
        if let Some(due) = first.due.filter(|&d| d > now) {
            let _ = lock().flush();
            if due - now <= SPIN {
                // The last stretch: spin, a sleep would overshoot it.
                while Instant::now() < due {
                    std::hint::spin_loop();
                }
                continue;
            }
            if open {
                match rx.recv_timeout(due - now - SPIN) {
                    Ok(r) => heap.push(Reverse(r)),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => open = false,
                }
            } else {
                thread::sleep(due - now - SPIN);
            }
            continue;
        }
        let Reverse(r) = heap.pop().expect("peeked");
        idle.sending(Instant::now());
        if !failed && lock().write_all(&r.bytes).is_err() {
            failed = true;
        }
        wire.replied(conn, &r.bytes);
        idle.sent();
        queued.sub(r.bytes.len() as u64);
    }
    let _ = lock().flush();
}

/// Where replies go: a paced writer thread, or straight to the socket.
pub(super) enum Sink<'a> {
    Thread {
        tx: &'a mpsc::Sender<Reply>,
        queued: &'a Queued,
        idle: &'a Idle,
        delay: &'a mut DelayEstimate,
        /// The socket the writer sends on; a reply already due when
        /// nothing is queued goes out from the reader at once.
        out: &'a Mutex<BufWriter<Stream>>,
    },
    Direct(&'a mut BufWriter<Stream>),
}

/// The transmission phase: requests until `NBD_CMD_DISC` or the end.
pub(super) fn transmission(
    sh: &Shared,
    conn: u64,
    neg: Negotiated,
    r: &mut BufReader<Stream>,
    sink: &mut Sink,
    seen: &Seen,
) -> Result<(), ProtoError> {
    let mut seq = 0u64;
    let mut payload: Vec<u8> = Vec::new();
    // The reply buffer, reused while replies go straight to the socket.
    let mut bytes: Vec<u8> = Vec::new();
    // Where a read with holes assembles its chunks.
    let mut scratch: Vec<u8> = Vec::new();
    loop {
        if let Sink::Direct(w) = sink {
            if r.buffer().is_empty() && !r.get_ref().has_input() {
                w.flush()?;
            }
        }
        let mut h = [0u8; REQUEST_LEN];
        match r.read_exact(&mut h) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(ProtoError::Io(io::Error::new(e.kind(), "closed without NBD_CMD_DISC")));
            }
            Err(e) => return Err(e.into()),
        }
        let req = parse_request(&h)?;
        if req.kind == CMD_DISC {
            return Ok(());
        }
        if req.kind == CMD_WRITE {
            if req.len > MAX_PAYLOAD {
                return Err(ProtoError::Violation(format!("write payload of {} bytes", req.len)));
            }
            payload.resize(req.len as usize, 0);
            r.read_exact(&mut payload)?;
        }
        // The request has arrived: it is submitted now, and its reply may
        // not go before.
        let arrived = Instant::now();
        if let Sink::Thread { idle, delay, .. } = sink {
            if let Some(round_trip) = idle.arrived(arrived) {
                if delay.sample(round_trip) {
                    sh.counters.measured_delay_ns.store(delay.delay_ns(), Ordering::Relaxed);
                }
            }
        }
        let n = sh.counters.requests.fetch_add(1, Ordering::Relaxed) + 1;
        let ctx = Context { conn, neg, seen, first: seq == 0, arrived };
        let (error, done) = execute(sh, &ctx, &req, &payload, &mut bytes, &mut scratch);
        if error == POWER_CUT {
            // The power went before this request: it is not run.
            sh.power_cut(done, "at its simulated time");
            return Err(ProtoError::Io(io::Error::other("power cut")));
        }
        if sh.opts.power_loss_after == Some(n) {
            let now = sh.twin().now();
            sh.power_cut(now, &format!("after {n} requests"));
            return Err(ProtoError::Io(io::Error::other("power cut")));
        }
        if error != 0 {
            sh.counters.errors.fetch_add(1, Ordering::Relaxed);
        }
        seq += 1;
        match sink {
            Sink::Thread { tx, queued, delay, idle, out } => {
                // Sent the transport's delay before the simulated
                // completion, so that it reaches the client then.
                let early = Duration::from_nanos(delay.delay_ns());
                let due = sh.clock.wall_of(done).checked_sub(early).map_or(arrived, |d| d.max(arrived));
                if queued.is_empty() && due <= Instant::now() + SPIN && wait_for(due, r) {
                    // Due already (the transport is slower than the
                    // drive), or within the writer's spin and the client
                    // sent nothing meanwhile: sent from here, without
                    // the writer thread's wake-up (on another core, a
                    // delay that varies from reply to reply).
                    let now = Instant::now();
                    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
                    idle.sending(now);
                    let sent = w.write_all(&bytes).and_then(|()| w.flush());
                    sh.counters.wire.replied(conn, &bytes);
                    idle.sent();
                    sent?;
                    continue;
                }
                let due = Some(due);
                queued.add(bytes.len() as u64);
                // The paced writer keeps the reply until its time.
                let bytes = std::mem::take(&mut bytes);
                if tx.send(Reply { due, seq, bytes }).is_err() {
                    return Err(ProtoError::Io(io::Error::other("writer ended")));
                }
            }
            Sink::Direct(w) => {
                // Counted as seen before the client can have it.
                seen.lock().unwrap_or_else(|e| e.into_inner()).push(Reverse(done));
                w.write_all(&bytes)?;
                sh.counters.wire.replied(conn, &bytes);
            }
        }
    }
}

/// Spin until `due` unless the client sends more meanwhile: whether
/// `due` was reached (false: a request waits to be read, and the reply
/// goes to the writer thread).
fn wait_for(due: Instant, r: &BufReader<Stream>) -> bool {
    loop {
        if Instant::now() >= due {
            return true;
        }
        if !r.buffer().is_empty() || r.get_ref().socket_has_input() {
            return false;
        }
        std::hint::spin_loop();
    }
}

/// [`execute`]'s error when the power goes before the request (with the
/// cut's time).
const POWER_CUT: u32 = u32::MAX;

/// What a request is executed with, besides itself.
struct Context<'a> {
    /// The connection's number.
    conn: u64,
    neg: Negotiated,
    seen: &'a Seen,
    /// The session's first request.
    first: bool,
    /// When it arrived.
    arrived: Instant,
}

/// Check and run one request, its whole reply (a simple reply, or with
/// structured replies a read's chunks or block status) into `buf`, reused
/// from request to request (`scratch` too). Returns (error, virtual
/// completion time).
fn execute(
    sh: &Shared,
    ctx: &Context,
    req: &Request,
    payload: &[u8],
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> (u32, u64) {
    let Context { conn, neg, seen, first, arrived } = *ctx;
    let in_range = req.offset.checked_add(req.len as u64).is_some_and(|e| e <= sh.size);
    let known = matches!(req.kind, CMD_READ | CMD_WRITE | CMD_FLUSH | CMD_TRIM | CMD_WRITE_ZEROES)
        || (req.kind == CMD_BLOCK_STATUS && neg.allocation);
    let fua = req.flags & CMD_FLAG_FUA != 0;
    let started = Instant::now();
    let mut twin = sh.twin();
    // The submission time: wall clock mapped, or the closed loop.
    let t = if sh.clock.scale > 0.0 {
        sh.clock.virt_of(arrived)
    } else if first {
        // A new client comes after everything it could have seen.
        twin.last_done()
    } else {
        seen.lock().unwrap_or_else(|e| e.into_inner()).pop().map_or(0, |Reverse(v)| v)
    };
    let t = t.max(twin.now());
    if let Some(at) = sh.cut_due(t) {
        return (POWER_CUT, at);
    }
    // In the twin's order (its lock is held).
    sh.counters.wire.request(conn, req);
    let invalid = !known
        || (req.kind != CMD_FLUSH && !in_range)
        || (req.kind == CMD_READ && req.len > MAX_PAYLOAD)
        || (req.kind == CMD_BLOCK_STATUS && req.len == 0);
    // Reads and block status answer with structured replies when
    // negotiated, anything else with a simple reply.
    let structured = neg.structured && matches!(req.kind, CMD_READ | CMD_BLOCK_STATUS);
    let data_at = if structured { DATA_AT } else { 16 };
    // The reply's length; its bytes are all overwritten (header, data).
    let reply_len = if !invalid && req.kind == CMD_READ { data_at + req.len as usize } else { 16 };
    buf.resize(reply_len, 0);
    let result = if invalid {
        (EINVAL, t)
    } else {
        match req.kind {
            CMD_READ => (0, twin.read(t, req.offset, &mut buf[data_at..])),
            CMD_BLOCK_STATUS => {
                block_status_reply(&twin, req, buf);
                (0, t)
            }
            CMD_WRITE => (0, twin.write(t, req.offset, payload, fua)),
            CMD_FLUSH => (0, twin.flush(t)),
            CMD_TRIM => {
                let mut done = twin.trim(t, req.offset, req.len as u64);
                if fua {
                    done = done.max(twin.flush(t));
                }
                (0, done)
            }
            CMD_WRITE_ZEROES => {
                let no_hole = req.flags & CMD_FLAG_NO_HOLE != 0;
                (0, twin.write_zeroes(t, req.offset, req.len as u64, no_hole, fua))
            }
            _ => unreachable!("checked above"),
        }
    };
    // A command the drive failed (an uncorrectable read, a write to a
    // read-only drive) is an I/O error for the client.
    // No payload follows an error reply.
    let result = if twin.take_error() && result.0 == 0 { (EIO, result.1) } else { result };
    match (result.0, structured) {
        (0, true) if req.kind == CMD_READ => read_reply(&twin, req, buf, scratch),
        (0, true) => {} // block status: built above
        (0, false) => buf[..16].copy_from_slice(&simple_reply(0, req.cookie)),
        (error, true) => {
            buf.clear();
            buf.extend_from_slice(&error_chunk(error, req.cookie));
        }
        (error, false) => {
            buf.truncate(16);
            buf[..16].copy_from_slice(&simple_reply(error, req.cookie));
        }
    }
    drop(twin);
    sh.counters.twin_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    result
}
