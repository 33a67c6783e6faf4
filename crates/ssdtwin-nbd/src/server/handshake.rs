//! The NBD handshake (fixed newstyle): the greeting, then option
//! negotiation until the client picks the export (`NBD_OPT_GO`,
//! `NBD_OPT_EXPORT_NAME`) or aborts: structured replies
//! (`NBD_OPT_STRUCTURED_REPLY`) and the `base:allocation` metadata context
//! (`NBD_OPT_LIST_META_CONTEXT`, `NBD_OPT_SET_META_CONTEXT`) for
//! `NBD_CMD_BLOCK_STATUS`, and TLS (`NBD_OPT_STARTTLS`, offered or
//! required, see `tls.rs`). Leaves out more than one export.

use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::transport::DelayEstimate;
use super::{Shared, TlsMode};
use crate::proto::*;

/// What the client negotiated for the transmission phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Negotiated {
    /// Structured replies (reads answer with data and hole chunks).
    pub(super) structured: bool,
    /// `base:allocation` selected: `NBD_CMD_BLOCK_STATUS` allowed.
    pub(super) allocation: bool,
}

/// How the handshake ended.
pub(super) enum Handshake {
    /// Transmission begins with what was negotiated.
    Go(Negotiated),
    /// The client aborted.
    Abort,
    /// `NBD_OPT_STARTTLS` was acknowledged: run TLS, then the option
    /// haggling again inside it.
    StartTls,
}

