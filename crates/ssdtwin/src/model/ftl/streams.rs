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
use super::{gc, FtlCore, NandOp, Purpose};
use crate::model::nand::{CellMode, Geometry, Slot, NONE};

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
///
/// With flexible data placement the FTL's one host stream holds every
/// placement's: its per-die arrays have a run of entries per placement
/// (placement `p`'s die `d` at `p × dies + d`), `die` and `dies` are
/// indices into them, and a command that changes placement moves `die`
/// and `dies` to the other run (`fdp.rs`), so the per-slot path indexes
/// the arrays as it does without placements. Without placements an index
/// is a die.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Stream {
    id: StreamId,
    /// Open block per die (`NONE` if the stream has none there); with
    /// placements, per placement and die (see above).
    pub open: Box<[u32]>,
    /// Index of the die that receives the next slot.
    pub die: u32,
    /// The indices a host stream goes round, `[first, end)` (`None`: all
    /// dies; with FDP, the current placement's reclaim group's dies in
    /// its run). Always serialised: drive images are postcard, which has
    /// no field names to skip by.
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

    /// A host stream of `runs` runs of per-die entries (one per placement)
    /// going round the indices `[first, end)`.
    pub fn with_runs(id: StreamId, geo: &Geometry, runs: u32, first: u32, end: u32) -> Stream {
        let n = (geo.dies * runs) as usize;
        Stream { id, open: vec![NONE; n].into(), die: first, dies: Some((first, end)), ahead: vec![0; n].into() }
    }

    /// Forget open blocks (secure erase).
    pub fn reset(&mut self) {
        self.open.fill(NONE);
        self.ahead.fill(0);
        self.die = self.dies.map_or(0, |d| d.0);
    }

    /// Forget the open blocks of the entries `[lo, hi)` only (one
    /// placement's run) and start again at the first index it goes round.
    pub fn reset_run(&mut self, lo: usize, hi: usize) {
        self.open[lo..hi].fill(NONE);
        self.ahead[lo..hi].fill(0);
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
impl FtlCore {
    /// The block `id`'s next slot goes to when the stream has no open
    /// block on `die`: [`open_block`]'s, on the die
    /// [`super::FtlCore::host_die_with_room`] picks for the host. Once per
    /// block, so kept out of the per-slot path.
    /// `at` is the stream's index ([`Stream::die`]).
    #[inline(never)]
    pub(super) fn open_for_append(&mut self, id: StreamId, at: u32) -> u32 {
        let die = at - self.stream_base(id);
        let die = if id == StreamId::Host { self.host_die_with_room(die) } else { die };
        open_block(self, id, die)
    }

    /// Where stream `id`'s entries of the current placement start in its
    /// per-die arrays (0 but for the host stream with placements).
    #[inline]
    pub(super) fn stream_base(&self, id: StreamId) -> u32 {
        match &self.fdp {
            Some(f) if id == StreamId::Host => f.host_base(),
            _ => 0,
        }
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
        let base = self.stream_base(StreamId::Host);
        let (first, end) = self.streams[h].dies.map_or((0, self.geo.dies), |(f, e)| (f - base, e - base));
        for k in 1..end - first {
            let d = first + (die - first + k) % (end - first);
            if self.streams[h].open[(base + d) as usize] == NONE {
                super::gc::reclaim_until_low(self, d);
                if self.free_count(d) < low {
                    continue;
                }
            }
            self.streams[h].die = base + d;
            return d;
        }
        die
    }
}

/// Handing out a stream's slots and programming its units as they fill:
/// a unit is programmed whole (padding included) once its last slot is
/// handed out, the stream then moves to its next die, and a full block is
/// sealed into the GC victim index.
impl FtlCore {
    /// Hand out the next slot of a stream and map `lpn` to it.
    #[inline(always)]
    pub(super) fn append(&mut self, id: StreamId, lpn: u32) -> Slot {
        let die = self.streams[id as usize].die;
        let mut block = self.streams[id as usize].open[die as usize];
        if block == NONE {
            block = self.open_for_append(id, die);
        }
        let slot = self.map_next_slot(block, lpn);
        if self.blocks.mode[block as usize] == CellMode::Slc {
            self.slc_valid_slots += 1;
            if id == StreamId::Host {
                self.counters.host_slots_to_slc += 1;
            }
        }
        self.mapped_lpns += 1;
        if let Some(m) = &mut self.map {
            let lane = (id != StreamId::Host) as usize;
            m.update(lpn, lane, &mut self.ops, self.emit_ops, &mut self.blocks.erase_count);
        }
        self.after_append(id, block);
        slot
    }

    /// After a slot was handed out: when that completed a unit, issue its
    /// program (see [`FtlCore::unit_written`]).
    #[inline(always)]
    pub(super) fn after_append(&mut self, id: StreamId, block: u32) {
        let b = block as usize;
        let unit = self.geo.unit_slots(self.blocks.mode[b]);
        // Programs are issued a whole unit at a time (padding included),
        // so a unit is full when a unit's worth is written but unissued.
        if self.blocks.wp[b] - self.blocks.programmed[b] == unit {
            self.unit_written(id, block, unit);
        }
    }

    /// A unit of `block` is written: issue its program (moving the stream
    /// to its next die, sealing a full block) and, for the host, pace
    /// collection. Once per unit, so kept out of the per-slot path.
    #[inline(never)]
    pub(super) fn unit_written(&mut self, id: StreamId, block: u32, unit: u32) {
        self.issue_program(id, block, unit);
        if id == StreamId::Host {
            let mode = self.blocks.mode[block as usize];
            let used = gc::native_slots_used(&self.geo, mode, unit);
            gc::pace_collection(self, self.geo.die_of_block(block), used);
        }
    }

    pub(super) fn issue_program(&mut self, id: StreamId, block: u32, slots: u32) {
        let b = block as usize;
        let wp = self.blocks.wp[b];
        let first = wp - slots;
        self.blocks.programmed[b] = wp;
        if self.emit_ops {
            self.ops.push(NandOp::Program { purpose: id.purpose(), block, row: self.geo.row_of(first), slots });
        }
        if let Some(f) = &mut self.fdp {
            f.on_program(id, block, slots);
        }
        if self.bad.is_some() {
            self.check_program(block);
        }
        let mode = self.blocks.mode[b];
        if wp == self.geo.slots_in_mode(mode) {
            self.seal_block(block);
            let at = self.stream_base(id) + self.geo.die_of_block(block);
            self.streams[id as usize].open[at as usize] = NONE;
        }
        self.streams[id as usize].advance(&self.geo, slots);
    }

    /// Seal `block` (full, or closed early by a Reclaim Unit Handle
    /// Update with its programs issued): it joins the GC victim index.
    pub(super) fn seal_block(&mut self, block: u32) {
        self.seq += 1;
        self.blocks.seal(block, self.seq);
        self.victims.on_seal(block, self.blocks.mode[block as usize], &self.geo);
    }

    pub(super) fn flush_stream(&mut self, id: StreamId) {
        let die = self.streams[id as usize].die;
        let block = self.streams[id as usize].open[die as usize];
        if block == NONE {
            return;
        }
        let b = block as usize;
        let unit = self.geo.unit_slots(self.blocks.mode[b]);
        let wp = self.blocks.wp[b];
        let fill = wp % unit;
        if fill == 0 {
            return;
        }
        let pad = unit - fill;
        self.blocks.wp[b] += pad;
        self.counters.padding_slots += pad as u64;
        self.issue_program(id, block, unit);
    }
}
