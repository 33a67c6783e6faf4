//! fio's `zonemode=zbd` on a zoned drive: where each command of a job
//! goes, as fio's zbd.c (fio 3.42; unchanged at commit f5344384) decides
//! it in `zbd_adjust_block`, `zbd_convert_to_write_zone` and
//! `setup_zbd_zone_mode`.
//!
//! - **Range**: a job that writes works on whole zones: its offset is
//!   rounded up and its end down to zone boundaries (a read-only job's end
//!   only), and less than a zone is an error (`zbd_zone_align_file_sizes`).
//! - **Writes** go to a zone's write pointer. The zone is the one the
//!   job's offset generator picks (sequential jobs keep their own position
//!   and jump from a zone's capacity to its end; the bytes skipped do not
//!   count toward the job's size: fio's `io_skip_bytes` is never read).
//!   At the end of its range a sequential job's pass ends: fio starts
//!   another (`keep_running`) while `loops` are left, with `time_based`,
//!   or when `io_size` was given and at least a block of it is left; else
//!   the job ends. fio keeps a set of
//!   *write zones* no larger than `max_open_zones` (by default the drive's
//!   open limit; larger is an error unless `ignore_zone_limits`) and
//!   `job_max_open_zones`: a zone outside the set when it is full is
//!   replaced by one of the set, chosen by the offset's position in the
//!   range, and a full zone by the next one that can join. A zone leaves
//!   the set when a write reaches its capacity. A full zone chosen for a
//!   write is reset first, and with `zone_reset_threshold` and
//!   `zone_reset_frequency` one every 1/frequency writes once the range
//!   holds more than the threshold's share of data. The length is cut to
//!   what the zone has left, in whole minimum block sizes.
//! - **Remainders**: when the block size does not divide the zone
//!   capacity, a zone ends with less than a block left. fio (since 3.34)
//!   *finishes* such a zone (Zone Management Send, Finish) and moves on to
//!   the next zone; a sequential job in the last zone of its range ends
//!   there; a random job whose write zones all have such remainders
//!   finishes one of them, which is then reset and written. fio's write
//!   pointer of a zone it finished is the zone's end, so a later reset
//!   takes the zone's size off the valid-data count and a mixed job reads
//!   up to the zone's end. With `write_zone_remainder` the remainders are
//!   written instead, with one write shorter than the minimum block.
//!   (fio 3.33, Debian 12's, resets such a zone and rewrites it.)
//! - **Reads** go to written data: a zone with less than a block written
//!   is replaced by the nearest one with data (none: the job ends, as fio's
//!   does at end of file), random offsets are folded into the written
//!   part, and a read is cut at the write pointer (`read_beyond_wp` turns
//!   all of this off). A mixed job's first command is a write when nothing
//!   was written (`zbd_adjust_ddir`).
//! - **Trims** are zone resets (`zbd_do_io_u_trim`): a trim's block size
//!   must be the zone size (and fixed: no `bsrange` or `bssplit`;
//!   `zbd_verify_bs`), a random trim aimed at an empty zone goes to the
//!   nearest zone with data (none: the job ends), and the trim resets its
//!   zone in place of a Dataset Management command, completing when the
//!   reset does. A zone with nothing written is not reset
//!   (`__zbd_reset_zone`): its trim completes at once with no command to
//!   the drive. A trim of a conventional zone is a trim.
//! - **Zone management**: resets and finishes are commands the job issues
//!   itself and waits for (fio's synchronous `blkzoned_reset_wp` and
//!   `blkzoned_finish_zone`), after its commands in flight have completed
//!   (`io_u_quiesce`): [`ZbdJob::manage`] sends them, the job's source
//!   waits.
//!
//! - **Verify** changes the rules so that nothing the job will read back
//!   is reset ([`verify`]).
//!
//! Writes are [`write`]'s, reads and trims [`read`]'s (with the folds a
//! read-only job keeps from when it looked its reads up ahead).
//!
//! Left out: fio shares the write-zone set and the valid-data count
//! between the jobs on one device; the twin keeps them per job (the
//! drive's own open and active limits hold across jobs all the same). A failed write and `recover_zbd_write_error` are
//! [`crate::run::source`]'s (module `failed`).

use crate::model::drive::{Command, Drive, IoKind};
use crate::model::ftl::zones::{ZoneAction, ZoneState, Zones};
use crate::run::device::Device;
use crate::run::workload::{IoSpec, RwPattern, Zbd};

mod read;
mod verify;
mod write;

