//! Where a `zonemode=zbd` job's reads and trims go, as fio 3.42's zbd.c
//! decides (`zbd_adjust_block`'s read and trim cases, `zbd_find_zone`,
//! `zbd_do_io_u_trim`): a read goes to written data, a random one folded
//! into its zone's written part; a trim is the reset of its zone. The
//! rules as a whole are the parent module's doc ([`super`]).
//!
//! A random read's fold costs a zone lookup and a division. A read of a
//! sequential zone finds its data from the zone's block list, with no
//! page map entry to warm (`model/ftl/zns.rs`); for a random job that
//! only reads over conventional zones too, the job's source asks where
//! the command [`LOOKAHEAD`] ahead will go, to warm its map entry
//! ([`ZbdJob::ahead_hint`]), and the job keeps that answer ([`FOLDS`] of
//! them) and takes it when the command's turn comes if no zone changed
//! since ([`Zones::changes`]; another job writing to the drive changes
//! them): the fold of a read-only job is a function of the command and
//! the zones alone, so the answer is the one [`ZbdJob::read`] would
//! compute, computed once.

use super::{zones_of, Next, ZbdJob};
use crate::model::drive::{Command, Drive, IoKind};
use crate::model::ftl::zones::{ZoneState, Zones};
use crate::run::workload::generator::LOOKAHEAD;

/// Folds kept (a power of two larger than [`LOOKAHEAD`]).
pub(super) const FOLDS: usize = 2 * LOOKAHEAD;

/// A random read folded ahead of its turn.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Fold {
    /// The generator's command: its offset and length.
    raw: u64,
    raw_len: u32,
    /// Where it goes.
    len: u32,
    offset: u64,
    /// [`Zones::changes`] when it was folded.
    changes: u64,
}

impl ZbdJob {
    /// A trim: the reset of its zone (`zbd_adjust_block`'s trim case and
    /// `zbd_do_io_u_trim`).
    #[cold]
    pub(super) fn trim(&mut self, raw: Command, zones: &Zones) -> Next {
        let t = IoKind::Trim as usize;
        let offset = if self.random {
            raw.offset
        } else {
            let p = if self.pos[t] >= self.end { self.start } else { self.pos[t] };
            self.pos[t] = p + raw.len as u64;
            p
        };
        let mut z = self.zone_of(offset);
        if z < self.conventional {
            return Next::Io { cmd: Command { offset, ..raw }, manage: false };
        }
        if self.random && self.fio_wp(z, zones) == 0 {
            // The nearest zone with data, or the end of the job.
            let Some(f) = self.find_readable(z, 1, zones) else { return Next::Eof };
            z = f;
        }
        let cmd = Command { kind: IoKind::Trim, offset: self.zone_start(z), len: raw.len };
        let data = self.fio_wp(z, zones);
        if data > 0 {
            self.valid -= data.min(self.valid);
            self.resets += 1;
            self.finished[(z - self.min_zone) as usize] = false;
        }
        // zbd_reset_zone: the zone leaves the write zones.
        self.write_zones.retain(|&x| x != z);
        Next::ZoneReset { cmd, reset: data > 0 }
    }

    /// Whether the job folds reads ahead ([`ZbdJob::ahead_hint`] does
    /// nothing otherwise).
    #[inline]
    pub fn folds_ahead(&self) -> bool {
        !self.folds.is_empty()
    }

