//! A connection's byte stream (TCP, Unix socket or TLS over either) and
//! the listening socket, behind one type each so that the handshake and
//! transmission code reads and writes without knowing which. Left out:
//! the TLS session itself (`tls.rs`).

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;

use super::tls::TlsStream;
#[cfg(feature = "tls-psk")]
use super::tls_psk::PskStream;

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
