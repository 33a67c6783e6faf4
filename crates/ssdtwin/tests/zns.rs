//! Zoned namespaces: conformance of the zone state machine to the NVMe
//! ZNS Command Set (every transition and every error status), through the
//! whole drive; zone resets erasing; no GC for sequential zones; the
//! drive file's `[zns]` checks.

use ssdtwin::model::drive::IoError;
use ssdtwin::model::ftl::zones::{ZoneAction, ZoneState, ZoneStatus};
use ssdtwin::{Command, Drive, DriveSpec, IoKind};

use crate::common::{small_model, small_zoned_model};

const ZONE: u64 = 8 << 20;
const CAP: u64 = 6 << 20;

/// A drive and a clock that moves on with each command.
struct Host {
    d: Drive,
    t: u64,
}

impl Host {
    fn new(extra: &[&str]) -> Host {
        Host { d: Drive::new(small_zoned_model(extra)), t: 0 }
    }

    fn io(&mut self, kind: IoKind, offset: u64, len: u64) -> Result<(), ZoneStatus> {
        self.t = self.d.submit(Command { kind, offset, len: len as u32 }, self.t).max(self.t) + 1;
        status(self.d.last_error())
    }

    fn write(&mut self, zone: u64, at: u64, len: u64) -> Result<(), ZoneStatus> {
        self.io(IoKind::Write, zone * ZONE + at, len)
    }

    fn send(&mut self, action: ZoneAction, zone: Option<u64>) -> Result<(), ZoneStatus> {
        self.t = self.d.zone_send(action, zone.map(|z| z * ZONE), self.t).max(self.t) + 1;
        status(self.d.last_error())
    }

    fn state(&self, zone: u64) -> ZoneState {
        self.d.report_zones()[zone as usize].state
    }

    fn wp(&self, zone: u64) -> Option<u64> {
        self.d.report_zones()[zone as usize].wp.map(|p| p as u64 * 4096)
    }

    fn resources(&self) -> (u32, u32) {
        self.d.ftl().zoned().unwrap().zones().resources()
    }
}

fn status(e: Option<IoError>) -> Result<(), ZoneStatus> {
    match e {
        None => Ok(()),
        Some(IoError::Zone(s)) => Err(s),
        Some(other) => panic!("unexpected {other:?}"),
    }
}

#[test]
fn writes_follow_the_write_pointer() {
    let mut h = Host::new(&[]);
    assert_eq!(h.state(3), ZoneState::Empty);
    assert_eq!(h.wp(3), Some(3 * ZONE));
    h.write(3, 0, 128 << 10).unwrap();
    assert_eq!(h.state(3), ZoneState::ImplicitlyOpened);
    assert_eq!(h.wp(3), Some(3 * ZONE + (128 << 10)));
    assert_eq!(h.resources(), (1, 1));
    // Not at the write pointer: behind it, ahead of it, in an empty zone.
    assert_eq!(h.write(3, 0, 4096), Err(ZoneStatus::ZoneInvalidWrite));
    assert_eq!(h.write(3, 256 << 10, 4096), Err(ZoneStatus::ZoneInvalidWrite));
    assert_eq!(h.write(4, 4096, 4096), Err(ZoneStatus::ZoneInvalidWrite));
    assert_eq!(h.state(4), ZoneState::Empty, "a refused write changes nothing");
    // Past the capacity.
    assert_eq!(h.write(3, 128 << 10, CAP), Err(ZoneStatus::ZoneBoundaryError));
    // To the capacity: full, resources given back.
    h.write(3, 128 << 10, CAP - (128 << 10)).unwrap();
    assert_eq!(h.state(3), ZoneState::Full);
    assert_eq!(h.wp(3), None);
    assert_eq!(h.resources(), (0, 0));
    assert_eq!(h.write(3, CAP, 4096), Err(ZoneStatus::ZoneIsFull));
    // Unaligned commands, and beyond the namespace.
    assert_eq!(h.io(IoKind::Write, 5 * ZONE + 512, 4096), Err(ZoneStatus::InvalidField));
    assert_eq!(h.io(IoKind::Write, 5 * ZONE, 1000), Err(ZoneStatus::InvalidField));
    assert_eq!(h.io(IoKind::Write, 56 * ZONE, 4096), Err(ZoneStatus::LbaOutOfRange));
}

