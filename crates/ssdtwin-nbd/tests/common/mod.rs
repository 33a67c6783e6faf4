//! What several of the NBD tests share: whether the real client they
//! drive is here.

use std::process::Command;

/// Whether Debian's fio with its nbd engine is installed; says why not
/// (the test is then skipped).
pub fn fio_has_nbd() -> bool {
    let Ok(out) = Command::new("fio").arg("--enghelp").output() else {
        eprintln!("SKIPPED: `fio` is not installed (Debian: fio)");
        return false;
    };
    let ok = String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == "nbd");
    if !ok {
        eprintln!("SKIPPED: this fio has no nbd engine (Debian's fio has it)");
    }
    ok
}
