//! The log-block schemes of the 2008 controllers, each mechanism in
//! isolation (issue 33, item 2): FAST's sequential log turns an in-order
//! logical block into its data block with one erase and no copy; merging
//! one of FAST's shared random logs is a full merge of every logical block
//! with a page in it, each copying that block's valid pages; the stripe of
//! the log over the dies sets how many logical blocks (merges) a write of
//! a given size touches; and the published maximum latencies of both 2008
//! presets rule FAST's shared random logs out for them.

use ssdtwin::model::counters::Counters;
use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::{Command, Drive, DriveSpec, IoKind, Simulator};

use crate::common::small_hybrid_model;

/// The small hybrid drive (4 dies, 128 KiB logical blocks of 32 slots,
/// 8 KiB program units, 2 log blocks per die), contiguous logical blocks,
/// written once sequentially, with `set` applied.
fn small_filled(association: &str, set: &[&str]) -> Drive {
    let mut all = vec!["ftl.hybrid.layout=contiguous"];
    all.extend_from_slice(set);
    let mut drive = Drive::new(small_hybrid_model(association, &all));
    let mut fill = IoSpec::new("prepare", RwPattern::Write);
    fill.bs = 128 * 1024;
    fill.iodepth = 32;
    ssdtwin::run::state::write_fast(&mut drive, &fill);
    drive.reset_time();
    drive
}

/// Write `len` bytes at `offset`, then the next command at its completion.
fn write(drive: &mut Drive, t: &mut u64, offset: u64, len: u32) {
    *t = drive.submit(Command { kind: IoKind::Write, offset, len }, *t);
}

const BLOCK: u64 = 128 * 1024;

#[test]
fn fasts_sequential_log_switches_an_in_order_block_with_one_erase_and_no_copy() {
    let mut drive = small_filled("full", &[]);
    let before = Counters::of(&drive);
    let mut t = 0;
    // Logical block 8 (die 0), in order from its first page: the die's
    // sequential log takes it; the write that fills it switches it in.
    for page in 0..32 {
        write(&mut drive, &mut t, 8 * BLOCK + page * 4096, 4096);
    }
    let d = Counters::of(&drive).since(&before);
    assert_eq!((d.switch_merges, d.partial_merges, d.full_merges), (1, 0, 0));
    assert_eq!(d.merge_slots_copied, 0, "a switch merge copies nothing");
    assert_eq!(d.nand_erases_native, 1, "a switch merge erases only the old data block");
    assert_eq!(d.nand_slots_programmed, 32, "only the host's 32 pages are programmed");
}

#[test]
fn merging_a_fast_random_log_fully_merges_every_logical_block_in_it() {
    let mut drive = small_filled("full", &[]);
    let before = Counters::of(&drive);
    let mut t = 0;
    // One page (offset 1, so not the sequential log's) into each of 32
    // logical blocks of die 0 (blocks 0, 4, 8, …): the die's one random
    // log (32 slots) is then full.
    for i in 0..32 {
        write(&mut drive, &mut t, 4 * i * BLOCK + 4096, 4096);
    }
    let mid = Counters::of(&drive).since(&before);
    assert_eq!(mid.full_merges, 0, "the random log absorbs 32 writes from 32 logical blocks");
    // The 33rd needs a random log: the full one is merged first.
    write(&mut drive, &mut t, 4 * 32 * BLOCK + 4096, 4096);
    let d = Counters::of(&drive).since(&before);
    assert_eq!(d.full_merges, 32, "one full merge per logical block with a page in the log");
    // Each full merge copies its logical block's 32 valid pages (31 from
    // the data block, 1 from the log) into a new block.
    assert_eq!(d.merge_slots_copied, 32 * 32);
    // 32 old data blocks and the random log are erased.
    assert_eq!(d.nand_erases_native, 33);
}

/// Merges per QD1 random write of `bytes` on the small striped hybrid
/// drive with `set` ([`crate::hybrid::merges_and_latency_by_size`]).
fn merges_per_write(set: &[&str], bytes: u64, n: usize) -> f64 {
    let mut all = vec!["ftl.hybrid.layout=striped"];
    all.extend_from_slice(set);
    crate::hybrid::merges_and_latency_by_size(&all, bytes, n).0
}

