//! The FDP log pages (configurations, handle usage, statistics, events)
//! against hand computations and the drive's own counters.

use ssdtwin::model::counters::Counters;
use ssdtwin::model::ftl::fdp_events::{FdpEventType, LOG_CAPACITY};
use ssdtwin::run::device::Device;
use ssdtwin::run::fdp_log::FdpLogPages;
use ssdtwin::run::jobs::run_jobs;
use ssdtwin::run::placement_stats::PlacementSnapshot;
use ssdtwin::run::workload::{parse_job_file, JobOptions};
use ssdtwin::{Command, Drive, IoKind};

use crate::common::small_model;

const BLOCK: u64 = 1536 << 10;

fn fdp_drive(extra: &[&str]) -> Drive {
    let mut set = vec!["fdp.reclaim_unit_handles=2", "fdp.isolation=initially"];
    set.extend_from_slice(extra);
    Drive::new(small_model(300, &set))
}

#[test]
fn the_statistics_page_is_the_drives_write_amplification() {
    // Cold data written once through handle 1, a hot region overwritten
    // at random through handle 0: GC moves data, so media > host bytes.
    let mut dev = Device::new(fdp_drive(&[]));
    let text = "[global]\nbs=4k\niodepth=8\nfdp=1\n[cold]\nrw=write\nbs=128k\nsize=200m\nplids=1\n\
                [hot]\nrw=randwrite\nnorandommap=1\noffset=200m\nsize=90m\nio_size=300m\nplids=0\n";
    let file = parse_job_file(text, "p.fio", 300 << 20, &JobOptions::new()).unwrap();
    run_jobs(&mut dev, &file);
    // A flush programs (pads) what is left in the write buffer: then every
    // slot the FTL placed has been programmed.
    dev.flush();
    while dev.next_event().is_some() {}
    let d = dev.drive();
    let c = Counters::of(d);
    let log = FdpLogPages::of(d).unwrap();
    let s = log.statistics;
    assert!(c.gc_slots_moved > 0 && c.padding_slots > 0, "{c:?}");
    assert_eq!(s.host_bytes, c.host_slots_written * 4096);
    // Media bytes are what the flash programmed (host data, GC moves,
    // padding): the WAF the drive reports, but for the moved data still
    // in GC's partial program units (at most one of 24 slots per die).
    assert_eq!(s.media_bytes, c.nand_slots_programmed * 4096);
    let placed = c.ftl_slots_programmed() * 4096;
    assert!(s.media_bytes <= placed && placed - s.media_bytes < 4 * 24 * 4096, "{} {placed}", s.media_bytes);
    let waf = s.media_bytes as f64 / s.host_bytes as f64;
    assert!((waf - d.waf()).abs() < 4.0 * 24.0 / c.host_slots_written as f64, "{waf} {}", d.waf());
    assert!(d.waf() > 1.05, "WAF {}", d.waf());
    // Every erase is a whole native block.
    assert_eq!(s.erased_bytes, c.nand_erases_native * BLOCK);
    assert!(s.erased_bytes > 0);

    // Configuration: one reclaim group of the 4 dies, a reclaim unit one
    // block on each; usage: both handles named by the namespace.
    let cfg = &log.configuration;
    assert_eq!((cfg.reclaim_groups, cfg.reclaim_unit_handles, cfg.max_placement_identifiers), (1, 2, 2));
    assert_eq!(cfg.reclaim_unit_nominal_bytes, 4 * BLOCK);
    assert_eq!(cfg.handle_types, ["initially", "initially"]);
    assert_eq!(log.handle_usage.len(), 2);
    assert!(log.handle_usage.iter().all(|u| u.attribute == "host_specified"));
    // 200 MiB in order through handle 1: ⌈200 / 6⌉ = 34 reclaim units.
    let f = d.ftl().fdp().unwrap();
    assert_eq!(f.counters(1).units_started, 34);
    assert!(log.host_events.is_empty() && log.controller_events.is_empty());
}

