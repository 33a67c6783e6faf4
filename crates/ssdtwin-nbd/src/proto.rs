//! The NBD wire protocol: constants and a small codec for the fixed
//! newstyle handshake and the transmission phase with simple replies
//! (the NBD project's `doc/proto.md`).
//!
//! What is here: the server greeting, client flags, option headers and
//! option replies (`NBD_REP_*`), the `NBD_OPT_GO`/`NBD_OPT_INFO` request
//! body and its `NBD_INFO_*` replies, the `NBD_OPT_EXPORT_NAME` reply,
//! request headers (`NBD_REQUEST_MAGIC`) and simple reply headers.
//! Every parser works on bytes already read and checks lengths, so a
//! length field never makes the server allocate more than the caller's
//! bound.
//!
//! Left out: the oldstyle handshake, TLS (`NBD_OPT_STARTTLS`), structured
//! replies, metadata contexts (`NBD_CMD_BLOCK_STATUS`) and extended
//! headers. Clients that ask for them get `NBD_REP_ERR_UNSUP` and carry
//! on without.

use std::io::{self, Read, Write};

/// `NBDMAGIC`: first 8 bytes the server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: newstyle magic, also the magic of every client option.
pub const IHAVEOPT: u64 = 0x4948_4156_454F_5054;
/// Magic of every option reply.
pub const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Magic of a transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// Magic of a structured reply chunk.
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

/// Handshake flag: fixed newstyle.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1;
/// Handshake flag: the server can omit the 124 zero bytes.
pub const FLAG_NO_ZEROES: u16 = 2;
/// Client flag: fixed newstyle.
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1;
/// Client flag: no 124 zero bytes after `NBD_OPT_EXPORT_NAME`.
pub const FLAG_C_NO_ZEROES: u32 = 2;

/// Option: export name (old way into transmission).
pub const OPT_EXPORT_NAME: u32 = 1;
/// Option: abort the handshake.
pub const OPT_ABORT: u32 = 2;
/// Option: list exports.
pub const OPT_LIST: u32 = 3;
/// Option: start TLS.
pub const OPT_STARTTLS: u32 = 5;
/// Option: information about an export.
pub const OPT_INFO: u32 = 6;
/// Option: information, then transmission.
pub const OPT_GO: u32 = 7;
/// Option: structured replies.
pub const OPT_STRUCTURED_REPLY: u32 = 8;
/// Option: list metadata contexts.
pub const OPT_LIST_META_CONTEXT: u32 = 9;
/// Option: select metadata contexts (for `NBD_CMD_BLOCK_STATUS`).
pub const OPT_SET_META_CONTEXT: u32 = 10;

/// Reply: success, end of the replies to an option.
pub const REP_ACK: u32 = 1;
/// Reply: an export (to `NBD_OPT_LIST`).
pub const REP_SERVER: u32 = 2;
/// Reply: information (to `NBD_OPT_INFO`/`GO`).
pub const REP_INFO: u32 = 3;
/// Reply: a metadata context (to `NBD_OPT_LIST/SET_META_CONTEXT`).
pub const REP_META_CONTEXT: u32 = 4;
/// Error: option not supported.
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
/// Error: forbidden by policy.
pub const REP_ERR_POLICY: u32 = (1 << 31) + 2;
/// Error: syntactically or semantically invalid.
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;
/// Error: TLS is required first.
pub const REP_ERR_TLS_REQD: u32 = (1 << 31) + 5;
/// Error: no such export.
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;
/// Error: the server is shutting down.
pub const REP_ERR_SHUTDOWN: u32 = (1 << 31) + 7;
/// Error: request too big.
pub const REP_ERR_TOO_BIG: u32 = (1 << 31) + 9;

