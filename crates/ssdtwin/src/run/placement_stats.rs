//! What a drive with a zoned namespace (`[zns]`) or flexible data
//! placement (`[fdp]`) did over a statistics window: how many zones are in
//! each state (at the window's end, and at the start of every second of
//! its series), what each zone took (host bytes, resets, finishes and
//! their padding), and what each placement identifier wrote (host and
//! media bytes, data moved by GC, reclaim units started, so WAF per
//! handle) — the counts of the FDP statistics log page split by handle —
//! with the FDP events it saw by type and the FDP log pages at its end
//! ([`crate::run::fdp_log`]).
//!
//! A snapshot of the drive's per-zone and per-placement counters is taken
//! when a window opens and subtracted when it closes: nothing is counted
//! per command here, and a conventional drive takes no snapshot at all.
//! Zone states are counted from the zone table (a scan of the zones) when
//! a second of the series opens. Left out: per-zone latency, and the
//! reclaim units' own fill levels.

use serde::{Deserialize, Serialize};

use crate::model::drive::Drive;
use crate::model::ftl::fdp::PlacementCounters;
use crate::model::ftl::fdp_events::EVENT_TYPES;
use crate::model::ftl::zns::ZoneCounters;
use crate::model::ftl::zones::ZoneState;
use crate::model::nand::SECTOR_BYTES;
use crate::run::fdp_log::{event_counts, EventCount, FdpLogPages};

const SLOT: u64 = SECTOR_BYTES as u64;

/// How many zones are in each state (ZNS's zone states; `conventional`
/// counts the conventional zones, which have none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneStates {
    /// Conventional zones.
    pub conventional: u32,
    /// ZSE: empty.
    pub empty: u32,
    /// ZSIO: implicitly opened.
    pub implicitly_opened: u32,
    /// ZSEO: explicitly opened.
    pub explicitly_opened: u32,
    /// ZSC: closed.
    pub closed: u32,
    /// ZSF: full.
    pub full: u32,
    /// ZSRO: read only.
    pub read_only: u32,
    /// ZSO: offline.
    pub offline: u32,
}

impl ZoneStates {
    /// The drive's zones by state now (`None`: not a zoned drive).
    pub fn of(drive: &Drive) -> Option<ZoneStates> {
        let zones = drive.ftl().zoned()?.zones();
        let c = zones.counts();
        let n = |s: ZoneState| c[s.index()];
        Some(ZoneStates {
            conventional: n(ZoneState::NotWritePointer),
            empty: n(ZoneState::Empty),
            implicitly_opened: n(ZoneState::ImplicitlyOpened),
            explicitly_opened: n(ZoneState::ExplicitlyOpened),
            closed: n(ZoneState::Closed),
            full: n(ZoneState::Full),
            read_only: n(ZoneState::ReadOnly),
            offline: n(ZoneState::Offline),
        })
    }

    /// Zones opened (implicitly or explicitly).
    pub fn open(&self) -> u32 {
        self.implicitly_opened + self.explicitly_opened
    }

    /// Zones active (opened or closed).
    pub fn active(&self) -> u32 {
        self.open() + self.closed
    }
}

/// What one zone took during a window (zones that took nothing are left
/// out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneActivity {
    /// Zone index (its first LBA is `zone × zone size`).
    pub zone: u32,
    /// Its state at the window's end (the specification's name).
    pub state: String,
    /// Bytes the host wrote into it.
    pub host_bytes: u64,
    /// Times it was reset.
    pub resets: u64,
    /// Times it was finished before it was full.
    pub finishes: u64,
    /// Bytes of padding its finishes programmed.
    pub padding_bytes: u64,
}

/// What one placement identifier (a reclaim group's reclaim unit handle)
/// wrote during a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandleActivity {
    /// Reclaim group.
    pub group: u32,
    /// Reclaim unit handle in the group.
    pub handle: u32,
    /// Bytes the host wrote through it.
    pub host_bytes: u64,
    /// Bytes programmed into its reclaim units (host data, data GC moved
    /// there when persistently isolated, padding).
    pub media_bytes: u64,
    /// Bytes of its data GC moved.
    pub moved_bytes: u64,
    /// Reclaim units it started.
    pub units_started: u64,
    /// media / host bytes (0 when the host wrote nothing through it).
    pub waf: f64,
}

/// What a zoned or FDP drive did over a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlacementWindow {
    /// Zones by state at the window's end (zoned drives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_states: Option<ZoneStates>,
    /// Zones that took writes, resets or finishes, in zone order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<ZoneActivity>,
    /// Every placement identifier, group by group (FDP drives).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handles: Vec<HandleActivity>,
    /// Bytes programmed into reclaim units GC filled for every handle
    /// together (initially isolated handles).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shared_gc_bytes: u64,
    /// FDP events of the window by type (types it saw none of left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fdp_events: Vec<EventCount>,
    /// The FDP log pages at the window's end (FDP drives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp_log: Option<FdpLogPages>,
}