/// fio's error number for a job it cannot set up (EINVAL).
pub const EINVAL: i32 = 22;

const W: usize = IoKind::Write as usize;

/// Where the next command goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Submit `cmd`, after the zone management commands the job has to
    /// send first when `manage` ([`ZbdJob::manage`]).
    Io {
        /// The command.
        cmd: Command,
        /// Zone management commands come first.
        manage: bool,
    },
    /// A trim fio turns into a reset of the zone `cmd` starts
    /// (`zbd_do_io_u_trim`): the command the job's statistics count,
    /// completed by a Zone Management Send Reset when `reset`, at once
    /// with no command to the drive when the zone holds nothing.
    ZoneReset {
        /// The trim, at its zone's start.
        cmd: Command,
        /// The zone holds data and is reset.
        reset: bool,
    },
    /// Nothing left to read or write: the job ends (after the zone
    /// management commands it has to send, if any).
    Eof,
    /// A verifying job's write would reset a zone: a read-back of what
    /// it wrote goes first instead (fio's `get_next_verify` in
    /// `zbd_adjust_block`); the generator's command is spent.
    VerifyFirst,
}

/// A zone as Zone Management Receive reports it.
#[derive(Debug, Clone, Copy)]
pub struct ZoneReport {
    /// Its first byte.
    pub start: u64,
    /// Its write pointer, in bytes.
    pub wp: u64,
    /// Its state.
    pub state: ZoneState,
}

/// One job's `zonemode=zbd` state.
#[derive(Debug, Clone)]
pub struct ZbdJob {
    opts: Zbd,
    zone: u64,
    cap: u64,
    conventional: u32,
    min_zone: u32,
    max_zone: u32,
    start: u64,
    end: u64,
    min_bs: [u64; 3],
    /// The largest block of any direction (fio's `td_max_bs`).
    max_bs: u64,
    /// Passes left after this one (`loops` - 1).
    loops_left: u32,
    /// `io_size` was given: passes go on while a block of it is left.
    io_size: bool,
    time_based: bool,
    /// The last write zone search ended the range (a sequential job
    /// finished its last zone).
    range_over: bool,
    random: bool,
    mixed: bool,
    max_write_zones: u32,
    write_zones: Vec<u32>,
    write_cnt: u32,
    /// Bytes written in the range (fio's `wp_valid_data_bytes`).
    valid: u64,
    pos: [u64; 3],
    wrote: bool,
    /// Zone management commands to send before the next command, in
    /// order: finishes, then a reset (zone action, zone start in bytes).
    ops: Vec<(ZoneAction, u64)>,
    /// Zones of the range this job finished (fio's write pointer of
    /// such a zone is the zone's end), by zone index minus `min_zone`.
    finished: Vec<bool>,
    /// Zone resets the job issued (fio's `nr_zone_resets`).
    pub resets: u64,
    /// Zones the job finished.
    pub finishes: u64,
    /// The job verifies (fio's `verify` is not `none`): nothing it wrote
    /// is reset or finished before it is read back ([`verify`]).
    verify: bool,
    /// A verifying job's zones whose reset waits for the read-back (fio's
    /// `reset_zone`), by zone index minus `min_zone`.
    reset_due: Vec<bool>,
    /// log2 of the zone size (`u32::MAX`: not a power of two).
    zone_shift: u32,
    /// A random job that only reads, over conventional zones among
    /// others: the folds of the reads ahead ([`read::FOLDS`] of them;
    /// empty for any other job), the folds made and the reads placed
    /// ([`read`]).
    folds: Vec<read::Fold>,
    hints: u32,
    reads_taken: u32,
}

/// The zone state of a zoned drive (`None`: a conventional one).
#[inline]
fn zones_of(drive: &Drive) -> Option<&Zones> {
    drive.ftl().zoned().map(|z| z.zones())
}

