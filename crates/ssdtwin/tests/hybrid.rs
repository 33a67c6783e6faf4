//! Hybrid log-block mapping and the 2008 controllers: sequential writes
//! only switch-merge, a full merge costs exactly its NAND operations, and
//! the same MLC is three orders of magnitude slower at small random writes
//! behind the JMicron JMF602 (OCZ Core) than behind Intel's X25-M
//! controller.

use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::{Command, Drive, DriveModel, DriveSpec, IoKind, PhaseResult, Simulator};

use crate::common::small_hybrid_model;

fn preset(name: &str, set: &[&str]) -> DriveModel {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    DriveSpec::load(name, &set).unwrap().build(name).unwrap()
}

/// Run one phase on a drive, after writing `prep` bytes from 0 sequentially
/// (the way Iometer creates its test file).
fn run(model: DriveModel, prep: u64, spec: IoSpec) -> PhaseResult {
    let mut drive = Drive::new(model);
    if prep > 0 {
        let mut fill = IoSpec::new("prepare", RwPattern::Write);
        fill.bs = 128 * 1024;
        fill.iodepth = 32;
        fill.size = Some(prep);
        ssdtwin::run::state::write_fast(&mut drive, &fill);
    }
    drive.reset_time();
    let mut sim = Simulator::new(drive);
    sim.run_phase(&Phase::Io(spec), 0, 1)
}

#[test]
fn sequential_writes_only_switch_merge_and_stay_fast() {
    let model = preset("ocz-core-64gb", &[]);
    let mut seq = IoSpec::new("seq", RwPattern::Write);
    seq.size = Some(64 << 20);
    let s = run(model.clone(), 0, seq);
    let c = &s.counters;
    assert!(c.switch_merges >= 60, "64 MiB fill 64 logical blocks of 1 MiB: {c:?}");
    assert_eq!((c.partial_merges, c.full_merges, c.merge_slots_copied), (0, 0, 0), "{c:?}");
    let seq_lat = s.dirs[IoKind::Write as usize].mean_ns();
    assert!(seq_lat < 200_000.0, "sequential 4 KiB writes at QD1: mean {seq_lat:.0} ns");

    // The same writes at random offsets over the written span: full merges.
    let mut rnd = IoSpec::new("random", RwPattern::RandWrite);
    rnd.size = Some(64 << 20);
    rnd.runtime_ns = Some(5_000_000_000);
    rnd.time_based = true;
    let r = run(model, 64 << 20, rnd);
    let c = &r.counters;
    assert!(c.full_merges > 0 && c.merge_slots_copied > 0, "{c:?}");
    assert!(
        r.iops(IoKind::Write) * 100.0 < s.iops(IoKind::Write),
        "random {:.0} IOPS vs sequential {:.0} IOPS",
        r.iops(IoKind::Write),
        s.iops(IoKind::Write)
    );
}

#[test]
fn a_full_merge_costs_the_sum_of_its_nand_operations() {
    // 2 dies, one log block per die, merges hold the only core.
    let model = small_hybrid_model(
        "block",
        &[
            "geometry.dies_per_channel=1",
            "ftl.user_capacity_bytes=14680064",
            "ftl.hybrid.log_blocks=2",
            "ftl.hybrid.merge_holds_core=true",
            "controller.cores=1",
        ],
    );
    let geo = model.geometry;
    assert_eq!((geo.dies, geo.slots_per_block, geo.unit_slots(ssdtwin::model::nand::CellMode::Native)), (2, 32, 2));
    let mut drive = Drive::new(model.clone());
    let write = |drive: &mut Drive, lpn: u32, pages: u32, t: u64| {
        drive.submit(Command { kind: IoKind::Write, offset: lpn as u64 * 4096, len: pages * 4096 }, t)
    };
    // Logical block 0 (die 0) holds LPNs 0, 1, 4, 5, 8, 9, ...: write
    // logical blocks 0 and 1 in order (switch merges), then LPN 9 (offset 5
    // of logical block 0) again: it goes to a log block of its own.
    let mut t = 0;
    t = write(&mut drive, 0, 64, t) + 1;
    assert_eq!(drive.ftl.counters().switch_merges, 2);
    write(&mut drive, 9, 1, t);
    let (lb, off) = drive.ftl.hybrid().unwrap().locate(9);
    assert_eq!((lb, off), (0, 5));
    drive.ftl.flush_host();
    // Drop the padding program: this test times only what follows.
    drop(drive.ftl.take_ops());
    let data = drive.ftl.hybrid().unwrap().data_block(0);
    let log = geo.block_of(drive.ftl.lookup(9));
    assert_ne!(data, log);
    // An idle drive from here.
    drive.reset_time();
    let before = drive.ftl.counters();
    // LPN 64 is offset 0 of logical block 2, also on die 0: it needs the
    // die's only log block, so logical block 0 is merged first. The log
    // holds offset 5 alone, out of place: a full merge.
    let t0 = 0;
    write(&mut drive, 64, 1, t0);
    let after = drive.ftl.counters();
    assert_eq!(after.full_merges - before.full_merges, 1);
    assert_eq!(after.partial_merges + after.switch_merges, before.partial_merges + before.switch_merges);
    assert_eq!(after.merge_slots_copied - before.merge_slots_copied, 32);
    // A command right behind it waits for the core, which runs the merge.
    let t1 = t0 + 1;
    let done = drive.submit(Command { kind: IoKind::Trim, offset: 3000 * 4096, len: 4096 }, t1);

    // The merge, operation by operation: for each unit (one row of 2
    // slots) read its pages (offset 5 from the log block, the rest from the
    // data block), program it, then erase the old data block and the log.
    let n = &model.native;
    let xfer =
        |slots: u64| ssdtwin::model::nand::transfer_ns(slots * model.channel_bytes_per_slot, model.channel_fs_per_byte);
    let ecc = model.spec.controller.ecc_decode_ns;
    let mut sum = 0u64;
    for row in 0..16u32 {
        if row == 2 {
            sum += 2 * (n.tr(2) + xfer(1) + ecc); // offset 4 from the data block, offset 5 from the log
        } else {
            sum += n.tr(row) + xfer(2) + ecc;
        }
        sum += xfer(2) + n.tprog(row);
    }
    sum += 2 * n.tbers_ns;
    let overhead = model.spec.controller.cmd_overhead_ns;
    // The first command's core time, the merge, the second command's core time.
    let expected = t0 + overhead + sum + overhead;
    let err = (done as f64 - expected as f64).abs() / sum as f64;
    assert!(
        err < 0.01,
        "merge took {} ns, its operations sum to {sum} ns ({:.3}% off)",
        done - 2 * overhead,
        err * 100.0
    );
    assert!(sum > 20_000_000, "a 128 KiB MLC block merge takes tens of ms: {sum}");
    drive.ftl.check_consistency().unwrap();
}

