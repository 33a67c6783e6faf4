//! Where a `zonemode=zbd` job's writes go, as fio 3.42's zbd.c decides
//! (`zbd_convert_to_write_zone`, `zbd_adjust_block`'s write case): the
//! set of write zones and its limits, zones left with less than a block
//! (finished, or written with `write_zone_remainder`), the resets of full
//! zones and those `zone_reset_frequency` asks for, and the cut of a
//! write to what its zone has left. The rules as a whole are the parent
//! module's doc ([`super`]).

use super::{written_bytes, Next, ZbdJob, W};
use crate::model::drive::{Command, IoKind};
use crate::model::ftl::zones::{ZoneAction, ZoneState, Zones};

impl ZbdJob {
    /// Bytes writable left in zone `z` (fio's `zbd_zone_remainder`).
    pub(super) fn remainder(&self, z: u32, zones: &Zones) -> u64 {
        if z < self.conventional {
            return self.zone;
        }
        if self.finishing(z) {
            return 0;
        }
        match zones.state(z) {
            ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline => 0,
            _ => self.cap - written_bytes(zones, z, crate::model::nand::SECTOR_BYTES as u64),
        }
    }

    /// Whether zone `z` has something left, but less than a block, that
    /// fio finishes rather than writes.
    pub(super) fn small_remainder(&self, z: u32, zones: &Zones) -> bool {
        let r = self.remainder(z, zones);
        !self.opts.write_zone_remainder && r > 0 && r < self.min_bs[W]
    }

    /// Finish zone `z` before the command (`zbd_finish_zone`).
    pub(super) fn finish(&mut self, z: u32) {
        self.ops.push((ZoneAction::Finish, self.zone_start(z)));
        self.finished[(z - self.min_zone) as usize] = true;
        self.finishes += 1;
    }

    /// A sequential job reached the end of its range with `left` bytes
    /// left to its limit: whether fio starts another pass (backend.c's
    /// `keep_running`; with `time_based`, `get_next_offset` wraps).
    pub(super) fn next_pass(&mut self, left: u64) -> bool {
        if self.time_based {
            return true;
        }
        if self.loops_left > 0 {
            self.loops_left -= 1;
            return true;
        }
        self.io_size && left >= self.max_bs
    }

    pub(super) fn reset_write_cnt(&mut self) {
        let f = self.opts.reset_frequency;
        self.write_cnt = if f > 0.0 { (1.0 / f).min(u32::MAX as f64) as u32 } else { u32::MAX };
    }

