//! Write streams: where the next slot of a kind of data goes.
//!
//! Host data, GC data and folded data go to separate open blocks
//! (hot/cold separation). The host stream stripes its program units over
//! all dies, channel first (die 0 on channel 0, die 1 on channel 1, ...),
//! so that consecutive units program in parallel; the GC and fold streams
//! stay on the die they are collecting, so that moved data never crosses a
//! channel.
//!
//! The stripe gives every die the same share of host *slots*, not of
//! units: a die whose open host block is native takes `program_pages`
//! times more slots per unit than one writing pSLC, and with a cache whose
//! room is decided for the whole drive (a dynamic cache on a full drive,
//! `native-when-full`) some dies write pSLC while others write natively.
//! Round robin by units would then pile data onto the native dies without
//! bound — GC and folding never move data across dies — until one die
//! holds more valid data than its blocks minus the reserve and GC has
//! nothing to gain. So the stripe is a deficit round robin (Shreedhar and
//! Varghese, "Efficient fair queueing using deficit round robin", IEEE/ACM
//! Trans. Networking 4(3), 1996) with a quantum of one pSLC unit: a die
//! that wrote a larger unit is passed over until the other dies have had
//! as many slots. With every die in one mode the order is plain round
//! robin (all dies are passed over alike).
//!
//! Equal shares of writes do not make equal shares of live data:
//! overwrites invalidate data on whatever die it was written to. With few,
//! large blocks per die (a reclaim unit of 16 GiB over 32 dies is a 512 MiB
//! block) one die can end up holding only valid data, and GC has nothing
//! to gain there. A drive without an SLC cache then skips that die for the
//! host's next block ([`super::FtlCore::host_die_with_room`]) until
//! overwrites free some of it.
//!
//! Which block a stream opens next is [`open_block`], one policy for the FTL
//! and the statistical steady-state builder (see [`super::pool`]).

use super::blocks::BlockTable;
use super::pool::BlockPool;
use super::Purpose;
use crate::model::nand::{CellMode, Geometry, NONE};

/// Identity of a write stream (index into the FTL's stream array).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum StreamId {
    /// Host writes.
    Host = 0,
    /// Data moved by garbage collection of native blocks.
    Gc = 1,
    /// Data folded from SLC blocks into native blocks.
    Fold = 2,
}

impl StreamId {
    /// Purpose of this stream's program operations.
    pub fn purpose(self) -> Purpose {
        match self {
            StreamId::Host => Purpose::HostWrite,
            StreamId::Gc => Purpose::Gc,
            StreamId::Fold => Purpose::Fold,
        }
    }
}

/// One write stream: an open block per die and the die it writes next.
/// Its per-die arrays are boxed slices (two words each, not a `Vec`'s
/// three): with flexible data placement the FTL swaps a placement's host
/// stream in for each command that changes placement (`fdp.rs`), and a
/// smaller stream is a cheaper swap.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Stream {
    id: StreamId,
    /// Open block per die (`NONE` if the stream has none there).
    pub open: Box<[u32]>,
    /// Die that receives the next slot.
    pub die: u32,
    /// The dies a host stream goes round, `[first, end)` (`None`: all; a
    /// reclaim group's with FDP). Always serialised: drive images are
    /// postcard, which has no field names to skip by.
    pub dies: Option<(u32, u32)>,
    /// Host slots each die has been given beyond one pSLC unit per visit
    /// (the deficit round robin's debt; empty for GC and fold streams).
    pub ahead: Box<[u32]>,
}

impl Stream {
    /// A stream with no open blocks.
    pub fn new(id: StreamId, geo: &Geometry) -> Stream {
        Stream { id, open: vec![NONE; geo.dies as usize].into(), die: 0, dies: None, ahead: Self::debts(id, geo) }
    }

    fn debts(id: StreamId, geo: &Geometry) -> Box<[u32]> {
        if id == StreamId::Host {
            vec![0; geo.dies as usize].into()
        } else {
            Box::default()
        }
    }

    /// A host stream going round the dies `[first, end)` only.
    pub fn on_dies(id: StreamId, geo: &Geometry, first: u32, end: u32) -> Stream {
        Stream {
            id,
            open: vec![NONE; geo.dies as usize].into(),
            die: first,
            dies: Some((first, end)),
            ahead: Self::debts(id, geo),
        }
    }

    /// Forget open blocks (secure erase).
    pub fn reset(&mut self) {
        self.open.fill(NONE);
        self.ahead.fill(0);
        self.die = self.dies.map_or(0, |d| d.0);
    }

