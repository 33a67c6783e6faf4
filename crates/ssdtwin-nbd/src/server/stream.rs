//! A connection's byte stream (TCP, Unix socket or TLS over either) and
//! the listening socket, behind one type each so that the handshake and
//! transmission code reads and writes without knowing which; the raw
//! socket reads a TLS session takes its ciphertext with (at once, or
//! polled for a moment before sleeping). Left out: the TLS sessions
//! themselves (`tls.rs`, `tls_psk.rs`).

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::tls::TlsStream;
#[cfg(feature = "tls-psk")]
use super::tls_psk::PskStream;

/// How long a TLS reader out of ciphertext polls its socket before it
/// sleeps in `recv`. A TLS reader is the faster side of a fio client at a
/// deep queue (its replies batched, `TlsStream::has_input`), so it ran
/// out of input and slept about once every 4–13 requests, and the client
/// paid for waking it in each `sendmsg` that found it asleep (about 3 µs,
/// 16–17 % of fio's CPU per 4 KiB write); polling through the gaps
/// between a client's sends, which are a few microseconds at a deep
/// queue, keeps it awake (4 KiB TLS writes at QD32, builds alternated:
/// 74.4–75.0 K IOPS polled against 54.7–60.0 K asleep, and fio's CPU per
/// write 3.1–4.8 µs lower; docs/nbd-tls.md). A reader that waits longer
/// (a client at queue depth 1 waiting for its reply, an idle session)
/// spends this much CPU per wait and then sleeps.
const POLL_BEFORE_SLEEP: Duration = Duration::from_micros(10);

pub(super) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Arc<TlsStream>),
    /// TLS with pre-shared keys (OpenSSL).
    #[cfg(feature = "tls-psk")]
    Psk(Arc<PskStream>),
}

impl Stream {
    pub(super) fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tls(s) => Stream::Tls(s.clone()),
            #[cfg(feature = "tls-psk")]
            Stream::Psk(s) => Stream::Psk(s.clone()),
        })
    }
    pub(super) fn shutdown(&self, how: std::net::Shutdown) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
            Stream::Tls(s) => {
                s.shutdown(how);
                Ok(())
            }
            #[cfg(feature = "tls-psk")]
            Stream::Psk(s) => {
                s.shutdown(how);
                Ok(())
            }
        };
    }
    /// End a TLS session (`close_notify`); nothing on a plain socket.
    pub(super) fn close_tls(&self) {
        match self {
            Stream::Tcp(_) | Stream::Unix(_) => {}
            Stream::Tls(s) => s.close(),
            #[cfg(feature = "tls-psk")]
            Stream::Psk(s) => s.close(),
        }
    }
    /// Whether input the reader has not taken is waiting above the socket
    /// (in a TLS session).
    pub(super) fn has_input(&self) -> bool {
        match self {
            Stream::Tcp(_) | Stream::Unix(_) => false,
            Stream::Tls(s) => s.has_input(),
            #[cfg(feature = "tls-psk")]
            Stream::Psk(s) => s.has_input(),
        }
    }
    /// Whether a plain socket holds bytes not yet read (`FIONREAD`); true
    /// for a TLS stream (not known without taking them through the
    /// session), and when the call fails.
    pub(super) fn socket_has_input(&self) -> bool {
        let fd = match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            _ => return true,
        };
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer.
        let r = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
        r != 0 || n > 0
    }
    /// Read what the socket holds without waiting: `Ok(0)` at its end,
    /// `WouldBlock` when nothing has come (one `recv` with
    /// `MSG_DONTWAIT`; the socket stays blocking for the other threads).
    pub(super) fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            _ => return Err(io::Error::other("a TLS stream reads from its socket")),
        };
        // SAFETY: `buf` is valid for writes of its length for the call.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
    /// Read what comes on a plain socket: polled without waiting for up
    /// to [`POLL_BEFORE_SLEEP`], then asleep in `recv`; the time polled
    /// (with the read that ends it) is added to `polled_ns`. Errors of
    /// the polls are met again, and reported, by the blocking read.
    pub(super) fn read_polled(&mut self, buf: &mut [u8], polled_ns: &AtomicU64) -> io::Result<usize> {
        let start = Instant::now();
        let until = start + POLL_BEFORE_SLEEP;
        let got = loop {
            match self.read_now(buf) {
                Ok(n) => break Some(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < until => std::hint::spin_loop(),
                Err(_) => break None,
            }
        };
        polled_ns.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        match got {
            Some(n) => Ok(n),
            None => self.read(buf),
        }
    }
    pub(super) fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
            _ => Err(io::Error::other("a TLS stream stays blocking")),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
            #[cfg(feature = "tls-psk")]
            Stream::Psk(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
            #[cfg(feature = "tls-psk")]
            Stream::Psk(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
            #[cfg(feature = "tls-psk")]
            Stream::Psk(s) => s.flush(),
        }
    }
}

pub(super) enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}
