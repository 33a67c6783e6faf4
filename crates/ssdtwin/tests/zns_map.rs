//! The zone-granular map of a zoned drive (`model/ftl/zns.rs`): every
//! read of a sequential zone finds the last version written, from the
//! zone's block list rather than a page map, through writes, Zone
//! Appends, finishes, resets and Select All resets, with conventional
//! zones page-mapped beside them; the page map covers the conventional
//! zones only; a drive image restores the zone map.

use proptest::prelude::*;
use ssdtwin::model::drive::DriveImage;
use ssdtwin::model::ftl::zones::ZoneAction;
use ssdtwin::model::nand::NONE;
use ssdtwin::{Command, Drive, IoKind};

use crate::common::small_zoned_model;

/// Zones the operations touch (the first two conventional).
const ZONES: u32 = 6;

#[derive(Debug, Clone)]
enum Op {
    /// Write `pages` at the zone's write pointer (a conventional zone: at
    /// page `at` of it).
    Write {
        zone: u32,
        at: u32,
        pages: u32,
    },
    Append {
        zone: u32,
        pages: u32,
    },
    Finish {
        zone: u32,
    },
    Reset {
        zone: u32,
    },
    ResetAll,
    Read {
        zone: u32,
        at: u32,
        pages: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0..ZONES, 0u32..4096, 1u32..400).prop_map(|(zone, at, pages)| Op::Write { zone, at, pages }),
        4 => (2..ZONES, 1u32..40).prop_map(|(zone, pages)| Op::Append { zone, pages }),
        1 => (2..ZONES).prop_map(|zone| Op::Finish { zone }),
        2 => (2..ZONES).prop_map(|zone| Op::Reset { zone }),
        1 => Just(Op::ResetAll),
        4 => (0..ZONES, 0u32..4096, 1u32..64).prop_map(|(zone, at, pages)| Op::Read { zone, at, pages }),
    ]
}

/// A zoned drive with version stamps, two conventional zones, and zones
/// of `zone_mib` MiB holding `cap_kib` KiB.
fn drive(zone_mib: u64, cap_kib: u64) -> Drive {
    let size = format!("zns.zone_size_bytes={}", zone_mib << 20);
    let cap = format!("zns.zone_capacity_bytes={}", cap_kib << 10);
    // 384 MiB: room for two blocks per die in every zone.
    let set = ["ftl.version_stamps=true", "zns.conventional_zones=2", "ftl.user_capacity_bytes=402653184", &size, &cap];
    Drive::new(small_zoned_model(&set))
}