    /// A program unit of `slots` slots was issued: move the host stream
    /// to the next die that is not ahead of the others (the deficit round
    /// robin of the module's doc).
    #[inline]
    pub fn advance(&mut self, geo: &Geometry, slots: u32) {
        if self.id == StreamId::Host {
            let quantum = geo.unit_slots(CellMode::Slc);
            let (first, end) = self.dies.unwrap_or((0, geo.dies));
            self.ahead[self.die as usize] += slots.saturating_sub(quantum);
            // Every die passed over pays one quantum of its debt, so this
            // ends within the largest debt's quanta of rounds.
            loop {
                self.die += 1;
                if self.die == end {
                    self.die = first;
                }
                let debt = &mut self.ahead[self.die as usize];
                if *debt < quantum {
                    break;
                }
                *debt -= quantum;
            }
        }
    }

    /// Slots handed out on the current die but not yet programmed.
    pub fn pending_slots(&self, blocks: &BlockTable, _geo: &Geometry) -> u32 {
        let b = self.open[self.die as usize];
        if b == NONE {
            0
        } else {
            blocks.wp[b as usize] - blocks.programmed[b as usize]
        }
    }
}

/// The stream's open block on `die`, opening a new one by the drive's
/// policy if it has none: a host block in the mode [`super::slc::host_mode`]
/// chooses (reclaiming space first if the die is at its low watermark); a
/// fold block after native GC has restored the reserve (folding a static
/// SLC block returns nothing to the native free list, so GC must make the
/// room first; it never consumes more than it frees); a GC block from the
/// reserve.
#[inline(always)]
pub fn open_block<P: BlockPool>(pool: &mut P, stream: StreamId, die: u32) -> u32 {
    let b = pool.open_block_of(stream, die);
    if b != NONE {
        return b;
    }
    open_new_block(pool, stream, die)
}

/// [`open_block`] when the stream has no open block on the die (once per
/// block, so kept out of the per-slot path).
#[inline(never)]
fn open_new_block<P: BlockPool>(pool: &mut P, stream: StreamId, die: u32) -> u32 {
    let b = match stream {
        StreamId::Host => {
            if super::slc::host_mode(pool, die) == CellMode::Slc {
                super::slc::take_slc_block(pool, die)
            } else {
                super::gc::reclaim_until_low(pool, die);
                pool.take_free(die, CellMode::Native, stream)
            }
        }
        StreamId::Fold => {
            while pool.free_count(die) < pool.low_watermark() {
                if !super::gc::collect_one(pool, die, CellMode::Native) {
                    break;
                }
            }
            pool.take_free(die, CellMode::Native, stream)
        }
        StreamId::Gc => pool.take_free(die, CellMode::Native, stream),
    };
    let b = b.expect("the free-block reserve guarantees a block for GC and folding");
    pool.set_open_block(stream, die, b);
    b
}

/// A new open block for a stream when it has none on its die.
impl super::FtlCore {
    /// The block `id`'s next slot goes to when the stream has no open
    /// block on `die`: [`open_block`]'s, on the die
    /// [`super::FtlCore::host_die_with_room`] picks for the host. Once per
    /// block, so kept out of the per-slot path.
    #[inline(never)]
    pub(super) fn open_for_append(&mut self, id: StreamId, die: u32) -> u32 {
        let die = if id == StreamId::Host { self.host_die_with_room(die) } else { die };
        open_block(self, id, die)
    }

    /// `die`, unless GC cannot restore its free-block reserve there: every
    /// block it could collect holds only valid data, because more of the
    /// live data sits on this die than on the others (the host goes round
    /// the dies evenly, overwrites invalidate where the old data lies, and
    /// GC moves data within its die). A controller does not program a die
    /// it cannot reclaim: the host's block goes to the next die of the
    /// stream's round that has room, and the full die gets no new data
    /// until overwrites free some of it. Without this the host would take
    /// the reserve GC needs. Drives with an SLC cache keep their own
    /// placement (the cache decides where writes go).
    pub(super) fn host_die_with_room(&mut self, die: u32) -> u32 {
        if self.slc_model().is_some() {
            return die;
        }
        let low = self.low_watermark();
        super::gc::reclaim_until_low(self, die);
        if self.free_count(die) >= low {
            return die;
        }
        let h = StreamId::Host as usize;
        let (first, end) = self.streams[h].dies.unwrap_or((0, self.geo.dies));
        for k in 1..end - first {
            let d = first + (die - first + k) % (end - first);
            if self.streams[h].open[d as usize] == NONE {
                super::gc::reclaim_until_low(self, d);
                if self.free_count(d) < low {
                    continue;
                }
            }
            self.streams[h].die = d;
            return d;
        }
        die
    }
}