    /// Where the generator's command `raw`, drawn [`LOOKAHEAD`] commands
    /// ahead of its turn, is likely to go: a random read of a read-only
    /// job folded into its zone's written part as [`ZbdJob::read`] will
    /// fold it (exact while the zones do not change, which reads do not
    /// do), any other command as it is. A hint for warming the map entry
    /// it will look up; the fold is kept for [`ZbdJob::read`] to take
    /// when the command's turn comes (see the module doc). Called once
    /// for each command [`ZbdJob::next`] places, before it, by a job that
    /// folds ahead ([`ZbdJob::folds_ahead`]).
    #[inline]
    pub fn ahead_hint(&mut self, raw: Command, drive: &Drive) -> Command {
        if self.folds.is_empty() || raw.kind != IoKind::Read {
            return raw;
        }
        let Some(zones) = zones_of(drive) else { return raw };
        let slot = (self.hints as usize + LOOKAHEAD) % FOLDS;
        self.hints = self.hints.wrapping_add(1);
        let z = self.zone_of(raw.offset);
        let range = self.readable(z, zones);
        let min_bs = self.min_bs[IoKind::Read as usize];
        if range < min_bs {
            // fio's search for another zone: left to the read itself.
            return raw;
        }
        let (offset, out) = self.place(raw, z, z, range, raw.offset);
        if out > 0 {
            self.folds[slot] =
                Fold { raw: raw.offset, raw_len: raw.len, offset, len: out as u32, changes: zones.changes() };
        }
        Command { offset, ..raw }
    }

    #[inline(always)]
    pub(super) fn read(&mut self, raw: Command, zones: &Zones) -> Next {
        let r = IoKind::Read as usize;
        if self.opts.read_beyond_wp {
            return Next::Io { cmd: raw, manage: false };
        }
        if !self.folds.is_empty() {
            // Folded already when it was the command ahead (ahead_hint).
            let f = self.folds[self.reads_taken as usize % FOLDS];
            self.reads_taken = self.reads_taken.wrapping_add(1);
            if f.raw == raw.offset && f.raw_len == raw.len && f.changes == zones.changes() {
                self.pos[r] = f.offset + f.len as u64;
                return Next::Io { cmd: Command { kind: IoKind::Read, offset: f.offset, len: f.len }, manage: false };
            }
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
        let (offset, len) = self.place(raw, orig, z, range, offset);
        if len == 0 {
            return Next::Eof;
        }
        self.pos[r] = offset + len;
        Next::Io { cmd: Command { kind: IoKind::Read, offset, len: len as u32 }, manage: false }
    }

    /// Where the read `raw` (in zone `orig`, at `offset` if sequential)
    /// goes in zone `z`, whose first `range` bytes are readable, and its
    /// length: the zone's start when the read does not fit, a random
    /// read's offset in its zone folded into the range, the length cut
    /// at the range's end (`zbd_adjust_block`'s read case); 0: nothing fits.
    #[inline(always)]
    fn place(&self, raw: Command, orig: u32, z: u32, range: u64, offset: u64) -> (u64, u64) {
        let min_bs = self.min_bs[IoKind::Read as usize];
        let len = raw.len as u64;
        let offset = if range <= len {
            self.zone_start(z)
        } else if self.random {
            self.zone_start(z) + align_down((raw.offset - self.zone_start(orig)) % (range - len), min_bs)
        } else {
            offset
        };
        let end = self.zone_start(z) + range;
        (offset, align_down(len.min(end - offset), min_bs))
    }

    /// Bytes a read may cover in zone `z`: a conventional zone's all, an
    /// offline zone's none, else what was written.
    #[inline]
    pub(super) fn readable(&self, z: u32, zones: &Zones) -> u64 {
        if z < self.conventional {
            self.zone
        } else if zones.state(z) == ZoneState::Offline {
            0
        } else {
            self.fio_wp(z, zones)
        }
    }

    /// fio's `zbd_find_zone`: the next zone after `z` with at least
    /// `min_bs` to read (and, for random reads, the nearest before it
    /// too); `None`: none has.
    #[cold]
    pub(super) fn find_readable(&self, z: u32, min_bs: u64, zones: &Zones) -> Option<u32> {
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

/// `x` rounded down to a multiple of `a` (a mask when `a` is a power of
/// two, as block sizes are: no division on the reads' path).
#[inline(always)]
fn align_down(x: u64, a: u64) -> u64 {
    if a.is_power_of_two() {
        x & !(a - 1)
    } else {
        x / a * a
    }
}
