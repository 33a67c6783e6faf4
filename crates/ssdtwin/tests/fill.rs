//! The whole-drive fill (client-2018's `whole-drive-fill`): its scores
//! from a hand-made series, and on drives whose SLC cache size is known
//! from their parameters.

use ssdtwin::run::stats::Second;
use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::study::suite::score::fill_scores;
use ssdtwin::study::suite::{self, DriveUnderTest, SuiteOptions};
use ssdtwin::{DriveSpec, PhaseResult};

/// A write phase of `rates` MB/s, one second each.
fn series_of(rates: &[f64]) -> PhaseResult {
    let mut r = PhaseResult::untimed(
        Phase::Io(IoSpec::new("fill", RwPattern::Write)),
        0,
        rates.len() as u64 * 1_000_000_000,
        Default::default(),
        false,
    );
    for (i, &mbps) in rates.iter().enumerate() {
        let mut second = Second::default();
        second.t_s = i as u64;
        second.span_s = 1;
        second.write_ios = 1;
        second.write_bytes = (mbps * 1e6) as u64;
        r.series.seconds.push(second);
    }
    r
}

#[test]
fn fill_scores_match_a_hand_computation() {
    // 10 s at 1000 MB/s (10 GB), then 20 s at 100 MB/s (2 GB): 12 GB in
    // 30 s is 400 MB/s on average; the cache held 10 GB; 100 MB/s after.
    let mut rates = vec![1000.0; 10];
    rates.extend([100.0; 20]);
    let (average, cache, post) = fill_scores(&series_of(&rates));
    assert!((average - 400.0).abs() < 1e-9, "{average}");
    assert!((cache.unwrap() - 10.0).abs() < 1e-9, "{cache:?}");
    assert!((post.unwrap() - 100.0).abs() < 1e-9, "{post:?}");

    // A dip shorter than five seconds is not the end of the cache.
    let mut rates = vec![1000.0; 10];
    rates.extend([300.0; 3]);
    rates.extend([1000.0; 10]);
    rates.extend([200.0; 10]);
    let (_, cache, post) = fill_scores(&series_of(&rates));
    assert!((cache.unwrap() - 20.9).abs() < 1e-9, "{cache:?}");
    assert!((post.unwrap() - 200.0).abs() < 1e-9, "{post:?}");

    // A drive that never slows has no cache size and no post-cache rate.
    let (average, cache, post) = fill_scores(&series_of(&[500.0; 30]));
    assert!((average - 500.0).abs() < 1e-9);
    assert_eq!((cache, post), (None, None));
}

/// The 660p's NAND, controller and cache rules on a 32 GB drive (8 dies
/// × 4 planes × 400 blocks of 256 pages, 54 GB raw) whose cache holds
/// 12 GB while the drive is under half full.
fn small_660p() -> DriveUnderTest {
    drive(
        "intel-660p-1tb",
        &[
            "geometry.blocks_per_plane=400",
            "geometry.pages_per_block=256",
            "ftl.user_capacity_bytes=32000000000",
            "slc_cache.static_bytes=2000000000",
            "slc_cache.capacity_curve=[[0.0, 12e9], [0.5, 12e9], [0.78, 2e9], [1.0, 2e9]]",
            "ftl.map_cache=",
        ],
    )
}

fn drive(preset: &str, set: &[&str]) -> DriveUnderTest {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let model = DriveSpec::load(preset, &set).unwrap().build("test drive").unwrap();
    DriveUnderTest { name: preset.into(), overrides: set, model }
}

/// The fill's scores (average, cache size, post-cache rate).
fn fill_of(d: DriveUnderTest) -> Vec<Option<f64>> {
    let capacity = d.model.user_lpns as u64 * 4096;
    let s = suite::load("client-2018").unwrap();
    let o = SuiteOptions { only: vec!["whole-drive-fill".into()], threads: 1, ..SuiteOptions::default() };
    let r = suite::run_suite(&s, &[d], &o, None).unwrap();
    assert_eq!(r.runs[0].tests.len(), 1);
    assert!(r.runs[1..].iter().all(|run| run.tests.is_empty()), "the fill runs in the standard pass only");
    let t = &r.runs[0].tests[0];
    // The whole drive, once, in 128 KiB writes.
    let written = t.steps[0].io.dirs[1].bytes;
    assert_eq!(written, capacity / 131_072 * 131_072);
    t.scores.iter().map(|s| s.value).collect()
}

#[test]
fn the_fill_finds_the_slc_cache_the_drive_was_given() {
    let scores = fill_of(small_660p());
    let (average, cache, post) = (scores[0].unwrap(), scores[1].unwrap(), scores[2].unwrap());
    // The cache runs out after about its 12 GB (the fold threshold and
    // the one-second points blur it by a little).
    assert!((cache - 12.0).abs() < 12.0 * 0.1, "cache {cache} GB");
    // After it, QLC written directly (and folding) is slower than the
    // fill's average, which the cache's SLC rate raised.
    assert!(post < 0.8 * average && post > 20.0, "post {post} MB/s, average {average} MB/s");

    // A TLC drive without an SLC cache writes at one rate to the end
    // (16 dies × 2 planes × 100 blocks of 12 MiB, 40 GB raw, 32 GB user).
    let scores =
        fill_of(drive("generic-tlc-nvme", &["geometry.blocks_per_plane=100", "ftl.user_capacity_bytes=32000000000"]));
    assert!(scores[0].unwrap() > 0.0);
    assert_eq!((scores[1], scores[2]), (None, None), "no cache, no fall");
}