/// Information: size and transmission flags.
pub const INFO_EXPORT: u16 = 0;
/// Information: canonical export name.
pub const INFO_NAME: u16 = 1;
/// Information: description.
pub const INFO_DESCRIPTION: u16 = 2;
/// Information: block size constraints.
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flag: the flags field is valid.
pub const TFLAG_HAS_FLAGS: u16 = 1;
/// Transmission flag: `NBD_CMD_FLUSH` supported.
pub const TFLAG_SEND_FLUSH: u16 = 1 << 2;
/// Transmission flag: `NBD_CMD_FLAG_FUA` supported.
pub const TFLAG_SEND_FUA: u16 = 1 << 3;
/// Transmission flag: `NBD_CMD_TRIM` supported.
pub const TFLAG_SEND_TRIM: u16 = 1 << 5;
/// Transmission flag: `NBD_CMD_WRITE_ZEROES` supported.
pub const TFLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
/// Transmission flag: several connections see one consistent export
/// (a flush on one covers writes completed on all).
pub const TFLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Command: read.
pub const CMD_READ: u16 = 0;
/// Command: write.
pub const CMD_WRITE: u16 = 1;
/// Command: disconnect.
pub const CMD_DISC: u16 = 2;
/// Command: flush.
pub const CMD_FLUSH: u16 = 3;
/// Command: trim.
pub const CMD_TRIM: u16 = 4;
/// Command: write zeroes.
pub const CMD_WRITE_ZEROES: u16 = 6;
/// Command: block status (with a metadata context selected).
pub const CMD_BLOCK_STATUS: u16 = 7;

/// Command flag: force unit access.
pub const CMD_FLAG_FUA: u16 = 1;
/// Command flag (write zeroes): do not punch a hole.
pub const CMD_FLAG_NO_HOLE: u16 = 2;
/// Command flag (block status): one extent only.
pub const CMD_FLAG_REQ_ONE: u16 = 1 << 3;

/// Structured reply flag: the last chunk of the reply.
pub const REPLY_FLAG_DONE: u16 = 1;
/// Structured reply chunk: data at an offset.
pub const REPLY_TYPE_OFFSET_DATA: u16 = 1;
/// Structured reply chunk: a range that reads as zeros.
pub const REPLY_TYPE_OFFSET_HOLE: u16 = 2;
/// Structured reply chunk: block status descriptors.
pub const REPLY_TYPE_BLOCK_STATUS: u16 = 5;
/// Structured reply chunk: an error.
pub const REPLY_TYPE_ERROR: u16 = (1 << 15) + 1;

/// The `base:allocation` metadata context's name.
pub const META_BASE_ALLOCATION: &str = "base:allocation";
/// The id the server gives `base:allocation` when it is selected.
pub const META_BASE_ALLOCATION_ID: u32 = 1;
/// `base:allocation` status: a hole (not allocated).
pub const STATE_HOLE: u32 = 1;
/// `base:allocation` status: reads as zeros.
pub const STATE_ZERO: u32 = 2;

/// Error: operation not permitted.
pub const EPERM: u32 = 1;
/// Error: I/O error.
pub const EIO: u32 = 5;
/// Error: invalid argument (range, alignment, unknown command).
pub const EINVAL: u32 = 22;
/// Error: no space.
pub const ENOSPC: u32 = 28;
/// Error: request too large.
pub const EOVERFLOW: u32 = 75;
/// Error: not supported.
pub const ENOTSUP: u32 = 95;
/// Error: server shutting down.
pub const ESHUTDOWN: u32 = 108;

/// Minimum block size advertised: 1, any byte range (sub-4 KiB pieces
/// are a read-modify-write of the data store; tools such as debugfs on an
/// nbdfuse file write single superblock fields).
pub const MIN_BLOCK: u32 = 1;
/// Preferred block size advertised (the FTL's 4 KiB mapping unit).
pub const PREFERRED_BLOCK: u32 = 4096;
/// Maximum payload of a read or write, bytes (2^25, the spec's default).
pub const MAX_PAYLOAD: u32 = 1 << 25;
/// Largest option body the server reads (longer ones end the session).
pub const MAX_OPTION_LEN: u32 = 1 << 16;
/// Longest export name accepted (the spec's limit is 4096 bytes).
pub const MAX_NAME_LEN: u32 = 4096;

