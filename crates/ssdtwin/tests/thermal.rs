//! Heat: a sustained sequential write on a bare M.2 drive at 25 °C rises
//! along the RC network's closed-form step response, throttles at the
//! warning temperature and recovers after cooling; with a heatsink it does
//! not throttle; idle cools as the network's matrix exponential says, with
//! its slow time constant.

use ssdtwin::model::thermal::ThermalModel;
use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::{Drive, IoKind, PhaseResult, Simulator};

use crate::common::{small_model, small_slc_model};

/// The 660p's thermal network as a bare card in still air (airflow 1),
/// with the card's heat capacity ÷ 10, so its time constant is ≈30 s
/// instead of ≈3 min (the test simulates less).
const FAST: [&str; 2] = ["thermal.nand_j_per_k=0.8", "thermal.airflow=1"];

fn seq_write(secs: u64) -> Phase {
    seq_write_over(secs, 1 << 30)
}

/// Sequential writes over 256 MiB, which the small drive's 1.2 GB SLC
/// cache holds: every second writes into SLC at ≈1.7 GB/s and ≈2.76 W,
/// whose steady state in still air is ≈85 °C. (Over 1 GiB the cache
/// overflows within a second and the drive folds at ≈100 MB/s and
/// ≈2.6 W, whose steady state lies within a kelvin of the 77 °C warning:
/// whether it throttled depended on the folding rate, not on the heat
/// model; issue 33.)
fn slc_write(secs: u64) -> Phase {
    seq_write_over(secs, 256 << 20)
}

fn seq_write_over(secs: u64, span: u64) -> Phase {
    let mut s = IoSpec::new("write", RwPattern::Write);
    s.bs = 128 << 10;
    s.iodepth = 32;
    s.size = Some(span);
    s.runtime_ns = Some(secs * 1_000_000_000);
    s.time_based = true;
    Phase::Io(s)
}

fn idle(secs: u64) -> Phase {
    Phase::Idle { name: "idle".into(), duration_ns: secs * 1_000_000_000, apst: None }
}

fn thermal_model(sim: &Simulator) -> ThermalModel {
    sim.drive().thermal().as_ref().expect("the drive has [thermal]").model.clone()
}

/// NAND array energy of the drive so far, J.
fn nand_j(d: &Drive) -> f64 {
    d.power().nand_j(d.flash().counters.array_ns).unwrap()
}

fn mbps(r: &PhaseResult) -> f64 {
    r.bw_bytes(IoKind::Write) / 1e6
}