/// Run `ops` on `d`, keeping the version each page must read back
/// (0: deallocated), and check every page of the zones touched, the
/// FTL's consistency, and an image of the drive restored.
fn check(mut d: Drive, ops: &[Op]) -> Result<(), TestCaseError> {
    let zone_lpns = d.ftl().zoned().unwrap().zones().model().zone_lpns;
    let cap_lpns = d.ftl().zoned().unwrap().zones().model().zone_cap_lpns;
    let pages = (ZONES * zone_lpns) as usize;
    // Writes per page (the version a page's next write stamps is one
    // more) and whether the page holds data.
    let (mut writes, mut live) = (vec![0u32; pages], vec![false; pages]);
    let mut t = 0u64;
    let wrote = |first: u32, n: u32, writes: &mut Vec<u32>, live: &mut Vec<bool>| {
        for l in first..first + n {
            writes[l as usize] += 1;
            live[l as usize] = true;
        }
    };
    for op in ops {
        let before = t;
        match *op {
            Op::Write { zone, at, pages } => {
                let first = if zone < 2 {
                    zone * zone_lpns + at % (zone_lpns - pages)
                } else {
                    d.report_zones()[zone as usize].wp.unwrap_or(zone * zone_lpns)
                };
                let cmd = Command { kind: IoKind::Write, offset: first as u64 * 4096, len: pages * 4096 };
                t = d.submit(cmd, t).max(t);
                if d.last_error().is_none() {
                    wrote(first, pages, &mut writes, &mut live);
                }
            }
            Op::Append { zone, pages } => {
                let cmd = Command { kind: IoKind::Write, offset: (zone * zone_lpns) as u64 * 4096, len: pages * 4096 };
                let (done, at) = d.submit_append(cmd, t);
                t = done.max(t);
                if d.last_error().is_none() {
                    wrote((at / 4096) as u32, pages, &mut writes, &mut live);
                }
            }
            Op::Finish { zone } => {
                t = d.zone_send(ZoneAction::Finish, Some((zone * zone_lpns) as u64 * 4096), t).max(t);
            }
            Op::Reset { zone } => {
                t = d.zone_send(ZoneAction::Reset, Some((zone * zone_lpns) as u64 * 4096), t).max(t);
                if d.last_error().is_none() {
                    live[(zone * zone_lpns) as usize..][..zone_lpns as usize].fill(false);
                }
            }
            Op::ResetAll => {
                t = d.zone_send(ZoneAction::Reset, None, t).max(t);
                prop_assert_eq!(d.last_error(), None);
                live[(2 * zone_lpns) as usize..].fill(false);
            }
            Op::Read { zone, at, pages } => {
                let span = if zone < 2 { zone_lpns } else { cap_lpns };
                let first = zone * zone_lpns + at % (span - pages);
                t = d.submit(Command { kind: IoKind::Read, offset: first as u64 * 4096, len: pages * 4096 }, t).max(t);
                prop_assert_eq!(d.last_error(), None, "read of {} pages at {}", pages, first);
            }
        }
        t = t.max(before) + 1;
    }
    let expected = |l: usize| if live[l] { writes[l] } else { 0 };
    for (l, &held) in live.iter().enumerate() {
        prop_assert_eq!(d.ftl().read_version(l as u32), expected(l), "page {}", l);
        prop_assert_eq!(d.ftl().lookup(l as u32) == NONE, !held, "page {} mapped", l);
    }
    if let Err(e) = d.ftl().check_consistency() {
        return Err(TestCaseError::fail(e));
    }
    // The image restores the zone map: the same versions, and the zones
    // write on where they were.
    let json = serde_json::to_vec(&d.image()).unwrap();
    let image: DriveImage = serde_json::from_slice(&json).unwrap();
    let mut back = Drive::from_image(d.model().clone(), image).map_err(TestCaseError::fail)?;
    for l in 0..pages {
        prop_assert_eq!(back.ftl().read_version(l as u32), expected(l), "page {} after the image", l);
    }
    for z in 2..ZONES {
        let wp = back.report_zones()[z as usize].wp;
        if let Some(p) = wp.filter(|&p| p < z * zone_lpns + cap_lpns) {
            let cmd = Command { kind: IoKind::Write, offset: p as u64 * 4096, len: 4096 };
            t = back.submit(cmd, t).max(t) + 1;
            if back.last_error().is_none() {
                let v = writes[p as usize] + 1;
                prop_assert_eq!(back.ftl().read_version(p), v, "page {} written after the image", p);
            }
        }
    }
    back.ftl().check_consistency().map_err(TestCaseError::fail)?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Zones of one block per die (6 MiB in 8 MiB zones).
    #[test]
    fn every_read_returns_the_last_write_one_block_per_die(ops in prop::collection::vec(op(), 1..160)) {
        check(drive(8, 6 << 10), &ops)?;
    }

    /// Zones of two blocks per die (9 MiB in 16 MiB zones), whose block
    /// list holds a second layer of blocks.
    #[test]
    fn every_read_returns_the_last_write_two_blocks_per_die(ops in prop::collection::vec(op(), 1..160)) {
        check(drive(16, 9 << 10), &ops)?;
    }
}

#[test]
fn the_page_map_covers_the_conventional_zones_alone() {
    let mut d = drive(8, 6 << 10);
    let m = *d.ftl().zoned().unwrap().zones().model();
    assert_eq!(d.ftl().l2p().len(), (2 * m.zone_lpns) as usize);
    assert_eq!(d.ftl().user_lpns(), m.zones * m.zone_lpns);
    // A whole zone written in one go: its pages lie in its stripe's
    // order, unit after unit round the dies.
    let first = 3 * m.zone_lpns;
    d.submit(Command { kind: IoKind::Write, offset: first as u64 * 4096, len: m.zone_cap_lpns * 4096 }, 0);
    assert_eq!(d.last_error(), None);
    let geo = *d.ftl().geometry();
    let unit = geo.unit_slots(ssdtwin::model::nand::CellMode::Native);
    for o in 0..m.zone_cap_lpns {
        let slot = d.ftl().lookup(first + o);
        assert_eq!(d.ftl().p2l()[slot as usize], first + o, "page {o} of the zone");
        let next = d.ftl().lookup(first + o + 1);
        if o + 1 < m.zone_cap_lpns && (o + 1) % unit != 0 {
            assert_eq!(next, slot + 1, "page {o} and the next in one unit");
        } else if o + 1 < m.zone_cap_lpns {
            let die = |s: u32| geo.die_of_block(geo.block_of(s));
            assert_eq!(die(next), (die(slot) + 1) % geo.dies, "unit of page {} on the next die", o + 1);
        }
    }
    d.ftl().check_consistency().unwrap();
}
