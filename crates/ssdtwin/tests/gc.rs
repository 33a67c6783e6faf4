//! Foreground GC paced by host writes or run in one go (`ftl.gc_mode`):
//! counted per command, and the stall of a one-go collection is the
//! victim's NAND time.

use ssdtwin::run::workload::{IoSpec, RwPattern};
use ssdtwin::{Command, IoKind};

use crate::common::small_drive;

/// Per command: latency, victims collected, slots moved, and the flash
/// counters' change (array time of reads/programs/erases, slots read,
/// slots programmed).
struct Cmd {
    lat: u64,
    victims: u64,
    moved: u64,
    array_ns: [u64; 3],
    slots_read: u64,
    slots_programmed: u64,
}

/// A one-die drive (write-through, so a command ends with its own
/// program), filled, then `n` random one-unit writes at QD1.
fn random_unit_writes(gc_mode: &str, n: usize) -> (Vec<Cmd>, ssdtwin::DriveModel) {
    let mode = format!("ftl.gc_mode={gc_mode}");
    let mut drive = small_drive(
        64,
        &["geometry.channels=1", "geometry.dies_per_channel=1", "controller.write_cache=write-through", &mode],
    );
    let model = drive.model().clone();
    let unit = model.geometry.unit_slots(ssdtwin::model::nand::CellMode::Native) as u64 * 4096;
    let mut fill = IoSpec::new("fill", RwPattern::Write);
    fill.bs = unit as u32;
    fill.size = Some(drive.user_bytes());
    ssdtwin::run::state::write_fast(&mut drive, &fill);
    drive.reset_time();
    let units = drive.user_bytes() / unit;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut t = 0;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let offset = ((x >> 33) % units) * unit;
        let (c0, f0) = (drive.ftl().counters(), drive.flash().counters);
        let done = drive.submit(Command { kind: IoKind::Write, offset, len: unit as u32 }, t);
        let (c1, f1) = (drive.ftl().counters(), drive.flash().counters);
        out.push(Cmd {
            lat: done - t,
            victims: c1.gc_blocks - c0.gc_blocks,
            moved: c1.gc_slots_moved - c0.gc_slots_moved,
            array_ns: [0, 1, 2].map(|i| f1.array_ns[i] - f0.array_ns[i]),
            slots_read: f1.slots_read[0] - f0.slots_read[0],
            slots_programmed: f1.slots_programmed[0] - f0.slots_programmed[0],
        });
        t = done;
    }
    (out, model)
}

#[test]
fn paced_gc_moves_a_share_per_write() {
    let (cmds, model) = random_unit_writes("paced", 3000);
    let spb = model.geometry.slots_per_block as u64;
    let moving = cmds.iter().filter(|c| c.moved > 0).count();
    let most = cmds.iter().map(|c| c.moved).max().unwrap();
    // Most writes move a share; none moves a whole block's worth.
    assert!(moving > cmds.len() / 2, "{moving} of {} writes moved data", cmds.len());
    assert!(most < spb / 2, "at most {most} slots moved by one write ({spb} per block)");
}

#[test]
fn one_go_gc_collects_whole_victims_and_the_next_write_waits_for_them() {
    let (cmds, model) = random_unit_writes("one-go", 3000);
    let spb = model.geometry.slots_per_block as u64;
    let unit_slots = model.geometry.unit_slots(ssdtwin::model::nand::CellMode::Native) as u64;
    let tprog = model.native.tprog(0);
    // Data moves only in whole victims: a write moves nothing or collects
    // (here: one victim, whose valid slots all move at once).
    assert!(cmds.iter().all(|c| c.moved == 0 || c.victims >= 1));
    let collecting: Vec<usize> = (0..cmds.len() - 1).filter(|&i| cmds[i].victims > 0).collect();
    assert!(collecting.len() > 20, "{} collections", collecting.len());
    assert!(cmds.iter().filter(|c| c.victims > 0).all(|c| c.moved > 0 && c.moved < c.victims * spb));
    // A write after one without GC: link, its program's bus transfer and
    // tPROG (one die, so nothing else runs).
    let mut plain: Vec<u64> = (1..cmds.len()).filter(|&i| cmds[i - 1].victims == 0).map(|i| cmds[i].lat).collect();
    plain.sort_unstable();
    let own = plain[plain.len() / 2];
    assert!(plain[0] >= own - own / 100 && plain[plain.len() - 1] <= own + own / 100, "plain writes {own} ns");
    // The write after a collection waits for the die to finish it: its
    // reads (tR), programs (tPROG) and erase, less the collecting write's
    // own program, plus at most every bus transfer and ECC decode of it;
    // then its own tPROG. Its link and bus transfers overlap the wait, and
    // the collection's first reads may overlap the collecting write's
    // transfers: at most `own − tPROG` each way.
    let xfer =
        |slots: u64| ssdtwin::model::nand::transfer_ns(slots * model.channel_bytes_per_slot, model.channel_fs_per_byte);
    let ecc = model.spec.controller.ecc_decode_ns;
    for &i in &collecting {
        let c = &cmds[i];
        assert_eq!(
            c.slots_programmed,
            c.moved.div_ceil(unit_slots) * unit_slots + unit_slots,
            "moves fill whole units"
        );
        let array = c.array_ns[0] + c.array_ns[1] + c.array_ns[2] - tprog;
        let transfers = xfer(c.slots_read) + xfer(c.slots_programmed) + ecc * c.slots_read;
        let lat = cmds[i + 1].lat;
        assert!(
            lat + (own - tprog) + own / 100 >= array + tprog && lat <= array + own + transfers + own / 100,
            "write after a collection of {} slots took {lat} ns: NAND {array} ns (+ up to {transfers} ns of transfers) + its own {own} ns",
            c.moved
        );
    }
}
