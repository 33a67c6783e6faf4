//! The whole drive: a host command's way through host interface →
//! controller → FTL → flash scheduler → channels and dies.
//!
//! [`Drive::submit`] takes a command at a virtual time and returns when it
//! completes. On the way it:
//! 1. waits for a queue slot of the drive ([`HostInterface::admit`]);
//! 2. costs a controller core ([`Cores`]);
//! 3. for a **read**: looks each 4 KiB up in the map; data still in the
//!    write buffer is served from there, unmapped data is returned as
//!    zeros, the rest is read with one (multi-plane) page read per row,
//!    ECC-decoded and streamed to the host as each row arrives;
//! 4. for a **write**: waits for write-buffer space, moves the data over
//!    the link, lets the FTL place it, and schedules the program units the
//!    FTL fills (plus any foreground GC it runs); write-back acknowledges
//!    once the data is buffered, write-through once it is programmed;
//! 5. for a **trim**: unmaps the pages (controller time only).
//!
//! Background work (GC during idle) is [`Drive::background_step`].
//!
//! With a media error model ([`crate::model::media`]) a page read may need
//! read-retry steps and a soft decode, each an extra read of the die; an
//! uncorrectable read fails the command with a media error
//! ([`Drive::last_error`]) and the block's data is relocated. A drive whose
//! spare is exhausted ([`crate::model::ftl::badblocks`]) fails writes and
//! trims.

use crate::model::controller::{Cores, WriteBuffer};
use crate::model::flash::{Flash, Lane};
use crate::model::ftl::mapping::SchemeTiming;
use crate::model::ftl::zones::ZoneStatus;
use crate::model::ftl::{Ftl, NandOp, Purpose};
use crate::model::host::HostInterface;
use crate::model::media::Media;
use crate::model::nand::{CellMode, CellTiming, SECTOR_BYTES};
use crate::model::params::{BufferRelease, DriveModel, OpOrder};
use crate::model::power::PowerMeter;
use crate::model::thermal::Thermal;

mod image;
mod untimed;

pub use image::{DriveImage, DriveImageRef};
pub use untimed::UntimedWrites;

mod fua;
mod parts;
mod placement;
mod write;
mod zoned;

/// What a host command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    /// Read.
    Read = 0,
    /// Write.
    Write = 1,
    /// Deallocate (TRIM / NVMe DSM deallocate).
    Trim = 2,
}

/// A host command: `len` bytes at byte `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// Read, write or trim.
    pub kind: IoKind,
    /// Byte offset (LBA × sector size).
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
}

/// Drive-level counters not kept by the parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DriveCounters {
    /// 4 KiB slots the host read (mapped or not).
    pub host_slots_read: u64,
    /// 4 KiB reads served from the write buffer.
    pub buffer_read_hits: u64,
    /// 4 KiB reads of unmapped (never written or trimmed) pages.
    pub unmapped_reads: u64,
    /// Host reads that failed with an uncorrectable media error.
    pub media_errors: u64,
    /// Host writes and trims refused because the drive is read-only.
    pub write_errors: u64,
}

/// Why a host command failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoError {
    /// A read found data no decode could correct (NVMe Unrecovered Read
    /// Error).
    Media,
    /// A write or trim to a drive that turned read-only (NVMe Namespace
    /// is Write Protected / spare exhausted).
    ReadOnly,
    /// A command a zoned namespace's rules refuse (the NVMe status).
    Zone(ZoneStatus),
}

