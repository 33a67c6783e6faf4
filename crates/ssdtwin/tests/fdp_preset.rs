//! The Samsung PM9D3a preset's flexible data placement: its reclaim units
//! are the 16 GiB LMCache reports, and on its geometry (scaled down in
//! blocks, the same dies, planes, program unit, handles and spare) hot
//! and cold data through separate handles amplify writes as a hand
//! computation says, and less than the same writes without placement.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ssdtwin::study::analytic::waf_fifo_uniform;
use ssdtwin::{Drive, DriveSpec};

const PRESET: &str = "samsung-pm9d3a-3.84tb";

#[test]
fn the_pm9d3a_has_lmcaches_16_gib_initially_isolated_reclaim_units() {
    let model = DriveSpec::load(PRESET, &[]).unwrap().build(PRESET).unwrap();
    let f = model.fdp.as_ref().expect("the preset has [fdp]");
    // LMCache PR #4016: "Initially Isolated", "16 GiB reclaim units": one
    // group, a unit one block on each of the 32 dies, within 0.01% of 16 GiB
    // (a whole number of TLC wordlines).
    assert_eq!((f.groups, f.dies_per_group, f.persistent), (1, 32, false));
    let gib16 = 16.0 * (1u64 << 30) as f64;
    assert!((f.ru_bytes as f64 / gib16 - 1.0).abs() < 1e-4, "reclaim unit {} bytes", f.ru_bytes);
    assert!(f.handles >= 6, "LMCache's five classes and its metadata each need a placement identifier");
    assert_eq!(model.user_lpns as u64 * 4096, 3_840_755_982_336);
}

/// The preset with `pages_per_block` pages per block and its user space
/// scaled with the flash, so that the spare stays the preset's.
fn scaled(pages_per_block: u32) -> Drive {
    let full = DriveSpec::load(PRESET, &[]).unwrap();
    let g = &full.geometry;
    let raw = |pages: u32| {
        (g.channels * g.dies_per_channel * g.planes_per_die * g.blocks_per_plane) as u64
            * pages as u64
            * g.page_bytes as u64
    };
    let user = full.ftl.user_capacity_bytes as f64 / raw(g.pages_per_block) as f64 * raw(pages_per_block) as f64;
    let user = (user / 4096.0).floor() as u64 * 4096;
    let set = [format!("geometry.pages_per_block={pages_per_block}"), format!("ftl.user_capacity_bytes={user}")];
    Drive::new(DriveSpec::load(PRESET, &set).unwrap().build("scaled pm9d3a").unwrap())
}

/// Cold data (the first `cold` pages, through placement 2) written once
/// in LBA order, interleaved page for page with the first pass of a hot
/// region (the rest, through placement 1), then `passes` times the hot
/// region in uniformly random overwrites; with `placed` false every write
/// goes through the default handle. Returns the drive and the WAF of the
/// last two passes (steady state).
fn hot_and_cold(placed: bool, cold: u32, passes: u32) -> (Drive, f64) {
    let mut drive = scaled(48);
    let n = drive.user_lpns();
    let hot = n - cold;
    let (hot_pid, cold_pid) = if placed { (1, 2) } else { (0, 0) };
    let mut rng = Pcg64Mcg::seed_from_u64(7);
    let mut w = drive.untimed();
    for i in 0..hot.max(cold) {
        if i < cold {
            w.set_placement(cold_pid, 1);
            w.write(i);
        }
        if i < hot {
            w.set_placement(hot_pid, 1);
            w.write(cold + i);
        }
    }
    let mut steady = None;
    for pass in 0..passes {
        if pass + 2 == passes {
            steady = Some(w.drive().ftl().counters());
        }
        for _ in 0..hot {
            w.set_placement(hot_pid, 1);
            w.write(cold + rng.random_range(0..hot));
        }
    }
    let (a, b) = (steady.unwrap(), w.drive().ftl().counters());
    let host = (b.host_slots_written - a.host_slots_written) as f64;
    let moved = (b.gc_slots_moved - a.gc_slots_moved) as f64;
    drop(w);
    (drive, (host + moved) / host)
}

