//! The map cached in limited memory (`[ftl.map_cache]`, `ftl::mapcache`):
//! what a miss costs, what sequential access gains, what write-backs add
//! to write amplification, and that data stays intact through a cache far
//! smaller than the map.

use proptest::prelude::*;
use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
use ssdtwin::{Drive, DriveState, IoKind, PhaseResult, Simulator};

use crate::common::small_model;

/// Every page type reads in the same time, so that a read's cost does not
/// depend on where its data or its translation page lies.
const FLAT_TR: &str = "nand.native.tr_ns=[60000, 60000, 60000]";

/// A cache of `pages` translation pages of 512 bytes (128 entries, 512 KiB
/// of user data each: 600 pages map the 300 MiB drive, so that its
/// translation log programs whole units as a large drive's does).
fn cached(pages: u64) -> [String; 3] {
    [
        format!("controller.dram_bytes={}", pages * 512),
        "ftl.map_cache.dram_share=1.0".to_string(),
        "ftl.map_cache.page_bytes=512".to_string(),
    ]
}

fn drive(extra: &[String]) -> Drive {
    let mut set: Vec<&str> = vec![FLAT_TR];
    set.extend(extra.iter().map(String::as_str));
    Drive::new(small_model(300, &set))
}

fn reads(pattern: RwPattern, bs: u32, span: u64, io_size: u64, seed: u64) -> Phase {
    let mut s = IoSpec::new("reads", pattern);
    s.bs = bs;
    s.iodepth = 1;
    s.size = Some(span);
    s.io_size = Some(io_size);
    s.randseed = seed;
    Phase::Io(s)
}

fn run(d: Drive, phases: &[Phase]) -> (Vec<PhaseResult>, Drive) {
    let mut sim = Simulator::new(d);
    let n = phases.len();
    let r = phases.iter().enumerate().map(|(i, p)| sim.run_phase(p, i, n)).collect();
    (r, sim.into_drive())
}

/// QD1 random reads over the whole drive with a cache of 8 translation
/// pages (of the map's 600): the reads are those of the drive without a
/// cache, each miss adding one translation-page read — the array read, its
/// transfer over the channel and its decode — and nothing else (a miss on
/// a page whose write-back still waits for its program unit is served by
/// the controller).
#[test]
fn a_map_miss_costs_one_translation_page_read() {
    let plain = drive(&[]);
    let small = drive(&cached(8));
    let cap = plain.user_bytes();
    let m = small.model().clone();
    let per_miss =
        60_000 + m.channel_fs_per_byte * m.channel_bytes_per_slot / 1_000_000 + m.spec.controller.ecc_decode_ns;
    let phases = [
        // Warm-up: evicts (and writes back) the pages the fill left dirty.
        reads(RwPattern::RandRead, 4096, cap, 2 << 20, 7),
        reads(RwPattern::RandRead, 4096, cap, 8 << 20, 8),
    ];
    let mut results = Vec::new();
    for d in [plain, small] {
        let mut d = d;
        DriveState::Filled(100.0).apply_fast(&mut d, 1);
        results.push(run(d, &phases).0);
    }
    let (a, b) = (&results[0][1], &results[1][1]);
    let ios = b.dirs[IoKind::Read as usize].ios as f64;
    assert_eq!(a.dirs[IoKind::Read as usize].ios as f64, ios);
    let c = &b.counters;
    assert_eq!(c.map_pages_programmed, 0, "the measured phase wrote translation pages back");
    let miss_rate = c.map_misses as f64 / ios;
    assert!(miss_rate > 0.9, "miss rate {miss_rate}");
    assert!(c.map_pages_read <= c.map_misses && c.map_pages_read as f64 > 0.9 * c.map_misses as f64);
    let extra = b.dirs[0].mean_ns() - a.dirs[0].mean_ns();
    let expected = c.map_pages_read as f64 / ios * per_miss as f64;
    assert!((extra / expected - 1.0).abs() < 0.01, "{extra:.0} ns extra per read, expected {expected:.0}");
    assert_eq!(a.counters.map_hits + a.counters.map_misses, 0, "no cache, no lookups counted");
}