/// A simulated drive.
#[derive(Debug, Clone)]
pub struct Drive {
    /// The validated specification.
    pub(in crate::model) model: DriveModel,
    /// Host link and command slots.
    host: HostInterface,
    /// Controller cores.
    cores: Cores,
    /// Write buffer.
    pub(in crate::model) buffer: WriteBuffer,
    /// Flash translation layer.
    pub(in crate::model) ftl: Ftl,
    /// Flash array (scheduler, channels, dies).
    flash: Flash,
    /// Counters.
    counters: DriveCounters,
    /// Power states and energy.
    power: PowerMeter,
    /// Temperature and thermal throttling (`None`: no `[thermal]`).
    pub(in crate::model) thermal: Option<Thermal>,
    /// Bit errors and ECC (`None`: no `[controller.ecc]`).
    media: Option<Media>,
    /// Drive time (ns since its life began) at which the current clock's
    /// zero lies: the clock restarts at 0 after a preparation, and time
    /// powered off passes here ([`Drive::pass_time_powered_off`]).
    clock_base_ns: u64,
    /// Latest time the drive was given.
    last_t: u64,
    /// How the last command failed (`None`: it succeeded).
    last_error: Option<IoError>,
    /// The placement identifier the next write carries (set by
    /// [`Drive::place_next`], taken by the write; 0, the default
    /// placement, otherwise).
    next_pid: u32,
    /// Whether the FTL's clock follows the commands: the media model ages
    /// data by it, and with `[fdp]` the events of a failed program carry
    /// it (bad-block management). An *Invalid Placement Identifier*
    /// event takes the command's time directly, and the other events'
    /// commands set the clock themselves.
    clocked: bool,
    /// A block an uncorrectable read asked to relocate.
    relocate_block: u32,
    timings: [CellTiming; 2],
    gc_ready: Vec<u64>,
    /// Per die, when the latest garbage-collection or fold program
    /// scheduled there completes: a victim is erased only after the
    /// programs carrying its data are done (the relocated data stays
    /// readable in the victim until then, as firmware must keep it for
    /// power-loss safety and for multi-pass programming of QLC).
    reloc_done: Vec<u64>,
    submits: u32,
    /// Completion of the latest serial operation scheduled (the mapping
    /// scheme's page-by-page copying, see [`SchemeTiming`]).
    serial_done: u64,
    /// How the mapping scheme's operations are booked (asked once).
    booking: SchemeTiming,
    /// Completion of the latest erase scheduled since it was last cleared
    /// (a zone reset's).
    erase_done: u64,
    /// Ganged channels: bytes of the host's partially filled program unit
    /// already released from the write buffer, as whole member pages
    /// that moved into their dies' page registers (see `write`).
    gang_released: u64,
}

impl Drive {
    /// A fresh (secure-erased) drive.
    pub fn new(model: DriveModel) -> Drive {
        let geo = &model.geometry;
        let c = &model.spec.controller;
        let timings = [model.native.clone(), model.slc_timing.clone()];
        let ftl = Ftl::new(&model);
        let mut flash = Flash::new(
            geo.dies,
            geo.channels,
            geo.total_blocks,
            model.channel_fs_per_byte,
            model.channel_bytes_per_slot,
            model.read_suspend_ns,
            c.op_order == OpOrder::ReadsFirst,
        );
        flash.set_gang(model.spec.geometry.gang, model.member_row_slots());
        flash.set_read_cache(model.spec.nand.read_cache);
        Drive {
            host: HostInterface::new(&model),
            cores: Cores::new(c.cores, c.cmd_overhead_ns),
            buffer: WriteBuffer::new(c.write_buffer_bytes),
            booking: ftl.scheme_timing(),
            ftl,
            flash,
            gang_released: 0,
            counters: DriveCounters::default(),
            power: PowerMeter::new(model.power.clone()),
            thermal: model.thermal.clone().map(Thermal::new),
            media: model.media.as_ref().and_then(Media::new),
            clock_base_ns: 0,
            last_t: 0,
            last_error: None,
            next_pid: 0,
            clocked: Self::clocked(&model),
            relocate_block: crate::model::nand::NONE,
            timings,
            gc_ready: vec![0; geo.dies as usize],
            reloc_done: vec![0; geo.dies as usize],
            submits: 0,
            serial_done: 0,
            erase_done: 0,
            model,
        }
    }

    /// Whether a drive of `model` keeps the FTL's clock in step with its
    /// commands (see [`Drive::clocked`]).
    fn clocked(model: &DriveModel) -> bool {
        let media = model.media.as_ref();
        media.and_then(Media::new).is_some() || model.fdp.is_some() && media.is_some_and(|m| m.bad_blocks.is_some())
    }

