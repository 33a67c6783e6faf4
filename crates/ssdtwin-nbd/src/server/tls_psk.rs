//! TLS with pre-shared keys, as nbdkit's `--tls-psk FILE` and qemu's
//! `tls-creds-psk` (feature `tls-psk`): OpenSSL does the TLS, since rustls
//! has no external pre-shared keys (rustls/rustls#174; docs/nbd-tls.md).
//!
//! The key file is GnuTLS's `psktool` format, one `username:hexkey` a
//! line, which is what nbdkit, qemu and libnbd's `tls-psk-file` read. A
//! client names its user in the handshake; the server answers with that
//! user's key, and a client with a wrong key or an unknown user fails the
//! handshake. TLS 1.3 (external PSK with an ephemeral key exchange,
//! AES-128-GCM with SHA-256, what GnuTLS offers) or TLS 1.2's PSK suites.
//!
//! The session is driven as the rustls one in `tls.rs` is: OpenSSL reads
//! and writes an in-memory [`Wire`], and the connection's reader and
//! writer threads move ciphertext between it and the socket, the reader
//! waiting on the socket without holding the session. Left out: PSK
//! identity hints, and keys for more than one server.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use openssl::ssl::{ErrorCode, Ssl, SslContext, SslMethod, SslStream, SslVersion};

use super::{ServerCounters, Stream};

/// Longest key line accepted (a 64-byte key is 128 hex digits).
const MAX_LINE: usize = 4096;

/// Parse a `psktool` key file: `username:hexkey` lines (blank lines
/// skipped). Errors name the file, the line and what is wrong.
pub fn parse_psk_file(path: &Path, text: &str) -> Result<HashMap<String, Vec<u8>>, String> {
    let mut keys = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE {
            return Err(format!("{}: a line of {} bytes (at most {MAX_LINE})", at(), line.len()));
        }
        let Some((user, hex)) = line.split_once(':') else {
            return Err(format!("{}: expected username:hexkey (psktool's format), found no ':'", at()));
        };
        if user.is_empty() {
            return Err(format!("{}: empty username", at()));
        }
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("{}: the key of {user:?} is not hexadecimal", at()));
        }
        if hex.is_empty() || hex.len() % 2 != 0 {
            return Err(format!("{}: the key of {user:?} must be an even number of hex digits", at()));
        }
        let key = (0..hex.len())
            .step_by(2)
            .map(|j| u8::from_str_radix(&hex[j..j + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|e| format!("{}: the key of {user:?}: {e}", at()))?;
        if keys.insert(user.to_string(), key).is_some() {
            return Err(format!("{}: user {user:?} listed twice", at()));
        }
    }
    if keys.is_empty() {
        return Err(format!("{}: no keys (expected username:hexkey lines)", path.display()));
    }
    Ok(keys)
}

/// The server's TLS context from a `psktool` key file.
pub fn load_psk_file(path: &Path) -> Result<Arc<SslContext>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let keys = parse_psk_file(path, &text)?;
    let ssl_err = |e: openssl::error::ErrorStack| format!("OpenSSL: {e}");
    let mut b = SslContext::builder(SslMethod::tls_server()).map_err(ssl_err)?;
    b.set_min_proto_version(Some(SslVersion::TLS1_2)).map_err(ssl_err)?;
    // TLS 1.3 with an external PSK through this callback hashes with
    // SHA-256 (OpenSSL's SSL_CTX_set_psk_server_callback(3)).
    b.set_ciphersuites("TLS_AES_128_GCM_SHA256").map_err(ssl_err)?;
    b.set_cipher_list("ECDHE-PSK-AES128-CBC-SHA256:DHE-PSK-AES128-GCM-SHA256:PSK-AES128-GCM-SHA256")
        .map_err(ssl_err)?;
    b.set_psk_server_callback(move |_ssl, identity, out| {
        let key = identity.and_then(|id| std::str::from_utf8(id).ok()).and_then(|id| keys.get(id));
        match key {
            Some(k) if k.len() <= out.len() => {
                out[..k.len()].copy_from_slice(k);
                Ok(k.len())
            }
            // Unknown user: no key, the handshake fails.
            _ => Ok(0),
        }
    });
    Ok(Arc::new(b.build()))
}

/// The session's side of the socket, in memory: ciphertext received and
/// not yet taken by OpenSSL (`inbox[at..]`), and ciphertext to send.
#[derive(Default)]
struct Wire {
    inbox: Vec<u8>,
    at: usize,
    outbox: Vec<u8>,
}

impl Wire {
    fn unread(&self) -> bool {
        self.at < self.inbox.len()
    }
    fn put(&mut self, data: &[u8]) {
        if !self.unread() {
            self.inbox.clear();
            self.at = 0;
        }
        self.inbox.extend_from_slice(data);
    }
}

