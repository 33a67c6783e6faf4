//! fio's `zonemode=zbd` on a zoned drive: where each command of a job
//! goes, as fio's zbd.c (fio 3.42, commit f5344384) decides it in
//! `zbd_adjust_block`, `zbd_convert_to_write_zone` and
//! `setup_zbd_zone_mode`.
//!
//! - **Range**: a job that writes works on whole zones: its offset is
//!   rounded up and its end down to zone boundaries (a read-only job's end
//!   only), and less than a zone is an error (`zbd_zone_align_file_sizes`).
//! - **Writes** go to a zone's write pointer. The zone is the one the
//!   job's offset generator picks (sequential jobs keep their own position
//!   and jump from a zone's capacity to its end, counting the skipped
//!   bytes as done, as fio's `io_skip_bytes` does); fio keeps a set of
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
//! - **Reads** go to written data: a zone with less than a block written
//!   is replaced by the nearest one with data (none: the job ends, as fio's
//!   does at end of file), random offsets are folded into the written
//!   part, and a read is cut at the write pointer (`read_beyond_wp` turns
//!   all of this off). A mixed job's first command is a write when nothing
//!   was written (`zbd_adjust_ddir`).
//! - **Resets** are Zone Management Send commands the job issues itself and
//!   waits for (fio's synchronous `blkzoned_reset_wp`); fio first waits
//!   for the job's writes in flight to complete (`io_u_quiesce`), which the
//!   twin does not: the reset is queued behind them on the dies instead.
//!
//! Left out: fio shares the write-zone set and the valid-data count
//! between the jobs on one device; the twin keeps them per job (the
//! drive's own open and active limits hold across jobs all the same);
//! `write_zone_remainder` and finishing zones whose remainder is below a
//! block (the twin's zone capacities are whole program units, so a
//! block size that divides the unit never leaves one); verify; trims.

use crate::model::drive::{Command, Drive, IoKind};
use crate::model::ftl::zones::{ZoneState, Zones};
use crate::run::workload::{IoSpec, RwPattern, Zbd};

/// fio's error number for a job it cannot set up (EINVAL).
pub const EINVAL: i32 = 22;

