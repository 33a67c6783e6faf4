//! A journaled filesystem across random power cuts: the kernel's ext4 on
//! the served drive, reached as a host reaches a network disk (`nbdfuse`
//! exposes the export as a file, a loop device makes the file a block
//! device), while the power is cut at moments drawn from a seed (the
//! server's power cutter, what `serve --power-loss-signal` sets: a
//! wall-clock moment while the files are being written, so that a cut
//! never falls while the restarted drive is checked, however long the
//! checking takes on a slow drive) and the server restarts from the saved
//! image after each cut. Each round, on a page-mapped, an SLC-cached and a hybrid drive:
//!
//! 1. mount; remove the previous round's files; write files of random
//!    sizes and contents, each `fsync`ed and its directory too, until the
//!    power goes (the writes then fail; the host's page cache goes with
//!    the mount, as a host's memory goes with its power);
//! 2. after the restart, through a new `nbdfuse`: mount (the kernel
//!    replays ext4's journal), read back every file whose `fsync`
//!    returned before the cut, unmount, and run `e2fsck -fn`: it must
//!    find nothing to fix.
//!
//! Why ext4 must come back whole: jbd2 writes a transaction's blocks to
//! the journal, then its commit block with a preflush and FUA, and
//! flushes again before it lets checkpointed journal space be reused
//! (Linux, `fs/jbd2/commit.c` and `fs/jbd2/checkpoint.c`); `fsync` returns
//! after the commit. So the filesystem survives any cut exactly when every
//! flushed or FUA write survives; a drive that lost flushed data would
//! leave a commit block pointing at missing blocks, stale metadata or
//! missing files. The loop device passes the kernel's flushes to the file
//! as `fsync`, which nbdfuse sends as `NBD_CMD_FLUSH`.
//!
//! The server keeps its wire log (`server/wire.rs`) and the campaign
//! audits it: every page a cut lost must be one whose latest write was
//! not yet durable by NBD's rules (no FUA, no replied flush after its
//! reply). The kernel sends no FUA through this stack (the loop device
//! has a write-back cache without FUA, so the block layer turns a FUA
//! write into a write and a flush; nbdfuse sends writes without flags):
//! its durability is flushes alone, and the test prints how many.
//!
//! `SSDTWIN_FS_POWER_CUTS` sets the cuts per drive (2 by default, for CI;
//! the documented campaign runs 34 per drive: docs/nbd-power.md,
//! `scripts/power-campaign.sh`). Needs root (mount and loop devices),
//! `/dev/fuse`, `nbdfuse` (Debian: libnbd-bin, or nbdfuse from trixie on)
//! and e2fsprogs; without them the test is skipped with a printed reason.

use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand::{Rng, RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ssdtwin::{Drive, DriveSpec};
use ssdtwin_nbd::server::wire::{audit, WireAudit};
use ssdtwin_nbd::server::ReloadImage;
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};

mod common;

/// Run `cmd`; its output, or what went wrong.
fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{cmd:?}: {}: {text}", out.status))
    }
}

/// The export as a file: `nbdfuse DIR URI` until dropped.
struct Fuse {
    child: Child,
    dir: PathBuf,
}

