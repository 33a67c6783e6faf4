//! Media reliability (`[nand.*.errors]`, `[controller.ecc]`,
//! `[nand.bad_blocks]`): the corrected bits of reads follow the RBER
//! formula, pSLC reads see fewer errors than native ones, an aged drive
//! whose data has been retained for a year retries reads (its tail rises
//! by at least one retry step) where a fresh one does not, and a drive
//! driven past its endurance retires blocks until it turns read-only with
//! the critical warning set and every acknowledged write intact.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ssdtwin::model::drive::{Command, IoError, IoKind};
use ssdtwin::model::health::Health;
use ssdtwin::model::media::NS_PER_YEAR;
use ssdtwin::run::stats::Counters;
use ssdtwin::Drive;

use crate::common::{small_model, small_slc_model};

/// The era-typical 3D TLC estimates of docs/drive-file.md
/// ("Media reliability"): RBER of 64-layer TLC rated 3,000 cycles, a
/// 2 KiB LDPC codeword with hard and 2-bit soft decoding.
const TLC_MEDIA: &[&str] = &[
    "nand.native.pe_cycles=3000",
    "nand.native.errors.fresh=1e-5",
    "nand.native.errors.at_rated_pe=1e-3",
    "nand.native.errors.wear_exponent=2.0",
    "nand.native.errors.retention_per_year=4.0",
    "nand.native.errors.retention_exponent=0.5",
    "nand.native.errors.disturb_per_million_reads=1.0",
    "controller.ecc.codeword_bytes=2048",
    "controller.ecc.hard_bits=80",
    "controller.ecc.read_retry_steps=4",
    "controller.ecc.retry_rber_factor=0.6",
    "controller.ecc.soft_bits=150",
    "controller.ecc.soft_reads=2",
    "controller.ecc.soft_decode_ns=15000",
];

/// The same formula as the model's, written out independently.
fn rber(pe: u32, rated: f64, age_ns: u64, reads: u32) -> f64 {
    let (fresh, at_rated, k, ret, q, dist) = (1e-5, 1e-3, 2.0, 4.0, 0.5, 1.0);
    let r0 = fresh + (at_rated - fresh) * (pe as f64 / rated).powf(k);
    let years = age_ns as f64 / NS_PER_YEAR;
    r0 * (1.0 + ret * years.powf(q) + dist * reads as f64 / 1e6)
}

fn read(d: &mut Drive, lpn: u32, t: u64) -> u64 {
    d.submit(Command { kind: IoKind::Read, offset: lpn as u64 * 4096, len: 4096 }, t)
}

fn write(d: &mut Drive, lpn: u32, t: u64) -> u64 {
    d.submit(Command { kind: IoKind::Write, offset: lpn as u64 * 4096, len: 4096 }, t)
}

/// A drive with its whole span written, every block cycled `pe` times,
/// its data then retained `age_ns` (powered off).
fn written_drive(extra: &[&str], pe: u32, age_ns: u64) -> Drive {
    let mut set: Vec<&str> = TLC_MEDIA.to_vec();
    set.extend_from_slice(extra);
    let mut d = Drive::new(small_model(256, &set));
    d.untimed().set_erase_counts(pe, 0);
    let mut t = 0;
    for lpn in (0..d.user_lpns()).step_by(32) {
        t = d.submit(Command { kind: IoKind::Write, offset: lpn as u64 * 4096, len: 128 << 10 }, t);
    }
    d.flush(t);
    d.reset_time();
    d.pass_time_powered_off(age_ns);
    d
}

#[test]
fn corrected_bits_follow_the_rber_formula() {
    let age = (NS_PER_YEAR / 4.0) as u64;
    let mut d = written_drive(&[], 1500, age);
    let geo = d.model().geometry;
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    let mut expected_bits = 0.0;
    let mut t = 0;
    let before = Counters::of(&d);
    for _ in 0..20_000 {
        let lpn = rng.random_range(0..d.user_lpns());
        let block = geo.block_of(d.ftl().lookup(lpn));
        t = read(&mut d, lpn, t);
        // The model's inputs after the read: erases, program time, reads.
        let b = d.ftl().blocks();
        let age_ns = d.ftl().clock() - b.programmed_at[block as usize];
        expected_bits += rber(b.erase_count[0][block as usize], 3000.0, age_ns, b.reads[block as usize]) * 32768.0;
    }
    let c = Counters::of(&d).since(&before);
    assert_eq!(c.read_retries, 0, "errors within the hard-decision strength");
    let measured = c.corrected_bits as f64;
    // Poisson: the standard deviation of the total is √mean.
    let tolerance = 4.0 * expected_bits.sqrt();
    eprintln!("corrected bits {measured}, formula {expected_bits:.0} ± {tolerance:.0}");
    assert!((measured - expected_bits).abs() < tolerance, "measured {measured}, formula {expected_bits:.0}");
    // The rate is the formula's at 1,500 cycles and a quarter year.
    let rate = measured / (c.decoded_reads as f64 * 32768.0);
    let formula = rber(1500, 3000.0, age, 0);
    assert!((rate / formula - 1.0).abs() < 0.05, "rate {rate:e}, formula {formula:e}");
}

