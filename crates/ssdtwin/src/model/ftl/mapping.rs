//! Mapping schemes: how host pages are placed and found.
//!
//! A scheme decides where a host write goes and what a host read must do
//! to find its data, over the FTL's shared state ([`FtlCore`]: the map,
//! the blocks, the streams, the operations). Three schemes exist:
//! - [`PageMapping`]: every logical page independently, appended to the
//!   host stream; space is reclaimed by page-level GC and folding
//!   ([`super::gc`], [`super::slc`]). What modern drives do.
//! - [`super::hybrid::Hybrid`]: BAST/FAST log-block mapping; space is
//!   reclaimed by merges.
//! - [`super::zns::ZonedMapping`]: a zoned namespace; each sequential
//!   zone in erase blocks of its own, freed by zone resets.
//!
//! [`Scheme`] holds the drive's scheme and dispatches with a `match`
//! (static calls, no trait objects on the hot path). A map cached in
//! limited memory ([`super::mapcache`]) sits beneath the page scheme, in
//! the shared state, because GC's map updates go through it too: every
//! map access may emit the NAND reads and programs of translation pages
//! into the same operation list as data.
//!
//! A scheme also says how the drive books its NAND operations
//! ([`SchemeTiming`]): which wait for the work already booked on their
//! die, which copy page by page, and whether that work holds the core of
//! the command that caused it.

use super::hybrid::Hybrid;
use super::streams::StreamId;
use super::zns::ZonedMapping;
use super::{FtlCore, Purpose};
use crate::model::nand::Slot;

/// How the drive books the NAND operations of one [`Purpose`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpTiming {
    /// A program waits for the relocation work booked on its die (the
    /// die's reclamation front).
    pub program_waits: bool,
    /// Copied page by page through the controller: each read waits for
    /// the die's front, and each program or erase becomes it.
    pub serial: bool,
    /// Single-plane operations per program unit in its reads and
    /// programs, one after another (1: the whole unit at once).
    pub parts: u32,
}

/// How the drive books a mapping scheme's NAND operations: per
/// [`Purpose`], and whether serial work holds a controller core. Asked
/// once, when the drive is built (a table, no dispatch per operation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemeTiming {
    ops: [OpTiming; 7],
    /// The firmware runs serial work on the core of the command that
    /// caused it, which is held until the work is done.
    pub serial_holds_core: bool,
}

impl SchemeTiming {
    /// The FTL's own rules (page mapping): programs of garbage
    /// collection, folding, merges and map write-back wait for the die's
    /// relocation work; host programs and map loads do not; nothing is
    /// serial.
    pub const COMMON: SchemeTiming = {
        const fn op(program_waits: bool) -> OpTiming {
            OpTiming { program_waits, serial: false, parts: 1 }
        }
        let mut ops = [op(true); 7];
        ops[Purpose::HostWrite as usize] = op(false);
        ops[Purpose::MapLoad as usize] = op(false);
        SchemeTiming { ops, serial_holds_core: false }
    };

    /// How operations of `purpose` are booked.
    #[inline(always)]
    pub fn of(&self, purpose: Purpose) -> OpTiming {
        self.ops[purpose as usize]
    }

    /// Change how operations of `purpose` are booked.
    pub fn set(&mut self, purpose: Purpose, timing: OpTiming) {
        self.ops[purpose as usize] = timing;
    }
}

/// What a mapping scheme does for the FTL.
pub trait MappingScheme {
    /// Place a host write of `lpn` (already unmapped) and map it; returns
    /// the slot that holds it now.
    fn write(&mut self, core: &mut FtlCore, lpn: u32) -> Slot;
    /// Find `lpn` for a host read: its slot, or `NONE` when unmapped.
    fn read(&mut self, core: &mut FtlCore, lpn: u32) -> Slot;
    /// Program the host's partially filled program unit now (padding).
    fn flush(&mut self, core: &mut FtlCore);
    /// Host slots written but not yet programmed.
    fn pending_slots(&self, core: &FtlCore) -> u32;
    /// Whether space comes back by page-level GC (else by the scheme's own
    /// merges, and idle time has no page GC to do).
    fn reclaims_by_page_gc(&self) -> bool;
    /// How the drive books the scheme's NAND operations.
    fn timing(&self) -> SchemeTiming;
    /// Forget everything (secure erase).
    fn reset(&mut self);
    /// The scheme's invariants (tests).
    fn check(&self, core: &FtlCore) -> Result<(), String>;
}