#[test]
fn sustained_write_follows_the_rc_curve_throttles_and_recovers() {
    let mut sim = Simulator::new(Drive::new(small_slc_model(&FAST)));
    let m = thermal_model(&sim);
    assert_eq!((m.warning_c, m.critical_c), (77.0, 80.0));
    let tau = m.time_constants_s();
    assert!((20.0..40.0).contains(&tau[1]), "slow time constant {tau:?}");

    // 1. 15 s of writing from ambient, one second per phase: at the end
    //    of each, both nodes are where the closed-form step response under
    //    that second's power (controller side and NAND arrays, as the power
    //    model books them) puts them.
    let mut x = [0.0; 2];
    let mut rates = Vec::new();
    let mut a = None;
    for i in 0..15 {
        let e_nand0 = nand_j(sim.drive());
        let r = sim.run_phase(&slc_write(1), i, 15);
        let secs = (r.end_ns - r.start_ns) as f64 / 1e9;
        let p_nand = (nand_j(sim.drive()) - e_nand0) / secs;
        let p_ctrl = r.energy_j.unwrap() / secs - p_nand;
        x = m.step(x, [p_ctrl, p_nand], secs);
        let th = r.thermal.unwrap();
        let got = [th.end.controller_c - 25.0, th.end.nand_c - 25.0];
        for k in 0..2 {
            assert!(
                // The model applies each 100 ms sensor poll's power; the
                // closed form here the second's mean, so they differ by what
                // the power varies within a second.
                (got[k] - x[k]).abs() < 0.15,
                "second {i}, node {k}: rise {:.3} K, closed form {:.3} K",
                got[k],
                x[k]
            );
        }
        assert_eq!(th.counters.throttle_events, 0);
        rates.push(mbps(&r));
        a = Some(r);
    }
    let th = a.unwrap().thermal.unwrap();
    let full_mbps = rates.iter().sum::<f64>() / rates.len() as f64;
    assert!(th.end.composite_c > 45.0, "heated to {:.1} °C", th.end.composite_c);

    // 2. Keep writing: it throttles at 77 °C (PS2's cap) and holds there.
    let b = sim.run_phase(&slc_write(120), 0, 1);
    let tb = b.thermal.unwrap();
    assert!(tb.counters.throttle_events >= 1 && tb.counters.throttled_warning_ns > 20_000_000_000, "{tb:?}");
    assert!(tb.peak_c >= 77.0 && tb.peak_c < 78.0, "peak {:.2} °C", tb.peak_c);
    assert_eq!(tb.counters.throttled_critical_ns, 0);
    let first_throttled = b.series.seconds.iter().position(|s| s.throttle == Some(1)).unwrap();
    assert!(b.series.seconds[first_throttled - 1].temp_c.unwrap() < 77.5);
    let throttled: Vec<_> = b.series.seconds[first_throttled + 1..b.series.seconds.len() - 1]
        .iter()
        .filter(|s| s.throttle == Some(1))
        .collect();
    assert!(throttled.len() > 10);
    let throttled_mbps = throttled.iter().map(|s| s.write_bytes as f64).sum::<f64>() / throttled.len() as f64 / 1e6;
    assert!(throttled_mbps < 0.6 * full_mbps, "throttled {throttled_mbps:.0} vs {:.0} MB/s", full_mbps);
    let cap = m.cap_w[0].unwrap();
    // PS2's cap holds on average (NVMe averages a state's power over 10 s;
    // a second in which the throttle lifts draws more).
    let mean_w = throttled.iter().map(|s| s.power_w.unwrap()).sum::<f64>() / throttled.len() as f64;
    assert!(mean_w < cap * 1.05, "{mean_w:.3} W over the {cap} W cap");

    // 3. Cool off, then write again: full speed.
    let c = sim.run_phase(&idle(120), 0, 1);
    let tc = c.thermal.unwrap();
    assert!(tc.end.composite_c < 45.0 && tc.end.throttle == 0, "{tc:?}");
    let d = sim.run_phase(&slc_write(5), 0, 1);
    assert_eq!(d.thermal.unwrap().counters.throttle_events, 0);
    assert!(mbps(&d) > 0.95 * full_mbps, "{:.0} vs {:.0} MB/s", mbps(&d), full_mbps);
    // The health log counts the time above the warning threshold.
    let h = ssdtwin::model::health::Health::of(sim.drive());
    assert!(h.composite_temp_c.is_some() && h.warning_temp_time_min.is_some());
}

#[test]
fn with_a_heatsink_it_does_not_throttle() {
    let mut set = FAST.to_vec();
    set.push("thermal.heatsink_k_per_w=6");
    let mut sim = Simulator::new(Drive::new(small_slc_model(&set)));
    let r = sim.run_phase(&seq_write(90), 0, 1);
    let th = r.thermal.unwrap();
    assert_eq!(th.counters.throttle_events, 0);
    assert!(th.peak_c < 70.0, "peak {:.1} °C", th.peak_c);
    assert!(r.series.seconds.iter().all(|s| s.throttle == Some(0)));
}

/// Idle: the drive draws its floor power only (no SLC, nothing to
/// collect), so the temperature relaxes from where the write left it
/// exactly as `e^{At}` says, and late in the idle the excess over the idle
/// steady state falls by `e^{−Δt/τ}` with the network's slow time constant.
#[test]
fn idle_cools_exponentially_with_the_models_time_constant() {
    let mut sim = Simulator::new(Drive::new(small_model(256, &FAST)));
    let m = thermal_model(&sim);
    sim.run_phase(&seq_write_over(20, 200 << 20), 0, 2);
    let r = sim.run_phase(&idle(120), 1, 2);
    assert_eq!(r.counters.nand_programs_native + r.counters.nand_erases_native, 0, "no background work");
    let th = r.thermal.unwrap();
    let x0 = [th.start.controller_c - 25.0, th.start.nand_c - 25.0];
    let floor = r.energy_j.unwrap() / 120.0;
    let excess = |t: f64| {
        let x = m.step(x0, [floor, 0.0], t);
        let xs = m.steady_rise([floor, 0.0]);
        (x[0].max(x[1]), xs[0].max(xs[1]))
    };
    for s in &r.series.seconds {
        let (x, _) = excess(s.t_s as f64);
        let got = s.temp_c.unwrap();
        assert!((got - 25.0 - x).abs() < 0.02, "t = {} s: {got:.3} °C vs {:.3}", s.t_s, 25.0 + x);
    }
    let tau = m.time_constants_s()[1];
    let at = |t: usize| r.series.seconds[t].temp_c.unwrap() - 25.0 - excess(0.0).1;
    let ratio = at(100) / at(60);
    let want = (-40.0 / tau).exp();
    assert!((ratio / want - 1.0).abs() < 0.02, "decay {ratio:.4}, e^(−40/τ) = {want:.4}");
    assert!(th.end.composite_c < th.start.composite_c - 10.0);
}