fn qd1_random_write(name: &str, runtime_s: u64) -> (PhaseResult, DriveModel) {
    let model = preset(name, &[]);
    let mut spec = IoSpec::new("randwrite", RwPattern::RandWrite);
    spec.size = Some(8 << 30);
    spec.runtime_ns = Some(runtime_s * 1_000_000_000);
    spec.time_based = true;
    (run(model.clone(), 8 << 30, spec), model)
}

#[test]
fn the_jmf602_is_a_thousand_times_slower_at_random_writes_on_the_same_nand() {
    let (intel, im) = qd1_random_write("intel-x25m-80gb", 5);
    let (ocz, om) = qd1_random_write("ocz-core-64gb", 30);
    assert_eq!(im.native, om.native, "same NAND timings");
    let (i, o) = (intel.iops(IoKind::Write), ocz.iops(IoKind::Write));
    assert!(i >= 1000.0 * o, "X25-M {i:.0} IOPS, OCZ Core {o:.2} IOPS");
    let max = ocz.dirs[IoKind::Write as usize].lat_max_ns;
    assert!(max >= 100_000_000, "OCZ Core max write latency {max} ns");
    // Why: full merges, and the host waiting behind them.
    assert!(ocz.counters.full_merges > 0);
}

#[test]
fn the_slc_drive_has_millisecond_random_writes_without_stutters() {
    let (r, _) = qd1_random_write("ocz-slc-64gb", 10);
    let d = &r.dirs[IoKind::Write as usize];
    assert!(d.mean_ns() > 300_000.0 && d.mean_ns() < 10_000_000.0, "mean {:.0} ns", d.mean_ns());
    assert!(d.lat_max_ns < 100_000_000, "max {} ns", d.lat_max_ns);
}

/// `ssdtwin validate intel-x25m-80gb`, with runtimes capped (quick mode).
#[test]
fn x25m_figures_within_tolerance() {
    let preset_name = "intel-x25m-80gb";
    let set = ssdtwin::study::figures::figures_for(preset_name).unwrap().unwrap();
    let model = preset(preset_name, &[]);
    assert_eq!(set.figures.len(), 4);
    for fig in &set.figures {
        let v = ssdtwin::study::figures::measure(&model, fig, true).unwrap();
        assert!(v.pass, "{}: simulated {} vs {}", fig.name, v.simulated, fig.published);
    }
}

#[test]
fn hybrid_spec_errors_name_their_field() {
    let err = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        DriveSpec::load("ocz-core-64gb", &set).unwrap().build("t").unwrap_err().to_string()
    };
    assert!(err(&["ftl.hybrid.log_blocks=17"]).contains("ftl.hybrid.log_blocks"));
    assert!(err(&["ftl.hybrid.log_blocks=16", "ftl.hybrid.association=full"]).contains("ftl.hybrid.log_blocks"));
    assert!(err(&["ftl.mapping=page"]).contains("ftl.hybrid"));
    assert!(err(&["ftl.hybrid.log_blocks=8192"]).contains("ftl.hybrid.log_blocks"));
}