/// Where the next command goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Submit `cmd` (after resetting the zone at byte `reset`, if any);
    /// `skipped` bytes of the range were passed over (sequential writes
    /// jumping from a zone's capacity to its end).
    Io {
        /// The command.
        cmd: Command,
        /// A zone to reset first (its first byte).
        reset: Option<u64>,
        /// Bytes passed over.
        skipped: u64,
    },
    /// Nothing left to read or write: the job ends.
    Eof,
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
    random: bool,
    mixed: bool,
    max_write_zones: u32,
    write_zones: Vec<u32>,
    write_cnt: u32,
    /// Bytes written in the range (fio's `wp_valid_data_bytes`).
    valid: u64,
    pos: [u64; 3],
    wrote: bool,
    /// Zone resets the job issued (fio's `nr_zone_resets`).
    pub resets: u64,
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
            random: spec.rw.is_random(),
            mixed: matches!(spec.rw, RwPattern::ReadWrite | RwPattern::RandRw),
            max_write_zones,
            write_zones: Vec::with_capacity(max_write_zones as usize),
            write_cnt: 0,
            valid,
            pos: [start; 3],
            wrote: false,
            resets: 0,
        };
        job.reset_write_cnt();
        // Zones already open count against the limit (zbd_setup_files).
        if writes {
            for z in min_zone.max(m.conventional)..max_zone {
                if matches!(zones.state(z), ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened)
                    && !job.write_zone_get(z, zones)
                {
                    return Err((EINVAL, "Number of open zones exceeds max_open_zones limit".into()));
                }
            }
        }
        Ok(job)
    }

    /// Where the generator's next command `raw` goes on `drive`, with
    /// `left` bytes left to the job's limit.
    #[inline]
    pub fn next(&mut self, raw: Command, drive: &Drive, left: u64) -> Next {
        let zones = zones_of(drive).expect("a zbd job runs on a zoned drive");
        if raw.kind == IoKind::Read && !self.mixed {
            return self.read(raw, zones);
        }
        let mut kind = raw.kind;
        if kind == IoKind::Read && self.mixed && !self.wrote && !self.opts.read_beyond_wp {
            kind = IoKind::Write;
        }
        match kind {
            IoKind::Write => self.write(raw, zones, left),
            IoKind::Read => self.read(raw, zones),
            IoKind::Trim => Next::Io { cmd: raw, reset: None, skipped: 0 },
        }
    }

    /// Whether the job's writes are Zone Appends.
    pub fn appends(&self) -> bool {
        self.opts.append
    }

    fn zone_start(&self, z: u32) -> u64 {
        z as u64 * self.zone
    }

    fn zone_of(&self, offset: u64) -> u32 {
        ((offset / self.zone) as u32).clamp(self.min_zone, self.max_zone - 1)
    }

    /// Bytes writable left in zone `z` (fio's `zbd_zone_remainder`).
    fn remainder(&self, z: u32, zones: &Zones) -> u64 {
        if z < self.conventional {
            return self.zone;
        }
        match zones.state(z) {
            ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline => 0,
            _ => self.cap - written_bytes(zones, z, crate::model::nand::SECTOR_BYTES as u64),
        }
    }

    fn reset_write_cnt(&mut self) {
        let f = self.opts.reset_frequency;
        self.write_cnt = if f > 0.0 { (1.0 / f).min(u32::MAX as f64) as u32 } else { u32::MAX };
    }

    /// Add zone `z` to the write zones if it is not in them and the
    /// limits allow (`__zbd_write_zone_get`).
    fn write_zone_get(&mut self, z: u32, zones: &Zones) -> bool {
        if matches!(zones.state(z), ZoneState::Offline | ZoneState::ReadOnly) {
            return false;
        }
        if self.write_zones.contains(&z) {
            return self.remainder(z, zones) > 0;
        }
        let job_limit = self.opts.job_max_open_zones;
        if (job_limit > 0 && self.write_zones.len() as u32 >= job_limit)
            || self.write_zones.len() as u32 >= self.max_write_zones
        {
            return false;
        }
        self.write_zones.push(z);
        true
    }

    /// The zone a write is redirected to (`zbd_convert_to_write_zone`), or
    /// `None` when no zone can be written.
    fn write_zone(&mut self, zb: u32, offset: u64, zones: &Zones) -> Option<u32> {
        let min_bs = self.min_bs[IoKind::Write as usize];
        if self.write_zone_get(zb, zones) {
            return Some(zb);
        }
        let range = self.end - self.start;
        if !self.write_zones.is_empty() {
            // A write zone chosen by the offset's place in the range.
            let i =
                ((offset.saturating_sub(self.start)) as u128 * self.write_zones.len() as u128 / range as u128) as usize;
            let z = self.write_zones[i.min(self.write_zones.len() - 1)];
            if self.remainder(z, zones) >= min_bs {
                return Some(z);
            }
        }
        // The next zones after zb, wrapping, for one that can join.
        let mut z = zb;
        for _ in 0..(self.max_zone - self.min_zone) {
            z = if z + 1 >= self.max_zone { self.min_zone } else { z + 1 };
            if z < self.conventional || self.write_zones.contains(&z) {
                continue;
            }
            if self.write_zone_get(z, zones) {
                return Some(z);
            }
        }
        // Any write zone with room left.
        self.write_zones.iter().copied().find(|&w| self.remainder(w, zones) >= min_bs)
    }

    #[inline(never)]
    fn write(&mut self, raw: Command, zones: &Zones, left: u64) -> Next {
        let w = IoKind::Write as usize;
        let min_bs = self.min_bs[w];
        let mut skipped = 0;
        let offset = if self.random {
            raw.offset
        } else {
            // setup_zbd_zone_mode: jump from the capacity to the zone end,
            // wrap at the end of the range.
            let mut p = self.pos[w];
            if p >= self.end {
                p = self.start;
            }
            let zs = p / self.zone * self.zone;
            if p / self.zone >= self.conventional as u64 && p >= zs + self.cap {
                skipped = zs + self.zone - p;
                if skipped >= left {
                    // The skip completes the job's bytes: it ends there
                    // (fio's next offset is past the end of the file).
                    self.pos[w] = zs + self.zone;
                    return Next::Eof;
                }
                p = zs + self.zone;
                if p >= self.end {
                    p = self.start;
                }
            }
            p
        };
        let zb = self.zone_of(offset);
        if zb < self.conventional {
            // A conventional zone: any offset, not across into the next zone.
            let len = (raw.len as u64).min(self.zone_start(zb + 1) - offset) / min_bs * min_bs;
            let cmd = Command { kind: IoKind::Write, offset, len: len.max(min_bs) as u32 };
            self.pos[w] = offset + cmd.len as u64;
            self.wrote = true;
            return Next::Io { cmd, reset: None, skipped };
        }
        let Some(z) = self.write_zone(zb, offset, zones) else { return Next::Eof };
        let mut reset = false;
        if self.opts.reset_frequency > 0.0
            && self.valid as f64 >= (self.end - self.start) as f64 * self.opts.reset_threshold
        {
            self.write_cnt -= 1;
            if self.write_cnt == 0 {
                self.reset_write_cnt();
                reset = true;
            }
        }
        let page = crate::model::nand::SECTOR_BYTES as u64;
        let mut wp = written_bytes(zones, z, page);
        if reset || self.remainder(z, zones) < min_bs {
            self.valid -= wp.min(self.valid);
            wp = 0;
            self.resets += 1;
            reset = true;
        }
        let len = (raw.len as u64).min(self.cap - wp) / min_bs * min_bs;
        if len == 0 {
            return Next::Eof;
        }
        let offset = self.zone_start(z) + wp;
        self.valid += len;
        if wp + len >= self.cap {
            self.write_zones.retain(|&x| x != z);
        }
        self.pos[w] = offset + len;
        self.wrote = true;
        // A Zone Append names the zone; the drive writes at its pointer
        // (where `offset` is).
        let at = if self.opts.append { self.zone_start(z) } else { offset };
        let cmd = Command { kind: IoKind::Write, offset: at, len: len as u32 };
        Next::Io { cmd, reset: reset.then(|| self.zone_start(z)), skipped }
    }

    #[inline(always)]
    fn read(&mut self, raw: Command, zones: &Zones) -> Next {
        let r = IoKind::Read as usize;
        if self.opts.read_beyond_wp {
            return Next::Io { cmd: raw, reset: None, skipped: 0 };
        }
        let min_bs = self.min_bs[r];
        let offset = if self.random {
            raw.offset
        } else {
            let p = self.pos[r];
            if p >= self.end {
                self.start
            } else {
                p
            }
        };
        let orig = self.zone_of(offset);
        let mut z = orig;
        let mut range = self.readable(z, zones);
        let mut offset = offset;
        if range < min_bs || (!self.random && offset + min_bs > self.zone_start(z) + range) {
            let Some(f) = self.find_readable(z, min_bs, zones) else { return Next::Eof };
            z = f;
            range = self.readable(z, zones);
            if !self.random {
                offset = self.zone_start(z);
            }
        }
        let len = raw.len as u64;
        if range <= len {
            offset = self.zone_start(z);
        } else if self.random {
            offset = self.zone_start(z) + (raw.offset - self.zone_start(orig)) % (range - len) / min_bs * min_bs;
        }
        let end = self.zone_start(z) + range;
        let len = len.min(end - offset) / min_bs * min_bs;
        if len == 0 {
            return Next::Eof;
        }
        self.pos[r] = offset + len;
        Next::Io { cmd: Command { kind: IoKind::Read, offset, len: len as u32 }, reset: None, skipped: 0 }
    }
}

impl ZbdJob {
    /// Bytes a read may cover in zone `z`: a conventional zone's all, an
    /// offline zone's none, else what was written.
    #[inline]
    fn readable(&self, z: u32, zones: &Zones) -> u64 {
        if z < self.conventional {
            self.zone
        } else if zones.state(z) == ZoneState::Offline {
            0
        } else {
            written_bytes(zones, z, crate::model::nand::SECTOR_BYTES as u64)
        }
    }

    /// fio's `zbd_find_zone`: the next zone after `z` with at least
    /// `min_bs` to read (and, for random reads, the nearest before it
    /// too); `None`: none has.
    #[cold]
    fn find_readable(&self, z: u32, min_bs: u64, zones: &Zones) -> Option<u32> {
        for d in 1..=(self.max_zone - self.min_zone) {
            let after = z + d;
            if after < self.max_zone && self.readable(after, zones) >= min_bs {
                return Some(after);
            }
            if self.random && z >= self.min_zone + d && self.readable(z - d, zones) >= min_bs {
                return Some(z - d);
            }
        }
        None
    }
}

/// Bytes written in zone `z` (its whole capacity when full).
fn written_bytes(zones: &Zones, z: u32, page: u64) -> u64 {
    zones.written(z) as u64 * page
}
