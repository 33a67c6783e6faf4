//! Flexible data placement (NVMe TP 4146, `[fdp]`): writes name a
//! placement identifier — a reclaim group and a reclaim unit handle — and
//! each handle writes into reclaim units of its own, so that data that
//! dies together is erased together.
//!
//! A reclaim unit here is one erase block on each die of the handle's
//! reclaim group, filled as the FTL's host stream fills blocks (program
//! units round the group's dies). Each placement identifier has host
//! stream state of its own — an open block per die, the deficit round
//! robin's debts, the die it writes next — held in place in the FTL's one
//! host stream, a run of per-die entries per placement
//! ([`super::streams::Stream`]). The drive names the placement of a write
//! before its pages reach the FTL ([`Ftl::set_placement`]), which then
//! points the host stream at that placement's run (its next die and the
//! indices it goes round: a few words, nothing copied), so every policy of
//! the page-mapped FTL — block choice, GC pacing, padding on flush —
//! applies per handle unchanged, the per-slot path costs what it costs
//! without placements, and a write without a placement goes through
//! handle 0 of group 0, the default.
//!
//! Garbage collection follows the handle type: *initially isolated*
//! handles share the FTL's one GC stream (moved data of every handle
//! mixes); *persistently isolated* handles each have a GC stream of their
//! own, swapped in while a victim of theirs is moved, so moved data stays
//! with its handle. Every block records the placement that filled it
//! (mixed for shared GC blocks).
//!
//! Reported (the FDP statistics log page and the twin's own per-handle
//! counters): host bytes written, media bytes written (programs, padding
//! included) and media bytes erased, per placement the host and media
//! bytes and the data moved by GC (so WAF per handle), reclaim units
//! started, and the FDP events ([`super::fdp_events`]: a write naming a
//! placement the drive does not have goes to the default one and records
//! an *Invalid Placement Identifier* event). The log pages as a host
//! reads them are [`crate::run::fdp_log`].
//!
//! The Reclaim Unit Handle Update command (I/O Management Send,
//! management operation 01h, [`Ftl::update_handles`]) makes each listed
//! handle leave its reclaim unit: the unit's partly filled program unit
//! is padded and programmed, its blocks are sealed where they stand (the
//! rest of each stays unwritten until GC erases it), and the handle's
//! next write starts a new unit on its group's first die. A unit written
//! in part records a *Reclaim Unit Not Fully Written* event; a handle
//! whose unit is empty or was just filled has nothing to leave (the twin
//! opens units when they are first written; QEMU's emulation, which
//! keeps a unit per handle at all times, records the event even for an
//! empty one). A list naming a placement the drive does not have is
//! refused whole with *Invalid Field in Command*, as QEMU's
//! `nvme_io_mgmt_send_ruh_update` refuses it.
//!
//! Left out: reclaim unit time limits, and placement identifier lists per
//! namespace.

use super::fdp_events::{FdpEvent, FdpEventType, FdpEvents};
use super::mapping::MappingScheme;
use super::streams::{Stream, StreamId};
use super::zones::ZoneStatus;
use super::{Ftl, FtlCore};
use crate::model::nand::{Geometry, NONE};
use crate::model::params::FdpModel;

/// Counters of one placement identifier (4 KiB slots).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlacementCounters {
    /// Slots the host wrote through it.
    pub host_slots: u64,
    /// Slots programmed into its reclaim units (host data, data moved
    /// there by GC when persistently isolated, padding).
    pub media_slots: u64,
    /// Slots of its data GC moved.
    pub moved_slots: u64,
    /// Reclaim units it started (its host stream opened a block on the
    /// first die of its group).
    pub units_started: u64,
}

impl PlacementCounters {
    /// Write amplification of the handle: media slots / host slots.
    pub fn waf(&self) -> f64 {
        if self.host_slots == 0 {
            0.0
        } else {
            self.media_slots as f64 / self.host_slots as f64
        }
    }
}

/// The FDP statistics log page (log identifier 22h), bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FdpStatistics {
    /// Host Bytes with Metadata Written (HBMW).
    pub host_bytes: u64,
    /// Media Bytes with Metadata Written (MBMW).
    pub media_bytes: u64,
    /// Media Bytes Erased (MBE).
    pub erased_bytes: u64,
}

/// A placement's run of per-die entries in the FTL's host stream
/// ([`super::streams::Stream`]): the index it writes next and the indices
/// it goes round, `[first, end)`.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Run {
    next: u32,
    first: u32,
    end: u32,
}

/// Owner of blocks filled by a shared (initially isolated) GC stream.
pub const MIXED: u32 = u32::MAX - 1;

