//! Clean interruption: on SIGINT or SIGTERM the process removes every
//! temporary file it has open ([`ssdtwin::fsio`]'s registry: fio logs,
//! JSON, reports, traces, saved drives being written) and exits with
//! status 128 + the signal's number, as a shell reports a process the
//! signal killed.
//!
//! The handler only wakes a thread of its own (`signal-hook`'s iterator),
//! which does the work outside signal context; nothing is added to the
//! simulation's path. A result already renamed into place stays; one
//! being written is never left half-written, since it lives under a
//! temporary name until it is complete. Left out: `serve`, which handles
//! these signals itself (it stops serving, prints its statistics and
//! saves the drive).

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Catch SIGINT and SIGTERM from now on: remove the temporaries and exit
/// with 128 + the signal's number.
pub fn remove_temporaries_on_signals() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        if let Some(signo) = signals.forever().next() {
            ssdtwin::fsio::remove_temporaries(|| std::process::exit(128 + signo));
        }
    })?;
    Ok(())
}
