//! Wear leveling by erase count (`[ftl.wear_leveling]`): a workload that
//! rewrites 10% of the drive forever wears the blocks holding it while the
//! cold data's blocks are never erased; static leveling moves cold data off
//! young blocks and keeps the spread of erase counts under its threshold,
//! at the cost of the moves, which show in the write amplification.

use ssdtwin::model::health::Health;
use ssdtwin::run::state::apply_phases_exact;
use ssdtwin::run::workload::{IoSpec, RwPattern};
use ssdtwin::{Drive, DriveSpec};

use crate::common::small_model;

/// Fill the drive, then 8 GB of 4 KiB random writes over its first 10%.
fn hot_writes(extra: &[&str]) -> Drive {
    let mut set = vec!["ftl.version_stamps=true"];
    set.extend_from_slice(extra);
    let mut d = Drive::new(small_model(300, &set));
    let cap = d.user_bytes();
    let mut fill = IoSpec::new("fill", RwPattern::Write);
    fill.bs = 128 << 10;
    let mut hot = IoSpec::new("hot", RwPattern::RandWrite);
    hot.size = Some(cap / 10 / 4096 * 4096);
    hot.io_size = Some(8 << 30);
    hot.norandommap = true;
    apply_phases_exact(&mut d, &[fill, hot]);
    d.ftl().check_consistency().unwrap();
    d
}

#[test]
fn static_leveling_bounds_the_erase_count_spread() {
    let plain = hot_writes(&[]);
    let leveled = hot_writes(&["ftl.wear_leveling.static_threshold=16", "ftl.wear_leveling.dynamic=least-worn"]);
    let (hp, hl) = (Health::of(&plain), Health::of(&leveled));
    let (cp, cl) = (plain.ftl().counters(), leveled.ftl().counters());
    eprintln!(
        "spread without leveling {}, with {}; WAF {:.3} vs {:.3}; {} blocks ({} slots) moved by leveling",
        hp.erase_count_spread,
        hl.erase_count_spread,
        plain.waf(),
        leveled.waf(),
        cl.wl_blocks,
        cl.wl_slots_moved
    );
    // Leveling works per die, and a die checks after each of its erases: the
    // drive-wide spread may pass the threshold by a few erases.
    assert!(hp.erase_count_spread > 4 * 16, "cold blocks never erased: spread {}", hp.erase_count_spread);
    assert!(hl.erase_count_spread <= 16 + 8, "spread {} with a threshold of 16", hl.erase_count_spread);
    assert_eq!(cp.wl_blocks, 0);
    assert!(cl.wl_blocks > 0 && cl.wl_slots_moved > 0);
    // The moves are extra programs: the write amplification rises by them.
    let extra = cl.wl_slots_moved as f64 / cl.host_slots_written as f64;
    assert!(leveled.waf() > plain.waf() + 0.5 * extra, "WAF {} vs {} (+{extra:.3})", leveled.waf(), plain.waf());
    // Every page still reads its last write.
    for lpn in 0..leveled.user_lpns() {
        assert_eq!(leveled.ftl().read_version(lpn), plain.ftl().read_version(lpn), "lpn {lpn}");
    }
}

#[test]
fn wear_leveling_is_validated() {
    let err = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        DriveSpec::load("generic-tlc-nvme", &set).unwrap().build("t").unwrap_err().to_string()
    };
    assert!(err(&["ftl.wear_leveling.static_threshold=0"]).contains("ftl.wear_leveling.static_threshold"));
    let e = DriveSpec::load("generic-tlc-nvme", &["ftl.wear_leveling.dynamic=youngest".to_string()]).unwrap_err();
    assert!(e.to_string().contains("youngest"), "{e}");
}