#[test]
fn separated_hot_and_cold_on_the_pm9d3a_match_a_hand_computation() {
    // Half the user space cold, in whole reclaim units (48-page blocks:
    // 32 dies × 2 planes × 48 pages × 16 KiB = 48 MiB units).
    let probe = scaled(48);
    let g = probe.model().geometry;
    let unit = g.dies as u64 * g.slots_per_block as u64;
    let cold = (probe.user_lpns() as u64 / 2 / unit * unit) as u32;
    let (sep, sep_steady) = hot_and_cold(true, cold, 6);
    let hot = sep.user_lpns() as u64 - cold as u64;

    // Hand computation. The cold handle's units stay whole and valid, so
    // greedy GC never picks them: the hot data has the rest of the flash
    // to itself, less the blocks that never hold data in steady state —
    // per die the free-block reserve (gc_low_free_blocks) and the open
    // blocks of the hot, GC and cold streams. Uniform random overwrites
    // then amplify as the closed form for FIFO victims at that α says,
    // greedy doing no worse (tests/waf.rs) and, with this many blocks per
    // die, not much better (2.63 against 2.82 when written).
    let f = sep.ftl().fdp().unwrap();
    assert_eq!(f.counters(2).moved_slots, 0, "no cold data moved");
    assert_eq!(f.counters(2).host_slots, cold as u64);
    let spare_blocks = probe.model().spec.ftl.gc_low_free_blocks as u64 + 3;
    let physical = g.dies as u64 * (g.blocks_per_die as u64 - spare_blocks) * g.slots_per_block as u64;
    let alpha = (physical - cold as u64) as f64 / hot as f64;
    let fifo = waf_fifo_uniform(alpha);
    assert!(
        sep_steady <= fifo * 1.02 && sep_steady >= 1.0 + (fifo - 1.0) * 0.8,
        "separated steady WAF {sep_steady:.3}; FIFO closed form at α = {alpha:.3}: {fifo:.3}"
    );

    // The same writes without placement identifiers: every block holds
    // cold pages beside hot ones, which GC must move before it can erase
    // them (each cold page at least once), so the drive moves more and
    // amplifies more (3.68 against 2.19 over the whole run when written).
    let (mixed, _) = hot_and_cold(false, cold, 6);
    let (s, m) = (sep.ftl().counters(), mixed.ftl().counters());
    assert_eq!(s.host_slots_written, m.host_slots_written);
    assert!(
        m.gc_slots_moved >= s.gc_slots_moved + cold as u64,
        "mixed moved {} slots, separated {} (cold data {cold} slots)",
        m.gc_slots_moved,
        s.gc_slots_moved
    );
    assert!(mixed.waf() > sep.waf() * 1.3, "WAF mixed {:.3}, separated {:.3}", mixed.waf(), sep.waf());
}

/// LMCache's nine workers as docs/fdp-study.md models them — rings of
/// different periods over 89% of the drive, equal bytes each, objects of
/// 4 to 128 pages — without placement identifiers, on the preset with
/// 48-page blocks (256 per die): four drive writes after a full
/// sequential fill. Live data drifts between the dies until one holds
/// nothing GC can free; the host must then write elsewhere (before, the
/// drive ran out of blocks for GC and panicked).
#[test]
fn rings_of_different_periods_never_leave_gc_without_a_block() {
    let mut drive = scaled(48);
    let n = drive.user_lpns() as u64;
    // (object pages, footprint in 1/64 of the drive), as the example job file.
    let workers = [(16, 6), (16, 6), (128, 12), (64, 6), (64, 6), (8, 6), (8, 6), (8, 6), (4, 3)];
    let mut start = 0;
    let mut rings: Vec<(u64, u64, u64, u64)> = Vec::new(); // (first, pages, object, position)
    for (object, share) in workers {
        let pages = n * share / 64 / object * object;
        rings.push((start, pages, object, 0));
        start += n * share / 64;
    }
    let mut written = [0u64; 9];
    let mut w = drive.untimed();
    for lpn in 0..n as u32 {
        w.write(lpn);
    }
    while written.iter().sum::<u64>() < 4 * n {
        let i = (0..9).min_by_key(|&i| written[i]).unwrap();
        let (first, pages, object, pos) = &mut rings[i];
        for k in 0..*object {
            w.write((*first + *pos + k) as u32);
        }
        *pos = (*pos + *object) % *pages;
        written[i] += *object;
    }
    drop(w);
    drive.ftl().check_consistency().unwrap();
    assert!(drive.waf() > 1.2, "the rings mix in every block: WAF {}", drive.waf());
}
