//! `[zns]`: a zoned namespace (NVMe Zoned Namespace Command Set, TP 4053,
//! ratified in NVMe ZNS Command Set Specification 1.0/1.1) — the drive
//! file's section as serde reads it ([`ZnsSpec`]) and what validation
//! derives from it in the FTL's 4 KiB pages ([`ZnsModel`]). The model is
//! [`crate::model::ftl::zns`].

use serde::{Deserialize, Serialize};

/// `[zns]`: the namespace is cut into zones of `zone_size_bytes` (the
/// Identify Namespace's ZSZE), each writable sequentially up to
/// `zone_capacity_bytes` (each zone descriptor's ZCAP); the first
/// `conventional_zones` are conventional (randomly writable, no write
/// pointer). The namespace's size is `ftl.user_capacity_bytes`, a whole
/// number of zones. The drive limits the zones open and active at once
/// (Identify Namespace MOR + 1 and MAR + 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZnsSpec {
    /// Bytes of LBA space per zone (ZSZE × LBA size).
    pub zone_size_bytes: u64,
    /// Bytes writable per sequential zone (ZCAP × LBA size; at most the
    /// zone size, a whole number of native program units).
    pub zone_capacity_bytes: u64,
    /// Conventional zones at the start of the namespace (randomly
    /// writable, page-mapped, collected by GC).
    #[serde(default)]
    pub conventional_zones: u32,
    /// Zones that may be open (implicitly or explicitly) at once (MOR + 1).
    pub max_open_zones: u32,
    /// Zones that may be active (open or closed) at once (MAR + 1); at
    /// least `max_open_zones`.
    pub max_active_zones: u32,
}

/// `[zns]` in the FTL's units (4 KiB logical pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZnsModel {
    /// Zones in the namespace (conventional ones included).
    pub zones: u32,
    /// Conventional zones (the first ones).
    pub conventional: u32,
    /// Logical pages per zone (zone size).
    pub zone_lpns: u32,
    /// Logical pages writable per sequential zone (zone capacity).
    pub zone_cap_lpns: u32,
    /// Most zones open at once.
    pub max_open: u32,
    /// Most zones active (open or closed) at once.
    pub max_active: u32,
    /// Blocks a sequential zone takes on each die at most (its program
    /// units striped over the dies).
    pub blocks_per_die: u32,
}