    /// Logical 4 KiB pages the host can address.
    pub fn user_lpns(&self) -> u32 {
        self.model.user_lpns
    }

    /// Capacity the host sees, bytes.
    pub fn user_bytes(&self) -> u64 {
        self.model.user_lpns as u64 * SECTOR_BYTES as u64
    }

    /// Forget all timing state (keeps the data): the clock may restart at 0.
    pub fn reset_time(&mut self) {
        self.clock_base_ns += self.last_t.max(self.idle_since());
        self.last_t = 0;
        self.ftl.set_clock(self.clock_base_ns);
        self.host.reset_time();
        self.cores.reset_time();
        self.buffer.reset();
        self.flash.reset_time();
        self.power.reset_time();
        let baseline = self.thermal.as_ref().and_then(|_| self.energy_parts(0));
        if let (Some(th), Some((total, nand))) = (&mut self.thermal, baseline) {
            th.reset_time(total, nand);
        }
        self.gc_ready.fill(0);
        self.reloc_done.fill(0);
        self.serial_done = 0;
    }

    /// Secure erase: all data gone, every block free. This is the start
    /// of an untimed preparation (a drive state, a suite's test data), so
    /// the drive also starts at ambient temperature: the twin does not
    /// know how hot the untimed work would leave it, and a test's results
    /// must not depend on which tests ran before it.
    pub fn secure_erase(&mut self) {
        self.ftl.secure_erase();
        if let Some(th) = &mut self.thermal {
            th.cool_down();
        }
        self.reset_time();
    }

    /// A format with user-data erase issued at `now` (the
    /// [`Phase::SecureErase`](crate::run::workload::Phase) phase): once the
    /// work already booked is done, every block that holds data or has
    /// been opened is erased in its own cell mode (dies in parallel, each
    /// erasing its blocks one after another), then the map is empty and
    /// every block free. Returns when the last erase completes.
    pub fn format(&mut self, now: u64) -> u64 {
        let start = self.flash.all_idle_at().max(now) + self.model.spec.controller.cmd_overhead_ns;
        let mut done = start;
        let blocks: Vec<(u32, CellMode)> =
            self.ftl.blocks_to_erase().into_iter().map(|b| (b, self.ftl.mode_of(b))).collect();
        for &(block, mode) in &blocks {
            let die = self.model.geometry.die_of_block(block);
            let tbers = self.timings[mode as usize].tbers_ns;
            done = done.max(self.flash.erase(start, die, block, tbers, mode, Lane::Priority));
        }
        self.ftl.secure_erase();
        for &(block, mode) in &blocks {
            self.ftl.count_erase(block, mode);
        }
        self.gc_ready.fill(0);
        self.reloc_done.fill(0);
        self.power.busy(now, done);
        done
    }

    /// Let `ns` of drive time pass with the drive powered off (data
    /// retention continues; nothing else happens). The clock of the
    /// commands does not move.
    pub fn pass_time_powered_off(&mut self, ns: u64) {
        self.clock_base_ns += ns;
        self.ftl.set_clock(self.clock_base_ns + self.last_t);
    }

    /// The drive's age at clock time `t`: ns since its life began (all
    /// clocks and powered-off time included).
    pub fn drive_time_ns(&self, t: u64) -> u64 {
        self.clock_base_ns + t
    }

    /// How the last command submitted failed (`None`: it succeeded).
    #[inline]
    pub fn last_error(&self) -> Option<IoError> {
        self.last_error
    }

    /// Submit a command at time `t`; returns its completion time (see
    /// [`Drive::last_error`] for whether it succeeded).
    #[inline]
    pub fn submit(&mut self, cmd: Command, t: u64) -> u64 {
        let mut cmd = cmd;
        self.submit_inner(&mut cmd, t, false)
    }

