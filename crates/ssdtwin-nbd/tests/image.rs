//! Saving a served drive with its data and loading it again: the data
//! (after GC and SLC folding moved it), the FTL's state and counters come
//! back, the loaded drive then behaves as the saved one would have, and a
//! damaged or foreign file is refused with an error naming it.

use std::path::PathBuf;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg as Pcg64;
use ssdtwin::run::stats::Counters;
use ssdtwin::{Drive, DriveSpec};
use ssdtwin_nbd::{image, Twin};
use tempfile::TempDir;

mod common;
use common::small_spec;

/// The Intel 660p's QLC NAND and SLC cache rules, shrunk to 2 dies
/// (folding and GC both run in a few thousand writes).
fn small_660p() -> (DriveSpec, Twin) {
    let spec = small_spec("SLC-cached", &[]);
    let model = spec.build("test drive").expect("test drive is valid");
    (spec, Twin::new(Drive::new(model)))
}

/// An empty temporary directory of the test's own, removed with what it
/// holds when dropped (also when the test panics).
fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("ssdtwin-image-test-").tempdir().unwrap()
}

/// The path of `name` in the temporary directory `scratch`.
fn tmp(scratch: &TempDir, name: &str) -> PathBuf {
    scratch.path().join(name)
}

/// Random 4 KiB-granular writes (and some trims) over the whole drive,
/// mirrored in `shadow`.
fn churn(twin: &mut Twin, shadow: &mut [u8], ops: usize, seed: u64) {
    let mut rng = Pcg64::seed_from_u64(seed);
    let pages = shadow.len() / 4096;
    let mut t = twin.now();
    let mut buf = vec![0u8; 16 * 4096];
    for _ in 0..ops {
        let p = rng.random_range(0..pages);
        let n = rng.random_range(1..=16usize).min(pages - p);
        let (off, len) = (p * 4096, n * 4096);
        t += rng.random_range(0..20_000u64);
        if rng.random_range(0..20) == 0 {
            twin.trim(t, off as u64, len as u64);
            shadow[off..off + len].fill(0);
        } else {
            rng.fill(&mut buf[..len]);
            twin.write(t, off as u64, &buf[..len], false);
            shadow[off..off + len].copy_from_slice(&buf[..len]);
        }
    }
}

fn contents(twin: &Twin) -> Vec<u8> {
    let mut all = vec![0u8; twin.user_bytes() as usize];
    twin.copy_out(0, &mut all);
    all
}

#[test]
fn a_saved_drive_comes_back_with_its_data_and_state_and_carries_on_alike() {
    let (spec, mut twin) = small_660p();
    let mut shadow = vec![0u8; twin.user_bytes() as usize];
    // Fill, then overwrite: GC and folding move the data.
    churn(&mut twin, &mut shadow, 12_000, 1);
    let scratch = temp_dir();
    let path = tmp(&scratch, "drive.img");
    image::save(&mut twin, &spec, "test drive", &path).expect("saved");
    let before = Counters::of(twin.device().drive());
    assert!(before.gc_slots_moved > 0 || before.fold_slots_moved > 0, "the data was moved before saving: {before:?}");
    let loaded = image::load(&path).expect("loaded");
    assert_eq!(loaded.spec, spec);
    assert_eq!(loaded.origin, "test drive");
    let mut back = loaded.twin;
    assert_eq!(back.now(), 0, "the clock starts again");
    assert!(contents(&back) == shadow, "every page reads as written before the save");
    back.device().drive().ftl().check_consistency().expect("FTL consistent after loading");
    assert_eq!(Counters::of(back.device().drive()), before, "counters, wear and health come back");
    assert_eq!(back.store().live_pages(), twin.store().live_pages());
    // The same writes on both: the FTL decides alike (its decisions do
    // not depend on the clock), so data and counters stay equal.
    let mut shadow2 = shadow.clone();
    churn(&mut twin, &mut shadow, 4_000, 2);
    churn(&mut back, &mut shadow2, 4_000, 2);
    twin.quiesce();
    back.quiesce();
    assert!(contents(&back) == shadow2 && shadow2 == shadow);
    let (a, b) = (Counters::of(twin.device().drive()), Counters::of(back.device().drive()));
    assert_eq!(a, b, "the loaded drive does what the saved one does");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_damaged_or_foreign_image_is_refused_with_its_name_and_what_is_wrong() {
    let (spec, mut twin) = small_660p();
    let mut shadow = vec![0u8; twin.user_bytes() as usize];
    churn(&mut twin, &mut shadow, 200, 3);
    let scratch = temp_dir();
    let path = tmp(&scratch, "good.img");
    image::save(&mut twin, &spec, "test drive", &path).expect("saved");
    let good = std::fs::read(&path).unwrap();
    let check = |name: &str, bytes: &[u8], expect: &str| {
        let p = tmp(&scratch, name);
        std::fs::write(&p, bytes).unwrap();
        let e = image::load(&p).err().unwrap_or_else(|| panic!("{name} loads")).to_string();
        assert!(e.contains(&p.display().to_string()) && e.contains(expect), "{name}: {e}");
        std::fs::remove_file(&p).unwrap();
    };
    check("foreign.img", b"[drive]\nname = \"x\"\n and more text", "not a drive image");
    check("short.img", b"ssd", "not a drive image");
    let mut other = good.clone();
    other[image::MAGIC.len()] = image::VERSION as u8 + 1;
    let expect = format!("format version {}, this build reads version {}", image::VERSION + 1, image::VERSION);
    check("other.img", &other, &expect);
    check("truncated.img", &good[..good.len() * 2 / 3], "corrupt or truncated");
    let mut flipped = good.clone();
    let at = good.len() / 2;
    flipped[at] ^= 0x10;
    check("flipped.img", &flipped, "corrupt");
    let missing = tmp(&scratch, "missing.img");
    let e = image::load(&missing).err().expect("no file").to_string();
    assert!(e.contains("missing.img"), "{e}");
    // A failed save leaves no file behind and names the target.
    let bad = PathBuf::from("/nonexistent-dir/x.img");
    let e = image::save(&mut twin, &spec, "test drive", &bad).expect_err("no directory").to_string();
    assert!(e.contains("/nonexistent-dir/x.img"), "{e}");
    std::fs::remove_file(&path).unwrap();
}
