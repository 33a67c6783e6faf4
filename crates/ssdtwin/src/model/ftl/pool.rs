//! The block pool: what the FTL's block policies see and act on.
//!
//! Every decision about blocks — which block a stream opens, whether host
//! data goes to SLC, when and what to fold, where to reclaim space, which
//! victim to collect and how fast — is written once, as generic functions
//! over [`BlockPool`] (in [`super::streams`], [`super::slc`] and
//! [`super::gc`]). Two pools implement it:
//! - the FTL itself ([`super::Ftl`]): exact valid counts, slot-level maps,
//!   NAND operations emitted for every move;
//! - the statistical steady-state builder (`run::state::steady`): one die's
//!   blocks with valid counts only, decayed lazily by binomial draws, no
//!   map and no operations.
//!
//! So a policy change reaches both at once, and a new mechanism (a map
//! cache, wear leveling) adds to the pool rather than to a copy of the
//! policies. The pool is a generic parameter, never a trait object: the
//! policies compile to direct calls on the hot path.
//!
//! The FTL's own implementation (exact counts, moves that update the map
//! and emit NAND operations) is at the end of this file.
//!
//! Counts are `f64` where a statistical pool holds an expectation (a valid
//! count between draws, a die's share of the SLC cache); the FTL's counts
//! are whole numbers, exact in `f64`.

use crate::model::nand::{CellMode, Geometry};
use crate::model::params::SlcModel;

use super::streams::StreamId;
use super::FtlCore;

/// A victim being collected a step at a time (paced by host writes, or in
/// idle time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Paced {
    /// The victim block.
    pub victim: u32,
    /// Its cell mode (SLC: collecting it folds).
    pub mode: CellMode,
    /// Where the pool continues moving (the FTL: the next slot offset).
    pub progress: u32,
    /// Valid slots when collection began (sets the pace).
    pub valid_at_start: u32,
    /// Remainder of the pace division carried to the next host unit.
    pub carry: u64,
}

impl Paced {
    /// A collection of `victim` just begun.
    pub fn new(victim: u32, mode: CellMode, valid_at_start: u32) -> Paced {
        Paced { victim, mode, progress: 0, valid_at_start, carry: 0 }
    }
}

/// Blocks, free lists, open blocks and victims, as the policies see them.
/// Dies are numbered within the pool (`0..pool_dies()`).
pub trait BlockPool {
    /// The drive's geometry.
    fn geometry(&self) -> &Geometry;
    /// Dies this pool holds.
    fn pool_dies(&self) -> u32;
    /// GC low watermark: free blocks per die below which the host waits
    /// for collection.
    fn low_watermark(&self) -> u32;
    /// GC high watermark: free blocks per die below which collection is
    /// paced by host writes (and done in idle time).
    fn high_watermark(&self) -> u32;
    /// Whether foreground GC is paced by host writes (`ftl.gc_mode =
    /// "paced"`) rather than run in one go at the low watermark.
    fn paced_gc(&self) -> bool;
    /// The SLC cache, if the drive has one.
    fn slc_model(&self) -> Option<&SlcModel>;
    /// SLC blocks the capacity curve allows this pool at its current fill
    /// (before the free-space limit of [`super::slc::slc_limit_blocks`]).
    fn slc_curve_blocks(&self) -> f64;
    /// The fold threshold in SLC blocks, for this pool.
    fn fold_threshold_blocks(&self) -> f64;

    /// Free (erased) native blocks on `die`.
    fn free_count(&self, die: u32) -> u32;
    /// Free blocks of the static SLC pool on `die`.
    fn static_free_count(&self, die: u32) -> u32;
    /// Sealed native blocks on `die` without valid data (need only an
    /// erase to be free).
    fn empty_native_count(&self, die: u32) -> u32;
    /// SLC blocks in use (open, sealed or being collected).
    fn slc_in_use(&self) -> u32;
    /// Sealed blocks of `mode` on `die`.
    fn sealed_count(&self, die: u32, mode: CellMode) -> u32;
    /// Whether `block` belongs to the static SLC pool.
    fn is_static(&self, block: u32) -> bool;
    /// The sealed block of `mode` on `die` with the fewest valid slots, and
    /// that count (an expectation in a statistical pool).
    fn least_valid(&self, die: u32, mode: CellMode) -> Option<(u32, f64)>;

    /// The stream's open block on `die` (`NONE` if it has none).
    fn open_block_of(&self, stream: StreamId, die: u32) -> u32;
    /// Record the stream's open block on `die`.
    fn set_open_block(&mut self, stream: StreamId, die: u32, block: u32);
    /// Die where the next search for an SLC block to fold starts.
    fn fold_cursor(&self) -> u32;
    /// Set the fold search's next start.
    fn set_fold_cursor(&mut self, die: u32);
    /// The collection in progress on `die`.
    fn paced(&self, die: u32) -> Option<Paced>;
    /// Set the collection in progress on `die`.
    fn set_paced(&mut self, die: u32, paced: Option<Paced>);

    /// Take a free native block on `die` for `stream` and open it in
    /// `mode` (dynamic wear leveling may choose by erase count: see
    /// `ftl.wear_leveling`).
    fn take_free(&mut self, die: u32, mode: CellMode, stream: StreamId) -> Option<u32>;
    /// Take a block of the static SLC pool on `die` and open it.
    fn take_static(&mut self, die: u32) -> Option<u32>;
    /// The victim the GC policy picks among sealed blocks of `mode` on
    /// `die` (still in the index).
    fn choose_victim(&mut self, die: u32, mode: CellMode) -> Option<u32>;
    /// The sealed SLC block on `die` outside the static pool that holds
    /// the least valid data (still in the index): folding it returns a
    /// block to the die's native free list.
    fn dynamic_slc_victim(&mut self, die: u32) -> Option<u32>;
    /// Valid slots of `block` now.
    fn valid_slots(&mut self, block: u32) -> u32;
    /// Take a chosen victim out of the index: it is being collected.
    fn start_collecting(&mut self, block: u32, mode: CellMode);
    /// Move up to `max_moves` valid slots of `victim` (to the fold stream
    /// for SLC victims, the GC stream otherwise), continuing from
    /// `progress`. Returns the progress to continue from and whether the
    /// victim holds no valid data any more.
    fn move_valid(&mut self, victim: u32, mode: CellMode, progress: u32, max_moves: u32) -> (u32, bool);
    /// Erase an emptied victim and return it to its free list.
    fn finish_collection(&mut self, victim: u32, mode: CellMode);
}