/// Host Controlled Thermal Management on the 660p's model (the preset's
/// case airflow, 1.5, in which its sustained writes settle near 65 °C and
/// never reach its own 77 °C): the host's TMT1 and TMT2 throttle it where
/// its own thresholds would not, and the health log counts it.
#[test]
fn host_thresholds_throttle_lightly_then_heavily_and_the_log_counts_it() {
    // The card's heat capacity ÷ 10 as above, in the case's airflow.
    let set = ["thermal.nand_j_per_k=0.8"];
    let run = |tmt: Option<[f64; 2]>| {
        let mut sim = Simulator::new(Drive::new(small_slc_model(&set)));
        assert!(sim.device().set_hctm(tmt));
        let r = sim.run_phase(&seq_write(90), 0, 1);
        (r, ssdtwin::model::health::Health::of(sim.drive()))
    };
    let (free, h0) = run(None);
    let t0 = free.thermal.unwrap();
    assert_eq!(t0.counters.throttle_events, 0, "the case's airflow keeps it below 77 °C");
    assert!(t0.peak_c > 55.0 && t0.peak_c < 77.0, "peak {:.1} °C", t0.peak_c);
    assert_eq!(h0.hctm, None, "no HCTM fields when the host set none");

    // TMT1 at 50 °C: light throttling (the warning level's PS2 cap) from
    // the first sensor poll at or above 50 °C, counted as TMT1 time; the
    // drive's own thresholds are never reached, so all of its warning-level
    // time is the host's.
    let (light, h1) = run(Some([50.0, 90.0]));
    let t1 = light.thermal.unwrap();
    assert!(t1.counters.tmt1_transitions >= 1 && t1.counters.tmt2_transitions == 0, "{:?}", t1.counters);
    assert!(t1.counters.tmt1_ns > 10_000_000_000, "{:?}", t1.counters);
    assert_eq!(t1.counters.tmt1_ns, t1.counters.throttled_warning_ns);
    assert!(t1.peak_c < 77.0);
    let first = light.series.seconds.iter().position(|s| s.throttle == Some(1)).expect("throttled");
    assert!(light.series.seconds[first].temp_c.unwrap() >= 49.0, "throttled at {:?}", light.series.seconds[first]);
    assert!(mbps(&light) < 0.9 * mbps(&free), "{:.0} vs {:.0} MB/s", mbps(&light), mbps(&free));
    let h = h1.hctm.expect("the HCTM fields");
    assert_eq!(h.tmt1_total_time_s, t1.counters.tmt1_ns / 1_000_000_000);
    assert_eq!(h.tmt1_transition_count, t1.counters.tmt1_transitions);

    // TMT1 40 °C, TMT2 45 °C: heavy throttling (the critical level's PS2
    // and delay), counted as TMT2 time, and slower still.
    let (heavy, h2) = run(Some([40.0, 45.0]));
    let t2 = heavy.thermal.unwrap();
    assert!(t2.counters.tmt2_transitions >= 1 && t2.counters.tmt2_ns > 10_000_000_000, "{:?}", t2.counters);
    assert_eq!(t2.counters.tmt2_ns, t2.counters.throttled_critical_ns);
    assert!(mbps(&heavy) <= mbps(&light), "{:.0} vs {:.0} MB/s", mbps(&heavy), mbps(&light));
    assert!(h2.hctm.unwrap().tmt2_total_time_s >= 10);

    // A threshold the host may not set is a clear error in a drive file.
    let bad = ssdtwin::DriveSpec::load("intel-660p-1tb", &["thermal.host_tmt_c=[70.0, 60.0]".into()])
        .and_then(|s| s.build("bad"));
    let e = bad.unwrap_err().to_string();
    assert!(e.contains("thermal.host_tmt_c") && e.contains("below TMT2"), "{e}");
}