/// The placement state (see the module doc).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Fdp {
    model: FdpModel,
    /// The placement the FTL's host stream writes for now.
    current: u32,
    /// Dies of the drive (the length of a run).
    dies: u32,
    /// Each placement's run in the host stream: the index it writes next
    /// (the current placement's is the host stream's own `die`; its entry
    /// here is stale until it is switched away from) and the indices it
    /// goes round.
    runs: Vec<Run>,
    /// Persistently isolated: the placement whose GC stream is the FTL's
    /// now, and each placement's GC stream.
    gc_current: u32,
    gc: Vec<Stream>,
    /// The placement that filled each block (`NONE`: none yet, `MIXED`).
    owner: Vec<u32>,
    counters: Vec<PlacementCounters>,
    /// Slots programmed into shared GC blocks.
    mixed_slots: u64,
    /// The FDP events logs.
    events: FdpEvents,
}

impl Fdp {
    /// Every placement's streams empty, placement 0 current: `streams`
    /// are the FTL's (its host stream becomes one of a run per
    /// placement).
    pub(super) fn new(model: &FdpModel, geo: &Geometry, streams: &mut [Stream; 3]) -> Fdp {
        let n = model.placements();
        let gc = if model.persistent { (0..n).map(|_| Stream::new(StreamId::Gc, geo)).collect() } else { Vec::new() };
        let mut f = Fdp {
            model: *model,
            current: 0,
            dies: geo.dies,
            runs: Vec::new(),
            gc_current: 0,
            gc,
            owner: vec![NONE; geo.total_blocks as usize],
            counters: vec![PlacementCounters::default(); n as usize],
            mixed_slots: 0,
            events: FdpEvents::default(),
        };
        f.runs = (0..n).map(|p| f.run(p)).collect();
        let r = f.runs[0];
        streams[StreamId::Host as usize] = Stream::with_runs(StreamId::Host, geo, n, r.first, r.end);
        f
    }

    /// Placement `p`'s run, empty: the indices of its reclaim group's
    /// dies, starting at the first.
    fn run(&self, p: u32) -> Run {
        let first = p * self.dies + (p / self.model.handles) * self.model.dies_per_group;
        Run { next: first, first, end: first + self.model.dies_per_group }
    }

    /// Where the current placement's run starts in the host stream's
    /// per-die arrays.
    #[inline]
    pub(super) fn host_base(&self) -> u32 {
        self.current * self.dies
    }

    /// Persistently isolated: each placement's GC stream (the one whose
    /// placement is [`Fdp::gc_current`]'s is the FTL's for now, and its
    /// entry here is stale).
    pub(super) fn gc_streams_mut(&mut self) -> &mut [Stream] {
        &mut self.gc
    }

    /// The configuration (the FDP configurations log page's).
    pub fn model(&self) -> &FdpModel {
        &self.model
    }

    /// Counters of placement `p`.
    pub fn counters(&self, p: u32) -> PlacementCounters {
        self.counters[p as usize]
    }

    /// The placement that filled `block` (`NONE`, or [`MIXED`]).
    pub fn owner(&self, block: u32) -> u32 {
        self.owner[block as usize]
    }

    /// Slots programmed into shared GC blocks (initially isolated).
    pub fn mixed_slots(&self) -> u64 {
        self.mixed_slots
    }

    /// The FDP events logs.
    pub fn events(&self) -> &FdpEvents {
        &self.events
    }

    /// Invalid Placement Identifier events.
    pub fn invalid_placements(&self) -> u64 {
        self.events.count(FdpEventType::InvalidPlacementIdentifier)
    }

    /// Record an event of `kind` at `time_ns` about placement `p` (`NONE`
    /// or [`MIXED`]: no placement; its location is then not valid either).
    pub(super) fn record(&mut self, kind: FdpEventType, time_ns: u64, p: u32, moved: Option<(u32, u64)>) {
        let valid = p < self.model.placements();
        self.events.record(FdpEvent {
            kind,
            time_ns,
            placement: valid.then_some(p),
            group: valid.then_some(p / self.model.handles),
            handle: valid.then_some(p % self.model.handles),
            lbas_moved: moved.map(|m| m.0),
            lba: moved.map(|m| m.1),
        });
    }

    /// Point the FTL's host stream at placement `p`'s run.
    #[inline(always)]
    fn switch_host(&mut self, p: u32, streams: &mut [Stream; 3]) {
        if p == self.current {
            return;
        }
        let s = &mut streams[StreamId::Host as usize];
        self.runs[self.current as usize].next = s.die;
        let r = self.runs[p as usize];
        s.die = r.next;
        s.dies = Some((r.first, r.end));
        self.current = p;
    }

