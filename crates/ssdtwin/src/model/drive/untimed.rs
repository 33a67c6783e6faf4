//! Untimed work on a drive's FTL: [`Drive::untimed`] hands out a guard
//! through which writes, trims, flushes and background work change the
//! FTL's state (the same decisions, in the same order) without recording
//! NAND operations for the drive to time. Used to prepare a drive state
//! (preconditioning, aging) far faster than in simulated time. Dropping
//! the guard restores the FTL's previous mode; the drive's clocks are the
//! caller's (a preparation resets them, aging moves the FTL's clock).

use super::Drive;
use crate::model::ftl::extrapolate::{Extrapolated, WearMark};
use crate::model::ftl::install::InstalledBlock;
use crate::model::ftl::FtlCounters;

/// Untimed writes on a drive (see the module docs); made by
/// [`Drive::untimed`].
#[derive(Debug)]
pub struct UntimedWrites<'a> {
    drive: &'a mut Drive,
    /// Whether the FTL recorded operations before.
    emitted: bool,
}

impl Drive {
    /// Work on the FTL without timing it until the guard is dropped:
    /// waiting NAND operations are dropped, and none are recorded.
    pub fn untimed(&mut self) -> UntimedWrites<'_> {
        let emitted = self.ftl.emits_ops();
        self.ftl.set_emit_ops(false);
        UntimedWrites { drive: self, emitted }
    }
}

impl UntimedWrites<'_> {
    /// Write logical page `lpn`.
    #[inline]
    pub fn write(&mut self, lpn: u32) {
        self.drive.ftl.write(lpn);
    }

    /// The next `pages` writes go through placement identifier `pid`
    /// (see [`crate::model::ftl::Ftl::set_placement`]; nothing without
    /// `[fdp]`).
    pub fn set_placement(&mut self, pid: u32, pages: u32) {
        let now = self.drive.ftl.clock();
        self.drive.ftl.set_placement(pid, pages, now);
    }

    /// A zoned namespace's check of a write of `n` pages at `first`,
    /// moving the zone's write pointer (see [`crate::model::ftl::Ftl::zone_write`]);
    /// the pages then go through [`UntimedWrites::write`].
    pub fn zone_write(&mut self, first: u32, n: u32) -> Result<(), crate::model::ftl::zones::ZoneStatus> {
        self.drive.ftl.zone_write(first, n)
    }

    /// Deallocate logical page `lpn`.
    #[inline]
    pub fn trim(&mut self, lpn: u32) {
        self.drive.ftl.trim(lpn);
    }

    /// Program the host's partially filled program unit now (padded).
    pub fn flush(&mut self) {
        self.drive.ftl.flush_host();
    }

    /// One step of background work (folding, GC); `false` when there is
    /// nothing to do.
    pub fn background_step(&mut self) -> bool {
        self.drive.ftl.background_step()
    }

    /// Set the FTL's clock (drive time, ns): the time blocks opened now
    /// are stamped with (the start of their data's retention).
    pub fn set_clock(&mut self, drive_ns: u64) {
        self.drive.ftl.set_clock(drive_ns);
    }

    /// Whether the drive has turned read-only (spare exhausted): writes
    /// and trims are refused by the timed path.
    #[inline]
    pub fn read_only(&self) -> bool {
        self.drive.ftl.read_only()
    }

    /// Hint: a coming write will invalidate the slot `lpn` maps to.
    #[inline]
    pub fn prefetch_write(&self, lpn: u32) {
        self.drive.ftl.prefetch_write(lpn);
    }

    /// Install a statistically built state into a page-mapped FTL
    /// ([`crate::model::ftl::Ftl::install`]).
    pub fn install(
        &mut self,
        blocks: &[InstalledBlock],
        mapped: u32,
        erase_counts: &[Vec<u32>; 2],
        counters: FtlCounters,
        seed: u64,
    ) {
        self.drive.ftl.install(blocks, mapped, erase_counts, counters, seed);
    }

    /// Carry a workload's wear forward
    /// ([`crate::model::ftl::Ftl::extrapolate_wear`]).
    pub fn extrapolate_wear(
        &mut self,
        since: &WearMark,
        window: &WearMark,
        repeat: f64,
        shift_ns: u64,
        seed: u64,
    ) -> Extrapolated {
        self.drive.ftl.extrapolate_wear(since, window, repeat, shift_ns, seed)
    }

    /// Set every block's erase counts, native and SLC mode, as if the
    /// drive had been cycled so often (a drive taken from the field).
    pub fn set_erase_counts(&mut self, native: u32, slc: u32) {
        self.drive.ftl.set_erase_counts(native, slc);
    }

    /// The drive, to read.
    pub fn drive(&self) -> &Drive {
        self.drive
    }
}

impl Drop for UntimedWrites<'_> {
    fn drop(&mut self) {
        self.drive.ftl.set_emit_ops(self.emitted);
    }
}