    /// [`Drive::submit`], or a Zone Append (`append`), whose LBA the drive
    /// chooses and writes into `cmd`; a write goes through the placement
    /// [`Drive::place_next`] named on a drive with `[fdp]` (`write`).
    #[inline(always)]
    fn submit_inner(&mut self, cmd: &mut Command, t: u64, append: bool) -> u64 {
        self.submits += 1;
        self.last_error = None;
        self.last_t = t;
        if self.clocked {
            // The media model ages data by it; FDP events carry it.
            self.ftl.set_clock(self.clock_base_ns + t);
        }
        let arrived = t;
        // A drive resting in a non-operational state wakes first.
        let t =
            if self.power.saving() && t > self.power.busy_end() { self.power.wake(self.idle_since(), t) } else { t };
        // A throttling drive holds the command (one comparison otherwise).
        let t = match &self.thermal {
            Some(th) if t >= th.next_poll_ns || th.level > 0 => self.thermal_gate(t),
            _ => t,
        };
        if self.submits % 64 == 0 {
            self.flash.prune(t);
            self.host.prune(t);
        }
        let entered = self.host.admit(t);
        let ready = self.cores.process(entered);
        if self.model.zns.is_some() {
            if let Err(s) = self.zone_check(cmd, append) {
                // Refused by the zone rules: controller time only.
                self.last_error = Some(IoError::Zone(s));
                self.host.occupy_until(ready);
                self.power.busy(arrived, ready);
                return ready;
            }
        } else if self.model.fdp.is_some() && cmd.kind == IoKind::Write {
            // The write's pages go through the placement it carries
            // (`Drive::place_next`; a write that carries none, the
            // default); its time is an invalid placement's event's.
            let pid = std::mem::take(&mut self.next_pid);
            let (first, end) = self.lpn_range(*cmd);
            self.ftl.set_placement(pid, end - first, self.clock_base_ns + arrived);
        }
        let cmd = *cmd;
        let serial_before = self.serial_done;
        let done = match cmd.kind {
            IoKind::Read => self.read(cmd, ready),
            IoKind::Write => self.write(cmd, ready),
            IoKind::Trim => self.trim(cmd, ready),
        };
        if self.serial_done > serial_before && self.booking.serial_holds_core {
            // The firmware ran the serial work on this command's core.
            self.cores.hold(ready, self.serial_done);
        }
        self.host.occupy_until(done);
        self.power.busy(arrived, done);
        done
    }

    /// A Dataset Management (deallocate) command with several ranges
    /// (`ranges`, each a trim), or an ATA DATA SET MANAGEMENT TRIM with
    /// several entries, submitted at `t`: one queue slot and one command's
    /// controller work for all of them. Returns its completion time.
    pub fn submit_trims(&mut self, ranges: &[Command], t: u64) -> u64 {
        let Some((&first, rest)) = ranges.split_first() else { return t };
        let done = self.submit(first, t);
        if self.last_error.is_some() {
            return done;
        }
        // The other ranges deallocate in the same command (trims cost no
        // flash time: `trim` returns its start).
        for &r in rest {
            debug_assert_eq!(r.kind, IoKind::Trim);
            self.trim(r, done);
        }
        done
    }

    /// When a command arriving at `t` would find a free queue slot (`t`
    /// itself if one is free; see [`HostInterface::next_free`]).
    pub fn next_free_slot(&mut self, t: u64) -> u64 {
        self.host.next_free(t)
    }

    /// A flush (NVMe Flush, ATA FLUSH CACHE) issued at `now`: the host
    /// stream's partially filled program unit is programmed (padded), and
    /// the command completes when every write acknowledged before it is on
    /// flash (its program has completed, or started under
    /// `buffer_release = "program-start"`, the drive's power-loss
    /// protection then covering the rest). On a write-through drive this
    /// costs only the command overhead. Returns the completion time.
    pub fn flush(&mut self, now: u64) -> u64 {
        let entered = self.host.admit(now);
        let ready = self.cores.process(entered);
        self.ftl.flush_host();
        let (last, _) = self.schedule_ops(ready, ready);
        let done = last.max(self.buffer.drained_at(ready));
        self.host.occupy_until(done);
        self.power.busy(now, done);
        done
    }