#[test]
fn reads_stay_in_a_zone_and_trims_are_refused() {
    let mut h = Host::new(&[]);
    h.write(0, 0, 64 << 10).unwrap();
    h.io(IoKind::Read, 0, 64 << 10).unwrap();
    // Beyond the write pointer reads unwritten (deallocated) data.
    h.io(IoKind::Read, 1 << 20, 4096).unwrap();
    assert_eq!(h.io(IoKind::Read, ZONE - 4096, 8192), Err(ZoneStatus::ZoneBoundaryError));
    assert_eq!(h.io(IoKind::Trim, 0, 4096), Err(ZoneStatus::InvalidField));
}

#[test]
fn implicit_opens_close_the_oldest_at_the_open_limit() {
    let mut h = Host::new(&[]);
    for z in 0..4 {
        h.write(z, 0, 4096).unwrap();
    }
    assert_eq!(h.resources(), (4, 4));
    // A fifth zone: the zone opened longest ago (0) is closed to make room.
    h.write(4, 0, 4096).unwrap();
    assert_eq!(h.state(0), ZoneState::Closed);
    assert_eq!(h.state(4), ZoneState::ImplicitlyOpened);
    assert_eq!(h.resources(), (4, 5));
    // Writing the closed zone opens it again, closing zone 1.
    h.write(0, 4096, 4096).unwrap();
    assert_eq!(h.state(0), ZoneState::ImplicitlyOpened);
    assert_eq!(h.state(1), ZoneState::Closed);
}

#[test]
fn the_open_limit_refuses_when_every_open_zone_is_explicit() {
    let mut h = Host::new(&[]);
    for z in 0..4 {
        h.send(ZoneAction::Open, Some(z)).unwrap();
        assert_eq!(h.state(z), ZoneState::ExplicitlyOpened);
    }
    assert_eq!(h.write(4, 0, 4096), Err(ZoneStatus::TooManyOpenZones));
    assert_eq!(h.send(ZoneAction::Open, Some(4)), Err(ZoneStatus::TooManyOpenZones));
    assert_eq!(h.state(4), ZoneState::Empty);
    // Explicitly opened zones take writes.
    h.write(2, 0, 4096).unwrap();
    assert_eq!(h.state(2), ZoneState::ExplicitlyOpened);
}

#[test]
fn the_active_limit_counts_closed_zones() {
    let mut h = Host::new(&[]);
    for z in 0..6 {
        h.write(z, 0, 4096).unwrap();
        h.send(ZoneAction::Close, Some(z)).unwrap();
        assert_eq!(h.state(z), ZoneState::Closed);
    }
    assert_eq!(h.resources(), (0, 6));
    assert_eq!(h.write(6, 0, 4096), Err(ZoneStatus::TooManyActiveZones));
    assert_eq!(h.send(ZoneAction::Open, Some(6)), Err(ZoneStatus::TooManyActiveZones));
    assert_eq!(h.send(ZoneAction::Finish, Some(6)), Err(ZoneStatus::TooManyActiveZones));
    // A closed zone may still be written (it is active already).
    h.write(5, 4096, 4096).unwrap();
    // Finishing one frees an active resource.
    h.send(ZoneAction::Finish, Some(0)).unwrap();
    h.write(6, 0, 4096).unwrap();
}

#[test]
fn open_transitions() {
    let mut h = Host::new(&[]);
    // Empty → explicitly opened (one open and one active resource).
    h.send(ZoneAction::Open, Some(0)).unwrap();
    assert_eq!((h.state(0), h.resources()), (ZoneState::ExplicitlyOpened, (1, 1)));
    // Explicitly opened → itself.
    h.send(ZoneAction::Open, Some(0)).unwrap();
    assert_eq!(h.resources(), (1, 1));
    // Implicitly opened → explicitly opened, no new resource.
    h.write(1, 0, 4096).unwrap();
    h.send(ZoneAction::Open, Some(1)).unwrap();
    assert_eq!((h.state(1), h.resources()), (ZoneState::ExplicitlyOpened, (2, 2)));
    // Closed → explicitly opened.
    h.write(2, 0, 4096).unwrap();
    h.send(ZoneAction::Close, Some(2)).unwrap();
    h.send(ZoneAction::Open, Some(2)).unwrap();
    assert_eq!(h.state(2), ZoneState::ExplicitlyOpened);
    // Full → refused.
    h.send(ZoneAction::Finish, Some(3)).unwrap();
    assert_eq!(h.send(ZoneAction::Open, Some(3)), Err(ZoneStatus::InvalidZoneStateTransition));
}

