//! Structured replies (negotiated with `NBD_OPT_STRUCTURED_REPLY`): a read
//! answers with `NBD_REPLY_TYPE_OFFSET_DATA` chunks for its mapped pages
//! and `NBD_REPLY_TYPE_OFFSET_HOLE` chunks for its holes, and
//! `NBD_CMD_BLOCK_STATUS` answers with the `base:allocation` extents of a
//! range, so that `qemu-img map`, `nbdinfo --map`, `nbdcopy` and `qemu-img
//! convert` see the drive's holes and skip them.
//!
//! A *hole* is a logical 4 KiB page the FTL has not mapped — never
//! written, trimmed, or zeroed by `NBD_CMD_WRITE_ZEROES` without
//! `NO_HOLE` — (`NBD_STATE_HOLE | NBD_STATE_ZERO`); a mapped page whose
//! bytes the store does not hold (placed by a starting state, or written
//! with zeros) is allocated and reads as zeros (`NBD_STATE_ZERO`); any other
//! page is data (0). Answering block status costs no drive command: the
//! host's question is about the mapping, which a real drive answers from
//! its map (NVMe's Get LBA Status) and the twin does not time.

use ssdtwin::model::nand::NONE;

use crate::proto::*;
use crate::twin::Twin;

/// Where a structured read's data starts in its reply: the chunk header
/// and the chunk's offset field come first.
pub(super) const DATA_AT: usize = 28;

/// The `base:allocation` status of logical page `lpn`.
fn status(twin: &Twin, lpn: u64) -> u32 {
    let slot = twin.device().drive().ftl().lookup(lpn as u32);
    if slot == NONE {
        STATE_HOLE | STATE_ZERO
    } else if twin.store().get(slot).is_none() {
        STATE_ZERO
    } else {
        0
    }
}

/// Runs of `[offset, offset + len)` with one status each, in order:
/// `f(start, length, status)` for each; stops after `max` runs.
fn runs(twin: &Twin, offset: u64, len: u64, max: usize, mut f: impl FnMut(u64, u64, u32)) {
    let page = 4096u64;
    let end = offset + len;
    let mut at = offset;
    let mut n = 0;
    while at < end && n < max {
        let s = status(twin, at / page);
        let mut to = (at / page + 1) * page;
        while to < end && status(twin, to / page) == s {
            to += page;
        }
        let to = to.min(end);
        f(at, to - at, s);
        n += 1;
        at = to;
    }
}

/// A successful read's structured reply. The data is in `buf[DATA_AT..]`;
/// with no hole in the range the reply is one data chunk built in place,
/// otherwise data and hole chunks are assembled in `scratch`, which then
/// becomes `buf`.
pub(super) fn read_reply(twin: &Twin, req: &Request, buf: &mut Vec<u8>, scratch: &mut Vec<u8>) {
    let len = req.len as u64;
    let mut holes = false;
    runs(twin, req.offset, len, usize::MAX, |_, _, s| holes |= s & STATE_HOLE != 0);
    if !holes {
        buf[..20].copy_from_slice(&chunk_header(REPLY_FLAG_DONE, REPLY_TYPE_OFFSET_DATA, req.cookie, 8 + req.len));
        buf[20..28].copy_from_slice(&req.offset.to_be_bytes());
        return;
    }
    scratch.clear();
    let mut last = 0;
    runs(twin, req.offset, len, usize::MAX, |at, n, s| {
        last = scratch.len();
        if s & STATE_HOLE != 0 {
            scratch.extend_from_slice(&chunk_header(0, REPLY_TYPE_OFFSET_HOLE, req.cookie, 12));
            scratch.extend_from_slice(&at.to_be_bytes());
            scratch.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            let from = DATA_AT + (at - req.offset) as usize;
            scratch.extend_from_slice(&chunk_header(0, REPLY_TYPE_OFFSET_DATA, req.cookie, 8 + n as u32));
            scratch.extend_from_slice(&at.to_be_bytes());
            scratch.extend_from_slice(&buf[from..from + n as usize]);
        }
    });
    // The last chunk ends the reply.
    scratch[last + 4..last + 6].copy_from_slice(&REPLY_FLAG_DONE.to_be_bytes());
    std::mem::swap(buf, scratch);
}

/// Most descriptors in one block status reply (the spec's advice).
const MAX_EXTENTS: usize = 1 << 20;

/// The reply to `NBD_CMD_BLOCK_STATUS` for `base:allocation` (the range is
/// checked): one chunk of extents, one only with `NBD_CMD_FLAG_REQ_ONE`.
pub(super) fn block_status_reply(twin: &Twin, req: &Request, buf: &mut Vec<u8>) {
    let max = if req.flags & CMD_FLAG_REQ_ONE != 0 { 1 } else { MAX_EXTENTS };
    buf.clear();
    buf.extend_from_slice(&[0u8; 20]);
    buf.extend_from_slice(&META_BASE_ALLOCATION_ID.to_be_bytes());
    runs(twin, req.offset, req.len as u64, max, |_, n, s| {
        buf.extend_from_slice(&(n as u32).to_be_bytes());
        buf.extend_from_slice(&s.to_be_bytes());
    });
    let len = (buf.len() - 20) as u32;
    buf[..20].copy_from_slice(&chunk_header(REPLY_FLAG_DONE, REPLY_TYPE_BLOCK_STATUS, req.cookie, len));
}
