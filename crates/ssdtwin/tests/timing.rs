//! Timing sanity: latencies are the sum of their parts, and throughput is
//! capped by dies, controller or link as the hardware says.

use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::{Drive, DriveState, IoKind, PhaseResult, Simulator};

use crate::common::small_model;

fn run(extra: &[&str], state: DriveState, spec: IoSpec) -> (PhaseResult, ssdtwin::DriveModel) {
    let model = small_model(300, extra);
    let mut drive = Drive::new(model.clone());
    state.apply_fast(&mut drive, 1);
    let mut sim = Simulator::new(drive);
    (sim.run_phase(&Phase::Io(spec), 0, 1), model)
}

#[test]
fn qd1_random_read_latency_is_the_sum_of_its_parts() {
    let mut spec = IoSpec::new("qd1", RwPattern::RandRead);
    spec.io_size = Some(4 << 20);
    spec.thinktime_ns = 50_000; // let every die go idle between reads
    let (r, m) = run(&["nand.native.tr_ns=[60000]"], DriveState::Filled(100.0), spec);
    let c = &m.spec.controller;
    let channel_ns = 4096.0 * 1e9 / (m.spec.nand.channel_mts as f64 * 1e6);
    let link_ns = 4096.0 / m.link_bytes_per_s * 1e9;
    let expected = c.cmd_overhead_ns as f64 + 60_000.0 + channel_ns + c.ecc_decode_ns as f64 + link_ns;
    let mean = r.dirs[IoKind::Read as usize].mean_ns();
    let err = (mean - expected).abs() / expected;
    assert!(err < 0.01, "mean {mean:.0} ns, expected {expected:.0} ns ({:.2}% off)", err * 100.0);
    assert_eq!(r.dirs[IoKind::Read as usize].ios, 1024);
}

fn randread_iops(dies_per_channel: u32, channels: u32, extra: &[&str]) -> f64 {
    let mut set = vec![
        format!("geometry.channels={channels}"),
        format!("geometry.dies_per_channel={dies_per_channel}"),
        "geometry.blocks_per_plane=256".to_string(),
    ];
    set.extend(extra.iter().map(|s| s.to_string()));
    let set: Vec<&str> = set.iter().map(String::as_str).collect();
    let mut spec = IoSpec::new("qd256", RwPattern::RandRead);
    spec.iodepth = 256;
    spec.io_size = Some(64 << 20);
    let (r, _) = run(&set, DriveState::Filled(100.0), spec);
    r.iops(IoKind::Read)
}

#[test]
fn random_read_iops_scale_with_dies_until_the_controller_caps_them() {
    // A fast controller: the dies are the bottleneck.
    let fast = ["controller.cores=8", "controller.cmd_overhead_ns=1000"];
    let one = randread_iops(1, 1, &fast);
    let two = randread_iops(2, 1, &fast);
    let four = randread_iops(2, 2, &fast);
    assert!((two / one - 2.0).abs() < 0.2, "1 die {one:.0}, 2 dies {two:.0}");
    assert!((four / two - 2.0).abs() < 0.2, "2 dies {two:.0}, 4 dies {four:.0}");
    // One slow core caps IOPS at 1 / cmd_overhead no matter the dies.
    let slow = ["controller.cores=1", "controller.cmd_overhead_ns=20000"];
    let capped = randread_iops(4, 4, &slow);
    assert!((capped - 50_000.0).abs() / 50_000.0 < 0.02, "capped at {capped:.0}");
}

#[test]
fn sequential_read_is_capped_by_the_link() {
    for (link, extra) in [
        // 4 channels × 2 dies (2.7 GB/s of channel bandwidth) behind a
        // narrower link.
        ("PCIe 3.0 x2", vec!["host.pcie_lanes=2", "geometry.channels=4", "geometry.blocks_per_plane=32"]),
        ("PCIe 3.0 x1", vec!["host.pcie_lanes=1", "geometry.channels=4", "geometry.blocks_per_plane=32"]),
    ] {
        let mut spec = IoSpec::new("seq", RwPattern::Read);
        spec.bs = 128 * 1024;
        spec.iodepth = 32;
        spec.size = Some(256 << 20);
        let (r, m) = run(&extra, DriveState::Filled(100.0), spec);
        let bw = r.bw_bytes(IoKind::Read);
        let err = (bw - m.link_bytes_per_s).abs() / m.link_bytes_per_s;
        assert!(err < 0.03, "{link}: {bw:.0} B/s vs link {:.0} B/s", m.link_bytes_per_s);
    }
}

#[test]
fn writes_wait_for_a_full_buffer() {
    // A 2 MiB buffer in front of slow programs: sustained writes must run at
    // flash speed, not link speed, and the wait shows in the counters.
    let mut spec = IoSpec::new("seqw", RwPattern::Write);
    spec.bs = 128 * 1024;
    spec.iodepth = 8;
    spec.size = Some(128 << 20);
    let (r, m) = run(&["controller.write_buffer_bytes=2097152"], DriveState::Fresh, spec);
    let bw = r.bw_bytes(IoKind::Write);
    // 4 dies, one 3 × 2 × 16 KiB program each per tPROG.
    let g = &m.geometry;
    let unit = (g.program_rows * g.slots_per_row * 4096) as f64;
    let flash_bw = g.dies as f64 * unit / (m.native.tprog_ns[0] as f64 / 1e9);
    assert!(bw < flash_bw * 1.05 && bw > flash_bw * 0.8, "{bw:.0} B/s vs flash {flash_bw:.0} B/s");
    assert!(r.counters.buffer_blocked_ns > 0);
}