/// Size of a request header on the wire.
pub const REQUEST_LEN: usize = 28;

/// The server's greeting: magic, newstyle magic, handshake flags.
pub fn greeting() -> [u8; 18] {
    let mut b = [0u8; 18];
    b[0..8].copy_from_slice(&NBDMAGIC.to_be_bytes());
    b[8..16].copy_from_slice(&IHAVEOPT.to_be_bytes());
    b[16..18].copy_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    b
}

/// A client option header (the body follows on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionHeader {
    /// Option number (`NBD_OPT_*`).
    pub option: u32,
    /// Body length.
    pub len: u32,
}

/// What can go wrong reading the handshake or a request.
#[derive(Debug)]
pub enum ProtoError {
    /// The peer closed or the socket failed.
    Io(io::Error),
    /// The peer broke the protocol (the session ends).
    Violation(String),
}

impl From<io::Error> for ProtoError {
    fn from(e: io::Error) -> ProtoError {
        ProtoError::Io(e)
    }
}

impl std::fmt::Display for ProtoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtoError::Io(e) => write!(f, "{e}"),
            ProtoError::Violation(s) => write!(f, "protocol violation: {s}"),
        }
    }
}

/// Parse a 16-byte option header.
pub fn parse_option_header(b: &[u8; 16]) -> Result<OptionHeader, ProtoError> {
    let magic = u64::from_be_bytes(b[0..8].try_into().expect("8 bytes"));
    if magic != IHAVEOPT {
        return Err(ProtoError::Violation(format!("option magic {magic:#x}, expected IHAVEOPT")));
    }
    Ok(OptionHeader {
        option: u32::from_be_bytes(b[8..12].try_into().expect("4 bytes")),
        len: u32::from_be_bytes(b[12..16].try_into().expect("4 bytes")),
    })
}

/// Read an option header and its body (at most [`MAX_OPTION_LEN`] bytes;
/// a longer body is a violation and nothing of it is allocated).
pub fn read_option(r: &mut impl Read) -> Result<(OptionHeader, Vec<u8>), ProtoError> {
    let mut h = [0u8; 16];
    r.read_exact(&mut h)?;
    let hdr = parse_option_header(&h)?;
    if hdr.len > MAX_OPTION_LEN {
        return Err(ProtoError::Violation(format!("option {} body of {} bytes", hdr.option, hdr.len)));
    }
    let mut body = vec![0u8; hdr.len as usize];
    r.read_exact(&mut body)?;
    Ok((hdr, body))
}

