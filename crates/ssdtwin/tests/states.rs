//! The fast preconditioning path leaves the same drive state as
//! simulating the writes.

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