#[test]
fn close_transitions() {
    let mut h = Host::new(&[]);
    assert_eq!(h.send(ZoneAction::Close, Some(0)), Err(ZoneStatus::InvalidZoneStateTransition));
    h.write(0, 0, 4096).unwrap();
    h.send(ZoneAction::Close, Some(0)).unwrap();
    assert_eq!((h.state(0), h.resources()), (ZoneState::Closed, (0, 1)));
    h.send(ZoneAction::Close, Some(0)).unwrap();
    assert_eq!(h.state(0), ZoneState::Closed);
    // An opened zone with nothing written closes to empty.
    h.send(ZoneAction::Open, Some(1)).unwrap();
    h.send(ZoneAction::Close, Some(1)).unwrap();
    assert_eq!((h.state(1), h.resources()), (ZoneState::Empty, (0, 1)));
    h.send(ZoneAction::Finish, Some(2)).unwrap();
    assert_eq!(h.send(ZoneAction::Close, Some(2)), Err(ZoneStatus::InvalidZoneStateTransition));
}

#[test]
fn finish_pads_and_fills_the_zone() {
    let mut h = Host::new(&[]);
    // Empty → full.
    h.send(ZoneAction::Finish, Some(0)).unwrap();
    assert_eq!((h.state(0), h.resources()), (ZoneState::Full, (0, 0)));
    // Full → itself.
    h.send(ZoneAction::Finish, Some(0)).unwrap();
    // Opened with a partial program unit: padded to the unit and
    // programmed; the write pointer goes to the capacity.
    h.write(1, 0, 8192).unwrap();
    let before = h.d.ftl().counters().padding_slots;
    h.send(ZoneAction::Finish, Some(1)).unwrap();
    assert_eq!(h.d.ftl().counters().padding_slots - before, 24 - 2, "a 96 KiB unit holds 24 slots");
    assert_eq!(h.state(1), ZoneState::Full);
    assert_eq!(h.d.ftl().zoned().unwrap().zones().written(1) as u64 * 4096, CAP);
    assert_eq!(h.write(1, 8192, 4096), Err(ZoneStatus::ZoneIsFull));
    // Closed → full.
    h.write(2, 0, 4096).unwrap();
    h.send(ZoneAction::Close, Some(2)).unwrap();
    h.send(ZoneAction::Finish, Some(2)).unwrap();
    assert_eq!((h.state(2), h.resources()), (ZoneState::Full, (0, 0)));
    // Data written before the finish reads back from flash.
    h.io(IoKind::Read, ZONE, 8192).unwrap();
    h.d.ftl().check_consistency().unwrap();
}

#[test]
fn reset_erases_the_zone() {
    let mut h = Host::new(&["ftl.version_stamps=true"]);
    h.write(0, 0, CAP).unwrap();
    h.write(1, 0, 1 << 20).unwrap();
    h.write(2, 0, 4096).unwrap();
    h.send(ZoneAction::Close, Some(2)).unwrap();
    let erases = |h: &Host| h.d.flash().counters.erases[0];
    let e0 = erases(&h);
    // Full, implicitly opened, closed, empty → empty.
    h.send(ZoneAction::Reset, Some(0)).unwrap();
    assert_eq!(erases(&h) - e0, 4, "a zone of one block per die erases 4 blocks");
    h.send(ZoneAction::Reset, Some(1)).unwrap();
    h.send(ZoneAction::Reset, Some(2)).unwrap();
    h.send(ZoneAction::Reset, Some(3)).unwrap();
    for z in 0..4 {
        assert_eq!((h.state(z), h.wp(z)), (ZoneState::Empty, Some(z * ZONE)));
    }
    assert_eq!(h.resources(), (0, 0));
    assert_eq!(h.d.ftl().mapped_lpns(), 0);
    assert_eq!(h.d.ftl().read_version(0), 0, "reset data reads as deallocated");
    // The pending partial units of the reset zones left the write buffer.
    assert_eq!(h.d.ftl().host_pending_slots(), 0);
    // Written again from its start.
    h.write(0, 0, CAP).unwrap();
    assert_eq!(h.state(0), ZoneState::Full);
    h.d.ftl().check_consistency().unwrap();
    // The reset completes after its erases: at least tBERS after it began.
    let t = h.t;
    let done = h.d.zone_send(ZoneAction::Reset, Some(0), t);
    assert!(done >= t + 5_000_000, "{done} vs {t}");
}

