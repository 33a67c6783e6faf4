//! The exact fast preconditioning paths (`fresh`, `full`, `filled:N`,
//! `steady-exact`) leave the same drive state as simulating the writes; the statistical steady state has the same
//! statistics and gives the same benchmark results as replaying its writes.

use ssdtwin::model::ftl::blocks::BlockState;
use ssdtwin::model::nand::CellMode;
use ssdtwin::run::state::apply_phases_exact;
use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::{Drive, DriveModel, DriveSpec, DriveState, IoKind, Simulator};

use crate::common::{small_model, small_slc_model};

fn assert_same_state(a: &Drive, b: &Drive) {
    assert_eq!(a.ftl().l2p(), b.ftl().l2p(), "logical-to-physical maps differ");
    assert_eq!(a.ftl().p2l(), b.ftl().p2l(), "physical-to-logical maps differ");
    assert_eq!(a.ftl().blocks().valid, b.ftl().blocks().valid, "valid counts differ");
    assert_eq!(a.ftl().blocks().state, b.ftl().blocks().state, "block states differ");
    assert_eq!(a.ftl().blocks().erase_count, b.ftl().blocks().erase_count, "erase counts differ");
    assert_eq!(a.ftl().counters(), b.ftl().counters(), "FTL counters differ");
}

