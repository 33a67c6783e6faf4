//! Every read returns the last version written (or nothing after TRIM),
//! through overwrites, TRIM, foreground and background GC, for every GC
//! victim policy. Operations go through the whole drive (host interface,
//! write buffer, FTL, flash scheduling), not just the FTL.

use proptest::prelude::*;
use ssdtwin::{Command, IoKind};

use crate::common::{small_drive, small_hybrid_model, small_slc_model};

#[derive(Debug, Clone)]
enum Op {
    Write { lpn: u32, pages: u32 },
    Trim { lpn: u32, pages: u32 },
    Read { lpn: u32 },
    Idle { ms: u64 },
}

fn op(user_lpns: u32, hot: u32) -> impl Strategy<Value = Op> {
    // Skew toward a hot region so that blocks end up with mixed valid
    // counts and GC has real choices to make.
    let lpn = prop_oneof![3 => 0..hot, 1 => 0..user_lpns];
    prop_oneof![
        12 => (lpn.clone(), 1u32..40).prop_map(|(lpn, pages)| Op::Write { lpn, pages }),
        2 => (lpn.clone(), 1u32..64).prop_map(|(lpn, pages)| Op::Trim { lpn, pages }),
        5 => lpn.prop_map(|lpn| Op::Read { lpn }),
        1 => (1u64..200).prop_map(|ms| Op::Idle { ms }),
    ]
}

fn check_policy(policy: &str, ops: &[Op], fill_first: bool) -> Result<(), TestCaseError> {
    // 384 MiB raw, 300 MiB user: GC runs constantly.
    let drive = small_drive(
        300,
        &["ftl.version_stamps=true", &format!("ftl.gc_policy={policy}"), "ftl.idle_threshold_ns=1000000"],
    );
    check_drive(drive, ops, fill_first)
}

fn check_slc(write_policy: &str, ops: &[Op]) -> Result<(), TestCaseError> {
    let drive = ssdtwin::Drive::new(small_slc_model(&[
        "ftl.version_stamps=true",
        &format!("slc_cache.write_policy={write_policy}"),
    ]));
    check_drive(drive, ops, true)
}

fn check_hybrid(association: &str, layout: &str, ops: &[Op]) -> Result<(), TestCaseError> {
    check_hybrid_with(association, &[&format!("ftl.hybrid.layout={layout}")], ops)
}

fn check_hybrid_with(association: &str, set: &[&str], ops: &[Op]) -> Result<(), TestCaseError> {
    let mut all_set = vec!["ftl.version_stamps=true", "ftl.hybrid.merge_policy=fifo"];
    all_set.extend_from_slice(set);
    let drive = ssdtwin::Drive::new(small_hybrid_model(association, &all_set));
    // After the fill: writes that start logical blocks of dies 0 and 1 in
    // order (so that some log block holds an in-order prefix when it is
    // merged: a partial merge), then the random operations.
    let mut all = vec![Op::Write { lpn: 0, pages: 4 }, Op::Write { lpn: 128, pages: 3 }];
    all.extend_from_slice(ops);
    check_drive(drive, &all, true)
}