#[test]
fn read_only_and_offline_zones() {
    let mut h = Host::new(&[]);
    h.write(0, 0, 4096).unwrap();
    set_condition(&mut h.d, 0, ZoneState::ReadOnly);
    assert_eq!(h.resources(), (0, 0), "a zone going read-only gives its resources back");
    assert_eq!(h.write(0, 4096, 4096), Err(ZoneStatus::ZoneIsReadOnly));
    h.io(IoKind::Read, 0, 4096).unwrap();
    for a in [ZoneAction::Open, ZoneAction::Close, ZoneAction::Finish, ZoneAction::Reset] {
        assert_eq!(h.send(a, Some(0)), Err(ZoneStatus::InvalidZoneStateTransition), "{a:?}");
    }
    assert_eq!(h.send(ZoneAction::Offline, Some(1)), Err(ZoneStatus::InvalidZoneStateTransition));
    h.send(ZoneAction::Offline, Some(0)).unwrap();
    assert_eq!(h.state(0), ZoneState::Offline);
    h.send(ZoneAction::Offline, Some(0)).unwrap();
    assert_eq!(h.write(0, 4096, 4096), Err(ZoneStatus::ZoneIsOffline));
    assert_eq!(h.io(IoKind::Read, 0, 4096), Err(ZoneStatus::ZoneIsOffline));
    assert_eq!(h.send(ZoneAction::Reset, Some(0)), Err(ZoneStatus::InvalidZoneStateTransition));
}

fn set_condition(d: &mut Drive, zone: u32, s: ZoneState) {
    d.set_zone_condition(zone, s).unwrap();
    assert_eq!(d.set_zone_condition(zone, ZoneState::Full), Err(ZoneStatus::InvalidField));
}

#[test]
fn zone_append_returns_where_it_wrote() {
    let mut h = Host::new(&[]);
    let (_, at) = h.d.submit_append(Command { kind: IoKind::Write, offset: 2 * ZONE, len: 8192 }, 0);
    assert_eq!((at, h.d.last_error()), (2 * ZONE, None));
    let (_, at) = h.d.submit_append(Command { kind: IoKind::Write, offset: 2 * ZONE, len: 4096 }, 1);
    assert_eq!(at, 2 * ZONE + 8192);
    assert_eq!(h.state(2), ZoneState::ImplicitlyOpened);
    // Not a zone's first LBA.
    h.d.submit_append(Command { kind: IoKind::Write, offset: 2 * ZONE + 4096, len: 4096 }, 2);
    assert_eq!(h.d.last_error(), Some(IoError::Zone(ZoneStatus::InvalidField)));
    // Beyond the capacity left, and into a full zone.
    h.d.submit_append(Command { kind: IoKind::Write, offset: 2 * ZONE, len: CAP as u32 }, 3);
    assert_eq!(h.d.last_error(), Some(IoError::Zone(ZoneStatus::ZoneBoundaryError)));
    h.send(ZoneAction::Finish, Some(2)).unwrap();
    h.d.submit_append(Command { kind: IoKind::Write, offset: 2 * ZONE, len: 4096 }, h.t);
    assert_eq!(h.d.last_error(), Some(IoError::Zone(ZoneStatus::ZoneIsFull)));
}

#[test]
fn select_all() {
    let mut h = Host::new(&[]);
    for z in 0..3 {
        h.write(z, 0, 4096).unwrap();
    }
    h.write(3, 0, CAP).unwrap();
    h.send(ZoneAction::Close, None).unwrap();
    assert_eq!([h.state(0), h.state(1), h.state(2)], [ZoneState::Closed; 3]);
    assert_eq!(h.state(3), ZoneState::Full);
    h.send(ZoneAction::Open, None).unwrap();
    assert_eq!([h.state(0), h.state(1), h.state(2)], [ZoneState::ExplicitlyOpened; 3]);
    h.send(ZoneAction::Finish, None).unwrap();
    assert_eq!([h.state(0), h.state(1), h.state(2)], [ZoneState::Full; 3]);
    h.send(ZoneAction::Reset, None).unwrap();
    assert!(h.d.report_zones().iter().all(|z| z.state == ZoneState::Empty));
    // Opening all closed zones needs an open resource for each.
    for z in 0..6 {
        h.write(z, 0, 4096).unwrap();
        h.send(ZoneAction::Close, Some(z)).unwrap();
    }
    assert_eq!(h.send(ZoneAction::Open, None), Err(ZoneStatus::TooManyOpenZones));
    assert!((0..6).all(|z| h.state(z) == ZoneState::Closed), "none opened");
}

