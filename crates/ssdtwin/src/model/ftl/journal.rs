//! The relocation journal: an opt-in record of every time the FTL moves or
//! drops data on its own, for a caller that keeps real bytes beside the
//! simulated flash (the NBD server's data store keyed by physical slot).
//!
//! Host writes are not journalled (the caller knows what it wrote and
//! finds the slot with [`Ftl::lookup`](super::Ftl::lookup)); what the
//! caller cannot see is recorded, in the order it happens:
//! - [`Relocation::Moved`]: GC, folding (`move_valid`) or a hybrid merge
//!   (`fill_block`) copied the page in `from` to `to`;
//! - [`Relocation::Erased`]: a block was erased (end of a collection, a
//!   hybrid merge); its slots hold nothing any more;
//! - [`Relocation::Reset`]: secure erase or format: every slot is empty.
//!
//! A caller replays the records in order after each command. The journal
//! is off by default: each hook is one predictable branch on an `Option`
//! that is `None`, and nothing is recorded. The fast preconditioning path
//! (`install`) is not journalled: data placed by a drive state has no
//! bytes (it reads as zeros until the host writes it).

use crate::model::nand::Slot;

/// One thing the FTL did to stored data, see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relocation {
    /// The data in slot `from` now lives in slot `to` (`from` is invalid).
    Moved {
        /// Old slot.
        from: Slot,
        /// New slot.
        to: Slot,
    },
    /// Every slot of the block was erased.
    Erased {
        /// The FTL's block number (see [`crate::model::nand::Geometry`]).
        block: u32,
    },
    /// Every slot of the drive was erased (secure erase, format).
    Reset,
}

impl super::Ftl {
    /// Start (`true`) or stop recording relocations. Starting clears any
    /// records not yet taken.
    pub fn journal_relocations(&mut self, on: bool) {
        self.journal = on.then(Vec::new);
    }

    /// Whether relocations are being recorded.
    pub fn journals_relocations(&self) -> bool {
        self.journal.is_some()
    }

    /// Move the records made since the last call into `out` (appended, in
    /// the order they happened). Nothing when the journal is off.
    pub fn drain_relocations(&mut self, out: &mut Vec<Relocation>) {
        if let Some(j) = &mut self.journal {
            out.append(j);
        }
    }

    /// Record a relocation if the journal is on.
    #[inline(always)]
    pub(super) fn journal(&mut self, r: Relocation) {
        if let Some(j) = &mut self.journal {
            j.push(r);
        }
    }
}
