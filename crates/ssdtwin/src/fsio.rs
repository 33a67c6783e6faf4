//! Writing result files so that a failed run never leaves a half-written
//! one: the bytes go to a temporary file beside the target, which is then
//! renamed over it.
//!
//! A target that exists and is not a regular file — a character device
//! such as `/dev/null`, a FIFO, a socket — is written in place instead:
//! renaming over it would replace the device node with a regular file (on
//! a machine where `/dev/null` became a regular file, every later program
//! reading "nothing" from it reads what others wrote there). What is left
//! out: fsync of the file and its directory (a power cut of the host may
//! still lose a renamed result).
//!
//! Every temporary is registered while it lives (from [`create_temp`] to
//! [`install`] or [`remove_temp`]), so that a process being interrupted
//! can remove them all ([`remove_temporaries`], which the command line's
//! SIGINT/SIGTERM handler calls). Creating, renaming and removing happen
//! under the registry's lock, so that an interruption sees each
//! temporary either registered or gone; the writes in between take no
//! lock (nothing per I/O).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The temporaries of this process that are neither installed nor
/// removed yet.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn forget(live: &mut Vec<PathBuf>, tmp: &Path) {
    if let Some(i) = live.iter().rposition(|p| p == tmp) {
        live.swap_remove(i);
    }
}

/// Create (or truncate) the temporary file `tmp` for writing, registered
/// as live until [`install`] or [`remove_temp`].
pub fn create_temp(tmp: &Path) -> io::Result<File> {
    let mut live = live();
    let file = File::create(tmp)?;
    if !live.iter().any(|p| p == tmp) {
        live.push(tmp.to_path_buf());
    }
    Ok(file)
}

/// Remove the temporary `tmp` (if it exists) and forget it.
pub fn remove_temp(tmp: &Path) {
    let mut live = live();
    let _ = std::fs::remove_file(tmp);
    forget(&mut live, tmp);
}

/// The temporaries live now (for tests and messages).
pub fn live_temporaries() -> Vec<PathBuf> {
    live().clone()
}

/// Remove every live temporary, then run `then` still holding the
/// registry, so that no temporary is created or installed meanwhile: a
/// signal handler passes a function that exits the process.
pub fn remove_temporaries<R>(then: impl FnOnce() -> R) -> R {
    let mut live = live();
    for tmp in live.drain(..) {
        let _ = std::fs::remove_file(tmp);
    }
    then()
}

/// Whether `path` names something other than a regular file or a
/// directory (a device, a FIFO, a socket), which must be written in place.
pub fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// A temporary path beside `path` for writing it, unique to this process.
/// The file name's extension stays last, so that a writer choosing a
/// compression by extension (`.gz`, `.zst`) still sees it.
pub fn temp_beside(path: &Path) -> PathBuf {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map_or("out".into(), |n| n.to_string_lossy().into_owned());
    dir.join(format!(".tmp{}.{name}", std::process::id()))
}

/// Put the finished temporary file `tmp` in place as `path`: a rename, or
/// for a special file ([`is_special`]) a copy of its bytes into it, after
/// which `tmp` is removed (also when the rename or copy fails); either
/// way `tmp` is no longer live.
pub fn install(tmp: &Path, path: &Path) -> io::Result<()> {
    if is_special(path) {
        // Not under the lock: a FIFO's reader may take its time.
        let copied = (|| {
            let mut out = OpenOptions::new().write(true).open(path)?;
            io::copy(&mut File::open(tmp)?, &mut out).map(|_| ())
        })();
        remove_temp(tmp);
        return copied;
    }
    let mut live = live();
    let renamed = std::fs::rename(tmp, path);
    if renamed.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    forget(&mut live, tmp);
    renamed
}

/// Write `bytes` as `path` through a temporary file ([`install`]); a
/// special file is written directly.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomically_with(path, |w| w.write_all(bytes))
}

/// Write `path` by streaming into it (`write` gets a buffered writer)
/// through a temporary file ([`install`]); a special file is written
/// directly. When `write` fails, nothing is left behind.
pub fn write_atomically_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let stream = |file: File| -> io::Result<()> {
        let mut w = BufWriter::new(file);
        write(&mut w)?;
        w.flush()
    };
    if is_special(path) {
        return stream(OpenOptions::new().write(true).open(path)?);
    }
    let tmp = temp_beside(path);
    if let Err(e) = create_temp(&tmp).and_then(stream) {
        remove_temp(&tmp);
        return Err(e);
    }
    install(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;

    /// An empty directory of the test's own, removed when dropped (also
    /// when the test fails).
    fn scratch(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("ssdtwin-fsio-{name}-")).tempdir().unwrap()
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_no_temporary_is_left() {
        let dir = scratch("regular");
        let d = dir.path().to_path_buf();
        let p = d.join("out.json");
        std::fs::write(&p, b"old contents, longer than the new").unwrap();
        write_atomically(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "only the result remains");
    }

    #[test]
    fn a_fifo_stays_a_fifo_and_its_reader_gets_the_bytes() {
        let dir = scratch("fifo");
        let p = dir.path().join("pipe");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for (k, via_install) in [(0, false), (1, true)] {
            let reader = {
                let p = p.clone();
                std::thread::spawn(move || {
                    let mut s = String::new();
                    File::open(&p).unwrap().read_to_string(&mut s).unwrap();
                    s
                })
            };
            let text = format!("result {k}");
            if via_install {
                let tmp = temp_beside(&p);
                std::fs::write(&tmp, &text).unwrap();
                install(&tmp, &p).unwrap();
                assert!(!tmp.exists(), "the temporary is removed");
            } else {
                write_atomically(&p, text.as_bytes()).unwrap();
            }
            assert_eq!(reader.join().unwrap(), text);
            assert!(std::fs::metadata(&p).unwrap().file_type().is_fifo(), "still a FIFO");
        }
    }

    #[test]
    fn temporaries_are_live_from_creation_to_install_or_removal() {
        let dir = scratch("live");
        let (a, b) = (dir.path().join("a.tmp"), dir.path().join("b.tmp"));
        create_temp(&a).unwrap().write_all(b"a").unwrap();
        create_temp(&b).unwrap();
        assert!(live_temporaries().contains(&a) && live_temporaries().contains(&b));
        install(&a, &dir.path().join("a")).unwrap();
        assert!(!live_temporaries().contains(&a));
        assert_eq!(std::fs::read(dir.path().join("a")).unwrap(), b"a");
        remove_temp(&b);
        assert!(!b.exists() && !live_temporaries().contains(&b));
        // `remove_temporaries` would remove other tests' temporaries too:
        // the command line's interruption test (ssdtwin-cli/tests/interrupt.rs)
        // checks it.
    }

    #[test]
    fn dev_null_is_written_in_place() {
        // Only read the node's type before and after: writing to it in
        // place is what keeps it a device.
        let p = Path::new("/dev/null");
        if !std::fs::metadata(p).is_ok_and(|m| m.file_type().is_char_device()) {
            return; // not a device here (and not ours to repair)
        }
        assert!(is_special(p));
        write_atomically(p, b"discarded").unwrap();
        assert!(std::fs::metadata(p).unwrap().file_type().is_char_device());
    }
}