#[test]
fn management_names_a_zone_start() {
    let mut h = Host::new(&[]);
    assert!(h.d.zone_send(ZoneAction::Open, Some(4096), 0) > 0);
    assert_eq!(h.d.last_error(), Some(IoError::Zone(ZoneStatus::InvalidField)));
    h.d.zone_send(ZoneAction::Open, Some(56 * ZONE), 10);
    assert_eq!(h.d.last_error(), Some(IoError::Zone(ZoneStatus::LbaOutOfRange)));
    // A conventional drive has no zone commands.
    let mut c = crate::common::small_drive(300, &[]);
    c.zone_send(ZoneAction::Reset, None, 0);
    assert_eq!(c.last_error(), Some(IoError::Zone(ZoneStatus::InvalidOpcode)));
    assert!(c.report_zones().is_empty());
}

#[test]
fn conventional_zones_take_random_writes() {
    let mut h = Host::new(&["zns.conventional_zones=2", "ftl.version_stamps=true"]);
    assert_eq!(h.state(0), ZoneState::NotWritePointer);
    assert_eq!(h.d.report_zones()[0].wp, None);
    for i in 0..2000u64 {
        let off = (i * 7919 % 4096) * 4096;
        h.io(IoKind::Write, off, 4096).unwrap();
    }
    h.io(IoKind::Trim, 0, 1 << 20).unwrap();
    // Not across into the first sequential zone.
    assert_eq!(h.io(IoKind::Write, 2 * ZONE - 4096, 8192), Err(ZoneStatus::ZoneBoundaryError));
    assert!(h.d.zone_send(ZoneAction::Reset, Some(0), h.t) > 0);
    assert_eq!(h.d.last_error(), Some(IoError::Zone(ZoneStatus::InvalidField)));
    h.write(2, 0, CAP).unwrap();
    h.d.ftl().check_consistency().unwrap();
}

#[test]
fn sequential_zones_need_no_gc() {
    // Every zone written whole three times over, reset in between: the
    // flash is written about 3.5 times, and nothing is ever moved.
    let mut h = Host::new(&["ftl.version_stamps=true"]);
    for _round in 0..3 {
        for z in 0..56 {
            h.write(z, 0, CAP).unwrap();
        }
        h.send(ZoneAction::Reset, None).unwrap();
    }
    let c = h.d.ftl().counters();
    assert_eq!(c.gc_slots_moved, 0);
    assert_eq!(c.gc_blocks, 0);
    assert_eq!(c.padding_slots, 0);
    assert!((h.d.waf() - 1.0).abs() < 1e-12, "WAF {}", h.d.waf());
    assert_eq!(h.d.flash().counters.erases[0], 3 * 56 * 4);
    h.d.ftl().check_consistency().unwrap();
}

#[test]
fn zones_stripe_over_the_dies() {
    // A zone's 64 units go round the 4 dies: each die programs 16 units.
    let mut h = Host::new(&[]);
    h.write(5, 0, CAP).unwrap();
    let blocks = &h.d.ftl().blocks().state;
    let per_die = h.d.model().geometry.blocks_per_die as usize;
    let used: Vec<usize> = (0..4)
        .map(|die| {
            blocks[die * per_die..(die + 1) * per_die]
                .iter()
                .filter(|s| **s != ssdtwin::model::ftl::blocks::BlockState::Free)
                .count()
        })
        .collect();
    assert_eq!(used, vec![1, 1, 1, 1]);
}

