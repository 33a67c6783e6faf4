//! TLS on a connection (`NBD_OPT_STARTTLS`), with rustls and X.509
//! certificates laid out as nbdkit's and qemu's `--tls-certificates DIR`
//! (`server-cert.pem`: the server's certificate chain, `server-key.pem`:
//! its private key; a `ca-cert.pem` there is for the clients).
//!
//! The client asks for TLS during the handshake; the server acknowledges,
//! then the TLS handshake runs on the same socket (bytes the client sent
//! right after its option, already buffered, are fed to rustls first) and
//! the NBD handshake starts again inside TLS (what was negotiated before is
//! forgotten, as the protocol requires). One connection's reader and writer
//! threads share the TLS session behind a mutex: the reader waits for
//! ciphertext on the socket *without* the lock and takes it only to hand
//! the bytes to rustls and to take plaintext out; the writer takes it to
//! encrypt and send.
//!
//! Copies on the way in (measured with callgrind, docs/nbd-tls.md): the
//! ciphertext goes from the reader's socket buffer into rustls (which
//! decrypts in place and keeps the plaintext), and from rustls straight
//! into the request's header or payload: no buffer of our own holds
//! ciphertext aside or plaintext above rustls (the server reads a TLS
//! stream unbuffered; rustls is the buffer).
//!
//! Left out here: pre-shared keys (nbdkit's `--tls-psk` file), which
//! rustls lacks (no TLS 1.3 external PSKs, rustls/rustls#174): they are
//! `tls_psk.rs`, through OpenSSL, behind the feature `tls-psk`; and
//! client certificates, which are not asked for.

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{CipherSuite, ServerConfig, ServerConnection};

use super::{ServerCounters, Stream};

/// Whether the server offers TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// Not offered (`NBD_OPT_STARTTLS` is refused by policy).
    Off,
    /// Offered: a client may start TLS or not.
    On,
    /// Required: nothing but `NBD_OPT_STARTTLS` (and `ABORT`) before TLS.
    Require,
}

impl std::str::FromStr for TlsMode {
    type Err = String;
    fn from_str(s: &str) -> Result<TlsMode, String> {
        match s {
            "off" => Ok(TlsMode::Off),
            "on" => Ok(TlsMode::On),
            "require" => Ok(TlsMode::Require),
            _ => Err(format!("{s:?}: expected off, on or require")),
        }
    }
}

/// The server's TLS configuration from a certificates directory
/// (`server-cert.pem`, `server-key.pem`). Errors name the file and what
/// is wrong.
pub fn load_certificates(dir: &Path) -> Result<Arc<ServerConfig>, String> {
    let cert_path = dir.join("server-cert.pem");
    let key_path = dir.join("server-key.pem");
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: {e}", cert_path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate (expected PEM `BEGIN CERTIFICATE` blocks)", cert_path.display()));
    }
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| format!("{}: {e}", key_path.display()))?;
    let mut provider = rustls::crypto::ring::default_provider();
    // AES-128-GCM before AES-256-GCM, whatever the client prefers: 10 AES
    // rounds a block instead of 14 (FIPS 197), on both ends of a transport
    // that encrypts every payload; it is TLS 1.3's mandatory suite (RFC
    // 8446, section 9.1). The rest keep rustls's order.
    provider.cipher_suites.sort_by_key(|s| {
        !matches!(
            s.suite(),
            CipherSuite::TLS13_AES_128_GCM_SHA256
                | CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                | CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        )
    });
    let mut config = ServerConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("{} and {}: {e}", cert_path.display(), key_path.display()))?;
    config.ignore_client_order = true;
    Ok(Arc::new(config))
}

/// Ciphertext read from the socket at a time, at most.
const READ_CHUNK: usize = 1 << 16;

/// Hand `data` to rustls while no plaintext is waiting (rustls holds
/// 16 KiB of plaintext at most, and decrypts what it takes at once);
/// returns how much it took.
fn take_in(conn: &mut ServerConnection, mut data: &[u8]) -> io::Result<usize> {
    let len = data.len();
    while !data.is_empty() {
        let state = conn.process_new_packets().map_err(io::Error::other)?;
        if state.plaintext_bytes_to_read() > 0 {
            break;
        }
        let n = conn.read_tls(&mut data)?;
        conn.process_new_packets().map_err(io::Error::other)?;
        if n == 0 {
            break;
        }
    }
    Ok(len - data.len())
}

