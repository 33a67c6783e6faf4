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

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

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
/// which `tmp` is removed.
pub fn install(tmp: &Path, path: &Path) -> io::Result<()> {
    if is_special(path) {
        let copied = (|| {
            let mut out = OpenOptions::new().write(true).open(path)?;
            io::copy(&mut File::open(tmp)?, &mut out).map(|_| ())
        })();
        let _ = std::fs::remove_file(tmp);
        return copied;
    }
    std::fs::rename(tmp, path)
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
    if let Err(e) = File::create(&tmp).and_then(stream) {
        let _ = std::fs::remove_file(&tmp);
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
