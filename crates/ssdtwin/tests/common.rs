//! Small drives for tests.

use ssdtwin::{Drive, DriveModel, DriveSpec};

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