impl Fuse {
    fn attach(uri: &str, dir: &Path) -> Fuse {
        std::fs::create_dir_all(dir).expect("fuse dir");
        let child = Command::new("nbdfuse").arg(dir).arg(uri).stderr(Stdio::null()).spawn().expect("nbdfuse starts");
        let mut fuse = Fuse { child, dir: dir.to_path_buf() };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !fuse.file().exists() {
            if let Ok(Some(st)) = fuse.child.try_wait() {
                panic!("nbdfuse {uri} ended ({st}) before exposing the export");
            }
            assert!(Instant::now() < deadline, "nbdfuse {uri}: no file after 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        fuse
    }

    fn file(&self) -> PathBuf {
        self.dir.join("nbd")
    }
}

impl Drop for Fuse {
    fn drop(&mut self) {
        if run(Command::new("umount").arg(&self.dir)).is_err() {
            let _ = run(Command::new("umount").arg("-l").arg(&self.dir));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// ext4 mounted through a loop device on the nbdfuse file until dropped.
struct Mounted(PathBuf);

impl Mounted {
    fn mount(file: &Path, dir: &Path) -> Mounted {
        std::fs::create_dir_all(dir).expect("mount dir");
        run(Command::new("mount").args(["-t", "ext4", "-o", "loop"]).arg(file).arg(dir)).expect("ext4 mounts");
        Mounted(dir.to_path_buf())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if run(Command::new("umount").arg(&self.0)).is_err() {
            let _ = run(Command::new("umount").arg("-l").arg(&self.0));
        }
    }
}

/// A file's contents, from its seed.
fn contents(seed: u64, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    Pcg64Mcg::seed_from_u64(seed).fill_bytes(&mut data);
    data
}

/// Wait up to 2 s for the cut: only the cut may fail a write.
fn expect_cut(cut: &dyn Fn() -> bool, what: &str, e: std::io::Error) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !cut() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(cut(), "{what} failed without a power cut: {e}");
}

/// Until the power goes (`cut`): one thread writes files named
/// `{prefix}-N` under `dir` of random sizes, each fsynced with its
/// directory; another overwrites random 4 KiB blocks of `dir/churn` in
/// place with direct I/O and never fsyncs (what a database does between
/// its commits), so that writes reach the drive and wait in its write
/// buffer while the other thread's flushes run. Returns the files whose
/// fsyncs returned: (name, contents seed, length).
fn write_until_cut(
    dir: &Path,
    cut: &(dyn Fn() -> bool + Sync),
    rng: &mut Pcg64Mcg,
    prefix: &str,
) -> Vec<(String, u64, usize)> {
    use std::os::unix::fs::FileExt;
    let churn = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(dir.join("churn"))
        .expect("churn opens");
    let mut churn_rng = Pcg64Mcg::seed_from_u64(rng.next_u64());
    let mut synced = Vec::new();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut buf = vec![0u8; 2 * 4096];
            let at = buf.as_ptr().align_offset(4096);
            let block = &mut buf[at..at + 4096];
            while !cut() {
                churn_rng.fill_bytes(block);
                if let Err(e) = churn.write_all_at(block, churn_rng.random_range(0..CHURN / 4096) * 4096) {
                    expect_cut(cut, "an in-place overwrite", e);
                }
            }
        });
        let mut i = 0;
        while !cut() {
            assert!(i < 2000, "{prefix}: no cut after {i} files");
            let name = format!("{prefix}-{i}");
            let (seed, len) = (rng.next_u64(), rng.random_range(1..=192 << 10));
            match write_synced(dir, &name, &contents(seed, len)) {
                Ok(()) => synced.push((name, seed, len)),
                Err(e) => expect_cut(cut, &name, e),
            }
            i += 1;
        }
    });
    synced
}

/// Create `dir/name` with `data`, fsync it and its directory.
fn write_synced(dir: &Path, name: &str, data: &[u8]) -> std::io::Result<()> {
    let mut f = File::create(dir.join(name))?;
    f.write_all(data)?;
    f.sync_all()?;
    File::open(dir)?.sync_all()
}

/// The file overwritten in place without fsync, bytes.
const CHURN: u64 = 4 << 20;

#[derive(Debug, Default, Clone)]
struct Tally {
    cuts: u64,
    files_synced: u64,
    lost_pages: u64,
    worst: u64,
    /// What the kernel sent, and the cuts' losses audited against it.
    wire: WireAudit,
}