/// The reader's side: the socket and the ciphertext read from it that
/// rustls has not taken yet, `buf[start..end]` (it is handed over from
/// this buffer, never copied aside; the socket is read again only once
/// all of it is taken).
struct Incoming {
    sock: Stream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// A TLS session over a connection's socket, shared by its reader and
/// writer. Locks are taken in the order `rx`, `session`, `tx`.
pub(super) struct TlsStream {
    session: Mutex<ServerConnection>,
    /// The reader's side (only the reader uses it).
    rx: Mutex<Incoming>,
    /// The socket ciphertext is sent on (under the session's lock).
    tx: Mutex<Stream>,
    /// Where the time spent polling for input is counted.
    counters: Arc<ServerCounters>,
}

impl TlsStream {
    /// Run the TLS handshake on `sock`, `early` being bytes the client
    /// has already sent (buffered while reading its last option).
    pub(super) fn accept(
        sock: Stream,
        early: &[u8],
        config: Arc<ServerConfig>,
        counters: Arc<ServerCounters>,
    ) -> io::Result<Arc<TlsStream>> {
        let mut conn = ServerConnection::new(config).map_err(io::Error::other)?;
        let mut rx = sock.try_clone()?;
        let mut tx = sock;
        let mut early = early;
        while !early.is_empty() {
            conn.read_tls(&mut early)?;
            conn.process_new_packets().map_err(io::Error::other)?;
        }
        while conn.is_handshaking() {
            while conn.wants_write() {
                conn.write_tls(&mut tx)?;
            }
            if !conn.is_handshaking() {
                break;
            }
            if conn.read_tls(&mut rx)? == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed during the TLS handshake"));
            }
            conn.process_new_packets().map_err(io::Error::other)?;
        }
        while conn.wants_write() {
            conn.write_tls(&mut tx)?;
        }
        let rx = Mutex::new(Incoming { sock: rx, buf: vec![0u8; READ_CHUNK], start: 0, end: 0 });
        Ok(Arc::new(TlsStream { session: Mutex::new(conn), rx, tx: Mutex::new(tx), counters }))
    }

    fn session(&self) -> MutexGuard<'_, ServerConnection> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Send what rustls has ready (the session is locked by the caller).
    fn send_pending(&self, conn: &mut ServerConnection) -> io::Result<()> {
        let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        while conn.wants_write() {
            conn.write_tls(&mut *tx)?;
        }
        Ok(())
    }

    /// End the TLS session (`close_notify`), as the protocol asks of a
    /// server before it closes the connection.
    pub(super) fn close(&self) {
        let mut s = self.session();
        s.send_close_notify();
        let _ = self.send_pending(&mut s);
    }

    /// Shut the socket down (the reader's blocking read returns).
    pub(super) fn shutdown(&self, how: std::net::Shutdown) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).shutdown(how);
    }

    pub(super) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        let rx = &mut *rx;
        loop {
            {
                let mut s = self.session();
                // Plaintext waiting first (the common case at a deep
                // queue), then what rustls has not taken yet.
                for feed in [false, true] {
                    if feed {
                        rx.start += take_in(&mut s, &rx.buf[rx.start..rx.end])?;
                    }
                    match s.reader().read(buf) {
                        Ok(n) => return Ok(n),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
                if rx.start < rx.end {
                    return Err(io::Error::other("TLS: received data rustls does not take"));
                }
            }
            // Wait for ciphertext without holding the session (the
            // writer sends meanwhile): polled for a moment, then asleep.
            let n = rx.sock.read_polled(&mut rx.buf, &self.counters.tls_poll_ns)?;
            if n == 0 {
                return Ok(0);
            }
            (rx.start, rx.end) = (0, n);
            let mut s = self.session();
            rx.start += take_in(&mut s, &rx.buf[..n])?;
            // Alerts, key updates.
            self.send_pending(&mut s)?;
        }
    }

    /// Whether input is waiting (plaintext, ciphertext not yet decrypted,
    /// or ciphertext the client has sent that is still in the socket), so
    /// that a reader need not flush its replies yet.
    ///
    /// The socket is looked at too (read without waiting; what comes is
    /// kept for [`TlsStream::read`]): every flush is a TLS record of its
    /// own, and a client's TLS library receives each record with two reads
    /// (its header, then the rest) and decrypts it on its own. Replies
    /// flushed while the client's next requests were already in the socket
    /// went out one record each (0.81 records a request for fio's 4 KiB
    /// writes at QD32), and the client spent more on them than on its
    /// writes' encryption (docs/nbd-tls.md, Speed). A client waiting for a
    /// reply has sent nothing more, so the look finds nothing and the
    /// reply goes at once (the look costs one `recv` that returns at
    /// once).
    pub(super) fn has_input(&self) -> bool {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        if rx.start < rx.end || self.session().reader().into_first_chunk().is_ok_and(|c| !c.is_empty()) {
            return true;
        }
        let rx = &mut *rx;
        match rx.sock.read_now(&mut rx.buf) {
            Ok(n) if n > 0 => {
                (rx.start, rx.end) = (0, n);
                true
            }
            // Nothing yet; the end, or an error, which the next read
            // meets again and reports.
            _ => false,
        }
    }

    pub(super) fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut s = self.session();
        let mut at = 0;
        while at < buf.len() {
            at += s.writer().write(&buf[at..])?;
            self.send_pending(&mut s)?;
        }
        Ok(buf.len())
    }

    pub(super) fn flush(&self) -> io::Result<()> {
        let mut s = self.session();
        self.send_pending(&mut s)
    }
}