impl ZbdJob {
    /// The state of `spec`'s zbd options on `drive`, or fio's error
    /// number and message when fio would not start the job.
    pub fn new(spec: &IoSpec, opts: &Zbd, drive: &Drive) -> Result<ZbdJob, (i32, String)> {
        let zones = zones_of(drive).ok_or((EINVAL, "zonemode=zbd needs a zoned drive".to_string()))?;
        let m = *zones.model();
        let page = crate::model::nand::SECTOR_BYTES as u64;
        let zone = m.zone_lpns as u64 * page;
        if opts.zone_size != 0 && opts.zone_size != zone {
            return Err((EINVAL, format!("zonesize {} does not match the device zone size {zone}", opts.zone_size)));
        }
        let capacity = drive.user_bytes();
        let mut start = spec.offset.min(capacity);
        let mut end = spec.size.map_or(capacity, |s| (start + s).min(capacity));
        let writes = !matches!(spec.rw, RwPattern::Read | RwPattern::RandRead);
        if writes && start % zone != 0 {
            start = start.div_ceil(zone) * zone;
        }
        end = end / zone * zone;
        if end <= start {
            return Err((EINVAL, "io_size must be at least one zone".into()));
        }
        if matches!(spec.rw, RwPattern::Trim | RwPattern::RandTrim | RwPattern::TrimWrite | RwPattern::RandTrimWrite) {
            const T: usize = IoKind::Trim as usize;
            let trim_sizes = spec.sizes.as_ref().map(|s| &s[T]);
            if trim_sizes.is_some_and(|s| s.choices.len() > 1 || s.choices.first().is_some_and(|c| c.0 != spec.bs)) {
                return Err((EINVAL, "bsrange and bssplit are not allowed for trim with zonemode=zbd".into()));
            }
            let bs = trim_sizes.and_then(|s| s.choices.first()).map_or(spec.bs, |c| c.0) as u64;
            if bs != zone {
                return Err((EINVAL, format!("trim block size {bs} is not the zone size {zone}")));
            }
        }
        if opts.recover_write_error && writes && !spec.on_error.any() {
            return Err((EINVAL, "recover_zbd_write_error works only when continue_on_error is set".into()));
        }
        let device_open = m.max_open;
        let max_write_zones = match opts.max_open_zones {
            0 => device_open,
            n if n <= device_open || opts.ignore_zone_limits => n,
            n => return Err((EINVAL, format!("Specified --max_open_zones ({n}) is larger than max ({device_open})"))),
        };
        let (min_zone, max_zone) = ((start / zone) as u32, (end / zone) as u32);
        let valid = (min_zone..max_zone).map(|z| written_bytes(zones, z, page)).sum();
        let min_bs = std::array::from_fn(|k| {
            spec.sizes.as_ref().and_then(|s| s[k].choices.iter().map(|c| c.0).min()).unwrap_or(spec.bs) as u64
        });
        let max_bs = spec
            .sizes
            .as_ref()
            .and_then(|s| s.iter().flat_map(|d| d.choices.iter().map(|c| c.0)).max())
            .unwrap_or(spec.bs) as u64;
        let mut job = ZbdJob {
            opts: opts.clone(),
            zone,
            cap: m.zone_cap_lpns as u64 * page,
            conventional: m.conventional,
            min_zone,
            max_zone,
            start,
            end,
            min_bs,
            max_bs,
            loops_left: spec.loops.saturating_sub(1),
            io_size: spec.io_size.is_some(),
            time_based: spec.time_based,
            range_over: false,
            random: spec.rw.is_random(),
            mixed: matches!(spec.rw, RwPattern::ReadWrite | RwPattern::RandRw),
            max_write_zones,
            write_zones: Vec::with_capacity(max_write_zones as usize),
            write_cnt: 0,
            valid,
            pos: [start; 3],
            wrote: false,
            ops: Vec::with_capacity(4),
            finished: vec![false; (max_zone - min_zone) as usize],
            resets: 0,
            finishes: 0,
            verify: spec.verify.is_some(),
            reset_due: Vec::new(),
            zone_shift: if zone.is_power_of_two() { zone.trailing_zeros() } else { u32::MAX },
            folds: Vec::new(),
            hints: 0,
            reads_taken: 0,
        };
        // Only a conventional zone's read looks a page map entry up (a
        // sequential zone's map is its block list, model/ftl/zns.rs), so
        // only a job over conventional zones has map lines to warm.
        if spec.rw == RwPattern::RandRead && !opts.read_beyond_wp && min_zone < m.conventional {
            job.folds = vec![read::Fold::default(); read::FOLDS];
        }
        if job.verify {
            // The job's loops are the source's: each writes, then reads back.
            job.loops_left = 0;
            job.reset_due = vec![false; (max_zone - min_zone) as usize];
        }
        job.reset_write_cnt();
        // Zones already open, and closed ones on a drive with an active
        // limit (every zoned drive of the twin has one), join the write
        // zones and count against the limit (zbd_setup_files).
        if writes {
            for z in min_zone.max(m.conventional)..max_zone {
                if matches!(
                    zones.state(z),
                    ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened | ZoneState::Closed
                ) && !job.write_zone_get(z, zones)
                {
                    return Err((EINVAL, "Number of open zones exceeds max_open_zones limit".into()));
                }
            }
            if job.verify {
                job.reset_range(zones);
            }
        }
        Ok(job)
    }