impl Read for Wire {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.unread() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.inbox.len() - self.at);
        buf[..n].copy_from_slice(&self.inbox[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl Write for Wire {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.outbox.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Ciphertext read from the socket at a time, at most.
const READ_CHUNK: usize = 1 << 16;

/// A PSK TLS session over a connection's socket, shared by its reader and
/// writer. Locks are taken in the order `rx`, `session`, `tx`.
pub(super) struct PskStream {
    session: Mutex<SslStream<Wire>>,
    /// The reader's socket and buffer (only the reader uses them).
    rx: Mutex<(Stream, Vec<u8>)>,
    /// The socket ciphertext is sent on (under the session's lock).
    tx: Mutex<Stream>,
    /// Where the time spent polling for input is counted.
    counters: Arc<ServerCounters>,
}

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("TLS: {e}"))
}

impl PskStream {
    /// Run the TLS handshake on `sock`, `early` being bytes the client has
    /// already sent.
    pub(super) fn accept(
        sock: Stream,
        early: &[u8],
        ctx: &SslContext,
        counters: Arc<ServerCounters>,
    ) -> io::Result<Arc<PskStream>> {
        let ssl = Ssl::new(ctx).map_err(other)?;
        let mut s = SslStream::new(ssl, Wire::default()).map_err(other)?;
        let mut rx = sock.try_clone()?;
        let mut tx = sock;
        s.get_mut().put(early);
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            let r = s.accept();
            tx.write_all(&std::mem::take(&mut s.get_mut().outbox))?;
            match r {
                Ok(()) => break,
                Err(e) if e.code() == ErrorCode::WANT_READ => {
                    let n = rx.read(&mut buf)?;
                    if n == 0 {
                        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed during the TLS handshake"));
                    }
                    s.get_mut().put(&buf[..n]);
                }
                Err(e) => return Err(other(e)),
            }
        }
        Ok(Arc::new(PskStream { session: Mutex::new(s), rx: Mutex::new((rx, buf)), tx: Mutex::new(tx), counters }))
    }

    fn session(&self) -> MutexGuard<'_, SslStream<Wire>> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Send what OpenSSL has written (the session is locked by the caller).
    fn send_pending(&self, s: &mut SslStream<Wire>) -> io::Result<()> {
        let out = &mut s.get_mut().outbox;
        if !out.is_empty() {
            let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
            let sent = tx.write_all(out);
            out.clear();
            sent?;
        }
        Ok(())
    }

    /// End the session (`close_notify`).
    pub(super) fn close(&self) {
        let mut s = self.session();
        let _ = s.shutdown();
        let _ = self.send_pending(&mut s);
    }

    /// Shut the socket down (the reader's blocking read returns).
    pub(super) fn shutdown(&self, how: std::net::Shutdown) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).shutdown(how);
    }

    pub(super) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        let (sock, chunk) = &mut *rx;
        loop {
            {
                let mut s = self.session();
                let r = s.ssl_read(buf);
                // Alerts, key updates, session tickets.
                self.send_pending(&mut s)?;
                match r {
                    Ok(n) => return Ok(n),
                    Err(e) if e.code() == ErrorCode::WANT_READ => {}
                    Err(e) if e.code() == ErrorCode::ZERO_RETURN => return Ok(0),
                    Err(e) => return Err(other(e)),
                }
            }
            // Wait for ciphertext without holding the session: polled for
            // a moment, then asleep (as `TlsStream::read`).
            let n = sock.read_polled(chunk, &self.counters.tls_poll_ns)?;
            if n == 0 {
                return Ok(0);
            }
            self.session().get_mut().put(&chunk[..n]);
        }
    }

    /// Whether input is waiting (decrypted, received, or still in the
    /// socket: read without waiting), as `TlsStream::has_input`.
    pub(super) fn has_input(&self) -> bool {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        {
            let mut s = self.session();
            if s.ssl().pending() > 0 || s.get_mut().unread() {
                return true;
            }
        }
        let (sock, chunk) = &mut *rx;
        match sock.read_now(chunk) {
            Ok(n) if n > 0 => {
                self.session().get_mut().put(&chunk[..n]);
                true
            }
            _ => false,
        }
    }

    pub(super) fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut s = self.session();
        let mut at = 0;
        while at < buf.len() {
            at += s.ssl_write(&buf[at..]).map_err(other)?;
        }
        self.send_pending(&mut s)?;
        Ok(buf.len())
    }

    pub(super) fn flush(&self) -> io::Result<()> {
        let mut s = self.session();
        self.send_pending(&mut s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_psktool_file_parses_and_bad_lines_are_named() {
        let p = Path::new("keys.psk");
        let k = parse_psk_file(p, "alice:0123abcd\n\nbob:ff00\r\n").unwrap();
        assert_eq!(k["alice"], vec![0x01, 0x23, 0xab, 0xcd]);
        assert_eq!(k["bob"], vec![0xff, 0x00]);
        for (text, want) in [
            ("alice", "keys.psk:1: expected username:hexkey"),
            ("alice:012", "keys.psk:1: the key of \"alice\" must be an even number"),
            ("a:00\nbob:zz", "keys.psk:2: the key of \"bob\" is not hexadecimal"),
            ("a:0é0", "keys.psk:1: the key of \"a\" is not hexadecimal"),
            ("a:+f", "keys.psk:1: the key of \"a\" is not hexadecimal"),
            (":00", "keys.psk:1: empty username"),
            ("a:00\na:01", "keys.psk:2: user \"a\" listed twice"),
            ("\n\n", "keys.psk: no keys"),
        ] {
            let e = parse_psk_file(p, text).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }
}
