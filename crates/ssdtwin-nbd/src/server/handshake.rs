//! The NBD handshake (fixed newstyle): the greeting, then option
//! negotiation until the client picks the export (`NBD_OPT_GO`,
//! `NBD_OPT_EXPORT_NAME`) or aborts. Leaves out TLS, structured replies,
//! block status and meta contexts (refused as unsupported), and more than
//! one export.

use std::io::{Read, Write};
use std::sync::atomic::Ordering;

use super::Shared;
use crate::proto::*;

/// The fixed newstyle handshake. `Ok(true)`: transmission begins.
pub(super) fn handshake(sh: &Shared, r: &mut impl Read, w: &mut impl Write) -> Result<bool, ProtoError> {
    w.write_all(&greeting())?;
    w.flush()?;
    let mut cf = [0u8; 4];
    r.read_exact(&mut cf)?;
    let client_flags = u32::from_be_bytes(cf);
    if client_flags & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
        return Err(ProtoError::Violation(format!("unknown client flags {client_flags:#x}")));
    }
    let no_zeroes = client_flags & FLAG_C_NO_ZEROES != 0;
    let size = sh.size;
    let flags = sh.flags();
    let name = sh.opts.export_name.as_str();
    let known = |n: &[u8]| n.is_empty() || n == name.as_bytes();
    for _ in 0..1024 {
        let (hdr, body) = read_option(r)?;
        let reply = |w: &mut dyn Write, kind: u32, data: &[u8]| w.write_all(&option_reply(hdr.option, kind, data));
        match hdr.option {
            OPT_EXPORT_NAME => {
                if !known(&body) {
                    return Err(ProtoError::Violation(format!(
                        "NBD_OPT_EXPORT_NAME for unknown export {:?}",
                        String::from_utf8_lossy(&body)
                    )));
                }
                w.write_all(&export_name_reply(size, flags, no_zeroes))?;
                w.flush()?;
                return Ok(true);
            }
            OPT_ABORT => {
                reply(w, REP_ACK, &[])?;
                w.flush()?;
                return Ok(false);
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
                        return Ok(true);
                    }
                }
            },
            OPT_STARTTLS => reply(w, REP_ERR_POLICY, b"TLS is not supported")?,
            OPT_STRUCTURED_REPLY => reply(w, REP_ERR_UNSUP, b"structured replies are not supported")?,
            _ => reply(w, REP_ERR_UNSUP, &[])?,
        }
        w.flush()?;
    }
    Err(ProtoError::Violation("more than 1024 options".into()))
}
