//! The NBD transmission phase of one connection: requests read and run
//! on the twin in virtual time ([`transmission`], [`execute`]), and their
//! replies sent straight away or held by a writer thread until their
//! wall-clock due time ([`writer`]), with at most [`MAX_QUEUED`] bytes
//! queued. Leaves out the handshake (`handshake.rs`) and the listener and
//! threads (`mod.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::{Shared, Stream};
use crate::proto::*;

/// A reply waiting for its wall-clock time.
pub(super) struct Reply {
    /// Virtual completion time.
    done: u64,
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
    fn sub(&self, n: u64) {
        let mut q = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        *q -= n;
        self.drained.notify_all();
    }
}

/// How long before a reply's due time the writer stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(60);

/// The writer: sends each reply at its due time, in due order.
pub(super) fn writer(mut w: BufWriter<Stream>, rx: Receiver<Reply>, seen: Seen, queued: Arc<Queued>) {
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
            let _ = w.flush();
            match rx.recv() {
                Ok(r) => heap.push(Reverse(r)),
                Err(_) => open = false,
            }
            continue;
        };
        let now = Instant::now();
        if let Some(due) = first.due.filter(|&d| d > now) {
            let _ = w.flush();
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
        // Counted as seen before the client can have it (time scale 0).
        seen.lock().unwrap_or_else(|e| e.into_inner()).push(Reverse(r.done));
        if !failed && w.write_all(&r.bytes).is_err() {
            failed = true;
        }
        queued.sub(r.bytes.len() as u64);
    }
    let _ = w.flush();
}

/// Where replies go: a paced writer thread, or straight to the socket.
pub(super) enum Sink<'a> {
    Thread { tx: &'a mpsc::Sender<Reply>, queued: &'a Queued },
    Direct(&'a mut BufWriter<Stream>),
}

/// The transmission phase: requests until `NBD_CMD_DISC` or the end.
pub(super) fn transmission(
    sh: &Shared,
    r: &mut BufReader<Stream>,
    sink: &mut Sink,
    seen: &Seen,
) -> Result<(), ProtoError> {
    let mut seq = 0u64;
    let mut payload: Vec<u8> = Vec::new();
    // The reply buffer, reused while replies go straight to the socket.
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        if let Sink::Direct(w) = sink {
            if r.buffer().is_empty() {
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
        let n = sh.counters.requests.fetch_add(1, Ordering::Relaxed) + 1;
        let (error, done) = execute(sh, &req, &payload, seen, seq == 0, &mut bytes);
        if sh.opts.power_loss_after == Some(n) {
            let cut = sh.twin().power_cut();
            sh.counters.power_cuts.fetch_add(1, Ordering::Relaxed);
            sh.counters.lost_pages.fetch_add(cut.lost_pages, Ordering::Relaxed);
            sh.log(format_args!(
                "power cut after {n} requests: {} of {} pages written since the last flush lost; dropping every connection",
                cut.lost_pages, cut.unflushed_pages
            ));
            for (_, s) in sh.live.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                s.shutdown(std::net::Shutdown::Both);
            }
            return Err(ProtoError::Io(io::Error::other("power cut")));
        }
        if error != 0 {
            sh.counters.errors.fetch_add(1, Ordering::Relaxed);
            bytes.truncate(16);
        }
        bytes[..16].copy_from_slice(&simple_reply(error, req.cookie));
        let due = (sh.clock.scale > 0.0).then(|| sh.clock.wall_of(done));
        seq += 1;
        match sink {
            Sink::Thread { tx, queued } => {
                queued.add(bytes.len() as u64);
                // The paced writer keeps the reply until its time.
                let bytes = std::mem::take(&mut bytes);
                if tx.send(Reply { done, due, seq, bytes }).is_err() {
                    return Err(ProtoError::Io(io::Error::other("writer ended")));
                }
            }
            Sink::Direct(w) => {
                // Counted as seen before the client can have it.
                seen.lock().unwrap_or_else(|e| e.into_inner()).push(Reverse(done));
                w.write_all(&bytes)?;
            }
        }
    }
}

/// Check and run one request, its reply's bytes (room for the 16-byte
/// header first, then any read data) into `buf`, reused from request to
/// request. Returns (error, virtual completion time).
fn execute(sh: &Shared, req: &Request, payload: &[u8], seen: &Seen, first: bool, buf: &mut Vec<u8>) -> (u32, u64) {
    let in_range = req.offset.checked_add(req.len as u64).is_some_and(|e| e <= sh.size);
    let known = matches!(req.kind, CMD_READ | CMD_WRITE | CMD_FLUSH | CMD_TRIM | CMD_WRITE_ZEROES);
    let fua = req.flags & CMD_FLAG_FUA != 0;
    let started = Instant::now();
    let mut twin = sh.twin();
    // The submission time: wall clock mapped, or the closed loop.
    let t = if sh.clock.scale > 0.0 {
        sh.clock.virt_now()
    } else if first {
        // A new client comes after everything it could have seen.
        twin.last_done()
    } else {
        seen.lock().unwrap_or_else(|e| e.into_inner()).pop().map_or(0, |Reverse(v)| v)
    };
    let t = t.max(twin.now());
    let invalid = !known || (req.kind != CMD_FLUSH && !in_range) || (req.kind == CMD_READ && req.len > MAX_PAYLOAD);
    // The reply's length; its bytes are all overwritten (header, data).
    let reply_len = if !invalid && req.kind == CMD_READ { 16 + req.len as usize } else { 16 };
    buf.resize(reply_len, 0);
    let result = if invalid {
        (EINVAL, t)
    } else {
        match req.kind {
            CMD_READ => (0, twin.read(t, req.offset, &mut buf[16..])),
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
    let result = if twin.take_error() && result.0 == 0 {
        buf.truncate(16);
        (EIO, result.1)
    } else {
        result
    };
    drop(twin);
    sh.counters.twin_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    result
}
