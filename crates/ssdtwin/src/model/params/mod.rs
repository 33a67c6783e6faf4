//! The parameters the hardware model runs from: the drive file's
//! sections as read ([`sections`]: [`DriveSpec`] and its tables;
//! [`media`], [`mapcache`], [`slc`], [`zns`], [`fdp`]), and what
//! validation derives from them in the model's units ([`DriveModel`],
//! [`SlcModel`], [`HybridModel`], [`WearLevelingModel`],
//! [`MapCacheModel`]). Only types: reading a drive file, presets,
//! overrides and the checks that make a [`DriveModel`] are
//! `crate::spec`'s ([`DriveSpec::build`]), so that the model depends on
//! no other room.

pub mod fdp;
pub mod mapcache;
pub mod media;
pub mod sections;
pub mod slc;
pub mod zns;

pub use fdp::{FdpIsolation, FdpModel, FdpSpec};
pub use mapcache::{JournalFlush, JournalPace, MapCacheLocation, MapCacheModel, MapCachePolicy, MapCacheSpec};
pub use media::{BadBlockSpec, EccSpec, RberSpec};
pub use sections::{
    Arbitration, ArbitrationSpec, BufferRelease, CellTimingSpec, ControllerSpec, DriveSpec, DynamicWearLeveling,
    FtlSpec, GcMode, GcPolicy, GeometrySpec, HostSpec, HybridLayout, HybridSpec, Interface, LogAssociation,
    MappingScheme, MergePolicy, NandSpec, OpOrder, PowerSpec, PowerStateSpec, ThermalSpec, WearLevelingSpec,
    WriteCachePolicy,
};
pub use slc::{SlcCacheSpec, SlcModel, SlcWritePolicy};
pub use zns::{ZnsModel, ZnsSpec};

use crate::model::nand::{CellMode, CellTiming, Geometry, SECTOR_BYTES};
use crate::model::power::PowerModel;
use crate::model::thermal::ThermalModel;

/// A validated drive: the spec plus everything derived from it.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveModel {
    /// The spec as given (with overrides applied).
    pub spec: DriveSpec,
    /// Derived geometry.
    pub geometry: Geometry,
    /// Native-mode timings.
    pub native: CellTiming,
    /// Channel bus speed, femtoseconds per byte.
    pub channel_fs_per_byte: u64,
    /// Host link speed in each direction, femtoseconds per byte.
    pub link_fs_per_byte: u64,
    /// Whether the host link carries both directions at once.
    pub link_full_duplex: bool,
    /// Usable host link bandwidth in bytes per second (one direction).
    pub link_bytes_per_s: f64,
    /// Logical 4 KiB pages the host can address.
    pub user_lpns: u32,
    /// Acknowledge writes only once programmed.
    pub write_through: bool,
    /// GC victim policy.
    pub gc_policy: GcPolicy,
    /// pSLC timings (native timings when the drive has no SLC cache).
    pub slc_timing: CellTiming,
    /// The SLC cache, if any.
    pub slc: Option<SlcModel>,
    /// Bytes moved over the channel per 4 KiB slot (data plus its share of
    /// the page's spare area).
    pub channel_bytes_per_slot: u64,
    /// Suspend overhead when reads suspend programs/erases (`None`: they
    /// wait).
    pub read_suspend_ns: Option<u64>,
    /// The hybrid log-block FTL's parameters (`None`: page mapping).
    pub hybrid: Option<HybridModel>,
    /// The power model (`None`: the drive file has no `[power]`).
    pub power: Option<PowerModel>,
    /// The thermal model (`None`: the drive file has no `[thermal]`).
    pub thermal: Option<ThermalModel>,
    /// The map cache (`None`: the whole map is held at no cost).
    pub map_cache: Option<MapCacheModel>,
    /// Wear leveling by erase count.
    pub wear_leveling: WearLevelingModel,
    /// Bit errors, ECC and bad blocks (`None`: the flash never fails).
    pub media: Option<crate::model::media::MediaModel>,
    /// The zoned namespace (`None`: a conventional namespace).
    pub zns: Option<ZnsModel>,
    /// Flexible data placement (`None`: writes carry no placement).
    pub fdp: Option<FdpModel>,
}

impl DriveModel {
    /// Slots of one die's row: with ganged channels a member die's, whose
    /// page registers each take `1 / gang` of the FTL's row.
    pub fn member_row_slots(&self) -> u32 {
        self.geometry.slots_per_row / self.spec.geometry.gang
    }

    /// Bytes of a native program unit that pass through the write buffer
    /// at once: the whole unit, or with ganged channels one member die's
    /// share (the unit is assembled in the member dies' page registers).
    pub fn buffered_unit_bytes(&self) -> u64 {
        (self.geometry.unit_slots(CellMode::Native) / self.spec.geometry.gang) as u64 * SECTOR_BYTES as u64
    }

    /// Program units the write buffer may hold partly written at once: one
    /// per active zone and one for the conventional stream (zoned), one
    /// per placement identifier (FDP), else one.
    pub fn partial_units(&self) -> u64 {
        match (&self.zns, &self.fdp) {
            (Some(z), _) => z.max_active as u64 + 1,
            (None, Some(f)) => f.placements() as u64,
            (None, None) => 1,
        }
    }
}

/// Wear leveling in the FTL's terms (default: off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WearLevelingModel {
    /// Dynamic leveling chooses free blocks by erase count.
    pub least_worn: bool,
    /// Erase-count spread that triggers a static move (`None`: off).
    pub static_threshold: Option<u32>,
}

impl WearLevelingModel {
    /// Whether anything levels wear by erase count.
    pub fn is_on(&self) -> bool {
        self.least_worn || self.static_threshold.is_some()
    }
}

/// The hybrid log-block FTL in the FTL's units.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HybridModel {
    /// Log blocks per die (with full association: one sequential log, the
    /// rest random logs).
    pub log_blocks_per_die: u32,
    /// Log association.
    pub association: LogAssociation,
    /// Merge victim policy.
    pub merge_policy: MergePolicy,
    /// Merges hold the command's core.
    pub merge_holds_core: bool,
    /// Merges rewrite the whole logical block.
    pub whole_block_merge: bool,
    /// Log blocks merged in one go when a die's pool is exhausted (at
    /// most the die's log blocks, random logs with full association).
    pub merge_batch: u32,
    /// Which logical pages a logical block holds.
    pub layout: HybridLayout,
    /// 4 KiB slots of consecutive addresses a logical block takes before
    /// the next die's logical block continues (the striped layout's stripe
    /// unit; the whole block with the contiguous layout).
    pub stripe_slots: u32,
    /// Single-plane operations per program unit in a merge's reads and
    /// programs (1: the whole unit at once).
    pub merge_parts: u32,
    /// Logical blocks per die.
    pub logical_blocks_per_die: u32,
}