    /// When the drive last became idle: its last command completed and
    /// every NAND operation (host, GC, folding) has finished.
    pub fn idle_since(&self) -> u64 {
        self.power.busy_end().max(self.flash.all_idle_at())
    }

    /// Turn APST on or off at `now` (a host setting).
    pub fn set_apst(&mut self, on: bool, now: u64) {
        let idle = self.idle_since();
        self.power.set_apst(on, idle, now);
    }

    /// Turn link power management (ASPM L1 substates, SATA partial,
    /// slumber, DevSleep: the drive file's `[[power.link_state]]`) on or
    /// off at `now` (a host setting).
    pub fn set_link_pm(&mut self, on: bool, now: u64) {
        let idle = self.idle_since();
        self.power.set_link_pm(on, idle, now);
    }

    /// Energy drawn since the clock began, J (`None`: the drive has no
    /// power model). Work already scheduled counts in full.
    pub fn energy_j(&self, now: u64) -> Option<f64> {
        self.power.energy_j(
            now,
            self.idle_since(),
            self.flash.counters.array_ns,
            self.flash.channel_bytes(),
            self.host.bytes_moved,
        )
    }

    /// Energy drawn since the clock began (total, NAND arrays), J.
    fn energy_parts(&self, now: u64) -> Option<(f64, f64)> {
        Some((self.energy_j(now)?, self.power.nand_j(self.flash.counters.array_ns)?))
    }

    /// The host sets its Host Controlled Thermal Management thresholds
    /// `[TMT1, TMT2]` in °C (NVMe Set Features FID 10h), or turns HCTM off
    /// (`None`), at `now`. Returns false (and does nothing) on a drive
    /// without `[thermal]`.
    pub fn set_hctm(&mut self, tmt_c: Option<[f64; 2]>, now: u64) -> bool {
        self.thermal_advance(now);
        match &mut self.thermal {
            Some(th) => {
                th.set_hctm(tmt_c);
                true
            }
            None => false,
        }
    }

    /// Bring the thermal model up to `t` (no-op without `[thermal]`),
    /// cutting the interval at the sensor poll period and letting the
    /// firmware poll its sensor at each poll time passed. Once the drive
    /// is idle at constant power and cool enough that no poll could
    /// throttle it, the rest is one closed-form step (O(1) however long).
    pub fn thermal_advance(&mut self, t: u64) {
        loop {
            let Some(th) = &self.thermal else { return };
            let (from, poll_ns) = (th.time_ns(), th.model.poll_ns);
            if t <= from {
                return;
            }
            if t > from + poll_ns && self.power.constant_from(self.idle_since()) <= from {
                let (total, nand) = self.energy_parts(t).expect("[thermal] needs [power]");
                if self.thermal.as_mut().expect("checked").advance_steady(t, total, nand) {
                    return;
                }
            }
            let Some(th) = &self.thermal else { return };
            let poll_due = th.next_poll_ns;
            let step_end = t.min(from + th.model.poll_ns).min(poll_due.max(from + 1));
            let (total, nand) = self.energy_parts(step_end).expect("[thermal] needs [power]");
            let th = self.thermal.as_mut().expect("checked");
            th.advance(step_end, total, nand);
            if step_end >= poll_due {
                th.poll(step_end, total);
            }
        }
    }

    /// The drive is shut down at `off` (nothing booked after it) and
    /// powered up again at `on`: no energy is drawn in between and it
    /// cools towards ambient; its clock (what retention is measured
    /// against) runs on.
    pub fn power_off(&mut self, off: u64, on: u64) {
        self.thermal_advance(off);
        let idle = self.idle_since();
        self.power.power_off(idle, off, on);
        let energy = self.thermal.as_ref().and_then(|_| self.energy_parts(on));
        if let (Some(th), Some((total, nand))) = (&mut self.thermal, energy) {
            th.unpowered(on, total, nand);
        }
    }