impl PlacementWindow {
    /// The run summary's lines: zones by state, zone resets and finishes,
    /// each handle the host wrote through with its WAF.
    pub fn summary_lines(&self) -> String {
        let mut out = String::new();
        if let Some(z) = &self.zone_states {
            let resets: u64 = self.zones.iter().map(|a| a.resets).sum();
            let finishes: u64 = self.zones.iter().map(|a| a.finishes).sum();
            out.push_str(&format!(
                "  zones: {} empty, {} open ({} explicitly), {} closed, {} full{}{}; {resets} resets, {finishes} finishes\n",
                z.empty,
                z.open(),
                z.explicitly_opened,
                z.closed,
                z.full,
                if z.read_only + z.offline > 0 {
                    format!(", {} read-only, {} offline", z.read_only, z.offline)
                } else {
                    String::new()
                },
                if z.conventional > 0 { format!(", {} conventional", z.conventional) } else { String::new() },
            ));
        }
        let used: Vec<&HandleActivity> =
            self.handles.iter().filter(|h| h.host_bytes > 0 || h.media_bytes > 0).collect();
        if !used.is_empty() {
            let list: Vec<String> = used
                .iter()
                .map(|h| format!("RG{} RUH{} {:.1} GB WAF {:.2}", h.group, h.handle, h.host_bytes as f64 / 1e9, h.waf))
                .collect();
            out.push_str(&format!("  placement handles: {}\n", list.join("; ")));
        }
        if let Some(s) = self.fdp_log.as_ref().map(|l| l.statistics) {
            let gb = |b: u64| b as f64 / 1e9;
            let ratio = if s.host_bytes > 0 { s.media_bytes as f64 / s.host_bytes as f64 } else { 0.0 };
            out.push_str(&format!(
                "  FDP statistics (drive's life): host {:.2} GB, media {:.2} GB written (ratio {ratio:.3}), {:.2} GB erased\n",
                gb(s.host_bytes),
                gb(s.media_bytes),
                gb(s.erased_bytes)
            ));
        }
        if !self.fdp_events.is_empty() {
            let list: Vec<String> = self.fdp_events.iter().map(|e| format!("{} {}", e.count, e.kind.name())).collect();
            out.push_str(&format!("  FDP events: {}\n", list.join(", ")));
        }
        out
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The drive's per-zone and per-placement counters when a window opened.
#[derive(Debug, Clone)]
pub struct PlacementSnapshot {
    zones: Vec<ZoneCounters>,
    handles: Vec<PlacementCounters>,
    shared_gc_slots: u64,
    events: [u64; EVENT_TYPES],
}

impl PlacementSnapshot {
    /// The counters now (`None`: a drive without `[zns]` or `[fdp]`).
    pub fn of(drive: &Drive) -> Option<PlacementSnapshot> {
        let ftl = drive.ftl();
        let zoned = ftl.zoned();
        let fdp = ftl.fdp();
        if zoned.is_none() && fdp.is_none() {
            return None;
        }
        let zones = zoned.map_or(Vec::new(), |z| (0..z.zones().model().zones).map(|i| z.zone_counters(i)).collect());
        let handles = fdp.map_or(Vec::new(), |f| (0..f.model().placements()).map(|p| f.counters(p)).collect());
        Some(PlacementSnapshot {
            zones,
            handles,
            shared_gc_slots: fdp.map_or(0, |f| f.mixed_slots()),
            events: fdp.map_or([0; EVENT_TYPES], |f| f.events().counts()),
        })
    }

    /// What the drive did since it was made (`None`: a drive without
    /// `[zns]` or `[fdp]`): the window from an all-zero snapshot.
    pub fn since_start(drive: &Drive) -> Option<PlacementWindow> {
        let now = PlacementSnapshot::of(drive)?;
        let zero = PlacementSnapshot {
            zones: vec![ZoneCounters::default(); now.zones.len()],
            handles: vec![PlacementCounters::default(); now.handles.len()],
            shared_gc_slots: 0,
            events: [0; EVENT_TYPES],
        };
        Some(zero.window(drive))
    }

    /// What the drive did since the snapshot.
    pub fn window(&self, drive: &Drive) -> PlacementWindow {
        let Some(now) = PlacementSnapshot::of(drive) else { return PlacementWindow::default() };
        let zoned = drive.ftl().zoned();
        let zones = now
            .zones
            .iter()
            .zip(&self.zones)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| ZoneActivity {
                zone: i as u32,
                state: zoned.map_or("", |z| z.zones().state(i as u32).name()).to_string(),
                host_bytes: (a.host_pages - b.host_pages) * SLOT,
                resets: a.resets - b.resets,
                finishes: a.finishes - b.finishes,
                padding_bytes: (a.padding_slots - b.padding_slots) * SLOT,
            })
            .collect();
        let handles_per_group = drive.ftl().fdp().map_or(1, |f| f.model().handles);
        let handles = now
            .handles
            .iter()
            .zip(&self.handles)
            .enumerate()
            .map(|(p, (a, b))| {
                let host = (a.host_slots - b.host_slots) * SLOT;
                let media = (a.media_slots - b.media_slots) * SLOT;
                HandleActivity {
                    group: p as u32 / handles_per_group,
                    handle: p as u32 % handles_per_group,
                    host_bytes: host,
                    media_bytes: media,
                    moved_bytes: (a.moved_slots - b.moved_slots) * SLOT,
                    units_started: a.units_started - b.units_started,
                    waf: if host == 0 { 0.0 } else { media as f64 / host as f64 },
                }
            })
            .collect();
        PlacementWindow {
            zone_states: ZoneStates::of(drive),
            zones,
            handles,
            shared_gc_bytes: (now.shared_gc_slots - self.shared_gc_slots) * SLOT,
            fdp_events: event_counts(self.events, now.events),
            fdp_log: FdpLogPages::of(drive),
        }
    }
}