#[test]
fn pslc_reads_see_fewer_errors_than_native() {
    let mut set: Vec<String> = TLC_MEDIA.iter().filter(|s| !s.contains("pe_cycles")).map(|s| s.to_string()).collect();
    // The 660p's QLC (1,000 cycles) and its pSLC mode (30,000); pSLC
    // keeps one bit per cell with wide margins: errors about 100× fewer.
    set.extend(
        [
            "nand.native.errors.fresh=1e-4",
            "nand.native.errors.at_rated_pe=3e-3",
            "nand.slc.errors.fresh=1e-6",
            "nand.slc.errors.at_rated_pe=3e-5",
            "nand.slc.errors.wear_exponent=2.0",
            "nand.slc.errors.retention_per_year=4.0",
            "nand.slc.errors.retention_exponent=0.5",
            "nand.slc.errors.disturb_per_million_reads=1.0",
        ]
        .map(String::from),
    );
    let refs: Vec<&str> = set.iter().map(String::as_str).collect();
    let mut d = Drive::new(small_slc_model(&refs));
    d.untimed().set_erase_counts(300, 3000);
    // 2 GB: the first part stays in the SLC cache, the rest goes native
    // once it fills and folds.
    let mut t = 0;
    let n = (2_000_000_000u64 / 4096) as u32;
    for lpn in (0..n).step_by(32) {
        t = d.submit(Command { kind: IoKind::Write, offset: lpn as u64 * 4096, len: 128 << 10 }, t);
    }
    d.flush(t);
    d.reset_time();
    let geo = d.model().geometry;
    let (mut slc, mut native) = (Vec::new(), Vec::new());
    for lpn in 0..n {
        let s = d.ftl().lookup(lpn);
        if s == u32::MAX || d.ftl().is_unprogrammed(s) {
            continue;
        }
        match d.ftl().mode_of(geo.block_of(s)) {
            ssdtwin::model::nand::CellMode::Slc => slc.push(lpn),
            ssdtwin::model::nand::CellMode::Native => native.push(lpn),
        }
    }
    assert!(slc.len() > 1000 && native.len() > 1000, "{} SLC and {} native pages", slc.len(), native.len());
    let mut rate = |lpns: &[u32]| {
        let before = Counters::of(&d);
        let mut t = 0;
        for &lpn in lpns.iter().step_by((lpns.len() / 2000).max(1)) {
            t = read(&mut d, lpn, t);
        }
        let c = Counters::of(&d).since(&before);
        c.corrected_bits as f64 / (c.decoded_reads as f64 * 32768.0)
    };
    let (r_slc, r_native) = (rate(&slc), rate(&native));
    eprintln!("RBER pSLC {r_slc:e}, native {r_native:e}");
    assert!(r_slc * 20.0 < r_native, "pSLC {r_slc:e} vs native {r_native:e}");
}

/// p99.9 of 4 KiB random reads at QD1.
fn read_tail(d: &mut Drive) -> (u64, Counters) {
    let mut rng = Pcg64Mcg::seed_from_u64(11);
    let mut lat = Vec::new();
    let before = Counters::of(d);
    let mut t = 0;
    for _ in 0..20_000 {
        let lpn = rng.random_range(0..d.user_lpns());
        let done = read(d, lpn, t);
        lat.push(done - t);
        t = done;
    }
    lat.sort_unstable();
    (lat[lat.len() * 999 / 1000], Counters::of(d).since(&before))
}