#[test]
fn invalid_placement_events_name_the_identifier_and_the_log_keeps_63() {
    let mut d = fdp_drive(&[]);
    let write = |lba: u64| Command { kind: IoKind::Write, offset: lba * 4096, len: 4096 };
    for i in 0..70u64 {
        // Placement 2 + i: the drive has 0 and 1.
        d.submit_placed(write(i), 2 + i as u32, i * 1_000_000);
    }
    d.submit_placed(write(100), 1, 80_000_000);
    let f = d.ftl().fdp().unwrap();
    assert_eq!(f.invalid_placements(), 70);
    let log = FdpLogPages::of(&d).unwrap();
    assert_eq!(log.host_events.len(), LOG_CAPACITY);
    // The oldest seven are gone; each names what the write carried and
    // the default handle, where its data went, at the write's time.
    for (k, e) in log.host_events.iter().enumerate() {
        let i = k as u64 + 7;
        assert_eq!(e.kind, FdpEventType::InvalidPlacementIdentifier);
        assert_eq!((e.placement, e.group, e.handle), (Some(2 + i as u32), Some(0), Some(0)));
        assert_eq!(e.time_ns, i * 1_000_000);
    }
    assert_eq!(f.counters(0).host_slots, 70);
    let w = PlacementSnapshot::since_start(&d).unwrap();
    assert_eq!(w.fdp_events.len(), 1);
    assert_eq!((w.fdp_events[0].code, w.fdp_events[0].count), (0x03, 70));
    assert!(w.summary_lines().contains("FDP events: 70 Invalid Placement Identifier"), "{}", w.summary_lines());
}

#[test]
fn media_failures_are_controller_events() {
    // Programs fail far more often than any NAND's (the mechanism under
    // stress): each failure in a block a handle was filling changes the
    // handle's reclaim unit (Implicitly Modified Reclaim Unit Handle), and
    // the failed block's data is moved (Media Reallocated).
    let mut d = fdp_drive(&[
        "geometry.pages_per_block=12",
        "nand.native.pe_cycles=60",
        "nand.bad_blocks.erase_failed_by_rated_pe=0",
        "nand.bad_blocks.program_failed_by_rated_pe=0.3",
        "nand.bad_blocks.fail_exponent=0",
        "nand.bad_blocks.spare_blocks_per_die=6",
        "ftl.user_capacity_bytes=69992448",
    ]);
    let n = d.user_lpns() as u64;
    let mut t = 0;
    let mut x = 12345u64;
    for i in 0..(n * 6) {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // A quarter of the LBAs (hot) through handle 0, the rest through 1.
        let (lba, pid) = if i % 2 == 0 { ((x >> 33) % (n / 4), 0) } else { (n / 4 + (x >> 33) % (n - n / 4), 1) };
        t = d.submit_placed(Command { kind: IoKind::Write, offset: lba * 4096, len: 4096 }, pid, t);
        if d.untimed().read_only() {
            break;
        }
    }
    let c = Counters::of(&d);
    let f = d.ftl().fdp().unwrap();
    let ev = f.events();
    let (realloc, modified) =
        (ev.count(FdpEventType::MediaReallocated), ev.count(FdpEventType::ImplicitlyModifiedReclaimUnitHandle));
    eprintln!(
        "{} program failures, {} retired, {realloc} reallocated, {modified} handles modified",
        c.program_failures, c.grown_bad_blocks
    );
    assert!(c.program_failures >= 3);
    assert!(realloc >= 1 && realloc <= c.grown_bad_blocks, "one event per relocated block at most");
    assert!(modified >= 1 && modified <= c.program_failures);
    assert_eq!(ev.count(FdpEventType::InvalidPlacementIdentifier), 0);
    let log = FdpLogPages::of(&d).unwrap();
    assert_eq!(log.controller_events.len() as u64, (realloc + modified).min(LOG_CAPACITY as u64));
    let slots_per_block = d.model().geometry.slots_per_block;
    let mut last = 0;
    for e in &log.controller_events {
        assert!(e.time_ns >= last);
        last = e.time_ns;
        match e.kind {
            FdpEventType::MediaReallocated => {
                let moved = e.lbas_moved.expect("the LBAs moved");
                assert!(moved >= 1 && moved <= slots_per_block, "at most a block's slots: {moved}");
                assert!(e.lba.unwrap() < n);
            }
            FdpEventType::ImplicitlyModifiedReclaimUnitHandle => {
                assert!(e.placement.is_some_and(|p| p < 2) && e.lbas_moved.is_none());
                assert_eq!(e.handle, e.placement);
            }
            k => panic!("{k:?} is a host event"),
        }
    }
    d.ftl().check_consistency().unwrap();
}