/// Page-level mapping: the host stream takes every page in turn.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct PageMapping;

impl MappingScheme for PageMapping {
    #[inline]
    fn write(&mut self, core: &mut FtlCore, lpn: u32) -> Slot {
        core.append(StreamId::Host, lpn)
    }
    #[inline]
    fn read(&mut self, core: &mut FtlCore, lpn: u32) -> Slot {
        core.map_read(lpn)
    }
    fn flush(&mut self, core: &mut FtlCore) {
        core.flush_stream(StreamId::Host);
    }
    fn pending_slots(&self, core: &FtlCore) -> u32 {
        core.host_pending_slots()
    }
    fn reclaims_by_page_gc(&self) -> bool {
        true
    }
    fn timing(&self) -> SchemeTiming {
        SchemeTiming::COMMON
    }
    fn reset(&mut self) {}
    fn check(&self, _core: &FtlCore) -> Result<(), String> {
        Ok(())
    }
}

/// The drive's mapping scheme.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Scheme {
    /// Page-level mapping.
    Page(PageMapping),
    /// Hybrid log-block mapping.
    Hybrid(Box<Hybrid>),
    /// A zoned namespace.
    Zoned(Box<ZonedMapping>),
}

impl MappingScheme for Scheme {
    #[inline]
    fn write(&mut self, core: &mut FtlCore, lpn: u32) -> Slot {
        match self {
            Scheme::Page(s) => s.write(core, lpn),
            Scheme::Hybrid(s) => s.write(core, lpn),
            Scheme::Zoned(s) => s.write(core, lpn),
        }
    }
    #[inline]
    fn read(&mut self, core: &mut FtlCore, lpn: u32) -> Slot {
        match self {
            Scheme::Page(s) => s.read(core, lpn),
            Scheme::Hybrid(s) => s.read(core, lpn),
            Scheme::Zoned(s) => s.read(core, lpn),
        }
    }
    fn flush(&mut self, core: &mut FtlCore) {
        match self {
            Scheme::Page(s) => s.flush(core),
            Scheme::Hybrid(s) => s.flush(core),
            Scheme::Zoned(s) => s.flush(core),
        }
    }
    fn pending_slots(&self, core: &FtlCore) -> u32 {
        match self {
            Scheme::Page(s) => s.pending_slots(core),
            Scheme::Hybrid(s) => s.pending_slots(core),
            Scheme::Zoned(s) => s.pending_slots(core),
        }
    }
    #[inline]
    fn reclaims_by_page_gc(&self) -> bool {
        match self {
            Scheme::Page(s) => s.reclaims_by_page_gc(),
            Scheme::Hybrid(s) => s.reclaims_by_page_gc(),
            Scheme::Zoned(s) => s.reclaims_by_page_gc(),
        }
    }
    fn timing(&self) -> SchemeTiming {
        match self {
            Scheme::Page(s) => s.timing(),
            Scheme::Hybrid(s) => s.timing(),
            Scheme::Zoned(s) => s.timing(),
        }
    }
    fn reset(&mut self) {
        match self {
            Scheme::Page(s) => s.reset(),
            Scheme::Hybrid(s) => s.reset(),
            Scheme::Zoned(s) => s.reset(),
        }
    }
    fn check(&self, core: &FtlCore) -> Result<(), String> {
        match self {
            Scheme::Page(s) => s.check(core),
            Scheme::Hybrid(s) => s.check(core),
            Scheme::Zoned(s) => s.check(core),
        }
    }
}
