//! The FDP log pages (NVMe TP 4146) as a host reads them from a drive
//! with `[fdp]`: FDP Configurations (log identifier 20h), Reclaim Unit
//! Handle Usage (21h), FDP Statistics (22h) and FDP Events (23h), in the
//! twin's units and names (the fields follow libnvme's `struct
//! nvme_fdp_config_desc`, `nvme_fdp_ruhu_desc`, `nvme_fdp_stats_log` and
//! `nvme_fdp_event`, `src/nvme/types.h`).
//!
//! The pages describe the drive's whole life, as a drive reports them; a
//! run's window adds how many events of each type it saw
//! ([`crate::run::placement_stats`]). Left out: the byte layout (the
//! twin reports values, not the page's binary form), FDP attributes a
//! host cannot observe through the twin (vendor-specific size, the
//! volatile write cache bit), and more than one configuration or
//! namespace.

use serde::{Deserialize, Serialize};

use crate::model::drive::Drive;
use crate::model::ftl::fdp::FdpStatistics;
use crate::model::ftl::fdp_events::{FdpEvent, FdpEventType, EVENT_TYPES};

/// The drive's one FDP configuration (a descriptor of the FDP
/// Configurations log page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FdpConfiguration {
    /// NRG: reclaim groups.
    pub reclaim_groups: u32,
    /// NRUH: reclaim unit handles (per group).
    pub reclaim_unit_handles: u32,
    /// MAXPIDS: placement identifiers a namespace may use (the twin's one
    /// namespace uses every handle of every group).
    pub max_placement_identifiers: u32,
    /// RUNS: reclaim unit nominal size, bytes (one erase block on each die
    /// of a group).
    pub reclaim_unit_nominal_bytes: u64,
    /// ERUTL: estimated reclaim unit time limit, s (0: none).
    pub reclaim_unit_time_limit_s: u32,
    /// Each handle's type: `"initially"` or `"persistently"` isolated.
    pub handle_types: Vec<String>,
}

/// Reclaim Unit Handle Usage: what references each handle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleUsage {
    /// Reclaim unit handle.
    pub handle: u32,
    /// RUHA: `"host_specified"` (a namespace's placement handle list
    /// names it: in the twin every handle), `"controller_specified"` or
    /// `"unused"`.
    pub attribute: String,
}

/// An FDP event type and how many a window saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventCount {
    /// The type (snake case of the specification's name).
    #[serde(rename = "type")]
    pub kind: FdpEventType,
    /// Its code (00h, 03h, 80h, 81h).
    pub code: u8,
    /// Events of the type.
    pub count: u64,
}

/// The four FDP log pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FdpLogPages {
    /// FDP Configurations (20h).
    pub configuration: FdpConfiguration,
    /// Reclaim Unit Handle Usage (21h).
    pub handle_usage: Vec<HandleUsage>,
    /// FDP Statistics (22h): host bytes with metadata written (HBMW),
    /// media bytes with metadata written (MBMW), media bytes erased (MBE).
    pub statistics: FdpStatistics,
    /// FDP Events (23h), host events: the newest 63, oldest first.
    pub host_events: Vec<FdpEvent>,
    /// FDP Events (23h), controller events: the newest 63, oldest first.
    pub controller_events: Vec<FdpEvent>,
}

impl FdpLogPages {
    /// The pages `drive` reports now (`None`: no `[fdp]`).
    pub fn of(drive: &Drive) -> Option<FdpLogPages> {
        let f = drive.ftl().fdp()?;
        let m = f.model();
        let kind = if m.persistent { "persistently" } else { "initially" };
        let events = f.events();
        Some(FdpLogPages {
            configuration: FdpConfiguration {
                reclaim_groups: m.groups,
                reclaim_unit_handles: m.handles,
                max_placement_identifiers: m.placements(),
                reclaim_unit_nominal_bytes: m.ru_bytes,
                reclaim_unit_time_limit_s: 0,
                handle_types: vec![kind.to_string(); m.handles as usize],
            },
            handle_usage: (0..m.handles)
                .map(|handle| HandleUsage { handle, attribute: "host_specified".to_string() })
                .collect(),
            statistics: drive.fdp_statistics()?,
            host_events: events.host().iter().copied().collect(),
            controller_events: events.controller().iter().copied().collect(),
        })
    }
}

/// Events by type between two count snapshots (types with none left out).
pub fn event_counts(before: [u64; EVENT_TYPES], now: [u64; EVENT_TYPES]) -> Vec<EventCount> {
    FdpEventType::ALL
        .iter()
        .enumerate()
        .filter(|&(i, _)| now[i] > before[i])
        .map(|(i, &kind)| EventCount { kind, code: kind.code(), count: now[i] - before[i] })
        .collect()
}
