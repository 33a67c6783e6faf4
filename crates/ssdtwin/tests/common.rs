//! Small drives and temporary files for tests.

use std::path::{Path, PathBuf};

use ssdtwin::{Drive, DriveModel, DriveSpec};
use tempfile::TempDir;

/// An empty temporary directory of the test's own (named
/// `ssdtwin-{name}-…`), removed with all it holds when dropped, also when
/// the test panics: keep it bound while the test uses it.
pub fn scratch_dir(name: &str) -> TempDir {
    tempfile::Builder::new().prefix(&format!("ssdtwin-{name}-")).tempdir().expect("temporary directory")
}

/// A file in a temporary directory of its own, removed with the directory
/// when dropped (also when the test panics); it dereferences to its path.
pub struct TempFile {
    path: PathBuf,
    _dir: TempDir,
}

impl TempFile {
    /// Write `bytes` as `name` in a new temporary directory.
    pub fn new(name: &str, bytes: &[u8]) -> TempFile {
        let dir = scratch_dir("file");
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        TempFile { path, _dir: dir }
    }
}

impl std::ops::Deref for TempFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

/// A small TLC NVMe drive: 2 channels × 2 dies × 2 planes, 64 blocks of
/// 48 pages × 16 KiB per plane (384 MiB raw), `user_mib` MiB user
/// capacity, plus extra overrides.
pub fn small_model(user_mib: u64, extra: &[&str]) -> DriveModel {
    let mut set: Vec<String> = vec![
        "geometry.channels=2".into(),
        "geometry.dies_per_channel=2".into(),
        "geometry.blocks_per_plane=64".into(),
        "geometry.pages_per_block=48".into(),
        format!("ftl.user_capacity_bytes={}", user_mib << 20),
    ];
    set.extend(extra.iter().map(|s| s.to_string()));
    let spec = DriveSpec::load("generic-tlc-nvme", &set).expect("test drive parses");
    spec.build("test drive").expect("test drive is valid")
}

/// A fresh drive of [`small_model`].
pub fn small_drive(user_mib: u64, extra: &[&str]) -> Drive {
    Drive::new(small_model(user_mib, extra))
}

/// A small QLC drive with the Intel 660p's NAND, controller and cache
/// rules, scaled down: 8 dies × 4 planes × 40 blocks of 256 pages (5.4 GB
/// raw), 3.2 GB user capacity, 0.2 GB static and up to 1.2 GB of SLC
/// cache, plus extra overrides. Its map is held whole: the 660p's 192 MB
/// map cache would hold this drive's 3 MB map entirely, and its reserved
/// translation blocks (two per die, the minimum) would take 5% of the
/// scaled-down dies where a real drive's take 0.1% (tests/mapcache.rs
/// covers the cache).
pub fn small_slc_model(extra: &[&str]) -> DriveModel {
    let mut set: Vec<String> = vec![
        "geometry.blocks_per_plane=40".into(),
        "geometry.pages_per_block=256".into(),
        "ftl.user_capacity_bytes=3199995904".into(),
        "slc_cache.static_bytes=200000000".into(),
        "slc_cache.capacity_curve=[[0.0, 1.2e9], [0.5, 1.2e9], [0.78, 0.2e9], [1.0, 0.2e9]]".into(),
        "ftl.map_cache=".into(),
    ];
    set.extend(extra.iter().map(|s| s.to_string()));
    let spec = DriveSpec::load("intel-660p-1tb", &set).expect("test drive parses");
    spec.build("small SLC test drive").expect("test drive is valid")
}

/// A small drive with the OCZ Core's NAND and controller and a hybrid
/// log-block FTL: 2 channels × 2 dies × 2 planes, 64 blocks of 16 pages per
/// plane (32 slots = 128 KiB per block, 32 MiB raw), 28 MiB user capacity,
/// 2 log blocks per die, plus extra overrides.
pub fn small_hybrid_model(association: &str, extra: &[&str]) -> DriveModel {
    let mut set: Vec<String> = vec![
        "geometry.channels=2".into(),
        "geometry.dies_per_channel=2".into(),
        // Each die on its own (the preset gangs its 8 channels).
        "geometry.gang=1".into(),
        "geometry.blocks_per_plane=64".into(),
        "geometry.pages_per_block=16".into(),
        format!("ftl.user_capacity_bytes={}", 28u64 << 20),
        "ftl.hybrid.log_blocks=8".into(),
        format!("ftl.hybrid.association={association}"),
        // The JMF602's merges in one go and whole-block rewrites are
        // tested on the full preset; these tests time single merges.
        "ftl.hybrid.merge_batch=1".into(),
        "ftl.hybrid.whole_block_merge=false".into(),
    ];
    set.extend(extra.iter().map(|s| s.to_string()));
    let spec = DriveSpec::load("ocz-core-64gb", &set).expect("test drive parses");
    spec.build("small hybrid test drive").expect("test drive is valid")
}

/// A small zoned drive on [`small_model`]'s flash (4 dies, 1.5 MiB
/// blocks, 96 KiB program units): 56 sequential zones of 8 MiB with a
/// capacity of 6 MiB (one block per die), at most 4 open and 6 active
/// zones, plus extra overrides.
pub fn small_zoned_model(extra: &[&str]) -> DriveModel {
    let mut set: Vec<&str> = vec![
        "zns.zone_size_bytes=8388608",
        "zns.zone_capacity_bytes=6291456",
        "zns.max_open_zones=4",
        "zns.max_active_zones=6",
    ];
    set.extend_from_slice(extra);
    small_model(448, &set)
}

/// `f` of fio's report of `results`, the jobs of `file` run on `dev`, as
/// `ssdtwin run` reports them for a fresh drive described as
/// generic-tlc-nvme (the small test drives' base): its JSON, normal or
/// terse output.
pub fn with_fio_report<T>(
    dev: &ssdtwin::run::device::Device,
    file: &ssdtwin::run::workload::fio::JobFile,
    results: &[ssdtwin::run::jobs::JobResult],
    f: impl FnOnce(&ssdtwin::study::fio_out::FioReport) -> T,
) -> T {
    let spec = DriveSpec::load("generic-tlc-nvme", &[]).unwrap();
    let health = ssdtwin::model::health::Health::of(dev.drive());
    f(&ssdtwin::study::fio_out::FioReport {
        drive: &spec,
        state: "fresh".into(),
        seed: 1,
        global: &file.global,
        jobs: results,
        health: &health,
    })
}
