//! What a drive lets the rest of the simulator see of its parts: each
//! part to read (the specification, the FTL, the write buffer, the host
//! interface, the cores, the flash array, counters, power, media, heat),
//! and the few changes a host may ask of them beside its commands (the
//! relocation journal a data-keeping host follows, a new thermal peak
//! for a statistics window, a clock restart that keeps counters). Untimed
//! FTL work goes through [`super::UntimedWrites`].

use super::*;

impl Drive {
    /// The validated specification.
    #[inline]
    pub fn model(&self) -> &DriveModel {
        &self.model
    }

    /// The flash translation layer (to read; what changes it goes through
    /// the drive's commands, [`Drive::untimed`] or the methods below).
    #[inline]
    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }

    /// The write buffer.
    #[inline]
    pub fn buffer(&self) -> &WriteBuffer {
        &self.buffer
    }

    /// Temperature and thermal throttling (`None`: no `[thermal]`).
    #[inline]
    pub fn thermal(&self) -> Option<&Thermal> {
        self.thermal.as_ref()
    }

    /// Record where the FTL moves data (GC, folding, merges): on (`true`)
    /// or off ([`crate::model::ftl::Ftl::journal_relocations`]); a host
    /// that keeps the data itself (the NBD twin) follows the moves.
    pub fn journal_relocations(&mut self, on: bool) {
        self.ftl.journal_relocations(on);
    }

    /// Move the relocations recorded since the last call into `out`.
    pub fn drain_relocations(&mut self, out: &mut Vec<crate::model::ftl::journal::Relocation>) {
        self.ftl.drain_relocations(out);
    }

    /// [`Drive::reset_time`] for a drive loaded from a saved state: the
    /// write buffer's cumulative stall time is a counter and is kept.
    pub fn reset_time_keeping_counters(&mut self) {
        let blocked_ns = self.buffer.blocked_ns;
        self.reset_time();
        self.buffer.blocked_ns = blocked_ns;
    }

    /// Start a new peak temperature from now (a statistics window opens).
    pub fn reset_thermal_peak(&mut self) {
        if let Some(th) = &mut self.thermal {
            th.reset_peak();
        }
    }

    /// Host link and command slots.
    pub fn host(&self) -> &HostInterface {
        &self.host
    }

    /// Controller cores.
    pub fn cores(&self) -> &Cores {
        &self.cores
    }

    /// Flash array (scheduler, channels, dies).
    pub fn flash(&self) -> &Flash {
        &self.flash
    }

    /// Drive-level counters.
    pub fn counters(&self) -> &DriveCounters {
        &self.counters
    }

    /// Power states and energy.
    pub fn power(&self) -> &PowerMeter {
        &self.power
    }

    /// Bit errors and ECC (`None`: no `[controller.ecc]`).
    pub fn media(&self) -> Option<&Media> {
        self.media.as_ref()
    }
}
