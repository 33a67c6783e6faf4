//! FDP events (NVMe TP 4146, the FDP Events log page, log identifier
//! 23h): what the drive records when a placement does not go as the host
//! asked, or when the controller moves data or changes a handle's reclaim
//! unit on its own.
//!
//! The specification defines host events (00h Reclaim Unit Not Fully
//! Written, 01h Reclaim Unit Active Time Limit Exceeded, 02h Controller
//! Level Reset Modified Reclaim Unit Handles, 03h Invalid Placement
//! Identifier) and controller events (80h Media Reallocated, 81h
//! Implicitly Modified Reclaim Unit Handle); the codes and the event
//! descriptor's fields (placement identifier with its valid flag, reclaim
//! group and handle with the location valid flag, for Media Reallocated
//! the number of LBAs moved and an LBA) are as libnvme declares them
//! (`src/nvme/types.h`, `enum nvme_fdp_event_type`, `struct
//! nvme_fdp_event`, `struct nvme_fdp_event_realloc`). The twin records
//! the four its mechanisms produce:
//! - *Invalid Placement Identifier* (host): a write named a placement the
//!   drive does not have; it went to the default handle.
//! - *Media Reallocated* (controller): a failed program or an
//!   uncorrectable read made the controller move a block's valid data
//!   elsewhere ([`super::badblocks`]); the event carries the LBAs moved
//!   and the first of them.
//! - *Implicitly Modified Reclaim Unit Handle* (controller): a program
//!   failure closed a block of the reclaim unit a handle was filling, so
//!   the handle goes on in another block before its unit was full.
//! - *Reclaim Unit Not Fully Written* (host): a Reclaim Unit Handle
//!   Update ([`super::fdp`]) made a handle leave a reclaim unit it had
//!   written in part (as QEMU's FDP emulation, `hw/nvme/ctrl.c`
//!   `nvme_update_ruh`, logs it).
//!
//! A reclaim unit filled in order starts the next one without an event
//! (the specification has none for it; [`super::fdp::PlacementCounters`]
//! counts the units started). Left out: the time limit (no reclaim unit
//! time limit is modelled), the controller reset, and the Set Features command that
//! enables events per handle: the twin records every event. Each log
//! keeps its newest 63 events (the page's capacity in libnvme's `struct
//! nvme_fdp_events_log`); the counts cover every event.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// The events a log page holds at most.
pub const LOG_CAPACITY: usize = 63;

/// How many event types the twin records.
pub const EVENT_TYPES: usize = 4;

/// The FDP event types the twin records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FdpEventType {
    /// 03h, a host event.
    InvalidPlacementIdentifier,
    /// 80h, a controller event.
    MediaReallocated,
    /// 81h, a controller event.
    ImplicitlyModifiedReclaimUnitHandle,
    /// 00h, a host event.
    ReclaimUnitNotFullyWritten,
}

impl FdpEventType {
    /// Every type, in the order of [`FdpEvents::counts`].
    pub const ALL: [FdpEventType; EVENT_TYPES] = [
        FdpEventType::InvalidPlacementIdentifier,
        FdpEventType::MediaReallocated,
        FdpEventType::ImplicitlyModifiedReclaimUnitHandle,
        FdpEventType::ReclaimUnitNotFullyWritten,
    ];

    /// The event type code.
    pub fn code(self) -> u8 {
        match self {
            FdpEventType::InvalidPlacementIdentifier => 0x03,
            FdpEventType::MediaReallocated => 0x80,
            FdpEventType::ImplicitlyModifiedReclaimUnitHandle => 0x81,
            FdpEventType::ReclaimUnitNotFullyWritten => 0x00,
        }
    }

    /// The specification's name.
    pub fn name(self) -> &'static str {
        match self {
            FdpEventType::InvalidPlacementIdentifier => "Invalid Placement Identifier",
            FdpEventType::MediaReallocated => "Media Reallocated",
            FdpEventType::ImplicitlyModifiedReclaimUnitHandle => "Implicitly Modified Reclaim Unit Handle",
            FdpEventType::ReclaimUnitNotFullyWritten => "Reclaim Unit Not Fully Written",
        }
    }

    /// A host event (else a controller event: the page's two logs).
    pub fn is_host(self) -> bool {
        self.code() < 0x80
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One FDP event descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FdpEvent {
    /// What happened.
    #[serde(rename = "type")]
    pub kind: FdpEventType,
    /// When: the drive's clock, ns.
    pub time_ns: u64,
    /// The placement identifier concerned (reclaim group × handles +
    /// handle; `None`: not valid, e.g. data GC had mixed).
    pub placement: Option<u32>,
    /// Reclaim group and reclaim unit handle of the location (`None`: not
    /// valid).
    pub group: Option<u32>,
    /// See `group`.
    pub handle: Option<u32>,
    /// Media Reallocated: the logical blocks (4 KiB) moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lbas_moved: Option<u32>,
    /// Media Reallocated: the first logical block moved (4 KiB units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lba: Option<u64>,
}

/// The drive's two event logs (host and controller) and counts by type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FdpEvents {
    host: VecDeque<FdpEvent>,
    controller: VecDeque<FdpEvent>,
    counts: [u64; EVENT_TYPES],
}

impl FdpEvents {
    /// Record `e`; the log drops its oldest event when full.
    pub fn record(&mut self, e: FdpEvent) {
        self.counts[e.kind.index()] += 1;
        let log = if e.kind.is_host() { &mut self.host } else { &mut self.controller };
        if log.len() == LOG_CAPACITY {
            log.pop_front();
        }
        log.push_back(e);
    }

    /// Events of `kind` recorded since the drive was made.
    pub fn count(&self, kind: FdpEventType) -> u64 {
        self.counts[kind.index()]
    }

    /// Counts by type, in [`FdpEventType::ALL`]'s order.
    pub fn counts(&self) -> [u64; EVENT_TYPES] {
        self.counts
    }

    /// The host events log, oldest first.
    pub fn host(&self) -> &VecDeque<FdpEvent> {
        &self.host
    }

    /// The controller events log, oldest first.
    pub fn controller(&self) -> &VecDeque<FdpEvent> {
        &self.controller
    }
}