fn check_drive(mut drive: ssdtwin::Drive, ops: &[Op], fill_first: bool) -> Result<(), TestCaseError> {
    let n = drive.user_lpns();
    // The model: how many times each page was written (the FTL's version
    // stamp counts the same way), and whether it was trimmed since.
    let mut writes = vec![0u32; n as usize];
    let mut live = vec![false; n as usize];
    let expected = |writes: &[u32], live: &[bool], l: u32| {
        if live[l as usize] {
            writes[l as usize]
        } else {
            0
        }
    };
    let mut t = 0u64;
    let submit = |drive: &mut ssdtwin::Drive, kind, lpn: u32, pages: u32, t: &mut u64| {
        let pages = pages.min(n - lpn);
        drive.submit(Command { kind, offset: lpn as u64 * 4096, len: pages * 4096 }, *t);
        *t += 2_000;
        lpn..lpn + pages
    };
    let mut all = Vec::new();
    if fill_first {
        all.extend((0..n).step_by(32).map(|lpn| Op::Write { lpn, pages: 32 }));
    }
    all.extend_from_slice(ops);
    for op in &all {
        match *op {
            Op::Write { lpn, pages } => {
                for l in submit(&mut drive, IoKind::Write, lpn, pages, &mut t) {
                    writes[l as usize] += 1;
                    live[l as usize] = true;
                }
            }
            Op::Trim { lpn, pages } => {
                for l in submit(&mut drive, IoKind::Trim, lpn, pages, &mut t) {
                    live[l as usize] = false;
                }
            }
            Op::Read { lpn } => {
                submit(&mut drive, IoKind::Read, lpn, 1, &mut t);
                prop_assert_eq!(drive.ftl().read_version(lpn), expected(&writes, &live, lpn), "lpn {}", lpn);
            }
            Op::Idle { ms } => {
                // Background GC while the host is idle.
                let until = t + ms * 1_000_000;
                while t < until {
                    match drive.background_step(t) {
                        Some(done) => t = done.max(t + 1),
                        None => break,
                    }
                }
                t = t.max(until);
            }
        }
    }
    for lpn in 0..n {
        prop_assert_eq!(drive.ftl().read_version(lpn), expected(&writes, &live, lpn), "final check of lpn {}", lpn);
    }
    drive.ftl().check_consistency().map_err(TestCaseError::fail)?;
    let c = drive.ftl().counters();
    if drive.ftl().hybrid().is_some() {
        prop_assert!(
            c.switch_merges > 0 && c.partial_merges > 0 && c.full_merges > 0,
            "the test must exercise every kind of merge: {:?}",
            c
        );
        return Ok(());
    }
    prop_assert!(c.gc_blocks + c.fold_blocks > 0, "the test must exercise GC or folding");
    if let Some(cache) = &drive.model().spec.slc_cache {
        prop_assert!(c.fold_blocks > 0 && c.host_slots_to_slc > 0, "the test must exercise folding");
        if cache.write_policy == ssdtwin::spec::SlcWritePolicy::NativeWhenFull {
            prop_assert!(
                c.host_slots_written > c.host_slots_to_slc,
                "the test must write natively once the cache is full"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn greedy_gc_keeps_every_last_write(ops in prop::collection::vec(op(76_800, 8_000), 3000..6000)) {
        check_policy("greedy", &ops, true)?;
    }

    #[test]
    fn cost_benefit_gc_keeps_every_last_write(ops in prop::collection::vec(op(76_800, 8_000), 3000..6000)) {
        check_policy("cost-benefit", &ops, true)?;
    }

    #[test]
    fn fifo_gc_keeps_every_last_write(ops in prop::collection::vec(op(76_800, 8_000), 3000..6000)) {
        check_policy("fifo", &ops, true)?;
    }

    #[test]
    fn slc_cache_always_slc_keeps_every_last_write(ops in prop::collection::vec(op(781_249, 300_000), 2000..4000)) {
        check_slc("always-slc", &ops)?;
    }

    #[test]
    fn slc_cache_native_when_full_keeps_every_last_write(ops in prop::collection::vec(op(781_249, 300_000), 2000..4000)) {
        check_slc("native-when-full", &ops)?;
    }

    #[test]
    fn hybrid_block_associative_keeps_every_last_write(ops in prop::collection::vec(op(7_168, 1_000), 2000..4000)) {
        check_hybrid("block", "striped", &ops)?;
    }

    #[test]
    fn hybrid_contiguous_logical_blocks_keep_every_last_write(ops in prop::collection::vec(op(7_168, 1_000), 2000..4000)) {
        check_hybrid("full", "contiguous", &ops)?;
    }

    #[test]
    fn hybrid_wide_stripes_keep_every_last_write(ops in prop::collection::vec(op(7_168, 1_000), 2000..4000)) {
        // Stripes of 2 program units (16 KiB) over the 4 dies.
        check_hybrid_with("block", &["ftl.hybrid.layout=striped", "ftl.hybrid.stripe_bytes=16384"], &ops)?;
    }

    #[test]
    fn hybrid_fully_associative_keeps_every_last_write(ops in prop::collection::vec(op(7_168, 1_000), 2000..4000)) {
        check_hybrid("full", "striped", &ops)?;
    }
}