/// The fixed newstyle handshake: greeting and client flags, then options;
/// inside TLS (`tls`) options only (`no_zeroes`: the client's flag,
/// read before TLS). Each option's round trip (from the reply to the
/// previous option until this one has arrived) goes to `delay`.
pub(super) fn handshake(
    sh: &Shared,
    r: &mut impl Read,
    w: &mut impl Write,
    delay: &mut DelayEstimate,
    tls: bool,
    no_zeroes: &mut bool,
) -> Result<Handshake, ProtoError> {
    if !tls {
        w.write_all(&greeting())?;
        w.flush()?;
        let mut cf = [0u8; 4];
        r.read_exact(&mut cf)?;
        let client_flags = u32::from_be_bytes(cf);
        if client_flags & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
            return Err(ProtoError::Violation(format!("unknown client flags {client_flags:#x}")));
        }
        *no_zeroes = client_flags & FLAG_C_NO_ZEROES != 0;
    }
    let no_zeroes = *no_zeroes;
    // Until TLS runs, a server that requires it answers nothing else.
    let tls_needed = !tls && sh.opts.tls == TlsMode::Require;
    let size = sh.size;
    let flags = sh.flags();
    let name = sh.opts.export_name.as_str();
    let known = |n: &[u8]| n.is_empty() || n == name.as_bytes();
    let mut replied: Option<Instant> = None;
    let mut neg = Negotiated::default();
    for _ in 0..1024 {
        let (hdr, body) = read_option(r)?;
        if let Some(at) = replied {
            delay.handshake_sample(at.elapsed().as_nanos() as u64);
        }
        let reply = |w: &mut dyn Write, kind: u32, data: &[u8]| w.write_all(&option_reply(hdr.option, kind, data));
        match hdr.option {
            OPT_EXPORT_NAME if tls_needed => {
                return Err(ProtoError::Violation("NBD_OPT_EXPORT_NAME before TLS, which this server requires".into()));
            }
            OPT_STARTTLS if tls => reply(w, REP_ERR_INVALID, b"TLS is already running")?,
            OPT_STARTTLS if sh.opts.tls == TlsMode::Off => reply(w, REP_ERR_POLICY, b"TLS is not offered")?,
            OPT_STARTTLS if !body.is_empty() => reply(w, REP_ERR_INVALID, b"no data expected")?,
            OPT_STARTTLS => {
                reply(w, REP_ACK, &[])?;
                w.flush()?;
                return Ok(Handshake::StartTls);
            }
            OPT_ABORT => {
                reply(w, REP_ACK, &[])?;
                w.flush()?;
                return Ok(Handshake::Abort);
            }
            _ if tls_needed => reply(w, REP_ERR_TLS_REQD, b"this server requires TLS first")?,
            OPT_EXPORT_NAME => {
                if !known(&body) {
                    return Err(ProtoError::Violation(format!(
                        "NBD_OPT_EXPORT_NAME for unknown export {:?}",
                        String::from_utf8_lossy(&body)
                    )));
                }
                w.write_all(&export_name_reply(size, flags, no_zeroes))?;
                w.flush()?;
                return Ok(Handshake::Go(neg));
            }
            OPT_LIST => {
                if body.is_empty() {
                    reply(w, REP_SERVER, &rep_server(name, &sh.opts.description))?;
                    reply(w, REP_ACK, &[])?;
                } else {
                    reply(w, REP_ERR_INVALID, b"NBD_OPT_LIST takes no data")?;
                }
            }
            OPT_INFO | OPT_GO => match parse_info_request(&body) {
                None => reply(w, REP_ERR_INVALID, b"malformed request")?,
                Some(req) if !known(&req.name) => reply(w, REP_ERR_UNKNOWN, b"no such export")?,
                Some(req) if req.name.len() > MAX_NAME_LEN as usize => reply(w, REP_ERR_TOO_BIG, &[])?,
                Some(req) => {
                    if sh.stop.load(Ordering::Relaxed) {
                        reply(w, REP_ERR_SHUTDOWN, b"server shutting down")?;
                        w.flush()?;
                        continue;
                    }
                    reply(w, REP_INFO, &info_export(size, flags))?;
                    // Always sent: the constraints differ from the defaults.
                    reply(w, REP_INFO, &info_block_size(MIN_BLOCK, PREFERRED_BLOCK, MAX_PAYLOAD))?;
                    if req.requests.contains(&INFO_NAME) {
                        reply(w, REP_INFO, &info_string(INFO_NAME, name))?;
                    }
                    if req.requests.contains(&INFO_DESCRIPTION) {
                        reply(w, REP_INFO, &info_string(INFO_DESCRIPTION, &sh.opts.description))?;
                    }
                    reply(w, REP_ACK, &[])?;
                    if hdr.option == OPT_GO {
                        w.flush()?;
                        return Ok(Handshake::Go(neg));
                    }
                }
            },
            OPT_STRUCTURED_REPLY if !body.is_empty() => reply(w, REP_ERR_INVALID, b"no data expected")?,
            OPT_STRUCTURED_REPLY => {
                neg.structured = true;
                reply(w, REP_ACK, &[])?;
            }
            OPT_LIST_META_CONTEXT | OPT_SET_META_CONTEXT => {
                let set = hdr.option == OPT_SET_META_CONTEXT;
                if set {
                    // Any SET replaces the selection, also when it fails.
                    neg.allocation = false;
                }
                match parse_meta_context_request(&body) {
                    _ if !neg.structured => reply(w, REP_ERR_INVALID, b"negotiate structured replies first")?,
                    None => reply(w, REP_ERR_INVALID, b"malformed request")?,
                    Some(req) if !known(&req.name) => reply(w, REP_ERR_UNKNOWN, b"no such export")?,
                    Some(req) => {
                        // `base:allocation` is the only context: listed for
                        // no query, `base:` or its name; selected by name.
                        let matches = |q: &[u8]| q == META_BASE_ALLOCATION.as_bytes() || (!set && q == b"base:");
                        let chosen = if set {
                            req.queries.iter().any(|q| matches(q))
                        } else {
                            req.queries.is_empty() || req.queries.iter().any(|q| matches(q))
                        };
                        if chosen {
                            let id = if set { META_BASE_ALLOCATION_ID } else { 0 };
                            reply(w, REP_META_CONTEXT, &rep_meta_context(id, META_BASE_ALLOCATION))?;
                        }
                        neg.allocation |= set && chosen;
                        reply(w, REP_ACK, &[])?;
                    }
                }
            }
            _ => reply(w, REP_ERR_UNSUP, &[])?,
        }
        replied = Some(Instant::now());
        w.flush()?;
    }
    Err(ProtoError::Violation("more than 1024 options".into()))
}
