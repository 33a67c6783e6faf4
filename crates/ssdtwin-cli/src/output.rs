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
/// run never leaves a half-written result.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().context("output path has no file name")?;
    let tmp = dir.join(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(())
}