/// The FTL as the block pool its policies act on (exact counts; moves
/// update the map and emit NAND operations).
impl BlockPool for FtlCore {
    #[inline]
    fn geometry(&self) -> &Geometry {
        &self.geo
    }
    #[inline]
    fn pool_dies(&self) -> u32 {
        self.geo.dies
    }
    #[inline]
    fn low_watermark(&self) -> u32 {
        self.gc_low
    }
    #[inline]
    fn high_watermark(&self) -> u32 {
        self.gc_high
    }
    #[inline]
    fn paced_gc(&self) -> bool {
        self.gc_paced
    }
    #[inline]
    fn slc_model(&self) -> Option<&SlcModel> {
        self.slc.as_ref()
    }
    fn slc_curve_blocks(&self) -> f64 {
        self.slc.as_ref().map_or(0.0, |s| s.curve_blocks(self.fill_fraction()).floor())
    }
    fn fold_threshold_blocks(&self) -> f64 {
        self.slc.as_ref().map_or(0.0, |s| s.fold_threshold_blocks as f64)
    }
    #[inline]
    fn free_count(&self, die: u32) -> u32 {
        self.blocks.free_count(die)
    }
    #[inline]
    fn static_free_count(&self, die: u32) -> u32 {
        self.blocks.static_free_count(die)
    }
    #[inline]
    fn empty_native_count(&self, die: u32) -> u32 {
        self.blocks.empty_count(die, CellMode::Native)
    }
    #[inline]
    fn slc_in_use(&self) -> u32 {
        self.blocks.slc_in_use
    }
    #[inline]
    fn sealed_count(&self, die: u32, mode: CellMode) -> u32 {
        self.blocks.sealed_count(die, mode)
    }
    #[inline]
    fn is_static(&self, block: u32) -> bool {
        self.blocks.is_static[block as usize]
    }
    #[inline]
    fn least_valid(&self, die: u32, mode: CellMode) -> Option<(u32, f64)> {
        self.blocks.peek_min_valid(die, mode).map(|b| (b, self.blocks.valid[b as usize] as f64))
    }
    #[inline]
    fn open_block_of(&self, stream: StreamId, die: u32) -> u32 {
        self.streams[stream as usize].open[(self.stream_base(stream) + die) as usize]
    }
    #[inline]
    fn set_open_block(&mut self, stream: StreamId, die: u32, block: u32) {
        let at = self.stream_base(stream) + die;
        self.streams[stream as usize].open[at as usize] = block;
        if let Some(f) = &mut self.fdp {
            f.on_open(stream, block, die);
        }
    }
    #[inline]
    fn fold_cursor(&self) -> u32 {
        self.fold_die
    }
    #[inline]
    fn set_fold_cursor(&mut self, die: u32) {
        self.fold_die = die;
    }
    #[inline]
    fn paced(&self, die: u32) -> Option<Paced> {
        self.bg[die as usize]
    }
    #[inline]
    fn set_paced(&mut self, die: u32, paced: Option<Paced>) {
        self.bg[die as usize] = paced;
    }
    #[inline]
    fn take_free(&mut self, die: u32, mode: CellMode, stream: StreamId) -> Option<u32> {
        if self.wear.least_worn {
            // Host data (hot) to the youngest block, moved data (cold) to
            // the most worn.
            self.blocks.take_free_by_wear(die, mode, stream != StreamId::Host)
        } else {
            self.blocks.take_free(die, mode)
        }
    }
    #[inline]
    fn take_static(&mut self, die: u32) -> Option<u32> {
        self.blocks.take_static(die)
    }
    #[inline]
    fn choose_victim(&mut self, die: u32, mode: CellMode) -> Option<u32> {
        self.victims.select(&mut self.blocks, die, mode, self.seq)
    }
    #[inline]
    fn dynamic_slc_victim(&mut self, die: u32) -> Option<u32> {
        self.blocks.min_valid_dynamic_slc(die)
    }
    #[inline]
    fn valid_slots(&mut self, block: u32) -> u32 {
        self.blocks.valid[block as usize]
    }
    #[inline]
    fn start_collecting(&mut self, block: u32, mode: CellMode) {
        self.blocks.begin_collect(block);
        self.victims.on_collect(block, mode);
    }
    #[inline]
    fn move_valid(&mut self, victim: u32, mode: CellMode, progress: u32, max_moves: u32) -> (u32, bool) {
        if self.fdp.is_some() {
            let owner = self.fdp_enter_gc(victim);
            let before = self.counters.gc_slots_moved;
            let next = self.move_slots(victim, mode, progress, max_moves);
            self.fdp_leave_gc(owner, self.counters.gc_slots_moved - before);
            return (next, next >= self.blocks.wp[victim as usize]);
        }
        let next = self.move_slots(victim, mode, progress, max_moves);
        (next, next >= self.blocks.wp[victim as usize])
    }
    #[inline]
    fn finish_collection(&mut self, victim: u32, mode: CellMode) {
        self.erase_victim(victim, mode);
    }
}