/// An option reply: header and body.
pub fn option_reply(option: u32, reply: u32, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(20 + body.len());
    v.extend_from_slice(&REPLY_MAGIC.to_be_bytes());
    v.extend_from_slice(&option.to_be_bytes());
    v.extend_from_slice(&reply.to_be_bytes());
    v.extend_from_slice(&(body.len() as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// The body of an `NBD_OPT_INFO` / `NBD_OPT_GO` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoRequest {
    /// Export name asked for.
    pub name: Vec<u8>,
    /// Information types asked for.
    pub requests: Vec<u16>,
}

/// Parse the body of `NBD_OPT_INFO` / `NBD_OPT_GO`; `None` when the
/// lengths inside do not add up to the body's length.
pub fn parse_info_request(body: &[u8]) -> Option<InfoRequest> {
    let name_len = u32::from_be_bytes(body.get(0..4)?.try_into().ok()?) as usize;
    let rest = body.get(4..)?;
    if name_len > rest.len().checked_sub(2)? {
        return None;
    }
    let name = rest[..name_len].to_vec();
    let rest = &rest[name_len..];
    let n = u16::from_be_bytes(rest.get(0..2)?.try_into().ok()?) as usize;
    let list = &rest[2..];
    if list.len() != 2 * n {
        return None;
    }
    let requests = list.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    Some(InfoRequest { name, requests })
}

/// `NBD_REP_INFO` body of type `NBD_INFO_EXPORT`.
pub fn info_export(size: u64, flags: u16) -> Vec<u8> {
    let mut v = Vec::with_capacity(12);
    v.extend_from_slice(&INFO_EXPORT.to_be_bytes());
    v.extend_from_slice(&size.to_be_bytes());
    v.extend_from_slice(&flags.to_be_bytes());
    v
}

/// `NBD_REP_INFO` body of type `NBD_INFO_BLOCK_SIZE`.
pub fn info_block_size(min: u32, preferred: u32, max: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity(14);
    v.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
    v.extend_from_slice(&min.to_be_bytes());
    v.extend_from_slice(&preferred.to_be_bytes());
    v.extend_from_slice(&max.to_be_bytes());
    v
}

/// `NBD_REP_INFO` body carrying a string (`NBD_INFO_NAME`,
/// `NBD_INFO_DESCRIPTION`).
pub fn info_string(kind: u16, s: &str) -> Vec<u8> {
    let mut v = kind.to_be_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

/// `NBD_REP_SERVER` body: an export name and its description.
pub fn rep_server(name: &str, description: &str) -> Vec<u8> {
    let mut v = (name.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(name.as_bytes());
    v.extend_from_slice(description.as_bytes());
    v
}

/// The reply to `NBD_OPT_EXPORT_NAME`: size, flags, and 124 zero bytes
/// unless the client asked for none.
pub fn export_name_reply(size: u64, flags: u16, no_zeroes: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(134);
    v.extend_from_slice(&size.to_be_bytes());
    v.extend_from_slice(&flags.to_be_bytes());
    if !no_zeroes {
        v.extend_from_slice(&[0u8; 124]);
    }
    v
}

/// A transmission request header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Command flags (`NBD_CMD_FLAG_*`).
    pub flags: u16,
    /// Command type (`NBD_CMD_*`).
    pub kind: u16,
    /// Client's cookie, echoed in the reply.
    pub cookie: u64,
    /// Byte offset.
    pub offset: u64,
    /// Length, bytes.
    pub len: u32,
}

/// Parse a 28-byte request header.
pub fn parse_request(b: &[u8; REQUEST_LEN]) -> Result<Request, ProtoError> {
    let magic = u32::from_be_bytes(b[0..4].try_into().expect("4 bytes"));
    if magic != REQUEST_MAGIC {
        return Err(ProtoError::Violation(format!("request magic {magic:#x}")));
    }
    Ok(Request {
        flags: u16::from_be_bytes([b[4], b[5]]),
        kind: u16::from_be_bytes([b[6], b[7]]),
        cookie: u64::from_be_bytes(b[8..16].try_into().expect("8 bytes")),
        offset: u64::from_be_bytes(b[16..24].try_into().expect("8 bytes")),
        len: u32::from_be_bytes(b[24..28].try_into().expect("4 bytes")),
    })
}

/// Encode a request header (clients and tests).
pub fn encode_request(r: &Request) -> [u8; REQUEST_LEN] {
    let mut b = [0u8; REQUEST_LEN];
    b[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&r.flags.to_be_bytes());
    b[6..8].copy_from_slice(&r.kind.to_be_bytes());
    b[8..16].copy_from_slice(&r.cookie.to_be_bytes());
    b[16..24].copy_from_slice(&r.offset.to_be_bytes());
    b[24..28].copy_from_slice(&r.len.to_be_bytes());
    b
}

/// A simple reply header; a successful read's data follows it.
pub fn simple_reply(error: u32, cookie: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b
}

/// The 20-byte header of a structured reply chunk whose payload is
/// `len` bytes.
pub fn chunk_header(flags: u16, kind: u16, cookie: u64, len: u32) -> [u8; 20] {
    let mut b = [0u8; 20];
    b[0..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&flags.to_be_bytes());
    b[6..8].copy_from_slice(&kind.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b[16..20].copy_from_slice(&len.to_be_bytes());
    b
}

/// An `NBD_REPLY_TYPE_ERROR` chunk ending the reply (no message).
pub fn error_chunk(error: u32, cookie: u64) -> [u8; 26] {
    let mut b = [0u8; 26];
    b[..20].copy_from_slice(&chunk_header(REPLY_FLAG_DONE, REPLY_TYPE_ERROR, cookie, 6));
    b[20..24].copy_from_slice(&error.to_be_bytes());
    b
}

/// The body of `NBD_OPT_LIST_META_CONTEXT` / `NBD_OPT_SET_META_CONTEXT`:
/// an export name and queries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaContextRequest {
    /// Export name.
    pub name: Vec<u8>,
    /// Queries (`namespace:leaf`).
    pub queries: Vec<Vec<u8>>,
}

/// Parse a metadata context option's body; `None` when the lengths
/// inside do not add up to the body's length.
pub fn parse_meta_context_request(body: &[u8]) -> Option<MetaContextRequest> {
    let take = |b: &mut &[u8], n: usize| -> Option<Vec<u8>> {
        let (head, rest) = (b.get(..n)?, b.get(n..)?);
        *b = rest;
        Some(head.to_vec())
    };
    let u32_of = |b: &mut &[u8]| -> Option<usize> {
        let v = u32::from_be_bytes(b.get(0..4)?.try_into().ok()?) as usize;
        *b = &b[4..];
        Some(v)
    };
    let mut b = body;
    let n = u32_of(&mut b)?;
    let name = take(&mut b, n)?;
    let count = u32_of(&mut b)?;
    // Each query takes at least 4 bytes: a count beyond that is a lie.
    if count > b.len() / 4 {
        return None;
    }
    let mut queries = Vec::with_capacity(count);
    for _ in 0..count {
        let n = u32_of(&mut b)?;
        queries.push(take(&mut b, n)?);
    }
    b.is_empty().then_some(MetaContextRequest { name, queries })
}

/// `NBD_REP_META_CONTEXT` body: an id and the context's name.
pub fn rep_meta_context(id: u32, name: &str) -> Vec<u8> {
    let mut v = id.to_be_bytes().to_vec();
    v.extend_from_slice(name.as_bytes());
    v
}

/// Write all of `bufs` in order.
pub fn write_all_parts(w: &mut impl Write, bufs: &[&[u8]]) -> io::Result<()> {
    for b in bufs {
        w.write_all(b)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greeting_is_nbdmagic_ihaveopt_and_flags() {
        let g = greeting();
        assert_eq!(&g[0..8], b"NBDMAGIC");
        assert_eq!(&g[8..16], b"IHAVEOPT");
        assert_eq!(u16::from_be_bytes([g[16], g[17]]), 3);
    }

    #[test]
    fn option_header_round_trip_and_bad_magic() {
        let mut b = [0u8; 16];
        b[0..8].copy_from_slice(b"IHAVEOPT");
        b[8..12].copy_from_slice(&OPT_GO.to_be_bytes());
        b[12..16].copy_from_slice(&9u32.to_be_bytes());
        assert_eq!(parse_option_header(&b).unwrap(), OptionHeader { option: OPT_GO, len: 9 });
        b[0] = b'X';
        assert!(matches!(parse_option_header(&b), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn oversized_option_is_refused_without_reading_it() {
        let mut wire = Vec::new();
        wire.extend_from_slice(b"IHAVEOPT");
        wire.extend_from_slice(&OPT_INFO.to_be_bytes());
        wire.extend_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(read_option(&mut wire.as_slice()), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn info_request_parses_and_rejects_bad_lengths() {
        let mut body = 4u32.to_be_bytes().to_vec();
        body.extend_from_slice(b"disk");
        body.extend_from_slice(&2u16.to_be_bytes());
        body.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        body.extend_from_slice(&INFO_NAME.to_be_bytes());
        let r = parse_info_request(&body).unwrap();
        assert_eq!(r.name, b"disk");
        assert_eq!(r.requests, vec![INFO_BLOCK_SIZE, INFO_NAME]);
        // Truncated list, name longer than the body, empty body.
        assert!(parse_info_request(&body[..body.len() - 1]).is_none());
        let mut bad = 100u32.to_be_bytes().to_vec();
        bad.extend_from_slice(&[0; 6]);
        assert!(parse_info_request(&bad).is_none());
        assert!(parse_info_request(&[]).is_none());
        assert!(parse_info_request(&u32::MAX.to_be_bytes()).is_none());
        // Empty name, no requests.
        let r = parse_info_request(&[0, 0, 0, 0, 0, 0]).unwrap();
        assert!(r.name.is_empty() && r.requests.is_empty());
    }

    #[test]
    fn request_round_trip() {
        let r = Request { flags: CMD_FLAG_FUA, kind: CMD_WRITE, cookie: 0xdead_beef_0123, offset: 1 << 40, len: 4096 };
        assert_eq!(parse_request(&encode_request(&r)).unwrap(), r);
        let mut b = encode_request(&r);
        b[3] ^= 1;
        assert!(parse_request(&b).is_err());
    }

    #[test]
    fn replies_have_the_spec_layout() {
        let r = option_reply(OPT_GO, REP_ACK, &[]);
        assert_eq!(r.len(), 20);
        assert_eq!(u64::from_be_bytes(r[0..8].try_into().unwrap()), 0x3e889045565a9);
        assert_eq!(info_export(1 << 30, 1).len(), 12);
        assert_eq!(info_block_size(512, 4096, MAX_PAYLOAD).len(), 14);
        assert_eq!(export_name_reply(1, 1, false).len(), 134);
        assert_eq!(export_name_reply(1, 1, true).len(), 10);
        let s = simple_reply(EINVAL, 7);
        assert_eq!(&s[0..4], &[0x67, 0x44, 0x66, 0x98]);
        assert_eq!(u32::from_be_bytes(s[4..8].try_into().unwrap()), 22);
        assert_eq!(u64::from_be_bytes(s[8..16].try_into().unwrap()), 7);
        let srv = rep_server("ssdtwin", "d");
        assert_eq!(&srv[0..4], &7u32.to_be_bytes());
        let c = chunk_header(REPLY_FLAG_DONE, REPLY_TYPE_OFFSET_DATA, 9, 4104);
        assert_eq!(&c[0..4], &[0x66, 0x8e, 0x33, 0xef]);
        assert_eq!(u16::from_be_bytes([c[4], c[5]]), 1);
        assert_eq!(u16::from_be_bytes([c[6], c[7]]), 1);
        assert_eq!(u32::from_be_bytes(c[16..20].try_into().unwrap()), 4104);
        let e = error_chunk(EIO, 9);
        assert_eq!(u16::from_be_bytes([e[6], e[7]]), 32769);
        assert_eq!(u32::from_be_bytes(e[16..20].try_into().unwrap()), 6);
        assert_eq!(u32::from_be_bytes(e[20..24].try_into().unwrap()), 5);
    }

    #[test]
    fn meta_context_requests_parse_and_reject_bad_lengths() {
        let mut body = 7u32.to_be_bytes().to_vec();
        body.extend_from_slice(b"ssdtwin");
        body.extend_from_slice(&2u32.to_be_bytes());
        for q in [&b"base:allocation"[..], b"qemu:dirty-bitmap:x"] {
            body.extend_from_slice(&(q.len() as u32).to_be_bytes());
            body.extend_from_slice(q);
        }
        let r = parse_meta_context_request(&body).unwrap();
        assert_eq!(r.name, b"ssdtwin");
        assert_eq!(r.queries, vec![b"base:allocation".to_vec(), b"qemu:dirty-bitmap:x".to_vec()]);
        assert!(parse_meta_context_request(&body[..body.len() - 1]).is_none());
        let mut extra = body.clone();
        extra.push(0);
        assert!(parse_meta_context_request(&extra).is_none());
        // A huge query count allocates nothing.
        let mut lie = 0u32.to_be_bytes().to_vec();
        lie.extend_from_slice(&u32::MAX.to_be_bytes());
        assert!(parse_meta_context_request(&lie).is_none());
        assert!(parse_meta_context_request(&[]).is_none());
    }
}