#[test]
fn a_reclaim_unit_handle_update_pads_seals_and_starts_a_new_unit() {
    use ssdtwin::model::drive::IoError;
    use ssdtwin::model::ftl::zones::ZoneStatus;
    let mut d = fdp_drive(&[]);
    let not_full = |d: &Drive| d.ftl().fdp().unwrap().events().count(FdpEventType::ReclaimUnitNotFullyWritten);
    // 50 slots through handle 1: program units of 24 slots on dies 0 and
    // 1, 2 slots waiting in the write buffer for die 2.
    d.submit_placed(Command { kind: IoKind::Write, offset: 0, len: 50 * 4096 }, 1, 0);
    let f = d.ftl().fdp().unwrap();
    assert_eq!((f.counters(1).units_started, f.counters(1).media_slots), (1, 48));
    let padding = Counters::of(&d).padding_slots;

    // Handle 0 has written nothing: nothing to leave, no event.
    d.update_handles(&[0], 10_000_000);
    assert_eq!((d.last_error(), not_full(&d), Counters::of(&d).padding_slots), (None, 0, padding));

    // A list naming a placement the drive does not have is refused whole.
    d.update_handles(&[1, 2], 20_000_000);
    assert_eq!(d.last_error(), Some(IoError::Zone(ZoneStatus::InvalidField)));
    assert_eq!((not_full(&d), Counters::of(&d).padding_slots), (0, padding));

    // Handle 1 leaves its unit: the 2 buffered slots are padded to a
    // program unit (22 slots), the unit's three blocks sealed at 24 slots.
    let done = d.update_handles(&[1], 30_000_000);
    assert_eq!(d.last_error(), None);
    assert!(done > 30_000_000);
    assert_eq!(not_full(&d), 1);
    assert_eq!(Counters::of(&d).padding_slots, padding + 22);
    let f = d.ftl().fdp().unwrap();
    assert_eq!(f.counters(1).media_slots, 72);
    let e = FdpLogPages::of(&d).unwrap().host_events;
    assert_eq!(e.len(), 1);
    assert_eq!((e[0].kind, e[0].placement, e[0].handle), (FdpEventType::ReclaimUnitNotFullyWritten, Some(1), Some(1)));
    // Leaving it again changes nothing: it has no unit open now.
    d.update_handles(&[1], 40_000_000);
    assert_eq!(not_full(&d), 1);

    // The next write starts a new unit on the group's first die.
    d.submit_placed(Command { kind: IoKind::Write, offset: 50 * 4096, len: 24 * 4096 }, 1, 50_000_000);
    assert_eq!(d.ftl().fdp().unwrap().counters(1).units_started, 2);

    // Overwrites through both handles, each handle updated now and then:
    // GC collects the blocks sealed early and the maps stay consistent.
    let mut t = 60_000_000;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in 0..150_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let lba = x % (250 << 8);
        t = d.submit_placed(Command { kind: IoKind::Write, offset: lba * 4096, len: 4096 }, (i % 2) as u32, t);
        if i % 997 == 0 {
            t = d.update_handles(&[(i % 2) as u32], t);
        }
    }
    assert!(Counters::of(&d).gc_slots_moved > 0);
    assert!(not_full(&d) > 10, "{}", not_full(&d));
    d.ftl().check_consistency().unwrap();
}
