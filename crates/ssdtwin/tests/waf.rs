//! Write amplification of uniform random 4 KiB writes in steady state
//! against the closed form for FIFO victim selection (Hu et al. 2009,
//! Desnoyers 2012), and greedy no worse than FIFO.
//!
//! α is physical / logical capacity, where "physical" is the flash that can
//! hold data: the raw capacity minus the free blocks the FTL always keeps
//! in reserve for GC (`gc_low_free_blocks` per die), which never hold data
//! in steady state.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ssdtwin::study::analytic::waf_fifo_uniform;
use ssdtwin::{Drive, DriveSpec, DriveState};

/// Steady-state WAF of a drive with physical/logical ratio `alpha`.
fn measured_waf(alpha: f64, policy: &str) -> f64 {
    // 4 dies × 1024 blocks × 264 slots: many blocks, so that the reserve
    // and the open blocks are a negligible part of the spare area.
    let (dies, blocks, slots_per_block, reserve) = (4u64, 1024u64, 264u64, 2u64);
    let usable = dies * (blocks - reserve) * slots_per_block;
    let user_slots = (usable as f64 / alpha).floor() as u64;
    let set: Vec<String> = vec![
        "geometry.channels=1".into(),
        format!("geometry.dies_per_channel={dies}"),
        "geometry.planes_per_die=1".into(),
        format!("geometry.blocks_per_plane={blocks}"),
        "geometry.pages_per_block=66".into(),
        format!("ftl.user_capacity_bytes={}", user_slots * 4096),
        format!("ftl.gc_low_free_blocks={reserve}"),
        format!("ftl.gc_high_free_blocks={reserve}"),
        format!("ftl.gc_policy={policy}"),
    ];
    let model = DriveSpec::load("generic-tlc-nvme", &set).unwrap().build("waf test").unwrap();
    assert_eq!(model.geometry.slots_per_block as u64, slots_per_block);
    let mut drive = Drive::new(model);
    DriveState::Filled(100.0).apply_fast(&mut drive, 1);
    let n = drive.user_lpns();
    let mut untimed = drive.untimed();
    let mut rng = Pcg64Mcg::seed_from_u64(42);
    // Warm up to steady state: three times the logical capacity.
    for _ in 0..3 * n as u64 {
        untimed.write(rng.random_range(0..n));
    }
    let before = untimed.drive().ftl().counters();
    for _ in 0..2 * n as u64 {
        untimed.write(rng.random_range(0..n));
    }
    let after = untimed.drive().ftl().counters();
    let host = (after.host_slots_written - before.host_slots_written) as f64;
    let moved = (after.gc_slots_moved - before.gc_slots_moved) as f64;
    (host + moved) / host
}

fn check(alpha: f64) {
    let expected = waf_fifo_uniform(alpha);
    let fifo = measured_waf(alpha, "fifo");
    let err = (fifo - expected).abs() / expected;
    assert!(err < 0.10, "α = {alpha}: FIFO WAF {fifo:.3}, closed form {expected:.3} ({:.1}% off)", err * 100.0);
    let greedy = measured_waf(alpha, "greedy");
    assert!(greedy <= fifo * 1.001, "α = {alpha}: greedy WAF {greedy:.3} exceeds FIFO {fifo:.3}");
    eprintln!("α = {alpha}: closed form {expected:.3}, FIFO {fifo:.3}, greedy {greedy:.3}");
}

#[test]
fn waf_matches_closed_form_at_7_percent_spare() {
    check(1.07);
}

#[test]
fn waf_matches_closed_form_at_12_percent_spare() {
    check(1.12);
}

#[test]
fn waf_matches_closed_form_at_28_percent_spare() {
    check(1.28);
}

#[test]
fn waf_matches_closed_form_at_50_percent_spare() {
    check(1.5);
}