    /// Add zone `z` to the write zones if it is not in them and the
    /// limits allow (`__zbd_write_zone_get`).
    pub(super) fn write_zone_get(&mut self, z: u32, zones: &Zones) -> bool {
        if matches!(zones.state(z), ZoneState::Offline | ZoneState::ReadOnly) {
            return false;
        }
        if self.verify && self.verify_keeps(z, zones) {
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

    /// The write zone the offset's place in the range picks
    /// (`pick_random_zone_idx`; the set is not empty).
    pub(super) fn picked(&self, offset: u64) -> u32 {
        let range = self.end - self.start;
        let n = self.write_zones.len();
        let i = (offset.saturating_sub(self.start) as u128 * n as u128 / range as u128) as usize;
        self.write_zones[i.min(n - 1)]
    }

    /// The zone a write aimed at zone `zb` goes to
    /// (`zbd_convert_to_write_zone`), or `None` when no zone can be
    /// written; `offset` becomes the zone's start when the write moved.
    pub(super) fn write_zone(&mut self, mut zb: u32, offset: &mut u64, zones: &Zones) -> Option<u32> {
        let min_bs = self.min_bs[W];
        let fill = self.opts.write_zone_remainder;
        if self.small_remainder(zb, zones) {
            // Less than a block left: finish the zone and go on with the
            // next one (a sequential job in its last zone ends).
            self.write_zones.retain(|&x| x != zb);
            self.finish(zb);
            if zb + 1 >= self.max_zone && !self.random {
                self.range_over = true;
                return None;
            }
            loop {
                zb = if zb + 1 >= self.max_zone { self.min_zone } else { zb + 1 };
                if zb >= self.conventional {
                    break;
                }
            }
        }
        if self.write_zone_get(zb, zones) {
            return Some(zb);
        }
        let mut z = zb;
        if !self.write_zones.is_empty() {
            // A write zone chosen by the offset's place in the range.
            z = self.picked(*offset);
            if self.remainder(z, zones) >= min_bs {
                *offset = self.zone_start(z);
                return Some(z);
            }
        }
        if self.random {
            z = zb;
        }
        // The next zones, wrapping, for one that can join.
        for _ in 0..(self.max_zone - self.min_zone) {
            z = if z + 1 >= self.max_zone { self.min_zone } else { z + 1 };
            if z < self.conventional || self.write_zones.contains(&z) {
                continue;
            }
            if self.write_zone_get(z, zones) {
                *offset = self.zone_start(z);
                return Some(z);
            }
        }
        // Any write zone with room left.
        let roomy = |r: u64| if fill { r > 0 } else { r >= min_bs };
        if let Some(w) = self.write_zones.iter().copied().find(|&w| roomy(self.remainder(w, zones))) {
            *offset = self.zone_start(w);
            return Some(w);
        }
        if self.random && !fill && !self.verify && !self.write_zones.is_empty() {
            // Every write zone has less than a block left: finish one
            // (it is then reset and written).
            let w = self.picked(*offset);
            self.finish(w);
            *offset = self.zone_start(w);
            return Some(w);
        }
        None
    }

    #[inline(never)]
    pub(super) fn write(&mut self, raw: Command, zones: &Zones, left: u64, logged: bool) -> Next {
        let min_bs = self.min_bs[W];
        let fill = self.opts.write_zone_remainder;
        let mut offset = if self.random {
            raw.offset
        } else {
            // setup_zbd_zone_mode: jump from the capacity to the zone
            // end; at the end of the range the pass ends.
            let mut p = self.pos[W];
            let zs = p / self.zone * self.zone;
            if p < self.end && p / self.zone >= self.conventional as u64 && p >= zs + self.cap {
                p = zs + self.zone;
            }
            if p >= self.end {
                if !self.next_pass(left) {
                    self.pos[W] = p;
                    return Next::Eof;
                }
                p = self.start;
            }
            p
        };
        let mut zb = self.zone_of(offset);
        if zb < self.conventional {
            // A conventional zone: any offset, not across into the next zone.
            let len = (raw.len as u64).min(self.zone_start(zb + 1) - offset) / min_bs * min_bs;
            let cmd = Command { kind: IoKind::Write, offset, len: len.max(min_bs) as u32 };
            self.pos[W] = offset + cmd.len as u64;
            self.wrote = true;
            return Next::Io { cmd, manage: false };
        }
        let z = loop {
            let Some(z) = self.write_zone(zb, &mut offset, zones) else {
                // A sequential job that finished the last zone of its
                // range: its pass ends there.
                if !std::mem::take(&mut self.range_over) || !self.next_pass(left) {
                    return Next::Eof;
                }
                offset = self.start;
                zb = self.zone_of(offset);
                continue;
            };
            // A zone with less than a block left: again, which finishes it.
            if !self.small_remainder(z, zones) {
                break z;
            }
            zb = z;
        };
        let mut reset = self.verify && self.reset_due[(z - self.min_zone) as usize];
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
        let remainder = self.remainder(z, zones);
        let full = if fill { remainder == 0 } else { remainder < min_bs };
        if (reset || full) && self.verify {
            self.reset_due[(z - self.min_zone) as usize] = logged;
            if logged {
                return Next::VerifyFirst;
            }
        }
        if reset || full {
            // __zbd_reset_zone: an empty zone needs no reset.
            let data = self.fio_wp(z, zones);
            if data > 0 {
                self.valid -= data.min(self.valid);
                self.resets += 1;
                self.ops.push((ZoneAction::Reset, self.zone_start(z)));
                self.finished[(z - self.min_zone) as usize] = false;
            }
            wp = 0;
        }
        let mut len = (raw.len as u64).min(self.cap - wp);
        if !fill || len > min_bs {
            len = len / min_bs * min_bs;
        }
        if len == 0 {
            return Next::Eof;
        }
        let offset = self.zone_start(z) + wp;
        self.valid += len;
        if wp + len >= self.cap {
            self.write_zones.retain(|&x| x != z);
        }
        self.pos[W] = offset + len;
        self.wrote = true;
        // A Zone Append names the zone; the drive writes at its pointer
        // (where `offset` is).
        let at = if self.opts.append { self.zone_start(z) } else { offset };
        let cmd = Command { kind: IoKind::Write, offset: at, len: len as u32 };
        Next::Io { cmd, manage: !self.ops.is_empty() }
    }
}