    /// A write named placement identifier `pid`, which the drive does not
    /// have: an *Invalid Placement Identifier* event, and the default
    /// placement (0) it goes to instead.
    #[cold]
    #[inline(never)]
    fn invalid_placement(&mut self, pid: u32, time_ns: u64) -> u32 {
        // The event names the identifier the write carried; its location
        // is the default handle's, where the data went.
        self.events.record(FdpEvent {
            kind: FdpEventType::InvalidPlacementIdentifier,
            time_ns,
            placement: Some(pid),
            group: Some(0),
            handle: Some(0),
            lbas_moved: None,
            lba: None,
        });
        0
    }

    /// Persistently isolated: make placement `p`'s GC stream the FTL's.
    fn switch_gc(&mut self, p: u32, streams: &mut [Stream; 3]) {
        if !self.model.persistent || p == self.gc_current || p >= self.model.placements() {
            return;
        }
        let g = StreamId::Gc as usize;
        std::mem::swap(&mut streams[g], &mut self.gc[self.gc_current as usize]);
        std::mem::swap(&mut streams[g], &mut self.gc[p as usize]);
        self.gc_current = p;
    }

    /// A stream opened `block` on `die`: record whose data fills it.
    pub(super) fn on_open(&mut self, stream: StreamId, block: u32, die: u32) {
        let owner = match stream {
            StreamId::Host => {
                let first = (self.current / self.model.handles) * self.model.dies_per_group;
                if die == first {
                    self.counters[self.current as usize].units_started += 1;
                }
                self.current
            }
            StreamId::Gc if self.model.persistent => self.gc_current,
            _ => MIXED,
        };
        self.owner[block as usize] = owner;
    }

    /// A program of `slots` slots into `block` was issued by `stream`.
    /// The host stream programs the current placement's run only, so its
    /// programs count for the current placement without looking up the
    /// block's owner (a block the host stream holds open from an
    /// installed state has none, and its programs count for the placement
    /// that writes it).
    #[inline]
    pub(super) fn on_program(&mut self, stream: StreamId, block: u32, slots: u32) {
        if stream == StreamId::Host {
            self.counters[self.current as usize].media_slots += slots as u64;
            return;
        }
        match self.owner[block as usize] {
            MIXED | NONE => self.mixed_slots += slots as u64,
            p => self.counters[p as usize].media_slots += slots as u64,
        }
    }

    /// Forget the streams' blocks and owners (secure erase; the FTL
    /// resets its host stream); counters stay.
    pub(super) fn reset(&mut self) {
        for p in 0..self.model.placements() {
            self.runs[p as usize] = self.run(p);
        }
        for s in self.gc.iter_mut() {
            s.reset();
        }
        self.owner.fill(NONE);
    }
}

/// GC with placements: a victim's data is moved through its handle's GC
/// stream when persistently isolated, and counted as its handle's.
impl FtlCore {
    /// Before moving `victim`'s data: swap its handle's GC stream in.
    /// Returns its owner.
    #[inline]
    pub(super) fn fdp_enter_gc(&mut self, victim: u32) -> u32 {
        let Some(f) = &mut self.fdp else { return NONE };
        let owner = f.owner[victim as usize];
        f.switch_gc(owner, &mut self.streams);
        owner
    }

    /// The controller is about to move `block`'s valid data for a media
    /// reason (a failed program, an uncorrectable read): its owner and
    /// the first logical page it holds (`None`: no `[fdp]`).
    pub(super) fn fdp_before_reallocation(&self, block: u32) -> Option<(u32, u64)> {
        let f = self.fdp.as_ref()?;
        let first = self.geo.first_slot(block) as usize;
        let end = first + self.blocks.wp[block as usize] as usize;
        let lba = self.p2l[first..end].iter().find(|&&l| l != NONE).map_or(0, |&l| l as u64);
        Some((f.owner[block as usize], lba))
    }

    /// After the reallocation [`FtlCore::fdp_before_reallocation`]
    /// announced moved `moved` slots: a Media Reallocated event (none
    /// when nothing valid was moved).
    pub(super) fn fdp_reallocated(&mut self, before: Option<(u32, u64)>, moved: u32) {
        let (Some((owner, lba)), Some(f)) = (before, &mut self.fdp) else { return };
        if moved > 0 {
            f.record(FdpEventType::MediaReallocated, self.blocks.clock_ns, owner, Some((moved, lba)));
        }
    }

    /// A program failure closed placement `p`'s open block: its
    /// handle goes on in another before its reclaim unit was full.
    pub(super) fn fdp_unit_broken(&mut self, p: u32) {
        if let Some(f) = &mut self.fdp {
            f.record(FdpEventType::ImplicitlyModifiedReclaimUnitHandle, self.blocks.clock_ns, p, None);
        }
    }

