//! The wire log and its audit: what the clients asked of the drive, in the
//! order the twin ran it, so that a power-cut campaign can check every
//! page a cut lost against NBD's durability rules without trusting the
//! twin's own account of what was flushed.
//!
//! With [`ServeOptions::wire_log`](super::ServeOptions) on, the server
//! records each request when the twin runs it (under the twin's lock, so
//! requests of all connections and the cuts are in one order), each reply
//! when it is handed to the socket, and each cut with the logical pages
//! it lost. [`audit`] then replays the log with the rules of the NBD
//! protocol (`doc/proto.md`, "Ordering of messages and writes"): a flush
//! makes durable every write the server *completed* (replied to) before
//! it processed the flush, once the flush itself has been replied to; a
//! write with `NBD_CMD_FLAG_FUA` is durable once replied to. A page a cut
//! lost must be one whose latest write (write, write-zeroes or trim) was
//! not yet durable by those rules; a lost page without any write since the
//! previous cut, or whose latest write was durable, is a fault.
//!
//! Left out: the log is for tests and campaigns (a few tens of bytes a
//! request, kept in memory until the server stops); it is off by default
//! and costs the hot path one branch then.

use std::sync::Mutex;

use crate::proto::{Request, CMD_FLAG_FUA, CMD_FLUSH, CMD_READ, CMD_TRIM, CMD_WRITE, CMD_WRITE_ZEROES};

/// One event on the wire, in the twin's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireEvent {
    /// A request the twin ran.
    Request {
        /// The connection's number (unique while the server runs).
        conn: u64,
        /// The client's cookie.
        cookie: u64,
        /// `NBD_CMD_*`.
        kind: u16,
        /// `NBD_CMD_FLAG_*`.
        flags: u16,
        /// Bytes.
        offset: u64,
        /// Bytes.
        len: u32,
    },
    /// Its reply handed to the socket.
    Replied {
        /// The connection's number.
        conn: u64,
        /// The client's cookie.
        cookie: u64,
    },
    /// A power cut and the logical 4 KiB pages it lost.
    Cut {
        /// Logical page numbers, ascending.
        lost: Vec<u64>,
    },
}

/// The log (empty unless it is kept).
#[derive(Debug, Default)]
pub struct WireLog {
    pub(super) keep: bool,
    events: Mutex<Vec<WireEvent>>,
}

impl WireLog {
    pub(super) fn new(keep: bool) -> WireLog {
        WireLog { keep, events: Mutex::new(Vec::new()) }
    }

    pub(super) fn request(&self, conn: u64, r: &Request) {
        if self.keep {
            let (cookie, kind, flags, offset, len) = (r.cookie, r.kind, r.flags, r.offset, r.len);
            self.push(WireEvent::Request { conn, cookie, kind, flags, offset, len });
        }
    }

    /// A reply's bytes start with its cookie at offset 8 (simple replies
    /// and structured chunks alike).
    pub(super) fn replied(&self, conn: u64, reply: &[u8]) {
        if self.keep && reply.len() >= 16 {
            let cookie = u64::from_be_bytes(reply[8..16].try_into().expect("8 bytes"));
            self.push(WireEvent::Replied { conn, cookie });
        }
    }

    pub(super) fn cut(&self, lost: &[u64]) {
        if self.keep {
            self.push(WireEvent::Cut { lost: lost.to_vec() });
        }
    }

    fn push(&self, e: WireEvent) {
        self.events.lock().unwrap_or_else(|e| e.into_inner()).push(e);
    }