/// A span whose map fits in the cache reads as fast as the drive without
/// a cache once the cache is warm; a span far larger does not.
#[test]
fn a_span_that_fits_the_cache_reads_at_full_speed() {
    let span_fits = 2u64 << 20; // 4 translation pages
    let phases = |span: u64| {
        [reads(RwPattern::RandRead, 4096, span, 1 << 20, 3), reads(RwPattern::RandRead, 4096, span, 4 << 20, 4)]
    };
    let measure = |extra: &[String], span: u64| {
        let mut d = drive(extra);
        DriveState::Filled(100.0).apply_fast(&mut d, 1);
        let (r, _) = run(d, &phases(span));
        (r[1].iops(IoKind::Read), r[1].counters.map_hit_rate())
    };
    let (plain, none) = measure(&[], span_fits);
    assert_eq!(none, None);
    let (fits, rate) = measure(&cached(8), span_fits);
    assert_eq!(rate, Some(1.0), "the small span's map stays cached");
    assert!((fits / plain - 1.0).abs() < 0.01, "{fits:.0} vs {plain:.0} IOPS");
    let (beyond, rate) = measure(&cached(8), 300 << 20);
    assert!(rate.unwrap() < 0.2 && beyond < 0.8 * plain, "{beyond:.0} IOPS, hit rate {rate:?}");
}

/// Sequential 128 KiB reads (QD1) with 4 KiB translation pages touch a
/// new page once per 4 MiB: the cache costs them almost nothing (within
/// 2%), though it holds 8 of the map's 75 pages.
#[test]
fn sequential_reads_are_unaffected() {
    let mut rates = Vec::new();
    let four_kib_pages = ["controller.dram_bytes=32768".to_string(), "ftl.map_cache.dram_share=1.0".to_string()];
    for extra in [vec![], four_kib_pages.to_vec()] {
        let mut d = drive(&extra);
        DriveState::Filled(100.0).apply_fast(&mut d, 1);
        let cap = d.user_bytes();
        let (r, _) = run(
            d,
            &[reads(RwPattern::Read, 128 << 10, cap, cap / 2, 1), reads(RwPattern::Read, 128 << 10, cap, cap, 2)],
        );
        rates.push(r[1].bw_bytes(IoKind::Read));
    }
    assert!((rates[1] / rates[0] - 1.0).abs() < 0.02, "sequential read {:.0} vs {:.0} B/s", rates[1], rates[0]);
}

/// Random writes over the whole drive through a small cache dirty a
/// translation page per write; its write-back shows in the write
/// amplification, page for page.
#[test]
fn map_write_backs_show_in_write_amplification() {
    let mut wafs = Vec::new();
    for extra in [vec![], cached(8).to_vec()] {
        let mut d = drive(&extra);
        DriveState::Filled(100.0).apply_fast(&mut d, 1);
        let cap = d.user_bytes();
        let mut w = IoSpec::new("randwrite", RwPattern::RandWrite);
        w.iodepth = 8;
        w.io_size = Some(cap / 4 / 4096 * 4096);
        let (r, _) = run(d, &[Phase::Io(w)]);
        wafs.push((r[0].counters.waf(), r[0].counters));
    }
    let ((plain, _), (cached_waf, c)) = (wafs[0], wafs[1]);
    let map_share = c.map_pages_programmed as f64 / c.host_slots_written as f64;
    assert!(map_share > 0.5, "translation pages programmed per host write: {map_share}");
    assert!(cached_waf > plain + 0.5 * map_share, "WAF {cached_waf:.2} with the cache vs {plain:.2}");
}

