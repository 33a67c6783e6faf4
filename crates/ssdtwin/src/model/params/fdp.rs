//! `[fdp]`: flexible data placement (NVMe TP 4146, ratified in NVMe 2.0
//! as the Flexible Data Placement feature) — the drive file's section as
//! serde reads it ([`FdpSpec`]) and what validation derives from it
//! ([`FdpModel`]). The model is [`crate::model::ftl::fdp`].

use serde::{Deserialize, Serialize};

/// How the drive keeps the data of different reclaim unit handles apart
/// when it moves data (the FDP configuration's reclaim unit handle type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FdpIsolation {
    /// Initially isolated: host writes of different handles go to
    /// different reclaim units, but garbage collection may move their
    /// data into the same one.
    Initially,
    /// Persistently isolated: data moved by garbage collection stays with
    /// the handle it was written through.
    Persistently,
}

/// `[fdp]`: placement identifiers name a reclaim group and a reclaim unit
/// handle; each handle writes into reclaim units of its own (one erase
/// block on each die of its group: a superblock of the group).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdpSpec {
    /// Reclaim unit handles per reclaim group (the placement handles a
    /// write may name; handle 0 is the default).
    pub reclaim_unit_handles: u32,
    /// Reclaim groups: the dies split into this many equal groups, each
    /// with its own reclaim units (default 1: every die).
    #[serde(default = "one")]
    pub reclaim_groups: u32,
    /// `"initially"` or `"persistently"` isolated.
    pub isolation: FdpIsolation,
}

fn one() -> u32 {
    1
}

/// `[fdp]` as the FTL uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FdpModel {
    /// Reclaim unit handles per group.
    pub handles: u32,
    /// Reclaim groups.
    pub groups: u32,
    /// Dies per reclaim group.
    pub dies_per_group: u32,
    /// Persistently isolated (else initially).
    pub persistent: bool,
    /// Bytes of a reclaim unit (one native block on each die of a group).
    pub ru_bytes: u64,
}

impl FdpModel {
    /// Placement identifiers: one per (group, handle).
    pub fn placements(&self) -> u32 {
        self.groups * self.handles
    }
}
