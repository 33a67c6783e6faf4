//! The README's test command sets itself up: `scripts/test-setup.sh`, run
//! on a machine that lacks the tools the tests drive, installs their Debian
//! packages as root and, without root, names them and the command that
//! installs them, and fails. Run against stub `apt-get`, `id` and tools on
//! a PATH of the test's own (nothing is installed, nothing is fetched).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn write_exe(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A machine in a directory: `bin/` is the whole PATH, holding `dirname`,
/// an `id` that answers `uid`, an `apt-get` that logs its arguments, an
/// `apt-cache` that knows every package (as on Debian 13, where nbdfuse
/// has a package of its own), and a stub for each of `present`;
/// `venv/bin/python` answers that its packages are there, so only the
/// Debian step acts.
fn machine(uid: u32, present: &[&str]) -> TempDir {
    let dir = tempfile::Builder::new().prefix("ssdtwin-test-setup-").tempdir().unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/usr/bin/dirname", bin.join("dirname")).unwrap();
    write_exe(&bin.join("id"), &format!("echo {uid}"));
    let log = dir.path().join("apt.log");
    write_exe(&bin.join("apt-get"), &format!("echo \"$*\" >> '{}'", log.display()));
    write_exe(&bin.join("apt-cache"), "exit 0");
    for tool in present {
        write_exe(&bin.join(tool), "exit 0");
    }
    let venv_bin = dir.path().join("venv/bin");
    fs::create_dir_all(&venv_bin).unwrap();
    write_exe(&venv_bin.join("python"), "exit 0");
    dir
}

fn setup(machine: &Path, args: &[&str]) -> Output {
    Command::new("/bin/bash")
        .arg(repo_root().join("scripts/test-setup.sh"))
        .args(args)
        .env_clear()
        .env("PATH", machine.join("bin"))
        .env("SSDTWIN_VENV", machine.join("venv"))
        .output()
        .expect("bash runs")
}

fn apt_calls(machine: &Path) -> Vec<String> {
    fs::read_to_string(machine.join("apt.log")).map(|s| s.lines().map(str::to_owned).collect()).unwrap_or_default()
}

/// The tools whose package must be installed when they are missing. The
/// e2fsprogs tools are also looked for in /usr/sbin, where this machine
/// has them, so they are left out here.
const TOOLS: &[(&str, &str)] = &[
    ("chromium", "chromium"),
    ("fio", "fio"),
    ("nbdinfo", "libnbd-bin"),
    ("nbdfuse", "nbdfuse"),
    ("fusermount3", "fuse3"),
    ("mount", "mount"),
    ("qemu-img", "qemu-utils"),
    ("openssl", "openssl"),
    ("pkg-config", "pkg-config"),
    // Not a tool: OpenSSL's headers for the `tls-psk` feature, which the
    // script asks `pkg-config --exists openssl` about.
    ("pkg-config --exists openssl", "libssl-dev"),
];

#[test]
fn as_root_it_installs_every_missing_package() {
    let m = machine(0, &[]);
    let out = setup(m.path(), &[]);
    assert!(out.status.success(), "setup failed: {}", String::from_utf8_lossy(&out.stderr));
    let calls = apt_calls(m.path());
    assert_eq!(calls.len(), 2, "apt-get update, then one install: {calls:?}");
    assert!(calls[0].starts_with("update"), "{calls:?}");
    let install: Vec<&str> = calls[1].split_whitespace().collect();
    assert_eq!(install[0], "install", "{calls:?}");
    for (tool, pkg) in TOOLS {
        assert!(install.contains(pkg), "missing {tool}: {pkg} not installed ({calls:?})");
    }
}

#[test]
fn as_root_it_installs_only_what_is_missing() {
    let m = machine(0, &["chromium", "fio", "fio_jsonplus_clat2csv", "nbdinfo", "nbdcopy", "qemu-img"]);
    let out = setup(m.path(), &[]);
    assert!(out.status.success(), "setup failed: {}", String::from_utf8_lossy(&out.stderr));
    let calls = apt_calls(m.path());
    let install = calls.iter().find(|c| c.starts_with("install")).expect("an install");
    assert!(install.split_whitespace().any(|w| w == "nbdfuse"), "{install}");
    for pkg in ["chromium", "fio", "libnbd-bin", "qemu-utils"] {
        assert!(!install.split_whitespace().any(|w| w == pkg), "{pkg} is present but installed: {install}");
    }
}

#[test]
fn where_nbdfuse_has_no_package_of_its_own_it_comes_from_libnbd_bin() {
    // Debian 12: nbdfuse is part of libnbd-bin.
    let m = machine(0, &["chromium", "fio", "fio_jsonplus_clat2csv", "nbdinfo", "nbdcopy", "qemu-img"]);
    write_exe(&m.path().join("bin/apt-cache"), "exit 100");
    let out = setup(m.path(), &[]);
    assert!(out.status.success(), "setup failed: {}", String::from_utf8_lossy(&out.stderr));
    let calls = apt_calls(m.path());
    let install = calls.iter().find(|c| c.starts_with("install")).expect("an install");
    let words: Vec<&str> = install.split_whitespace().collect();
    assert!(words.contains(&"libnbd-bin") && !words.contains(&"nbdfuse"), "{install}");
    assert!(words.contains(&"fuse3") && words.contains(&"mount"), "{install}");
}

#[test]
fn with_every_tool_present_it_installs_nothing() {
    let all = [
        "chromium",
        "fio",
        "fio_jsonplus_clat2csv",
        "nbdinfo",
        "nbdcopy",
        "nbdfuse",
        "fusermount3",
        "mount",
        "qemu-img",
        "mkfs.ext4",
        "debugfs",
        "e2fsck",
        "openssl",
        // Its stub answers that OpenSSL's headers are there.
        "pkg-config",
    ];
    let m = machine(0, &all);
    let out = setup(m.path(), &[]);
    assert!(out.status.success(), "setup failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(apt_calls(m.path()).is_empty(), "{:?}", apt_calls(m.path()));
}

#[test]
fn without_root_it_names_the_packages_and_the_command_and_fails() {
    let m = machine(1000, &[]);
    let out = setup(m.path(), &[]);
    assert!(!out.status.success(), "a non-root setup with missing tools must fail");
    assert!(apt_calls(m.path()).is_empty(), "no apt-get without root");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sudo apt-get install -y"), "{err}");
    for (_, pkg) in TOOLS {
        assert!(err.contains(pkg), "{pkg} not named: {err}");
    }
}

#[test]
fn dry_run_says_what_it_would_install_and_installs_nothing() {
    let m = machine(0, &[]);
    let out = setup(m.path(), &["--dry-run"]);
    assert!(out.status.success());
    assert!(apt_calls(m.path()).is_empty());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("would install Debian packages:") && said.contains("chromium"), "{said}");
}