fn check_integrity(ops: &[(u32, u32)]) -> Result<(), TestCaseError> {
    // 600 translation pages, 4 cached: almost every map access misses.
    let mut set = vec!["ftl.version_stamps=true".to_string()];
    set.extend(cached(4));
    let mut d = drive(&set);
    let n = d.user_lpns();
    let mut last = vec![0u32; n as usize];
    let mut t = 0;
    for &(lpn, pages) in ops {
        let lpn = lpn % n;
        let pages = pages.min(n - lpn);
        t = d.submit(ssdtwin::Command { kind: IoKind::Write, offset: lpn as u64 * 4096, len: pages * 4096 }, t);
        // Each write of a page makes its next version.
        for l in lpn..lpn + pages {
            last[l as usize] += 1;
            prop_assert_eq!(d.ftl().read_version(l), last[l as usize], "lpn {} right after its write", l);
        }
    }
    d.ftl().check_consistency().map_err(TestCaseError::fail)?;
    for l in 0..n {
        if last[l as usize] != 0 {
            prop_assert_eq!(d.ftl().read_version(l), last[l as usize], "lpn {}", l);
        }
    }
    prop_assert!(d.ftl().map_counters().unwrap().pages_programmed > 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    /// Every read returns the last write through GC, with a cache far
    /// smaller than the map.
    #[test]
    fn a_small_map_cache_keeps_every_last_write(ops in prop::collection::vec((0u32..76_800, 1u32..33), 4000..8000)) {
        check_integrity(&ops)?;
    }
}

/// A DRAM-less drive caches its map in the host memory buffer: every read
/// pays one PCIe round trip for its lookup, and reads beyond the buffer's
/// reach also pay a translation-page read; without a buffer the map is
/// cached in the controller's SRAM.
#[test]
fn dram_less_drives_cache_the_map_in_hmb_or_sram() {
    let hmb = [
        "controller.dram_bytes=0".to_string(),
        "host.hmb_bytes=4096".to_string(), // 8 pages of 512 bytes
        "host.hmb_access_ns=2000".to_string(),
        "ftl.map_cache.dram_share=1.0".to_string(),
        "ftl.map_cache.page_bytes=512".to_string(),
    ];
    let measure = |extra: &[String], span: u64| {
        let mut d = drive(extra);
        DriveState::Filled(100.0).apply_fast(&mut d, 1);
        let (r, _) = run(
            d,
            &[reads(RwPattern::RandRead, 4096, span, 1 << 20, 3), reads(RwPattern::RandRead, 4096, span, 4 << 20, 4)],
        );
        (r[1].dirs[0].mean_ns(), r[1].counters.map_hit_rate())
    };
    let (plain, _) = measure(&[], 2 << 20);
    let (within, rate) = measure(&hmb, 2 << 20);
    assert_eq!(rate, Some(1.0));
    assert!((within - plain - 2000.0).abs() < 1.0, "{within:.0} ns in reach of the HMB vs {plain:.0} without a cache");
    let (beyond, rate) = measure(&hmb, 300 << 20);
    assert!(rate.unwrap() < 0.1 && beyond > within + 50_000.0, "{beyond:.0} ns beyond the HMB's reach");
    // Without a host memory buffer: the controller's SRAM, no round trip.
    let mut sram = hmb.to_vec();
    sram[1] = "host.hmb_bytes=0".into();
    sram.push("controller.sram_bytes=4096".into());
    let (in_sram, rate) = measure(&sram, 2 << 20);
    assert_eq!(rate, Some(1.0));
    assert!((in_sram - plain).abs() < 1.0, "{in_sram:.0} vs {plain:.0} ns");
    // DRAM-less with neither: a clear error naming the field.
    let mut neither = hmb.to_vec();
    neither[1] = "host.hmb_bytes=0".into();
    let set: Vec<&str> = neither.iter().map(String::as_str).collect();
    let err = ssdtwin::DriveSpec::load("generic-tlc-nvme", &set.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .unwrap()
        .build("t")
        .unwrap_err()
        .to_string();
    assert!(err.contains("controller.sram_bytes"), "{err}");
}

/// The Toshiba RC100 (DRAM-less, map cached in a 38 MB host memory buffer)
/// scaled down: 2 dies of 256 blocks, 1.5 GB user capacity, an HMB of 16
/// translation pages (64 MiB of reach, as the real one's 24 GB). Two dies,
/// not sixteen: write-backs wait per die for a whole program unit (8
/// translation pages) and are served from the controller meanwhile, which
/// on 16 dies would hold a third of this small map (of a real drive's map,
/// 0.1%). QD1
/// random reads on the full drive within the buffer's reach cost the
/// drive's plain read plus one HMB round trip; far beyond it almost every
/// read first reads its translation page (pSLC) on flash — the collapse
/// AnandTech's RC100 review describes between its 16 GB burst and 64 GB
/// sustained random reads.
#[test]
fn a_dram_less_hmb_drive_collapses_beyond_the_buffers_reach() {
    let scaled = [
        "geometry.channels=1",
        "geometry.dies_per_channel=2",
        "geometry.blocks_per_plane=256",
        "geometry.pages_per_block=192",
        "ftl.user_capacity_bytes=1500000256",
        "slc_cache.static_bytes=64000000",
        "slc_cache.capacity_curve=[[0.0, 64e6]]",
        "nand.native.tr_ns=[60000, 60000, 60000]",
    ];
    let load = |extra: &[&str]| {
        let mut set: Vec<String> = scaled.iter().map(|s| s.to_string()).collect();
        set.extend(extra.iter().map(|s| s.to_string()));
        let model = ssdtwin::DriveSpec::load("toshiba-rc100-480gb", &set).unwrap().build("rc100 scaled").unwrap();
        let mut d = Drive::new(model);
        DriveState::Filled(100.0).apply_fast(&mut d, 1);
        d
    };
    // 16 pages of 4 KiB at the preset's 0.63 share of the buffer.
    let hmb = ["host.hmb_bytes=106000"];
    let within = 32u64 << 20;
    let measure = |d: Drive, span: u64| {
        let phases = [
            // Warm-up: loads the span's pages, evicts (and writes back)
            // those the fill left dirty.
            reads(RwPattern::RandRead, 4096, span, 64 << 20, 7),
            reads(RwPattern::RandRead, 4096, span, 8 << 20, 8),
        ];
        run(d, &phases).0.pop().unwrap()
    };
    let loaded = load(&hmb);
    let m = loaded.model();
    let mc = m.map_cache.clone().expect("the RC100 caches its map");
    assert_eq!(mc.capacity_pages, 16);
    let hmb_ns = m.spec.host.hmb_access_ns.unwrap() as f64;
    let per_miss = m.spec.nand.slc.as_ref().unwrap().tr_ns[0]
        + m.channel_fs_per_byte * m.channel_bytes_per_slot / 1_000_000
        + m.spec.controller.ecc_decode_ns;
    let cap = load(&hmb).user_bytes();
    for (span, label) in [(within, "within"), (cap, "beyond")] {
        let plain = measure(load(&["ftl.map_cache="]), span);
        let cached = measure(load(&hmb), span);
        let ios = cached.dirs[IoKind::Read as usize].ios as f64;
        let c = &cached.counters;
        assert_eq!(c.map_pages_programmed, 0, "{label}: the measured phase wrote translation pages back");
        let expected = plain.dirs[0].mean_ns() + hmb_ns + c.map_pages_read as f64 / ios * per_miss as f64;
        let got = cached.dirs[0].mean_ns();
        assert!((got / expected - 1.0).abs() < 0.01, "{label}: {got:.0} ns per read, expected {expected:.0}");
        let rate = c.map_hit_rate().unwrap();
        if span == within {
            assert_eq!(rate, 1.0, "the span's 8 pages fit the buffer's 16");
        } else {
            // Uniform reads over 358 pages with 16 cached: ≈4.5% hits.
            assert!(rate < 0.08, "hit rate {rate} beyond the buffer's reach");
            // The collapse: at least 85% of the reads pay a flash read of
            // their translation page (≈+60% on this drive's 80 µs).
            let base = plain.dirs[0].mean_ns();
            assert!(
                got > base + hmb_ns + 0.85 * per_miss as f64,
                "no collapse: {got:.0} ns vs {base:.0}; {} misses, {} pages read, {ios} reads, {per_miss} ns",
                c.map_misses,
                c.map_pages_read
            );
        }
    }
}

/// Random writes (with replacement, QD1) over a fresh drive with a map
/// journal of `j` entries flushed by `policy`: the journal's counters
/// after `writes` writes, and the drive's counters.
fn journalled_writes(j: u32, policy: &str, writes: u64) -> (ssdtwin::model::ftl::mapjournal::JournalCounters, Drive) {
    let mut extra = cached(8).to_vec();
    // The journal's 8 bytes per entry come on top of the 8 cached pages.
    extra.push(format!("controller.dram_bytes={}", 8 * 512 + j as u64 * 8));
    extra.push(format!("ftl.map_cache.journal_entries={j}"));
    extra.push(format!("ftl.map_cache.journal_flush=\"{policy}\""));
    let d = drive(&extra);
    let mut w = IoSpec::new("randwrite", RwPattern::RandWrite);
    w.norandommap = true;
    w.io_size = Some(writes * 4096);
    w.randseed = 11;
    let (r, d) = run(d, &[Phase::Io(w)]);
    assert_eq!(r[0].counters.gc_slots_moved, 0, "no GC: every map update is a host write's");
    let c = d.ftl().map_counters().unwrap();
    assert_eq!(c.journal.updates, writes, "one journal entry per host write");
    (c.journal, d)
}

/// The map journal flushing everything when full (Silicon Motion's
/// scheme), against the hand computation for uniform random writes over
/// N translation pages: J updates touch N·(1 − (1 − 1/N)^J) distinct pages
/// on average, each written back once, so map write-backs per host write
/// are that over J (here N = 600, J = 600: 379.6 pages per flush, 0.633
/// write-backs per write, where the cache alone writes back almost one
/// page per write). Each write-back reads its page first unless cached.
#[test]
fn a_journal_flushed_whole_writes_each_touched_page_once() {
    let (n, j) = (600.0f64, 600u32);
    let (c, d) = journalled_writes(j, "all", 60_000);
    assert_eq!(c.flushes, 100);
    let per_flush = c.pages_flushed as f64 / c.flushes as f64;
    let expected = n * (1.0 - (1.0 - 1.0 / n).powi(j as i32));
    assert!((per_flush / expected - 1.0).abs() < 0.005, "{per_flush:.1} pages per flush, expected {expected:.1}");
    let m = d.ftl().map_counters().unwrap();
    // A page's first write-back on the fresh drive needs no read; every
    // later one reads it (writes load nothing into the cache).
    assert!(m.pages_read <= c.pages_flushed && m.pages_read as f64 > 0.95 * (c.pages_flushed - 600) as f64);
    // The flash traffic: the write-backs, plus the translation log's own
    // cleaning, whole units at a time.
    assert!(
        m.pages_programmed >= c.pages_flushed - 64,
        "{} programmed, {} flushed",
        m.pages_programmed,
        c.pages_flushed
    );
    assert_eq!(m.misses, 0, "writes look nothing up");
}

/// The journal writing back the page with the most pending updates, one
/// page each time it is full: in steady state under uniform random writes
/// a page's count grows by one per N updates from 0 until it is the
/// largest, m; the counts are spread evenly over 0..m−1, so the journal
/// holds J = N·(m − 1)/2 and each write-back carries m = 2J/N + 1 updates
/// (here N = 600, J = 2400: 9; a simulation of the process alone gives
/// 8.97). That is twice the batch of flushing everything at this size
/// (2400 / 589 = 4.07).
#[test]
fn a_journal_writes_back_the_busiest_page_first() {
    let (n, j) = (600.0f64, 2400u32);
    let (warm, _) = journalled_writes(j, "most-pending", 10_000);
    let (c, _) = journalled_writes(j, "most-pending", 60_000);
    let batch = (c.updates - warm.updates) as f64 / (c.pages_flushed - warm.pages_flushed) as f64;
    let expected = 2.0 * j as f64 / n + 1.0;
    assert!((batch / expected - 1.0).abs() < 0.03, "{batch:.2} updates per write-back, expected {expected:.2}");
    let (all, _) = journalled_writes(j, "all", 60_000);
    let all_batch = all.updates as f64 / all.pages_flushed as f64;
    assert!(batch > 1.9 * all_batch, "{batch:.2} vs {all_batch:.2} updates per write-back when flushing all");
}

/// Reads of data still in the journal need no translation page; its
/// memory comes out of the cache's; and data stays intact.
#[test]
fn a_journal_serves_reads_and_keeps_every_last_write() {
    let mut set = vec!["ftl.version_stamps=true".to_string()];
    set.extend(cached(8));
    set.push("ftl.map_cache.journal_entries=128".into()); // 1 KiB of the 4 KiB: 6 pages left
    set.push("ftl.map_cache.journal_flush=\"all\"".into());
    let mut d = drive(&set);
    assert_eq!(d.model().map_cache.as_ref().unwrap().capacity_pages, 6);
    let n = d.user_lpns();
    let mut t = 0;
    let mut last = vec![0u32; n as usize];
    let mut x = 12345u64;
    let (mut read_backs, start) = (0u64, d.ftl().map_counters().unwrap());
    for i in 0..20_000u32 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let lpn = (x >> 33) as u32 % n;
        t = d.submit(ssdtwin::Command { kind: IoKind::Write, offset: lpn as u64 * 4096, len: 4096 }, t);
        last[lpn as usize] += 1;
        if i % 7 == 0 {
            // Read back the page just written: it is in the journal,
            // unless its write filled the journal (1 write in 128).
            t = d.submit(ssdtwin::Command { kind: IoKind::Read, offset: lpn as u64 * 4096, len: 4096 }, t);
            read_backs += 1;
        }
    }
    let end = d.ftl().map_counters().unwrap();
    let (hits, lookups) = (end.journal.hits - start.journal.hits, end.hits + end.misses - start.hits - start.misses);
    assert!(hits as f64 > 0.97 * read_backs as f64, "{hits} of {read_backs} read-backs found in the journal");
    assert_eq!(hits + lookups, read_backs, "every other read looks its page up");
    d.ftl().check_consistency().unwrap();
    for l in 0..n {
        if last[l as usize] != 0 {
            assert_eq!(d.ftl().read_version(l), last[l as usize], "lpn {l}");
        }
    }
    // Too large a journal for the memory is an error naming the field.
    let mut big = cached(8).to_vec();
    big.push("ftl.map_cache.journal_entries=512".into());
    let set: Vec<String> = [FLAT_TR.to_string()].into_iter().chain(big).collect();
    let err = ssdtwin::DriveSpec::load("generic-tlc-nvme", &set).unwrap().build("t").unwrap_err().to_string();
    assert!(err.contains("ftl.map_cache.journal_entries"), "{err}");
}

/// QD1 random 4 KiB writes (`writes` of them) on a fresh drive with a
/// journal of `j` entries flushed whole (`"all"`) at `pace`: each write's
/// completion time and the journal's write-backs so far.
fn paced_writes(j: u32, pace: &str, writes: usize) -> (Vec<u64>, Vec<u64>) {
    let mut extra = cached(8).to_vec();
    extra.push(format!("controller.dram_bytes={}", 8 * 512 + j as u64 * 8));
    extra.push(format!("ftl.map_cache.journal_entries={j}"));
    extra.push("ftl.map_cache.journal_flush=\"all\"".into());
    extra.push(format!("ftl.map_cache.journal_pace=\"{pace}\""));
    let mut d = drive(&extra);
    let n = d.user_lpns();
    let (mut t, mut x) = (0u64, 99u64);
    let (mut done, mut backs) = (Vec::with_capacity(writes), Vec::with_capacity(writes));
    for _ in 0..writes {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let lpn = (x >> 33) as u32 % n;
        t = d.submit(ssdtwin::Command { kind: IoKind::Write, offset: lpn as u64 * 4096, len: 4096 }, t);
        done.push(t);
        backs.push(d.ftl().map_counters().unwrap().journal.pages_written_back);
    }
    (done, backs)
}

/// The segmented pace (Silicon Motion's updates "in segments"): a full
/// journal of J entries over N translation pages gives up the
/// N·(1 − (1 − 1/N)^J) pages it touched (379.6 for N = J = 600), but
/// writes them back one at a time between later writes, never more than
/// one per write, the whole flush done as the next J updates are logged;
/// so the host writes keep their rate through the flush, where a flush
/// at once books all the pages' reads and programs ahead of the host's
/// next programs and stalls them.
#[test]
fn a_segmented_journal_flush_keeps_the_host_writes_rate() {
    let (j, writes) = (600usize, 6000usize);
    let (seg_done, seg_backs) = paced_writes(j as u32, "segmented", writes);
    // Write-backs per write: at most one.
    let most = seg_backs.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert_eq!(most, 1, "the segmented flush wrote {most} pages back for one write");
    // Each flush cycle of J updates writes back the pages the previous
    // J touched: over cycles 2–10, 9 flushes' worth.
    let expected = 600.0 * (1.0 - (1.0 - 1.0f64 / 600.0).powi(j as i32));
    let per_cycle = (seg_backs[10 * j - 1] - seg_backs[j - 1]) as f64 / 9.0;
    assert!(
        (per_cycle / expected - 1.0).abs() < 0.01,
        "{per_cycle:.1} write-backs per {j} writes, expected {expected:.1}"
    );
    // The host's rate: the longest wait between two writes' completions
    // past the first flush. Without any flush (a journal that never
    // fills) it is a host program's wait for its die (≈1.3 ms here); a
    // flush at once adds its whole share of a die (≈95 translation pages
    // read and programmed on each of the 4 dies: ≈12.8 ms), the segmented
    // one at most a page's read and program and the translation log's
    // cleaning (≈2.9 ms).
    let longest = |done: &[u64]| done[j..].windows(2).map(|w| w[1] - w[0]).max().unwrap();
    let (at_once_done, at_once_backs) = paced_writes(j as u32, "at-once", writes);
    let (never_done, _) = paced_writes(100_000, "segmented", writes);
    let (seg, at_once, never) = (longest(&seg_done), longest(&at_once_done), longest(&never_done));
    println!("longest wait: segmented {seg} ns, at once {at_once} ns, never flushed {never} ns");
    assert!(at_once > 3 * seg, "a flush at once should stall the host far longer: {at_once} vs {seg} ns");
    assert!(seg < 3 * never, "the segmented flush stalled the host: {seg} vs {never} ns");
    // The same work either way: as many write-backs (within one flush's)
    // and no slower overall.
    let (a, b) = (at_once_backs[writes - 1], seg_backs[writes - 1]);
    assert!(a.abs_diff(b) as f64 <= expected + 1.0, "{a} vs {b} write-backs");
    assert!(seg_done[writes - 1] <= at_once_done[writes - 1], "segmented slower overall");
}

/// The host memory buffer as a read cache of the map (`hmb_read_cache`,
/// Toshiba's BG series): the buffer holds all 600 translation pages (512
/// bytes each) of the small drive, clean, and updates are made in the
/// controller's SRAM, which holds L of them dirty. Under uniform random
/// writes over the N = 600 pages the SRAM holds the L pages dirtied last;
/// a write finds its page among them with probability L/N, and otherwise
/// dirties one more, writing back the page dirtied longest ago: 1 − L/N
/// write-backs per write (L = 60: 0.9). With the buffer holding dirty
/// pages too (the default) nothing is written back: the map fits.
#[test]
fn an_hmb_read_cache_writes_back_what_the_sram_cannot_hold() {
    let writes = 30_000u64;
    let run_writes = |read_cache: bool| {
        let mut extra = vec![
            "controller.dram_bytes=0".to_string(),
            format!("host.hmb_bytes={}", 600 * 512),
            "host.hmb_access_ns=1000".to_string(),
            format!("controller.sram_bytes={}", 60 * 512),
            "ftl.map_cache.dram_share=1.0".to_string(),
            "ftl.map_cache.page_bytes=512".to_string(),
        ];
        if read_cache {
            extra.push("ftl.map_cache.hmb_read_cache=true".to_string());
        }
        let d = drive(&extra);
        let mut w = IoSpec::new("randwrite", RwPattern::RandWrite);
        w.norandommap = true;
        w.io_size = Some(writes * 4096);
        w.randseed = 5;
        let (r, d) = run(d, &[Phase::Io(w)]);
        assert_eq!(r[0].counters.gc_slots_moved, 0, "no GC: every map update is a host write's");
        d.ftl().map_counters().unwrap()
    };
    let c = run_writes(true);
    // The first 60 dirty pages write nothing back.
    let per_write = c.dirty_limit_write_backs as f64 / (writes - 60) as f64;
    assert!((per_write / 0.9 - 1.0).abs() < 0.01, "{per_write:.4} write-backs per write, expected 0.9");
    assert!(c.pages_programmed >= c.dirty_limit_write_backs - 64, "the write-backs are programmed");
    let c = run_writes(false);
    assert_eq!((c.dirty_limit_write_backs, c.pages_programmed), (0, 0), "the buffer holds the whole map, dirty");
}