#[test]
fn the_stripe_sets_how_many_logical_blocks_a_write_touches() {
    // A 64 KiB aligned write over 4 dies: with stripes of S bytes it is
    // 64 KiB / S stripes on as many dies (at most 4), each a logical block
    // that needs a log block: that many merges once the pools are used up
    // (hand count: 4, 2, 1 for 16, 32 and 64 KiB stripes; 8 KiB, the
    // program unit, is the default and gives 4, as 16 KiB does).
    let n = 300;
    for (stripe, want) in [(None, 4.0), (Some(16384), 4.0), (Some(32768), 2.0), (Some(65536), 1.0)] {
        let s = stripe.map(|b: u64| format!("ftl.hybrid.stripe_bytes={b}"));
        let set: Vec<&str> = s.iter().map(String::as_str).collect();
        let m = merges_per_write(&set, 65536, n);
        assert!((m - want).abs() < 0.1 * want, "stripe {stripe:?}: {m:.2} merges a write, expected {want}");
    }
    // A 4 KiB write lies in one stripe whatever its width.
    let m = merges_per_write(&["ftl.hybrid.stripe_bytes=32768"], 4096, n);
    assert!((m - 1.0).abs() < 0.1, "4 KiB: {m:.2} merges a write");
}

#[test]
fn a_stripe_must_be_whole_program_units_dividing_the_block() {
    let err = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        match DriveSpec::load("ocz-slc-64gb", &set).unwrap().build("x") {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    };
    // The SLC preset: 4 KiB units, 256 KiB blocks, contiguous layout.
    assert!(err(&["ftl.hybrid.stripe_bytes=16384"]).contains("ftl.hybrid.stripe_bytes"));
    let striped = "ftl.hybrid.layout=striped";
    for bad in ["6144", "0", "98304", "524288"] {
        let e = err(&[striped, &format!("ftl.hybrid.stripe_bytes={bad}")]);
        assert!(e.contains("ftl.hybrid.stripe_bytes") && e.contains(bad), "{bad}: {e}");
    }
    assert_eq!(err(&[striped, "ftl.hybrid.stripe_bytes=32768"]), "");
}

/// Mean and maximum latency (ms) of the published test on a preset: QD1
/// 4 KiB random writes over 8 GB of a fresh drive, offsets with
/// replacement, for `secs` seconds.
fn published_test(name: &str, set: &[&str], secs: u64) -> (f64, f64) {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let model = DriveSpec::load(name, &set).unwrap().build(name).unwrap();
    let mut spec = IoSpec::new("randwrite", RwPattern::RandWrite);
    spec.bs = 4096;
    spec.iodepth = 1;
    spec.size = Some(8_000_000_000);
    spec.runtime_ns = Some(secs * 1_000_000_000);
    spec.time_based = true;
    spec.norandommap = true;
    let r = Simulator::new(Drive::new(model)).run_phase(&Phase::Io(spec), 0, 1);
    let w = &r.dirs[IoKind::Write as usize];
    (w.mean_ns() / 1e6, w.lat_max_ns as f64 / 1e6)
}

#[test]
fn the_published_maximum_latencies_rule_out_fasts_shared_random_logs() {
    // AnandTech's X25-M review (2008): 991 ms at most on the OCZ Core,
    // 83.2 ms on the OCZ SLC. With block-level firmware's whole-block
    // merges (what the published means need on a fresh drive), merging a
    // shared random log merges every logical block in it in one go: on the
    // SLC drive 64 of them, 4.5 s on a die; on the Core minutes. The
    // presets' BAST stays within the published maxima.
    for (name, published_max) in [("ocz-slc-64gb", 83.2), ("ocz-core-64gb", 991.0)] {
        let secs = if name == "ocz-slc-64gb" { 60 } else { 120 };
        let (_, bast) = published_test(name, &[], secs);
        let (_, fast) = published_test(name, &["ftl.hybrid.association=full"], secs);
        assert!(bast < 1.35 * published_max, "{name}: BAST max {bast:.0} ms");
        assert!(fast > 10.0 * published_max, "{name}: FAST max {fast:.0} ms");
    }
}
