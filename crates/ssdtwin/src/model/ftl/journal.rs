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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
        self.core.journal = on.then(Vec::new);
    }

    /// Whether relocations are being recorded.
    pub fn journals_relocations(&self) -> bool {
        self.core.journal.is_some()
    }

    /// Move the records made since the last call into `out` (appended, in
    /// the order they happened). Nothing when the journal is off.
    pub fn drain_relocations(&mut self, out: &mut Vec<Relocation>) {
        if let Some(j) = &mut self.core.journal {
            out.append(j);
        }
    }
}

impl super::FtlCore {
    /// Record a relocation if the journal is on.
    #[inline(always)]
    pub(super) fn journal(&mut self, r: Relocation) {
        if let Some(j) = &mut self.journal {
            j.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Relocation;
    use crate::model::nand::NONE;
    use crate::spec::DriveSpec;

    /// Follow the journal with a slot → page table: after many random
    /// writes and trims (GC running all along), every mapped page is
    /// where the journal says it went.
    fn follow(preset: &str, set: &[&str]) {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let model = DriveSpec::load(preset, &set).unwrap().build("test").unwrap();
        let mut ftl = super::super::Ftl::new(&model);
        ftl.set_emit_ops(false);
        ftl.journal_relocations(true);
        assert!(ftl.journals_relocations());
        let n = ftl.user_lpns();
        let geo = *ftl.geometry();
        let mut at = vec![NONE; geo.total_slots as usize];
        let mut records = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut moves, mut erases) = (0, 0);
        for i in 0..(n as u64 * 6) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lpn = (x % n as u64) as u32;
            if i % 23 == 0 {
                ftl.trim(lpn);
            } else {
                ftl.write(lpn);
            }
            ftl.drain_relocations(&mut records);
            for r in records.drain(..) {
                match r {
                    Relocation::Moved { from, to } => {
                        at[to as usize] = std::mem::replace(&mut at[from as usize], NONE);
                        moves += 1;
                    }
                    Relocation::Erased { block } => {
                        let f = geo.first_slot(block) as usize;
                        at[f..f + geo.slots_per_block as usize].fill(NONE);
                        erases += 1;
                    }
                    Relocation::Reset => at.fill(NONE),
                }
            }
            // The host write itself: the map says where it is now.
            if i % 23 != 0 {
                at[ftl.lookup(lpn) as usize] = lpn;
            }
        }
        assert!(moves > 1000 && erases > 10, "{preset}: {moves} moves, {erases} erases");
        for lpn in 0..n {
            let s = ftl.lookup(lpn);
            if s != NONE {
                assert_eq!(at[s as usize], lpn, "{preset}: page {lpn} is not where the journal put it");
            }
        }
        ftl.journal_relocations(false);
        ftl.write(0);
        ftl.drain_relocations(&mut records);
        assert!(records.is_empty());
    }

    #[test]
    fn the_journal_follows_gc_folding_and_merges() {
        let small = ["geometry.channels=2", "geometry.dies_per_channel=2", "geometry.blocks_per_plane=32"];
        let mut tlc = small.to_vec();
        tlc.extend(["geometry.pages_per_block=48", "ftl.user_capacity_bytes=83886080"]);
        follow("generic-tlc-nvme", &tlc);
        let mut hybrid = small.to_vec();
        hybrid.extend([
            "geometry.gang=1",
            "geometry.pages_per_block=16",
            "ftl.user_capacity_bytes=12582912",
            "ftl.hybrid.log_blocks=8",
        ]);
        follow("ocz-core-64gb", &hybrid);
        follow(
            "intel-660p-1tb",
            &[
                "geometry.channels=2",
                "geometry.dies_per_channel=1",
                "geometry.blocks_per_plane=48",
                "geometry.pages_per_block=64",
                "ftl.user_capacity_bytes=268435456",
                "slc_cache.static_bytes=8000000",
                "slc_cache.capacity_curve=[[0.0, 64e6], [0.5, 64e6], [0.78, 8e6], [1.0, 8e6]]",
            ],
        );
    }
}