    /// Work that wants to start at `t`: bring the thermal model up to
    /// date and return when the throttle lets it start.
    fn thermal_gate(&mut self, t: u64) -> u64 {
        self.thermal_advance(t);
        let Some(mut th) = self.thermal.take() else { return t };
        let start = th.gate(t, |at| self.energy_j(at).unwrap_or(0.0));
        self.thermal = Some(th);
        start
    }

    /// Temperatures as of the last thermal update (`None`: no `[thermal]`).
    pub fn temperatures(&self) -> Option<crate::model::thermal::Temperatures> {
        self.thermal.as_ref().map(Thermal::temperatures)
    }

    /// Hint: a coming command will look up the map entry of its first
    /// page. Changes no state.
    #[inline]
    pub fn prefetch_map(&self, cmd: Command) {
        let lpn = cmd.offset / SECTOR_BYTES as u64;
        if lpn < self.model.user_lpns as u64 {
            self.ftl.prefetch_lookup(lpn as u32);
        }
    }

    /// Hint: a coming write or trim will invalidate the slot its first
    /// page maps to. Changes no state.
    #[inline]
    pub fn prefetch_update(&self, cmd: Command) {
        let lpn = cmd.offset / SECTOR_BYTES as u64;
        if cmd.kind != IoKind::Read && lpn < self.model.user_lpns as u64 {
            self.ftl.prefetch_write(lpn as u32);
        }
    }

    fn lpn_range(&self, cmd: Command) -> (u32, u32) {
        let first = (cmd.offset / SECTOR_BYTES as u64) as u32;
        let end = (cmd.offset + cmd.len as u64).div_ceil(SECTOR_BYTES as u64) as u32;
        (first, end)
    }

    fn read(&mut self, cmd: Command, t: u64) -> u64 {
        let (first, end) = self.lpn_range(cmd);
        self.counters.host_slots_read += (end - first) as u64;
        let geo = self.model.geometry;
        let ecc = self.model.spec.controller.ecc_decode_ns;
        let hit_ns = self.model.spec.controller.buffer_read_ns;
        let mut remaining = cmd.len as u64;
        let mut done = t;
        // Bytes available without a NAND read (unmapped or buffered).
        let mut quick_bytes = 0u64;
        let mut quick_ready = t;
        let (mut cur_block, mut cur_row, mut cur_slots) = (u32::MAX, 0u32, 0u32);
        // Data reads start once the map entries are at hand (one lookup in
        // the map cache's memory for the command's entries, plus any
        // translation pages loaded from flash).
        let mut start = t + self.ftl.map_access_ns();
        for lpn in first..end {
            let slot = self.ftl.read(lpn);
            if self.ftl.has_ops() {
                // The mapping scheme loads map entries from flash first.
                let (_, map_ready) = self.schedule_ops(t, t);
                start = start.max(map_ready);
            }
            if slot == crate::model::nand::NONE {
                self.counters.unmapped_reads += 1;
                quick_bytes += SECTOR_BYTES as u64;
                continue;
            }
            let block = geo.block_of(slot);
            if self.ftl.is_unprogrammed(slot) || self.flash.block_prog_done[block as usize] > t {
                self.counters.buffer_read_hits += 1;
                quick_bytes += SECTOR_BYTES as u64;
                quick_ready = t + hit_ns;
                continue;
            }
            let row = geo.row_of(geo.offset_in_block(slot));
            if block == cur_block && row == cur_row {
                cur_slots += 1;
                continue;
            }
            if cur_slots > 0 {
                done = done.max(self.read_row(start, cur_block, cur_row, cur_slots, ecc, &mut remaining));
            }
            (cur_block, cur_row, cur_slots) = (block, row, 1);
        }
        if cur_slots > 0 {
            done = done.max(self.read_row(start, cur_block, cur_row, cur_slots, ecc, &mut remaining));
        }
        if quick_bytes > 0 {
            let bytes = quick_bytes.min(remaining);
            done = done.max(self.host.to_host(quick_ready, bytes.max(1)));
        }
        if self.relocate_block != crate::model::nand::NONE {
            // Firmware moves the failing block's data once the read
            // has failed.
            let block = std::mem::replace(&mut self.relocate_block, crate::model::nand::NONE);
            if self.ftl.relocate(block) {
                self.schedule_ops(done, done);
            }
        }
        done
    }