#[test]
fn an_aged_drive_retries_reads_in_its_tail() {
    let year = NS_PER_YEAR as u64;
    let (fresh_tail, fresh) = read_tail(&mut written_drive(&[], 0, year));
    let (aged_tail, aged) = read_tail(&mut written_drive(&[], 3000, year));
    let m = small_model(256, TLC_MEDIA);
    // One retry step: an extra array read (the slowest page type) and a
    // hard decode.
    let step = *m.native.tr_ns.iter().min().unwrap() + m.spec.controller.ecc_decode_ns;
    eprintln!(
        "p99.9 fresh {fresh_tail} ns ({} retries), aged {aged_tail} ns ({} retries, {} soft, {} uncorrectable)",
        fresh.read_retries, aged.read_retries, aged.soft_decodes, aged.uncorrectable_reads
    );
    assert_eq!(fresh.read_retries, 0);
    assert!(aged.read_retries > 0);
    assert!(aged_tail >= fresh_tail + step, "p99.9 {aged_tail} ns vs fresh {fresh_tail} ns (+{step})");
    // The same aged drive read right after writing: within hard decoding.
    let (_, just_written) = read_tail(&mut written_drive(&[], 3000, 0));
    assert_eq!(just_written.read_retries, 0);
}

#[test]
fn error_draws_are_deterministic() {
    let run = || {
        let mut d = written_drive(&[], 3000, NS_PER_YEAR as u64);
        read_tail(&mut d).1
    };
    assert_eq!(run(), run());
}

/// A tiny drive rated 60 cycles (so that the test reaches end of life in
/// seconds) with the failure law of docs/drive-file.md's estimates
/// (factory bad blocks 2%, at most 1% more failed by the rated cycles, as
/// NAND datasheets guarantee 98% valid blocks over the rated endurance),
/// or with `failures` instead.
fn eol_drive(failures: &[&str]) -> Drive {
    let mut set = vec![
        "ftl.version_stamps=true",
        "geometry.pages_per_block=12",
        "nand.native.pe_cycles=60",
        "nand.bad_blocks.factory_fraction=0.02",
        "nand.bad_blocks.erase_failed_by_rated_pe=0.008",
        "nand.bad_blocks.program_failed_by_rated_pe=0.002",
        "nand.bad_blocks.fail_exponent=3.0",
        "nand.bad_blocks.spare_blocks_per_die=3",
        "nand.bad_blocks.spare_threshold_percent=10",
    ];
    set.extend_from_slice(failures);
    Drive::new(small_model(48, &set))
}

/// Random 4 KiB writes until the drive has refused 100; returns the
/// versions every page should read (acknowledged writes per page) and
/// the available spare levels seen on the way.
fn write_to_end_of_life(d: &mut Drive, seed: u64) -> (Vec<u32>, Vec<u32>, u64) {
    let n = d.user_lpns();
    let mut versions = vec![0u32; n as usize];
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut t = 0;
    let (mut acknowledged, mut refused) = (0u64, 0u64);
    let mut spare_seen = vec![100u32];
    while refused < 100 {
        let lpn = rng.random_range(0..n);
        t = write(d, lpn, t);
        match d.last_error() {
            None => {
                versions[lpn as usize] += 1;
                acknowledged += 1;
            }
            Some(e) => {
                assert_eq!(e, IoError::ReadOnly);
                refused += 1;
            }
        }
        if acknowledged % 4096 == 0 {
            let s = Health::of(d).available_spare.unwrap();
            if s != *spare_seen.last().unwrap() {
                spare_seen.push(s);
            }
        }
        assert!(acknowledged < 50_000_000, "never reached end of life");
    }
    assert_eq!(Counters::of(d).write_errors, refused);
    (versions, spare_seen, t)
}

/// Every page reads its last acknowledged write, in random order, and
/// reads still work on the read-only drive.
fn check_read_your_writes(d: &mut Drive, versions: &[u32], mut t: u64) {
    d.ftl().check_consistency().unwrap();
    let mut order: Vec<u32> = (0..versions.len() as u32).collect();
    let mut rng = Pcg64Mcg::seed_from_u64(17);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    for &lpn in &order {
        t = read(d, lpn, t);
        assert_eq!(d.last_error(), None);
        assert_eq!(d.ftl().read_version(lpn), versions[lpn as usize], "lpn {lpn}");
    }
}

