//! `ssdtwin serve`: the twin as a network block device (NBD), so that real
//! clients — qemu-img, nbdcopy, fio's `nbd` engine, nbdfuse with a real
//! filesystem, a VM disk — run on the simulated SSD.
//!
//! ```text
//!  client ──NBD (TCP loopback / Unix socket)──► server (one reader + one writer thread per connection)
//!                                                 │ request at virtual time t
//!                                                 ▼
//!                                      Twin (behind a mutex): Device (the device core)
//!                                                 │ + DataStore keyed by physical slot,
//!                                                 │   following the FTL's relocation journal
//!                                                 ▼
//!                         reply sent when the wall clock reaches the simulated completion × scale
//! ```
//!
//! - [`proto`]: the wire format (fixed newstyle handshake, simple and
//!   structured replies);
//! - [`store`]: client bytes by the physical 4 KiB slot the FTL chose, so
//!   a mapping, GC, folding or merge bug returns wrong data visibly;
//! - [`twin`]: block requests on the device core and the store;
//! - [`server`]: sockets, threads, pacing and the transport's delay,
//!   structured replies and block status, TLS, bad clients;
//! - [`report`]: the run's JSON and summary at the end;
//! - [`image`]: saving the drive with its data and loading it again.
//!
//! TLS with pre-shared keys is the optional feature `tls-psk` (OpenSSL;
//! `server/tls_psk.rs`). Left out (see each module): several exports.

#![deny(missing_docs)]

pub mod image;
pub mod proto;
pub mod report;
pub mod server;
pub mod store;
pub mod twin;

pub use server::{Listen, ServeOptions, ServeOutcome, Server};
pub use twin::Twin;