/// MB/s of reads plus writes of a 50/50 mix of 128 KiB sequential I/O.
fn mixed_seq_bw(extra: &[&str]) -> (f64, ssdtwin::DriveModel) {
    // 8 dies with fast programs: the flash outruns the link both ways.
    let mut set = vec!["geometry.channels=4", "geometry.blocks_per_plane=32", "nand.native.tprog_ns=[100000]"];
    set.extend_from_slice(extra);
    let mut spec = IoSpec::new("mix", RwPattern::ReadWrite);
    spec.bs = 128 * 1024;
    spec.iodepth = 32;
    spec.size = Some(128 << 20);
    spec.io_size = Some(128 << 20);
    let (r, m) = run(&set, DriveState::Filled(100.0), spec);
    (r.bw_bytes(IoKind::Read) + r.bw_bytes(IoKind::Write), m)
}

#[test]
fn sata_is_half_duplex_and_pcie_full_duplex() {
    // SATA: reads and writes share one direction at a time, so together
    // they move no more than the link rate.
    let sata =
        ["host.interface=sata", "host.pcie_gen=", "host.pcie_lanes=", "host.sata_gbps=6", "host.max_queue_depth=32"];
    let (bw, m) = mixed_seq_bw(&sata);
    let link = m.link_bytes_per_s;
    assert!(bw <= link * 1.01 && bw > link * 0.9, "SATA mix {bw:.0} B/s vs link {link:.0} B/s");
    // PCIe ×1 (a link of about the same rate): each direction has its own
    // lanes, so a mix moves well over the rate of one direction.
    let (bw, m) = mixed_seq_bw(&["host.pcie_lanes=1"]);
    let link = m.link_bytes_per_s;
    assert!(bw > link * 1.5, "PCIe x1 mix {bw:.0} B/s vs one direction {link:.0} B/s");
}

#[test]
fn write_through_acknowledges_after_the_program() {
    let qd1_write = |policy: &str| {
        let mut spec = IoSpec::new("qd1w", RwPattern::RandWrite);
        spec.io_size = Some(1 << 20);
        spec.thinktime_ns = 20_000_000; // every program finishes before the next write
        let (r, m) = run(&[&format!("controller.write_cache={policy}")], DriveState::Fresh, spec);
        (r.dirs[IoKind::Write as usize].mean_ns(), m.native.tprog_ns[0] as f64)
    };
    let (back, tprog) = qd1_write("write-back");
    let (through, _) = qd1_write("write-through");
    // Write-back: acknowledged once the data is in the buffer.
    assert!(back < tprog / 20.0, "write-back {back:.0} ns vs tPROG {tprog:.0} ns");
    // Write-through: acknowledged once the page is programmed.
    assert!(through > tprog && through < tprog * 2.0, "write-through {through:.0} ns vs tPROG {tprog:.0} ns");
}

#[test]
fn secure_erase_erases_every_used_block_and_empties_the_map() {
    let model = small_model(300, &["ftl.version_stamps=true"]);
    let mut drive = Drive::new(model.clone());
    DriveState::Filled(50.0).apply_fast(&mut drive, 1);
    let g = model.geometry;
    let used_per_die: Vec<u64> = (0..g.dies)
        .map(|d| {
            (0..g.blocks_per_die)
                .filter(|&b| {
                    drive.ftl().blocks().state[(d * g.blocks_per_die + b) as usize]
                        != ssdtwin::model::ftl::blocks::BlockState::Free
                })
                .count() as u64
        })
        .collect();
    let erases_before: u64 = drive.ftl().blocks().erase_count.iter().flatten().map(|&e| e as u64).sum();
    let mut sim = Simulator::new(drive);
    let r = sim.run_phase(&Phase::SecureErase { name: "format".into() }, 0, 1);
    let erased = r.counters.nand_erases_native + r.counters.nand_erases_slc;
    assert_eq!(erased, used_per_die.iter().sum::<u64>());
    // Dies erase in parallel, each its blocks one after another.
    let expected = model.spec.controller.cmd_overhead_ns + used_per_die.iter().max().unwrap() * model.native.tbers_ns;
    let took = r.end_ns - r.start_ns;
    assert!(took.abs_diff(expected) * 100 <= expected, "took {took} ns, expected {expected} ns");
    let drive = sim.drive();
    let erases_after: u64 = drive.ftl().blocks().erase_count.iter().flatten().map(|&e| e as u64).sum();
    assert_eq!(erases_after - erases_before, erased);
    assert!((0..drive.user_lpns())
        .all(|l| drive.ftl().read_version(l) == 0 && drive.ftl().lookup(l) == ssdtwin::model::nand::NONE));
    assert_eq!(drive.ftl().blocks().total_free(), (g.dies * g.blocks_per_die) as u64);
    drive.ftl().check_consistency().unwrap();
}