    /// The events so far.
    pub fn events(&self) -> Vec<WireEvent> {
        self.events.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// What the clients sent, and how the cuts' losses stand against it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WireAudit {
    /// `NBD_CMD_READ`s.
    pub reads: u64,
    /// `NBD_CMD_WRITE`s without FUA.
    pub writes: u64,
    /// `NBD_CMD_WRITE`s with `NBD_CMD_FLAG_FUA`.
    pub fua_writes: u64,
    /// `NBD_CMD_FLUSH`es.
    pub flushes: u64,
    /// `NBD_CMD_TRIM`s.
    pub trims: u64,
    /// `NBD_CMD_WRITE_ZEROES`.
    pub write_zeroes: u64,
    /// Power cuts.
    pub cuts: u64,
    /// Pages the cuts lost.
    pub lost_pages: u64,
    /// Of them, pages whose latest write had been replied to
    /// (acknowledged, not yet flushed).
    pub lost_acknowledged: u64,
    /// Of them, pages whose latest write was still running (never
    /// acknowledged).
    pub lost_in_flight: u64,
}

/// The state of one page's latest write since the last cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Page {
    Running,
    Replied,
    Durable,
}

/// A request the twin ran and has not replied to: its kind, flags,
/// pages and where the log has it.
struct Running {
    kind: u16,
    flags: u16,
    pages: std::ops::Range<u64>,
    at: usize,
}