#[test]
fn a_worn_out_drive_turns_read_only_without_losing_data() {
    let mut d = eol_drive(&[]);
    let health = Health::of(&d);
    assert_eq!(health.available_spare, Some(100));
    assert_eq!(health.critical_warning, 0);
    assert_eq!(health.bad_blocks, Some(4), "2% of 64 blocks on each of 4 dies");
    let (versions, spare_seen, t) = write_to_end_of_life(&mut d, 5);
    let h = Health::of(&d);
    let c = Counters::of(&d);
    eprintln!(
        "spare {:?} → {:?}; {} program and {} erase failures, {} blocks retired; P/E {:.0} mean, {} max (rated 60)",
        spare_seen,
        h.available_spare,
        c.program_failures,
        c.erase_failures,
        c.grown_bad_blocks,
        h.pe_cycles_native_mean,
        h.pe_cycles_native_max
    );
    assert!(h.available_spare.unwrap() < 10, "spare {:?} below the threshold", h.available_spare);
    assert!(spare_seen.len() >= 3, "spare fell block by block: {spare_seen:?}");
    assert_eq!(h.critical_warning, 0x09, "spare below threshold and read-only");
    assert!(c.grown_bad_blocks >= 3);
    assert!(h.pe_cycles_native_mean > 60.0, "past its rated endurance: {:.0}", h.pe_cycles_native_mean);
    check_read_your_writes(&mut d, &versions, t);
}

#[test]
fn program_failures_keep_every_acknowledged_write() {
    // Programs fail far more often than any NAND's: the mechanism under
    // stress (the failed unit and the rest of its block rewritten).
    let mut d =
        eol_drive(&["nand.bad_blocks.program_failed_by_rated_pe=0.2", "nand.bad_blocks.erase_failed_by_rated_pe=0"]);
    let (versions, _, t) = write_to_end_of_life(&mut d, 6);
    let c = Counters::of(&d);
    eprintln!("{} program failures, {} blocks retired", c.program_failures, c.grown_bad_blocks);
    assert!(c.program_failures >= 3 && c.erase_failures == 0);
    check_read_your_writes(&mut d, &versions, t);
}

#[test]
fn bad_block_runs_are_deterministic() {
    let run = || {
        let mut d = eol_drive(&[]);
        write_to_end_of_life(&mut d, 9);
        (Counters::of(&d), Health::of(&d))
    };
    assert_eq!(run(), run());
}

/// Wear carried forward (the aging phase's extrapolation) draws the
/// failures of the cycles it adds: a drive carried past its rated cycles
/// has blocks marked to fail, they retire as they come up for erase, its
/// spare falls, and every acknowledged write is intact.
#[test]
fn carried_forward_wear_retires_blocks_without_losing_data() {
    let mut d = eol_drive(&[]);
    let n = d.user_lpns();
    let mut versions = vec![0u32; n as usize];
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    let mut t = 0;
    let mut random_writes = |d: &mut Drive, count: u64, t: &mut u64| {
        for _ in 0..count {
            let lpn = rng.random_range(0..n);
            *t = write(d, lpn, *t);
            if d.last_error().is_none() {
                versions[lpn as usize] += 1;
            }
        }
    };
    let since = d.ftl().wear_mark();
    random_writes(&mut d, 3 * n as u64, &mut t);
    let window = d.ftl().wear_mark();
    random_writes(&mut d, n as u64, &mut t);
    let before = Health::of(&d);
    assert!(before.pe_cycles_native_mean < 60.0, "not yet worn: {}", before.pe_cycles_native_mean);
    let in_window: u64 = d.ftl().erases_since(&window).iter().sum();
    let added = d.untimed().extrapolate_wear(&since, &window, 150.0, 0, 9);
    let worn = Health::of(&d);
    eprintln!("{added:?}; P/E {:.1} → {:.1} mean", before.pe_cycles_native_mean, worn.pe_cycles_native_mean);
    assert!(worn.pe_cycles_native_mean > 60.0, "carried past the rated 60 cycles");
    let expected = 150.0 * in_window as f64;
    assert!((added.erases as f64 - expected).abs() < 0.01 * expected, "{} erases added for {expected}", added.erases);
    assert!(added.failing_blocks >= 2, "blocks past their rating fail: {added:?}");
    random_writes(&mut d, 2 * n as u64, &mut t);
    let c = Counters::of(&d);
    assert!(c.grown_bad_blocks >= 1, "marked blocks retire at their erase");
    assert!(Health::of(&d).available_spare.unwrap() < 100, "spare consumed");
    check_read_your_writes(&mut d, &versions, t);
}