    /// Read `slots` slots of one row, decode, send to the host.
    #[inline]
    fn read_row(&mut self, t: u64, block: u32, row: u32, slots: u32, ecc: u64, remaining: &mut u64) -> u64 {
        let geo = &self.model.geometry;
        let die = geo.die_of_block(block);
        let mode = self.ftl.mode_of(block);
        let tr = self.timings[mode as usize].tr(row);
        let bytes = slots as u64 * SECTOR_BYTES as u64;
        let mut data = self.flash.read(t, die, tr, slots, mode, Lane::Priority) + ecc;
        if self.media.is_some() {
            data = self.decode(block, die, row, slots, data);
        }
        let link_bytes = bytes.min(*remaining).max(1);
        *remaining -= link_bytes.min(*remaining);
        self.host.to_host(data, link_bytes)
    }

    /// Errors of a page read of `slots` slots of `row` of `block` whose
    /// first hard decode ends at `data`: read retries and soft decoding
    /// (extra reads of the die), or a media error. Returns when the data
    /// is decoded.
    #[cold]
    fn decode(&mut self, block: u32, die: u32, row: u32, slots: u32, mut data: u64) -> u64 {
        let media = self.media.as_mut().expect("called with a media model");
        let mode = self.ftl.mode_of(block);
        let (pe, programmed_at, reads) = self.ftl.note_block_read(block);
        let age = self.ftl.clock().saturating_sub(programmed_at);
        let rber = media.rber(mode, pe, age, reads);
        let out = media.decode(rber, slots);
        let (soft_reads, soft_ns) = (media.ecc.soft_reads, media.ecc.soft_decode_ns);
        let tr = self.timings[mode as usize].tr(row);
        let ecc = self.model.spec.controller.ecc_decode_ns;
        for _ in 0..out.retries {
            data = self.flash.read(data, die, tr, slots, mode, Lane::Priority) + ecc;
        }
        if out.soft {
            for _ in 0..soft_reads {
                data = self.flash.read(data, die, tr, slots, mode, Lane::Priority);
            }
            data += soft_ns;
        }
        if out.uncorrectable {
            self.counters.media_errors += 1;
            self.last_error = Some(IoError::Media);
            self.relocate_block = block;
        }
        data
    }