fn build(set: &[&str]) -> Result<(), String> {
    let mut all = vec![
        "geometry.channels=2",
        "geometry.dies_per_channel=2",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=48",
        "ftl.user_capacity_bytes=469762048",
        "zns.zone_size_bytes=8388608",
        "zns.zone_capacity_bytes=6291456",
        "zns.max_open_zones=4",
        "zns.max_active_zones=6",
    ];
    all.extend_from_slice(set);
    let all: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    let spec = DriveSpec::load("generic-tlc-nvme", &all).map_err(|e| e.to_string())?;
    spec.build("zoned").map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn bad_zns_sections_name_the_field() {
    build(&[]).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["zns.zone_size_bytes=1000"], "zns.zone_size_bytes"),
        (&["zns.zone_capacity_bytes=16777216"], "zns.zone_capacity_bytes"),
        (&["zns.zone_capacity_bytes=4096"], "zns.zone_capacity_bytes"),
        (&["ftl.user_capacity_bytes=471859200"], "ftl.user_capacity_bytes"),
        (&["ftl.user_capacity_bytes=536870912"], "ftl.user_capacity_bytes"),
        (&["zns.max_open_zones=0"], "zns.max_open_zones"),
        (&["zns.max_active_zones=3"], "zns.max_active_zones"),
        (&["zns.max_active_zones=200", "zns.max_open_zones=100"], "zns.max_active_zones"),
        (&["zns.conventional_zones=56"], "zns.conventional_zones"),
        (&["controller.write_cache=write-through"], "controller.write_cache"),
        (&["ftl.mapping=hybrid"], "ftl.mapping"),
        (&["zns.unknown=1"], "unknown"),
    ];
    for (set, field) in cases {
        let e = build(set).expect_err(&format!("{set:?} is refused"));
        assert!(e.contains(field), "{set:?}: {e}");
    }
    // Nothing refused by name is silently accepted on a conventional drive.
    assert!(small_model(300, &[]).zns.is_none());
}

#[test]
fn a_command_places_its_pages_as_page_by_page_writes_do() {
    // The timed path places a command's pages a program unit at a time
    // (Ftl::write_run); the untimed one page by page (Ftl::write). The
    // same writes (odd lengths, partial units, a conventional zone, a
    // reset and rewrite) must leave the same map, versions and counters.
    let extra = ["ftl.version_stamps=true", "zns.conventional_zones=2"];
    let mut timed = Host::new(&extra);
    let mut paged = Drive::new(small_zoned_model(&extra));
    let writes: &[(u64, u64, u64)] =
        &[(2, 0, 5), (2, 5, 37), (3, 0, 96), (2, 42, 200), (0, 9, 30), (5, 0, 1), (3, 96, 1)];
    let round = |timed: &mut Host, paged: &mut Drive| {
        for &(zone, at, pages) in writes {
            timed.write(zone, at * 4096, pages * 4096).unwrap();
            let first = (zone * ZONE / 4096 + at) as u32;
            let mut u = paged.untimed();
            u.zone_write(first, pages as u32).unwrap();
            for lpn in first..first + pages as u32 {
                u.write(lpn);
            }
        }
    };
    round(&mut timed, &mut paged);
    timed.send(ZoneAction::Reset, None).unwrap();
    paged.zone_send(ZoneAction::Reset, None, 0);
    assert_eq!(paged.last_error(), None);
    round(&mut timed, &mut paged);
    // A command ending exactly at a unit's end programs that unit.
    let unit = paged.ftl().geometry().unit_slots(ssdtwin::model::nand::CellMode::Native) as u64;
    timed.write(6, 0, 3 * unit * 4096).unwrap();
    let mut u = paged.untimed();
    u.zone_write((6 * ZONE / 4096) as u32, 3 * unit as u32).unwrap();
    for lpn in 0..3 * unit as u32 {
        u.write((6 * ZONE / 4096) as u32 + lpn);
    }
    drop(u);
    let (a, b) = (timed.d.ftl(), paged.ftl());
    assert_eq!(a.blocks().wp, b.blocks().wp);
    assert_eq!(a.blocks().programmed, b.blocks().programmed);
    assert_eq!(a.l2p(), b.l2p());
    assert_eq!(a.p2l(), b.p2l());
    for lpn in 0..a.user_lpns() {
        assert_eq!(a.read_version(lpn), b.read_version(lpn), "version of page {lpn}");
    }
    assert_eq!(a.counters().host_slots_written, b.counters().host_slots_written);
    assert_eq!(a.mapped_lpns(), b.mapped_lpns());
    for z in 0..8 {
        assert_eq!(a.zoned().unwrap().zone_counters(z), b.zoned().unwrap().zone_counters(z), "zone {z}");
    }
    a.check_consistency().unwrap();
}