/// Replay `events` with NBD's durability rules (module docs): the tally,
/// or the first lost page that was durable, with why.
pub fn audit(events: &[WireEvent]) -> Result<WireAudit, String> {
    use std::collections::HashMap;
    const PAGE: u64 = 4096;
    let mut a = WireAudit::default();
    // The latest write to each page since the last cut.
    let mut pages: HashMap<u64, (Page, usize)> = HashMap::new();
    // Requests running, by (conn, cookie).
    let mut running: HashMap<(u64, u64), Running> = HashMap::new();
    // Flushes running: the pages (and their writes) they will make durable.
    let mut covered: HashMap<(u64, u64), Vec<(u64, usize)>> = HashMap::new();
    // Requests a cut interrupted: a reply may still follow the cut (its
    // connection was being dropped).
    let mut orphans: std::collections::HashSet<(u64, u64)> = Default::default();
    for (i, e) in events.iter().enumerate() {
        match e {
            WireEvent::Request { conn, cookie, kind, flags, offset, len } => {
                let (first, end) = (offset / PAGE, (offset + *len as u64).div_ceil(PAGE));
                match *kind {
                    CMD_READ => a.reads += 1,
                    CMD_WRITE if flags & CMD_FLAG_FUA != 0 => a.fua_writes += 1,
                    CMD_WRITE => a.writes += 1,
                    CMD_FLUSH => a.flushes += 1,
                    CMD_TRIM => a.trims += 1,
                    CMD_WRITE_ZEROES => a.write_zeroes += 1,
                    _ => {}
                }
                if matches!(*kind, CMD_WRITE | CMD_TRIM | CMD_WRITE_ZEROES) {
                    for p in first..end {
                        pages.insert(p, (Page::Running, i));
                    }
                }
                if *kind == CMD_FLUSH {
                    let done = pages.iter().filter(|(_, s)| s.0 == Page::Replied).map(|(&p, s)| (p, s.1));
                    covered.insert((*conn, *cookie), done.collect());
                }
                running.insert((*conn, *cookie), Running { kind: *kind, flags: *flags, pages: first..end, at: i });
            }
            WireEvent::Replied { conn, cookie } => {
                let Some(Running { kind, flags, pages: written, at }) = running.remove(&(*conn, *cookie)) else {
                    if orphans.remove(&(*conn, *cookie)) {
                        continue;
                    }
                    return Err(format!("event {i}: a reply to cookie {cookie:#x} on connection {conn}, never asked"));
                };
                if matches!(kind, CMD_WRITE | CMD_TRIM | CMD_WRITE_ZEROES) {
                    let durable = flags & CMD_FLAG_FUA != 0;
                    for p in written {
                        if let Some(s) = pages.get_mut(&p).filter(|s| s.1 == at) {
                            s.0 = if durable { Page::Durable } else { Page::Replied };
                        }
                    }
                }
                for (p, w) in covered.remove(&(*conn, *cookie)).unwrap_or_default() {
                    if let Some(s) = pages.get_mut(&p).filter(|s| s.1 == w) {
                        s.0 = Page::Durable;
                    }
                }
            }
            WireEvent::Cut { lost } => {
                a.cuts += 1;
                for &p in lost {
                    match pages.get(&p) {
                        None => return Err(format!("cut {}: page {p} lost, not written since the last cut", a.cuts)),
                        Some((Page::Durable, w)) => {
                            return Err(format!(
                                "cut {}: page {p} lost, though its latest write (event {w}: {:?}) was durable \
                                 (FUA, or covered by a flush that was replied to)",
                                a.cuts, events[*w]
                            ))
                        }
                        Some((Page::Replied, _)) => a.lost_acknowledged += 1,
                        Some((Page::Running, _)) => a.lost_in_flight += 1,
                    }
                }
                a.lost_pages += lost.len() as u64;
                // The drive restarts: what it holds is all there is.
                pages.clear();
                orphans.extend(running.drain().map(|(k, _)| k));
                covered.clear();
            }
        }
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(cookie: u64, kind: u16, flags: u16, offset: u64, len: u32) -> WireEvent {
        WireEvent::Request { conn: 0, cookie, kind, flags, offset, len }
    }
    fn rep(cookie: u64) -> WireEvent {
        WireEvent::Replied { conn: 0, cookie }
    }
    fn cut(lost: &[u64]) -> WireEvent {
        WireEvent::Cut { lost: lost.to_vec() }
    }

    #[test]
    fn a_cut_may_lose_unflushed_writes_only() {
        // Page 0 written and flushed; page 1 written, replied, not
        // flushed; page 2 written and never replied; page 3 FUA.
        let log = [
            req(1, CMD_WRITE, 0, 0, 4096),
            rep(1),
            req(2, CMD_FLUSH, 0, 0, 0),
            rep(2),
            req(3, CMD_WRITE, 0, 4096, 4096),
            rep(3),
            req(4, CMD_WRITE, 0, 8192, 4096),
            req(5, CMD_WRITE, CMD_FLAG_FUA, 12288, 4096),
            rep(5),
        ];
        let ok = [&log[..], &[cut(&[1, 2])]].concat();
        let a = audit(&ok).expect("unflushed pages may be lost");
        assert_eq!((a.writes, a.fua_writes, a.flushes, a.cuts), (3, 1, 1, 1));
        assert_eq!((a.lost_pages, a.lost_acknowledged, a.lost_in_flight), (2, 1, 1));
        for durable in [0, 3] {
            let bad = [&log[..], &[cut(&[durable])]].concat();
            let e = audit(&bad).expect_err("a durable page lost");
            assert!(e.contains(&format!("page {durable} lost")) && e.contains("durable"), "{e}");
        }
        // Never written since the last cut.
        assert!(audit(&[&ok[..], &[cut(&[1])]].concat()).expect_err("nothing written").contains("not written"));
    }

    #[test]
    fn a_flush_covers_only_writes_replied_before_it_and_only_once_replied() {
        let log = [
            req(1, CMD_WRITE, 0, 0, 8192),
            req(2, CMD_FLUSH, 0, 0, 0),
            // Replied after the flush was processed: not covered by it.
            rep(1),
            req(3, CMD_WRITE, 0, 8192, 4096),
            rep(3),
            req(4, CMD_FLUSH, 0, 0, 0),
        ];
        // Flush 4 not replied yet: pages 0, 1 and 2 may all be lost.
        audit(&[&log[..], &[rep(2), cut(&[0, 1, 2])]].concat()).expect("nothing durable yet");
        // Once flush 4 is replied, none may.
        let done = [&log[..], &[rep(2), rep(4)]].concat();
        for p in 0..3 {
            assert!(audit(&[&done[..], &[cut(&[p])]].concat()).is_err(), "page {p} was flushed");
        }
        // A later write to a flushed page may be lost again.
        let again = [&done[..], &[req(5, CMD_TRIM, 0, 0, 4096), rep(5), cut(&[0])]].concat();
        assert_eq!(audit(&again).expect("rewritten since").trims, 1);
        // A reply sent as the cut dropped its connection.
        let late = [req(6, CMD_WRITE, 0, 0, 4096), cut(&[0]), rep(6)];
        assert_eq!(audit(&late).expect("a reply after the cut").lost_in_flight, 1);
    }
}
