//! What the commands share for output: progress spinners that stay quiet
//! off a terminal, and result files written atomically.

use std::path::Path;

use anyhow::{Context, Result};
use indicatif::ProgressBar;

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
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    path.file_name().context("output path has no file name")?;
    ssdtwin::fsio::write_atomically_with(path, write).with_context(|| format!("writing {}", path.display()))
}

/// Write a JSON document to `out` (`-`: standard output) by streaming it.
pub fn write_json_to(out: &str, write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> Result<()> {
    if out == "-" {
        let mut w = std::io::BufWriter::new(std::io::stdout().lock());
        write(&mut w)?;
        std::io::Write::flush(&mut w)?;
        Ok(())
    } else {
        write_atomically_with(Path::new(out), write)
    }
}