fn check(state: DriveState) {
    let model = small_model(300, &[]);
    let mut fast = Drive::new(model.clone());
    state.apply_fast(&mut fast, 9);

    let mut sim = Simulator::new(Drive::new(model));
    let phases = state.as_phases(sim.drive().user_bytes(), 9);
    for (i, p) in phases.iter().enumerate() {
        sim.run_phase(p, i, phases.len());
    }
    assert_same_state(&fast, sim.drive());
    fast.ftl().check_consistency().unwrap();

    // The same benchmark afterwards gives the same results on both.
    let mut job = IoSpec::new("after", RwPattern::RandRw);
    job.iodepth = 16;
    job.norandommap = true;
    job.io_size = Some(48 << 20);
    let mut simulated = sim.into_drive();
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

/// `steady-exact`'s fast path replays `steady`'s writes exactly; `steady`
/// itself is built from its statistics and compared below.
#[test]
fn fast_steady_exact_state_equals_simulated_one() {
    check(DriveState::SteadyExact);
}

/// Valid fractions of the sealed native blocks at the 10th, 25th, 50th,
/// 75th and 90th percentiles.
fn valid_quantiles(d: &Drive) -> Vec<f64> {
    let b = &d.ftl().blocks();
    let s = d.model().geometry.slots_per_block as f64;
    let mut u: Vec<f64> = (0..b.valid.len())
        .filter(|&i| b.state[i] == BlockState::Sealed && b.mode[i] == CellMode::Native)
        .map(|i| b.valid[i] as f64 / s)
        .collect();
    u.sort_by(f64::total_cmp);
    [0.1, 0.25, 0.5, 0.75, 0.9].iter().map(|p| u[((u.len() - 1) as f64 * p).round() as usize]).collect()
}

/// The statistical steady state against the exact replay of its writes on
/// `model`: the distribution of valid data over blocks, free blocks, the
/// SLC cache's occupancy, then the benchmark that follows — 4 KiB random
/// reads (how the data lies over dies and page types), and 4 KiB random
/// writes of half the capacity (write amplification and IOPS). The IOPS
/// bound is the widest: it depends on how the dies' GC and folding cycles
/// line up, which the construction approximates (see `state::steady`).
fn compare_steady(model: DriveModel, iops_tolerance: f64) {
    let mut exact = Drive::new(model.clone());
    let cap = exact.user_bytes();
    apply_phases_exact(&mut exact, &DriveState::Steady.phases(cap, 5));
    let mut stat = Drive::new(model);
    DriveState::Steady.apply_fast(&mut stat, 5);
    stat.ftl().check_consistency().unwrap();
    // The replay may leave a few pages of the span's last partial 128 KiB
    // unwritten (the fill skips them; random writes may miss them).
    assert!(stat.ftl().mapped_lpns().abs_diff(exact.ftl().mapped_lpns()) < 32);
    let (qe, qs) = (valid_quantiles(&exact), valid_quantiles(&stat));
    for (a, b) in qe.iter().zip(&qs) {
        assert!((a - b).abs() < 0.03, "valid-fraction quantiles {qe:.3?} vs {qs:.3?}");
    }
    let dies = exact.model().geometry.dies as u64;
    // Each die sits within a block or two of its background target,
    // depending on where in its collection cycle it is.
    let (fe, fs) = (exact.ftl().blocks().total_free(), stat.ftl().blocks().total_free());
    assert!(fe.abs_diff(fs) <= 2 * dies, "free blocks {fe} vs {fs}");
    let (se, ss) = (exact.ftl().blocks().slc_in_use, stat.ftl().blocks().slc_in_use);
    assert!(se.abs_diff(ss) as u64 <= dies, "SLC blocks in use {se} vs {ss}");
    assert!((exact.waf() / stat.waf() - 1.0).abs() < 0.05, "preconditioning WAF {} vs {}", exact.waf(), stat.waf());
    let mut r = IoSpec::new("randread", RwPattern::RandRead);
    r.iodepth = 32;
    r.io_size = Some(cap / 8 / 4096 * 4096);
    let mut w = IoSpec::new("randwrite", RwPattern::RandWrite);
    w.iodepth = 32;
    w.norandommap = true;
    w.io_size = Some(cap / 2 / 4096 * 4096);
    let run = |d: Drive| {
        let mut sim = Simulator::new(d);
        let a = sim.run_phase(&Phase::Io(r.clone()), 0, 2);
        let b = sim.run_phase(&Phase::Io(w.clone()), 1, 2);
        (a.iops(IoKind::Read), b.iops(IoKind::Write), b.counters.waf())
    };
    let (re, we, wafe) = run(exact);
    let (rs, ws, wafs) = run(stat);
    assert!((re / rs - 1.0).abs() < 0.03, "random-read IOPS {re:.0} vs {rs:.0}");
    assert!((wafe / wafs - 1.0).abs() < 0.02, "WAF {wafe:.3} vs {wafs:.3}");
    assert!((we / ws - 1.0).abs() < iops_tolerance, "random-write IOPS {we:.0} vs {ws:.0}");
}

#[test]
fn statistical_steady_state_matches_the_replay_without_slc() {
    compare_steady(small_model(300, &[]), 0.03);
}

#[test]
fn statistical_steady_state_matches_the_replay_with_an_always_slc_cache() {
    // The small 660p with four times the blocks (96 native blocks per die):
    // enough blocks for GC's statistics to be stable.
    compare_steady(
        small_slc_model(&[
            "geometry.blocks_per_plane=160",
            "ftl.user_capacity_bytes=12799983616",
            "slc_cache.static_bytes=800000000",
            "slc_cache.capacity_curve=[[0.0, 4.8e9], [0.5, 4.8e9], [0.78, 0.8e9], [1.0, 0.8e9]]",
        ]),
        0.08,
    );
}

#[test]
fn statistical_steady_state_matches_the_replay_with_four_dies_per_channel() {
    // As above with 16 dies sharing 4 channels (the 2 TB 660p's layout).
    compare_steady(
        small_slc_model(&[
            "geometry.dies_per_channel=4",
            "geometry.blocks_per_plane=160",
            "ftl.user_capacity_bytes=25599967232",
            "slc_cache.static_bytes=1600000000",
            "slc_cache.capacity_curve=[[0.0, 9.6e9], [0.5, 9.6e9], [0.78, 1.6e9], [1.0, 1.6e9]]",
        ]),
        0.08,
    );
}

#[test]
fn statistical_steady_state_matches_the_replay_native_when_full() {
    let set: Vec<String> = [
        "geometry.blocks_per_plane=120",
        "geometry.pages_per_block=128",
        "ftl.user_capacity_bytes=3000000512",
        "slc_cache.capacity_curve=[[0.0, 1.0e9], [0.5, 0.5e9], [1.0, 0.2e9]]",
    ]
    .map(String::from)
    .to_vec();
    let model = DriveSpec::load("smi-sm2260-mlc-512gb", &set).unwrap().build("small sm2260").unwrap();
    compare_steady(model, 0.03);
}

/// Share of host writes that went to SLC, and the preconditioning WAF.
fn slc_share_and_waf(d: &Drive) -> (f64, f64) {
    let c = d.ftl().counters();
    (c.host_slots_to_slc as f64 / c.host_slots_written as f64, d.waf())
}

/// The FTL's block policies exist once (`model::ftl::pool`), so a policy
/// parameter moves the exact replay and the statistical builder alike:
/// switching the SLC write policy from `always-slc` to `native-when-full`
/// sends far fewer host writes through the cache and folds far less, in
/// both, by the same amounts (a small SM2260: a dynamic cache without a
/// static pool).
#[test]
fn a_policy_parameter_moves_both_steady_state_paths_alike() {
    let mut seen = Vec::new();
    for policy in ["always-slc", "native-when-full"] {
        let set: Vec<String> = [
            "geometry.blocks_per_plane=120",
            "geometry.pages_per_block=128",
            "ftl.user_capacity_bytes=3000000512",
            "slc_cache.capacity_curve=[[0.0, 1.0e9], [0.5, 0.5e9], [1.0, 0.2e9]]",
            &format!("slc_cache.write_policy={policy}"),
        ]
        .map(String::from)
        .to_vec();
        let model = DriveSpec::load("smi-sm2260-mlc-512gb", &set).unwrap().build("small sm2260").unwrap();
        let mut exact = Drive::new(model.clone());
        let cap = exact.user_bytes();
        apply_phases_exact(&mut exact, &DriveState::Steady.phases(cap, 5));
        let mut stat = Drive::new(model);
        DriveState::Steady.apply_fast(&mut stat, 5);
        let (e, s) = (slc_share_and_waf(&exact), slc_share_and_waf(&stat));
        assert!((e.0 - s.0).abs() < 0.02, "{policy}: share of host writes into SLC {:.3} vs {:.3}", e.0, s.0);
        assert!((e.1 / s.1 - 1.0).abs() < 0.05, "{policy}: WAF {:.3} vs {:.3}", e.1, s.1);
        seen.push((e, s));
    }
    let [(ae, as_), (ne, ns)] = [seen[0], seen[1]];
    eprintln!("always-slc: exact {ae:.3?} stat {as_:.3?}; native-when-full: exact {ne:.3?} stat {ns:.3?}");
    assert!(ae.0 - ne.0 > 0.2 && as_.0 - ns.0 > 0.2, "the write policy changed too little: {seen:.3?}");
}

#[test]
fn state_names_parse() {
    assert_eq!("full".parse::<DriveState>(), Ok(DriveState::Filled(100.0)));
    assert_eq!("filled:50".parse::<DriveState>(), Ok(DriveState::Filled(50.0)));
    assert!("filled:150".parse::<DriveState>().is_err());
    assert!("half".parse::<DriveState>().is_err());
}