    /// Give times to the NAND operations the FTL produced. `t` is when the
    /// controller issues them and `data_ready` when host data for programs
    /// is in the buffer. Returns when the last host program completes and
    /// when the last read's data is decoded.
    fn schedule_ops(&mut self, t: u64, data_ready: u64) -> (u64, u64) {
        let mut last_host_prog = data_ready;
        let mut last_read = t;
        let geo = &self.model.geometry;
        let ecc = self.model.spec.controller.ecc_decode_ns;
        let mut ops = self.ftl.take_ops();
        for op in ops.drain(..) {
            match op {
                NandOp::Read { purpose, block, row, slots } => {
                    let die = geo.die_of_block(block);
                    let mode = self.ftl.mode_of(block);
                    let tr = self.timings[mode as usize].tr(row);
                    let how = self.booking.of(purpose);
                    // Serial work copies page by page: each read waits for
                    // the previous operation on the die.
                    let earliest = if how.serial { t.max(self.gc_ready[die as usize]) } else { t };
                    let ready = if how.parts > 1 {
                        self.flash.read_parts(earliest, die, tr, slots, how.parts, mode) + ecc
                    } else {
                        self.flash.read(earliest, die, tr, slots, mode, lane_of(purpose)) + ecc
                    };
                    last_read = last_read.max(ready);
                    if self.media.is_some() {
                        // GC, folding and map reads disturb the block too.
                        self.ftl.note_block_read(block);
                    }
                    let g = &mut self.gc_ready[die as usize];
                    *g = (*g).max(ready);
                }
                NandOp::Program { purpose, block, row, slots } => {
                    let die = geo.die_of_block(block);
                    let mode = self.ftl.mode_of(block);
                    let tprog = self.timings[mode as usize].tprog(row);
                    let bytes = slots as u64 * SECTOR_BYTES as u64;
                    let how = self.booking.of(purpose);
                    let issued = if purpose == Purpose::HostWrite { data_ready } else { t };
                    let earliest = if how.program_waits { issued.max(self.gc_ready[die as usize]) } else { issued };
                    let done = if how.parts > 1 {
                        self.flash.program_parts(earliest, die, block, tprog, (slots, how.parts), mode)
                    } else {
                        self.flash.program(earliest, die, block, tprog, slots, (mode, lane_of(purpose)))
                    };
                    if purpose == Purpose::HostWrite {
                        let release = match self.model.spec.controller.buffer_release {
                            BufferRelease::ProgramDone => done,
                            BufferRelease::ProgramStart => done - tprog,
                        };
                        // (Member pages a ganged unit released early are
                        // no longer in the buffer.)
                        self.buffer.release_at(release, bytes.saturating_sub(std::mem::take(&mut self.gang_released)));
                        last_host_prog = last_host_prog.max(done);
                    }
                    if how.serial {
                        self.gc_ready[die as usize] = done;
                        self.serial_done = self.serial_done.max(done);
                    }
                    if is_relocation(purpose) {
                        let r = &mut self.reloc_done[die as usize];
                        *r = (*r).max(done);
                    }
                }
                NandOp::Erase { purpose, block } => {
                    let die = geo.die_of_block(block);
                    let mode = self.ftl.mode_of(block);
                    let tbers = self.timings[mode as usize].tbers_ns;
                    let mut earliest = t.max(self.gc_ready[die as usize]);
                    if is_relocation(purpose) {
                        // Relocation moves data within the victim's die:
                        // its copies must be programmed before it is erased.
                        earliest = earliest.max(self.reloc_done[die as usize]);
                    }
                    let done = self.flash.erase(earliest, die, block, tbers, mode, lane_of(purpose));
                    self.erase_done = self.erase_done.max(done);
                    if self.booking.of(purpose).serial {
                        self.gc_ready[die as usize] = done;
                        self.serial_done = self.serial_done.max(done);
                    }
                }
            }
        }
        self.ftl.recycle_ops(ops);
        (last_host_prog, last_read)
    }

    /// One step of background work at `now` while the host is idle
    /// (folding or GC, one native program unit at a time; see
    /// [`Ftl::background_step`]). Returns when that work completes, or
    /// `None` when there is nothing to do.
    pub fn background_step(&mut self, now: u64) -> Option<u64> {
        if !self.ftl.background_step() {
            return None;
        }
        // A throttling drive holds its background work too.
        let now = match &self.thermal {
            Some(_) => self.thermal_gate(now),
            None => now,
        };
        self.schedule_ops(now, now);
        let done = self.flash.all_idle_at().max(now);
        self.power.busy(now, done);
        Some(done)
    }

    /// Write amplification so far: slots programmed / host slots written.
    pub fn waf(&self) -> f64 {
        super::counters::Counters::of(self).waf()
    }
}

/// The die queue an FTL operation waits in: programs, erases and the
/// reads of garbage collection and folding in order (map write-back too);
/// a map load serves the host command that waits for it, as its reads do,
/// and a merge (hybrid mapping) holds the command until it is done.
#[inline]
fn lane_of(purpose: Purpose) -> Lane {
    match purpose {
        Purpose::HostWrite | Purpose::Gc | Purpose::Fold | Purpose::MapStore | Purpose::ZoneReset => Lane::Queued,
        Purpose::Merge | Purpose::MapLoad => Lane::Priority,
    }
}

/// Garbage collection and folding: moving valid data out of a victim.
#[inline]
fn is_relocation(purpose: Purpose) -> bool {
    matches!(purpose, Purpose::Gc | Purpose::Fold)
}
