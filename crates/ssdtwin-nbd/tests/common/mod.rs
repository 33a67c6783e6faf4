//! What several of the NBD tests share: whether the real client they
//! drive is here, and the small drives they serve (the power-cut
//! campaigns' among them).

use std::process::Command;

use ssdtwin::{DriveModel, DriveSpec};

/// Whether Debian's fio with its nbd engine is installed; says why not
/// (the test is then skipped).
#[allow(dead_code)] // not every test that includes this module runs fio
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

/// The small drives of the NBD tests and the power-cut campaigns (fio's
/// and the filesystem's): a page-mapped TLC drive (80 MiB user on 96 MiB
/// raw), the Intel 660p's QLC NAND and SLC cache rules on 2 dies, and the
/// OCZ Core's hybrid log-block FTL (28 MiB user), each small enough that
/// GC runs within a few rounds: (kind, preset, overrides).
#[allow(dead_code)] // not every test that includes this module uses them
pub const CUT_DRIVES: [(&str, &str, &[&str]); 3] = [
    (
        "page-mapped",
        "generic-tlc-nvme",
        &[
            "geometry.channels=2",
            "geometry.dies_per_channel=2",
            "geometry.blocks_per_plane=32",
            "geometry.pages_per_block=48",
            "ftl.user_capacity_bytes=83886080",
        ],
    ),
    (
        "SLC-cached",
        "intel-660p-1tb",
        &[
            "geometry.channels=2",
            "geometry.dies_per_channel=1",
            "geometry.blocks_per_plane=48",
            "geometry.pages_per_block=64",
            "ftl.user_capacity_bytes=268435456",
            "slc_cache.static_bytes=8000000",
            "slc_cache.capacity_curve=[[0.0, 64e6], [0.5, 64e6], [0.78, 8e6], [1.0, 8e6]]",
        ],
    ),
    (
        "hybrid",
        "ocz-core-64gb",
        &[
            "geometry.channels=2",
            "geometry.dies_per_channel=2",
            "geometry.gang=1",
            "geometry.blocks_per_plane=64",
            "geometry.pages_per_block=16",
            "ftl.user_capacity_bytes=29360128",
            "ftl.hybrid.log_blocks=8",
        ],
    ),
];

/// One of [`CUT_DRIVES`] by kind, with `extra` overrides after its own.
#[allow(dead_code)] // not every test that includes this module uses it
pub fn small_spec(kind: &str, extra: &[&str]) -> DriveSpec {
    let (_, preset, set) = CUT_DRIVES.iter().find(|d| d.0 == kind).expect("one of the small drives");
    let set: Vec<String> = set.iter().chain(extra).map(|s| s.to_string()).collect();
    DriveSpec::load(preset, &set).expect("test drive parses")
}

/// [`small_spec`] built.
#[allow(dead_code)] // not every test that includes this module uses it
pub fn small_model(kind: &str, extra: &[&str]) -> DriveModel {
    small_spec(kind, extra).build("test drive").expect("test drive is valid")
}