    /// The host stream (the current placement's) leaves its reclaim unit:
    /// its partial program unit padded, its open blocks sealed, its next
    /// unit to start on its first die. `false`: it had no block open.
    fn leave_reclaim_unit(&mut self) -> bool {
        let h = StreamId::Host as usize;
        let lo = self.stream_base(StreamId::Host) as usize;
        let hi = lo + self.geo.dies as usize;
        if self.streams[h].open[lo..hi].iter().all(|&b| b == NONE) {
            return false;
        }
        self.flush_stream(StreamId::Host);
        for at in lo..hi {
            let block = self.streams[h].open[at];
            if block != NONE {
                self.seal_block(block);
            }
        }
        self.streams[h].reset_run(lo, hi);
        true
    }

    /// After moving `moved` slots of data of placement `owner`.
    #[inline]
    pub(super) fn fdp_leave_gc(&mut self, owner: u32, moved: u64) {
        if let Some(f) = &mut self.fdp {
            if let Some(c) = f.counters.get_mut(owner as usize) {
                c.moved_slots += moved;
            }
        }
    }
}

/// The placement commands on the FTL.
impl Ftl {
    /// The placement state (`None`: no `[fdp]`).
    pub fn fdp(&self) -> Option<&Fdp> {
        self.core.fdp.as_deref()
    }

    /// The next `pages` host pages, written at drive time `now_ns`, go
    /// through placement identifier `pid` (group × handles + handle). A
    /// placement the drive does not have goes to the default one and
    /// counts an *Invalid Placement Identifier* event at `now_ns`; without
    /// `[fdp]` nothing happens.
    #[inline(always)]
    pub fn set_placement(&mut self, pid: u32, pages: u32, now_ns: u64) {
        let Some(f) = &mut self.core.fdp else { return };
        // One run per placement the drive has.
        let p = if (pid as usize) < f.runs.len() { pid } else { f.invalid_placement(pid, now_ns) };
        f.switch_host(p, &mut self.core.streams);
        f.counters[p as usize].host_slots += pages as u64;
    }

    /// A flush with placements: every placement's partially filled
    /// program unit is programmed (padded), each into its own reclaim
    /// unit, not only the current placement's.
    pub(super) fn fdp_flush(&mut self) {
        let Some(f) = &self.core.fdp else { return };
        let (back, n) = (f.current, f.model.placements());
        for p in (0..n).filter(|&p| p != back).chain([back]) {
            let f = self.core.fdp.as_mut().expect("checked");
            f.switch_host(p, &mut self.core.streams);
            self.scheme.flush(&mut self.core);
        }
    }

    /// Reclaim Unit Handle Update of the placements `pids` (see the
    /// module doc): the padding programs are appended to the operations.
    /// Returns how many handles left a unit written in part; `Err`: the
    /// status refusing the command (*Invalid Command Opcode* without
    /// `[fdp]`, *Invalid Field in Command* for a placement the drive does
    /// not have or an empty list), nothing changed.
    pub fn update_handles(&mut self, pids: &[u32]) -> Result<u32, ZoneStatus> {
        let Some(f) = &self.core.fdp else { return Err(ZoneStatus::InvalidOpcode) };
        if pids.is_empty() || pids.iter().any(|&p| p >= f.model.placements()) {
            return Err(ZoneStatus::InvalidField);
        }
        let back = f.current;
        let mut left = 0;
        for &p in pids {
            let f = self.core.fdp.as_mut().expect("checked");
            f.switch_host(p, &mut self.core.streams);
            if self.core.leave_reclaim_unit() {
                let f = self.core.fdp.as_mut().expect("checked");
                f.record(FdpEventType::ReclaimUnitNotFullyWritten, self.core.blocks.clock_ns, p, None);
                left += 1;
            }
        }
        let f = self.core.fdp.as_mut().expect("checked");
        f.switch_host(back, &mut self.core.streams);
        Ok(left)
    }

    /// The FDP statistics log page (`None`: no `[fdp]`).
    pub fn fdp_statistics(&self) -> Option<FdpStatistics> {
        let f = self.core.fdp.as_ref()?;
        let slot = crate::model::nand::SECTOR_BYTES as u64;
        let media: u64 = f.counters.iter().map(|c| c.media_slots).sum::<u64>() + f.mixed_slots;
        let erases: u64 = self.core.blocks.erase_count[0].iter().map(|&e| e as u64).sum();
        Some(FdpStatistics {
            host_bytes: f.counters.iter().map(|c| c.host_slots).sum::<u64>() * slot,
            media_bytes: media * slot,
            erased_bytes: erases * self.core.geo.slots_per_block as u64 * slot,
        })
    }
}
