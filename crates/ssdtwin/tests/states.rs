//! The fast preconditioning path leaves the same drive state as
//! simulating the writes.

use ssdtwin::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::{Drive, DriveState, Simulator};

use crate::common::small_model;

fn assert_same_state(a: &Drive, b: &Drive) {
    assert_eq!(a.ftl.l2p, b.ftl.l2p, "logical-to-physical maps differ");
    assert_eq!(a.ftl.p2l, b.ftl.p2l, "physical-to-logical maps differ");
    assert_eq!(a.ftl.blocks.valid, b.ftl.blocks.valid, "valid counts differ");
    assert_eq!(a.ftl.blocks.state, b.ftl.blocks.state, "block states differ");
    assert_eq!(a.ftl.blocks.erase_count, b.ftl.blocks.erase_count, "erase counts differ");
    assert_eq!(a.ftl.counters, b.ftl.counters, "FTL counters differ");
}

fn check(state: DriveState) {
    let model = small_model(300, &[]);
    let mut fast = Drive::new(model.clone());
    state.apply_fast(&mut fast, 9);

    let mut sim = Simulator::new(Drive::new(model));
    let phases = state.as_phases(sim.drive.user_bytes(), 9);
    for (i, p) in phases.iter().enumerate() {
        sim.run_phase(p, i, phases.len());
    }
    assert_same_state(&fast, &sim.drive);
    fast.ftl.check_consistency().unwrap();

    // The same benchmark afterwards gives the same results on both.
    let mut job = IoSpec::new("after", RwPattern::RandRw);
    job.iodepth = 16;
    job.norandommap = true;
    job.io_size = Some(48 << 20);
    let mut simulated = sim.drive;
    simulated.reset_time();
    let results: Vec<_> = [fast, simulated]
        .into_iter()
        .map(|d| {
            let r = Simulator::new(d).run_phase(&Phase::Io(job.clone()), 0, 1);
            let dirs: Vec<_> = r.dirs.iter().map(|d| (d.ios, d.bytes, d.lat_sum_ns, d.lat_max_ns)).collect();
            (dirs, r.end_ns - r.start_ns)
        })
        .collect();
    assert!(results[0].0[1].0 > 0, "no writes in the benchmark");
    assert_eq!(results[0], results[1], "the benchmark after fast and simulated preconditioning differs");
}

#[test]
fn fast_fill_equals_simulated_fill() {
    check(DriveState::Filled(100.0));
    check(DriveState::Filled(37.0));
}

#[test]
fn fast_steady_state_equals_simulated_one() {
    check(DriveState::Steady);
}

#[test]
fn state_names_parse() {
    assert_eq!("full".parse::<DriveState>(), Ok(DriveState::Filled(100.0)));
    assert_eq!("filled:50".parse::<DriveState>(), Ok(DriveState::Filled(50.0)));
    assert!("filled:150".parse::<DriveState>().is_err());
    assert!("half".parse::<DriveState>().is_err());
}