/// Run `rounds` cuts on the drive `preset` with `set`, each falling in the
/// second half of `window` of wall time after the round's writing starts.
fn campaign(preset: &str, set: &[&str], window: Duration, rounds: u64, seed: u64) -> Tally {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let spec = DriveSpec::load(preset, &set).expect("drive parses");
    let model = spec.build("test drive").expect("valid");
    let scratch = tempfile::Builder::new().prefix("ssdtwin-fs-power-").tempdir().expect("temp dir");
    let opts = ServeOptions {
        listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
        time_scale: 0.0,
        log: false,
        power_loss_by_signal: true,
        wire_log: true,
        reload: Some(ReloadImage { spec, origin: preset.into(), path: scratch.path().join("drive.img") }),
        ..ServeOptions::new()
    };
    let server = Server::bind(Twin::new(Drive::new(model)), opts).expect("bind");
    let uri = format!("nbd://{}/ssdtwin", server.local_addr().expect("TCP"));
    let (stop, counters, cutter) = (server.stopper(), server.counters(), server.power_cutter());
    let handle = std::thread::spawn(move || server.run().expect("server runs"));
    let cuts = || counters.power_cuts.load(Ordering::SeqCst);
    let (fuse_dir, mnt) = (scratch.path().join("fuse"), scratch.path().join("mnt"));
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut synced_total = 0;

    let mut fuse = Fuse::attach(&uri, &fuse_dir);
    run(Command::new("mkfs.ext4")
        .args(["-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
        .arg(fuse.file()))
    .expect("mkfs.ext4");
    {
        let mounted = Mounted::mount(&fuse.file(), &mnt);
        write_synced(&mounted.0, "churn", &contents(seed, CHURN as usize)).expect("churn file");
    }
    assert_eq!(cuts(), 0, "{preset}: the power went during mkfs");
    for round in 0..rounds {
        let before = cuts();
        // Write until the power goes.
        let synced;
        {
            let mounted = Mounted::mount(&fuse.file(), &mnt);
            for entry in std::fs::read_dir(&mounted.0).expect("ls").flatten() {
                if entry.file_name().to_string_lossy().starts_with('r') && cuts() == before {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
            let cut = || cuts() > before;
            let at = window.mul_f64(rng.random_range(0.5..1.0));
            let cutter = cutter.clone();
            let timer = std::thread::spawn(move || {
                std::thread::sleep(at);
                cutter.store(true, Ordering::SeqCst);
            });
            synced = write_until_cut(&mounted.0, &cut, &mut rng, &format!("r{round}"));
            timer.join().expect("cut timer");
        }
        drop(fuse);
        // The restarted drive: journal replayed, fsynced files whole, and
        // nothing for e2fsck to fix.
        fuse = Fuse::attach(&uri, &fuse_dir);
        {
            let mounted = Mounted::mount(&fuse.file(), &mnt);
            for (name, file_seed, len) in &synced {
                let back = std::fs::read(mounted.0.join(name))
                    .unwrap_or_else(|e| panic!("{preset} round {round}: fsynced {name} lost: {e}"));
                assert!(back == contents(*file_seed, *len), "{preset} round {round}: fsynced {name} differs");
            }
        }
        if let Err(e) = run(Command::new("e2fsck").arg("-fn").arg(fuse.file())) {
            panic!("{preset} round {round}: the filesystem is damaged after the cut: {e}");
        }
        assert_eq!(cuts(), before + 1, "{preset} round {round}: the power went while the restarted drive was checked");
        synced_total += synced.len() as u64;
    }
    drop(fuse);
    stop.store(true, Ordering::SeqCst);
    handle.join().expect("server thread");
    // Every page a cut lost was one the kernel had not yet flushed.
    let wire = audit(&counters.wire.events()).unwrap_or_else(|e| panic!("{preset}: {e}"));
    let lost_pages = counters.lost_pages.load(Ordering::Relaxed);
    assert_eq!((wire.cuts, wire.lost_pages), (cuts(), lost_pages), "{preset}: the wire log saw every cut and loss");
    let worst = counters.worst_cut_lost_pages.load(Ordering::Relaxed);
    Tally { cuts: cuts(), files_synced: synced_total, lost_pages, worst, wire }
}

/// Whether this machine can run the campaign; says why not.
fn can_mount() -> bool {
    let tool = |t: &str| ["/usr/bin", "/usr/sbin", "/bin", "/sbin"].iter().any(|d| Path::new(d).join(t).exists());
    let why = if !["nbdfuse", "mkfs.ext4", "e2fsck", "mount"].iter().all(|t| tool(t)) {
        "nbdfuse (Debian: libnbd-bin or nbdfuse), e2fsprogs or mount missing"
    } else if !Path::new("/dev/fuse").exists() {
        "no /dev/fuse"
    } else if !Path::new("/dev/loop-control").exists() {
        "no loop devices (/dev/loop-control)"
    } else if unsafe { libc::geteuid() } != 0 {
        "not root (mounting ext4 on a loop device needs it)"
    } else {
        return true;
    };
    eprintln!("SKIPPED: {why}");
    false
}

#[test]
fn ext4_survives_random_power_cuts() {
    if !can_mount() {
        return;
    }
    let rounds = std::env::var("SSDTWIN_FS_POWER_CUTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let mut total = Tally::default();
    for (i, (kind, preset, set)) in common::CUT_DRIVES.into_iter().enumerate() {
        let t = campaign(preset, set, Duration::from_millis(400), rounds, 29 + i as u64);
        eprintln!(
            "{kind} ({preset}): {} cuts, {} files fsynced and read back, {} pages lost, at most {} by one cut; e2fsck clean after each",
            t.cuts, t.files_synced, t.lost_pages, t.worst
        );
        let w = &t.wire;
        eprintln!(
            "  the kernel sent {} writes, {} with FUA, {} flushes, {} trims, {} write-zeroes, {} reads; \
             lost pages: {} acknowledged and unflushed, {} never acknowledged, none flushed",
            w.writes, w.fua_writes, w.flushes, w.trims, w.write_zeroes, w.reads, w.lost_acknowledged, w.lost_in_flight
        );
        // The fsyncs reached the drive as flushes.
        assert!(w.flushes >= t.files_synced, "{kind}: a flush per fsynced file at least: {w:?}");
        assert_eq!(t.cuts, rounds, "{kind}: one cut per round");
        total.cuts += t.cuts;
        total.files_synced += t.files_synced;
        total.lost_pages += t.lost_pages;
        total.worst = total.worst.max(t.worst);
    }
    eprintln!(
        "filesystem campaign: {} cuts, {} fsynced files read back, {} pages lost, at most {} by one cut; e2fsck clean after every cut",
        total.cuts, total.files_synced, total.lost_pages, total.worst
    );
}