    /// Where the generator's next command `raw` goes on `drive`, with
    /// `left` bytes left to the job's limit; `logged`: a verifying job
    /// has writes not yet read back.
    #[inline]
    pub fn next(&mut self, raw: Command, drive: &Drive, left: u64, logged: bool) -> Next {
        let zones = zones_of(drive).expect("a zbd job runs on a zoned drive");
        if raw.kind == IoKind::Read && !self.mixed {
            return self.read(raw, zones);
        }
        let mut kind = raw.kind;
        if kind == IoKind::Read && self.mixed && !self.wrote && !self.opts.read_beyond_wp {
            kind = IoKind::Write;
        }
        match kind {
            IoKind::Write => self.write(raw, zones, left, logged),
            IoKind::Read => self.read(raw, zones),
            IoKind::Trim => self.trim(raw, zones),
        }
    }

    /// Whether a failed write is followed by fio's write-pointer
    /// recovery (`recover_zbd_write_error`).
    pub fn recovers_write_errors(&self) -> bool {
        self.opts.recover_write_error
    }

    /// The zone holding byte `offset` on `drive` as Zone Management
    /// Receive reports it (`None`: a conventional zone, which has no
    /// write pointer).
    pub fn zone_with_wp(&self, offset: u64, drive: &Drive) -> Option<ZoneReport> {
        let zones = zones_of(drive)?;
        let z = (offset / self.zone) as u32;
        if z < self.conventional {
            return None;
        }
        let start = self.zone_start(z);
        let wp = start + written_bytes(zones, z, crate::model::nand::SECTOR_BYTES as u64);
        Some(ZoneReport { start, wp, state: zones.state(z) })
    }

    /// Whether the job's writes are Zone Appends.
    pub fn appends(&self) -> bool {
        self.opts.append
    }

    /// Whether zone management commands wait to be sent.
    #[inline]
    pub fn has_ops(&self) -> bool {
        !self.ops.is_empty()
    }

    /// Send the zone management commands the last [`ZbdJob::next`] asked
    /// for, one after the other, on `dev` now: when the last completes,
    /// or the drive's status refusing one.
    pub fn manage(&mut self, dev: &mut Device) -> Result<u64, String> {
        let mut done = dev.now();
        for &(action, zslba) in &self.ops {
            done = done.max(dev.zone_send(action, Some(zslba)));
            if let Some(e) = dev.drive().last_error() {
                self.ops.clear();
                let what = if action == ZoneAction::Reset { "reset" } else { "finish" };
                return Err(format!("zone {what} at offset {zslba}: {}", e.name()));
            }
        }
        self.ops.clear();
        Ok(done)
    }

    fn zone_start(&self, z: u32) -> u64 {
        z as u64 * self.zone
    }

    fn zone_of(&self, offset: u64) -> u32 {
        // Zone sizes are powers of two on every zoned drive the twin
        // knows (a shift, not a division, on the reads' path).
        let z = if self.zone_shift != u32::MAX { offset >> self.zone_shift } else { offset / self.zone };
        (z as u32).clamp(self.min_zone, self.max_zone - 1)
    }

    /// Whether zone `z` is being finished by the commands waiting to be
    /// sent.
    fn finishing(&self, z: u32) -> bool {
        let at = self.zone_start(z);
        !self.ops.is_empty() && self.ops.contains(&(ZoneAction::Finish, at))
    }

    /// fio's write pointer of zone `z`, in bytes from its start: the
    /// zone's end when this job finished it (`zbd_finish_zone`), else
    /// what was written (the capacity of a full zone).
    #[inline]
    fn fio_wp(&self, z: u32, zones: &Zones) -> u64 {
        let page = crate::model::nand::SECTOR_BYTES as u64;
        if self.finishes == 0 {
            return written_bytes(zones, z, page);
        }
        let by_job = self.finished.get((z - self.min_zone) as usize).copied().unwrap_or(false);
        if self.finishing(z) || (by_job && zones.state(z) == ZoneState::Full) {
            self.zone
        } else {
            written_bytes(zones, z, page)
        }
    }
}

/// Bytes written in zone `z` (its whole capacity when full).
fn written_bytes(zones: &Zones, z: u32, page: u64) -> u64 {
    zones.written(z) as u64 * page
}
