//! What the commands share for output: one writer for standard output
//! and error (the `outln!`, `out!`, `errln!` and `err!` macros, used instead of
//! `println!` and friends, which panic when the reader has gone away),
//! progress spinners that stay quiet off a terminal, and result files
//! written atomically.
//!
//! When the reader of standard output or error goes away (`ssdtwin
//! presets | head -1`), the process removes its temporaries and exits
//! quietly with status 0, as ripgrep does; another write error is
//! reported on standard error and exits with status 2. Left out:
//! clap's own help and usage output, which clap writes (and which ignores
//! write errors).

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};
use indicatif::ProgressBar;

/// `println!` through [`out`].
macro_rules! outln {
    () => {
        $crate::output::out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` through [`out`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::out(format_args!($($arg)*))
    };
}

/// `eprint!` through [`err`].
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::output::err(format_args!($($arg)*))
    };
}

/// `eprintln!` through [`err`].
macro_rules! errln {
    () => {
        $crate::output::err(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Write to standard output; a closed pipe ends the process quietly
/// ([`closed_pipe`]), another error with status 2.
pub fn out(args: fmt::Arguments<'_>) {
    if let Err(e) = io::stdout().lock().write_fmt(args) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            closed_pipe();
        }
        let _ = writeln!(io::stderr(), "error: writing to standard output: {e}");
        ssdtwin::fsio::remove_temporaries(|| std::process::exit(2));
    }
}

/// Write to standard error; a closed pipe ends the process quietly,
/// another error is ignored (there is nowhere left to tell it).
pub fn err(args: fmt::Arguments<'_>) {
    if let Err(e) = io::stderr().lock().write_fmt(args) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            closed_pipe();
        }
    }
}

/// The reader of our output went away: remove this process's temporaries
/// and exit with status 0, quietly.
pub fn closed_pipe() -> ! {
    ssdtwin::fsio::remove_temporaries(|| std::process::exit(0))
}

/// Whether `e` (or an error it wraps) is a write to a closed pipe.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>().and_then(|e| e.io_error_kind()) == Some(io::ErrorKind::BrokenPipe)
    })
}

/// A spinner with `msg`, or a hidden bar when `show` is false (output is
/// not a terminal, or `--quiet`).
pub fn spinner(show: bool, msg: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new_spinner();
    b.set_message(msg.to_string());
    b.enable_steady_tick(std::time::Duration::from_millis(120));
    b
}

/// Write to a temporary file beside `path`, then rename, so that a failed
/// run never leaves a half-written result; a device such as `/dev/null` or
/// a FIFO is written in place ([`ssdtwin::fsio`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    path.file_name().context("output path has no file name")?;
    ssdtwin::fsio::write_atomically(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// [`write_atomically`], streaming: `write` gets a buffered writer.
pub fn write_atomically_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    path.file_name().context("output path has no file name")?;
    ssdtwin::fsio::write_atomically_with(path, write).with_context(|| format!("writing {}", path.display()))
}

/// Write a JSON document to `out` (`-`: standard output) by streaming it.
pub fn write_json_to(out: &str, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    if out == "-" {
        let mut w = io::BufWriter::new(io::stdout().lock());
        write(&mut w)?;
        w.flush()?;
        Ok(())
    } else {
        write_atomically_with(Path::new(out), write)
    }
}
