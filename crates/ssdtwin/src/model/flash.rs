//! Flash transaction scheduler, channels and dies.
//!
//! Each die and each channel bus is a [`Timeline`]: the list of intervals in
//! which it is busy. A NAND operation is placed, in the order the
//! controller submits it, at the earliest time at or after its dependencies
//! when its resources are free ("first come, first served with
//! back-filling"): a read occupies its die for tR and then the channel for
//! the transfer out; a program occupies the channel for the transfer in and
//! then the die for tPROG; an erase occupies the die for tBERS. Operations
//! are therefore one computation each, not a chain of events, which keeps
//! the simulator fast while dies, planes (multi-plane operations cost one
//! operation time) and shared buses still contend exactly.
//!
//! Per-block timing state lives here too: when a block's last program
//! completes (programs within a block are in order, as NAND requires) and
//! when its erase completes (nothing may be programmed into it before).
//!
//! **Program/erase suspend** (when the drive file enables it): a read that
//! finds its die programming or erasing does not wait; it runs after the
//! suspend overhead on a separate read lane, and the time it took (read
//! plus overhead) is added to the die's next program or erase, which is
//! when the suspended work really finishes. Without suspend, reads queue
//! behind long programs — the Intel 660p's weakness.
//!
//! **Reads first** (the default; `controller.op_order`): programs,
//! erases and the reads of garbage collection and folding are queued work
//! that the controller dispatches as a die frees, and it dispatches host
//! reads first. Queued operations are booked on a timeline of their own
//! per die (and recorded one interval each, to find the one in progress);
//! a host read that finds its die busy with queued work waits
//! for the operation in progress (without suspend, a whole QLC program),
//! not for the ones queued behind it, and the time it takes is added to
//! the die's next queued operation. Host programs stay in order with the
//! collection that pays for their space, so a drive whose cache or spare
//! runs out still makes its writes wait. With `op_order = "fifo"` every
//! operation queues in the order it was submitted.
//!
//! **Ganged channels** (`geometry.gang` > 1; Agrawal et al. 2008,
//! "Design Tradeoffs for SSD Performance", §3.2 ganging; the superpage /
//! superblock of Kang et al. 2006): the FTL's die is a gang of one die on
//! each of `gang` channels, driven in lockstep, so here a "die" timeline is
//! the gang (every member busy for the same operation time) and a
//! "channel" timeline the gang's group of channels, each carrying its
//! member's share of the data at the single channel's rate: a ganged unit
//! moves in the time one member's page takes, `gang` times the bytes.
//! Data of a 4 KiB read comes from one member, over one channel.
//!
//! **Read cache** (`nand.read_cache`, on by default): a die is free for
//! its next array read once tR ends, its page waiting in the cache
//! register for the bus (ONFI READ CACHE). Without it (plain PAGE READ)
//! the die holds its page register, and stays busy, until the page has
//! crossed the bus: with one die per channel its reads then cannot
//! overlap their transfers, and a die's read rate is one page per tR plus
//! transfer (plus any wait for the bus).
//!
//! Left out: the cache register's depth (with read cache, pages wait for
//! the bus without limit), command/address cycles on the bus, and die
//! power limits.

use super::nand::{transfer_ns, CellMode};
use super::timeline::{OpLog, Timeline};

/// NAND operation counters by cell mode (index `CellMode as usize`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FlashCounters {
    /// Page (multi-plane) read operations.
    pub reads: [u64; 2],
    /// Program operations.
    pub programs: [u64; 2],
    /// Erase operations (multi-plane blocks).
    pub erases: [u64; 2],
    /// 4 KiB slots read from the array.
    pub slots_read: [u64; 2],
    /// 4 KiB slots programmed (data and padding).
    pub slots_programmed: [u64; 2],
    /// Array busy time summed over dies: reads, programs, erases, ns.
    pub array_ns: [u64; 3],
}

fn read_cache_default() -> bool {
    true
}

/// Which queue of its die an operation waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Host reads and what a host command waits on directly (merges, map
    /// traffic): ahead of queued work that has not started.
    Priority,
    /// Programs, erases, garbage collection and folding, in order.
    Queued,
}

/// The flash array as the controller's scheduler sees it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Flash {
    dies: Vec<Timeline>,
    channels: Vec<Timeline>,
    channel_of_die: Vec<u32>,
    channel_fs_per_byte: u64,
    channel_bytes_per_slot: u64,
    /// Suspend overhead, if reads suspend programs and erases.
    suspend_ns: Option<u64>,
    /// Program/erase intervals per die (kept only with suspend).
    program_erase: Vec<Timeline>,
    /// Reads that suspended a program/erase, per die.
    read_lane: Vec<Timeline>,
    /// Time stolen by suspending reads, owed by the die's next program/erase.
    suspend_debt: Vec<u64>,
    /// Host reads go ahead of queued work (see the module documentation);
    /// set from the drive's spec, not saved.
    #[serde(skip)]
    reads_first: bool,
    /// Whether dies read with their cache register (see the module
    /// documentation); set from the drive's spec, not saved.
    #[serde(skip, default = "read_cache_default")]
    read_cache: bool,
    /// Queued operations per die (reads-first only; the die's own
    /// timeline then holds the priority lane).
    #[serde(default)]
    queued: Vec<Timeline>,
    /// The same operations one interval each, to find the one in progress.
    #[serde(default)]
    queued_ops: Vec<OpLog>,
    /// Die time priority operations took ahead of queued work, owed by the
    /// die's next queued operation.
    #[serde(default)]
    queued_debt: Vec<u64>,
    /// When each block's most recent program completes.
    pub block_prog_done: Vec<u64>,
    /// When each block's most recent erase completes.
    pub block_erased: Vec<u64>,
    /// Operation counters.
    pub counters: FlashCounters,
    /// Dies per gang (see the module documentation); set from the drive's
    /// spec, not saved (0 or 1: not ganged).
    #[serde(skip)]
    gang: u32,
    /// Slots of one member die's row (planes × sectors per page).
    #[serde(skip)]
    member_row_slots: u32,
    /// Ganged only: per die, when its latest program starts (its dies'
    /// page registers then take the next unit's data).
    #[serde(skip)]
    program_started: Vec<u64>,
}

impl Flash {
    /// A flash array of `dies` dies on `channels` channels. Each 4 KiB
    /// slot moves `channel_bytes_per_slot` bytes over the bus (data and its
    /// share of the page's spare area).
    pub fn new(
        dies: u32,
        channels: u32,
        blocks: u32,
        channel_fs_per_byte: u64,
        channel_bytes_per_slot: u64,
        suspend_ns: Option<u64>,
        reads_first: bool,
    ) -> Flash {
        let n = if suspend_ns.is_some() { dies as usize } else { 0 };
        Flash {
            reads_first,
            read_cache: true,
            queued: vec![Timeline::default(); dies as usize],
            queued_ops: vec![OpLog::default(); dies as usize],
            queued_debt: vec![0; dies as usize],
            dies: vec![Timeline::default(); dies as usize],
            channels: vec![Timeline::default(); channels as usize],
            channel_of_die: (0..dies).map(|d| d % channels).collect(),
            channel_fs_per_byte,
            channel_bytes_per_slot,
            suspend_ns,
            program_erase: vec![Timeline::default(); n],
            read_lane: vec![Timeline::default(); n],
            suspend_debt: vec![0; n],
            block_prog_done: vec![0; blocks as usize],
            block_erased: vec![0; blocks as usize],
            counters: FlashCounters::default(),
            gang: 1,
            member_row_slots: 1,
            program_started: Vec::new(),
        }
    }

    /// Gang the channels: each die (timeline) here is `gang` dies in
    /// lockstep, whose rows hold `member_row_slots` slots each (the drive's
    /// spec; not saved, so set it on a loaded array too).
    pub fn set_gang(&mut self, gang: u32, member_row_slots: u32) {
        self.gang = gang.max(1);
        self.member_row_slots = member_row_slots.max(1);
        self.program_started = if self.gang > 1 { vec![0; self.dies.len()] } else { Vec::new() };
    }

    /// Ganged: when the page registers of `die`'s members can take new
    /// data (its latest program has started; 0 if none).
    pub fn registers_free_at(&self, die: u32) -> u64 {
        self.program_started.get(die as usize).copied().unwrap_or(0)
    }

    /// Note that a program on die `d` starts at `start` (ganged only).
    #[inline(always)]
    fn note_program_start(&mut self, d: usize, start: u64) {
        if let Some(p) = self.program_started.get_mut(d) {
            *p = (*p).max(start);
        }
    }

    /// Slots the busiest channel of a die's channel group carries when
    /// `slots` consecutive slots (from a member boundary) move: a member's
    /// rows fill before the next member's.
    #[inline(always)]
    fn channel_slots(&self, slots: u32) -> u32 {
        if self.gang <= 1 {
            slots
        } else {
            slots.div_ceil(self.gang).max(slots.min(self.member_row_slots))
        }
    }

    /// Array time of an operation of `dur` ns summed over the dies doing
    /// it (every member of a gang).
    #[inline(always)]
    fn array_time(&self, dur: u64) -> u64 {
        dur * self.gang.max(1) as u64
    }

    /// Set the scheduling order of a flash array loaded from an image
    /// (`reads_first` is the drive spec's, not saved).
    pub fn set_reads_first(&mut self, reads_first: bool) {
        self.reads_first = reads_first;
        let dies = self.dies.len();
        self.queued.resize(dies, Timeline::default());
        self.queued_ops.resize(dies, OpLog::default());
        self.queued_debt.resize(dies, 0);
    }

    /// Whether dies read with their cache register (default true; the
    /// drive's `nand.read_cache`).
    pub fn set_read_cache(&mut self, read_cache: bool) {
        self.read_cache = read_cache;
    }

    /// Drop history that ended before `now` (call as time advances).
    pub fn prune(&mut self, now: u64) {
        for t in self.dies.iter_mut().chain(&mut self.channels).chain(&mut self.queued) {
            t.prune(now);
        }
        for log in &mut self.queued_ops {
            log.prune(now);
        }
        for t in self.program_erase.iter_mut().chain(&mut self.read_lane) {
            t.prune(now);
        }
    }

    /// Book `dur` ns of array time on die `d` for an operation of `lane`
    /// ready at `earliest`; returns when it ends (a queued operation
    /// also pays the time host operations took ahead of it).
    #[inline(always)]
    fn die_reserve(&mut self, earliest: u64, d: usize, dur: u64, lane: Lane) -> u64 {
        if !self.reads_first {
            return self.dies[d].reserve(earliest, dur) + dur;
        }
        match lane {
            Lane::Priority => {
                let queued_until = self.queued[d].free_at();
                if queued_until <= earliest {
                    return self.dies[d].reserve(earliest, dur) + dur;
                }
                // Wait for the queued operation in progress only.
                let ready = self.queued_ops[d].op_end_at(earliest).unwrap_or(earliest);
                let start = self.dies[d].reserve(ready, dur);
                if queued_until > start {
                    self.queued_debt[d] += dur;
                }
                start + dur
            }
            Lane::Queued => {
                let dur = dur + std::mem::take(&mut self.queued_debt[d]);
                let start = self.queued[d].reserve_clear_of(earliest, dur, &self.dies[d]);
                self.queued_ops[d].record(start, dur);
                start + dur
            }
        }
    }

    /// Where [`Flash::die_reserve`] would put an operation of `dur` ns
    /// (the start of its own time, after any debt it pays), reserving
    /// nothing.
    fn die_first_fit(&mut self, earliest: u64, d: usize, dur: u64, lane: Lane) -> u64 {
        if !self.reads_first {
            return self.dies[d].first_fit(earliest, dur);
        }
        match lane {
            Lane::Priority => {
                if self.queued[d].free_at() <= earliest {
                    return self.dies[d].first_fit(earliest, dur);
                }
                let ready = self.queued_ops[d].op_end_at(earliest).unwrap_or(earliest);
                self.dies[d].first_fit(ready, dur)
            }
            Lane::Queued => {
                let debt = self.queued_debt[d];
                self.queued[d].first_fit_clear_of(earliest, dur + debt, &self.dies[d]) + debt
            }
        }
    }

    /// A plain page read (no cache register) books its die once, from its
    /// array read until its page has crossed the bus. (Booked as two
    /// pieces, the hold could land apart from its read, in a later gap,
    /// and block the die's next work.) The read is issued when the die is
    /// free for tR and the transfer and the bus is free for the transfer
    /// right after tR, as a controller that waits for the bus before it
    /// reads does: the die is not held idle while the bus is busy. (Held
    /// instead, a bus booked far ahead held the die as long, which pushed
    /// the die's next programs and their transfers further ahead, which
    /// held the next read longer: without bound.) If die and bus do not
    /// agree within eight tries, the die holds its page until the
    /// transfer. Returns the read's start and the transfer's start.
    ///
    /// A read of the priority lane (or any read without the reads-first
    /// order) books the die's and the bus's slots found in the last try
    /// as found, rather than searching for them again.
    fn plain_read(&mut self, earliest: u64, d: usize, (tr, xfer): (u64, u64), lane: Lane) -> (u64, u64) {
        let ch = self.channel_of_die[d] as usize;
        let mut t = earliest;
        if !self.reads_first || lane == Lane::Priority {
            // What die_first_fit and die_reserve come to here: the die's
            // own timeline, from the end of the queued operation in
            // progress if queued work is booked past `t`.
            let queued_until = if self.reads_first { self.queued[d].free_at() } else { 0 };
            for _ in 0..8 {
                let from = if queued_until <= t { t } else { self.queued_ops[d].op_end_at(t).unwrap_or(t) };
                let die_slot = self.dies[d].find(from, tr + xfer);
                let start = die_slot.1;
                let bus_slot = self.channels[ch].find(start + tr, xfer);
                if bus_slot.1 == start + tr {
                    self.dies[d].book(die_slot, tr + xfer);
                    self.channels[ch].book(bus_slot, xfer);
                    if queued_until > start {
                        self.queued_debt[d] += tr + xfer;
                    }
                    return (start, start + tr);
                }
                t = bus_slot.1 - tr;
            }
            return self.plain_read_unsettled(t, d, (tr, xfer), lane);
        }
        for _ in 0..8 {
            let start = self.die_first_fit(t, d, tr + xfer, lane);
            let xs = self.channels[ch].first_fit(start + tr, xfer);
            if xs == start + tr {
                break;
            }
            t = xs - tr;
        }
        self.plain_read_unsettled(t, d, (tr, xfer), lane)
    }

    /// The end of [`Flash::plain_read`] once its tries have ended at `t`:
    /// the die is booked from `t` (the bus is free right after tR if the
    /// tries settled) and the bus after tR; if the bus is not free then,
    /// the die holds its page on until the transfer ends.
    fn plain_read_unsettled(&mut self, t: u64, d: usize, (tr, xfer): (u64, u64), lane: Lane) -> (u64, u64) {
        let ch = self.channel_of_die[d] as usize;
        let start = self.die_reserve(t, d, tr + xfer, lane) - (tr + xfer);
        let xs = self.channels[ch].reserve(start + tr, xfer);
        if xs > start + tr {
            // Not settled in eight tries: the die holds its page on until
            // the transfer ends.
            self.die_reserve(start + tr + xfer, d, xs - start - tr, lane);
        }
        (start, xs)
    }

    /// Array read of `tr` ns of `slots` slots on `die`, then their transfer
    /// to the controller. Returns the time the data is in the controller.
    #[inline]
    pub fn read(&mut self, earliest: u64, die: u32, tr: u64, slots: u32, mode: CellMode, lane: Lane) -> u64 {
        let d = die as usize;
        let suspending = self.suspend_ns.is_some() && self.program_erase[d].busy_at(earliest);
        let xfer =
            transfer_ns(self.channel_slots(slots) as u64 * self.channel_bytes_per_slot, self.channel_fs_per_byte);
        if !self.read_cache && !suspending {
            let (_, xs) = self.plain_read(earliest, d, (tr, xfer), lane);
            self.counters.reads[mode as usize] += 1;
            self.counters.slots_read[mode as usize] += slots as u64;
            self.counters.array_ns[0] += self.array_time(tr);
            return xs + xfer;
        }
        let start = match self.suspend_ns {
            Some(overhead) if suspending => {
                self.suspend_debt[d] += tr + overhead;
                self.read_lane[d].reserve(earliest + overhead, tr)
            }
            _ => self.die_reserve(earliest, d, tr, lane) - tr,
        };
        let ch = self.channel_of_die[d] as usize;
        let xs = self.channels[ch].reserve(start + tr, xfer);
        if !self.read_cache {
            // Suspending a program: the page register stays full until the
            // data has crossed the bus, time the program owes too.
            let hold = xs + xfer - (start + tr);
            self.suspend_debt[d] += hold;
            self.read_lane[d].reserve(start + tr, hold);
        }
        self.counters.reads[mode as usize] += 1;
        self.counters.slots_read[mode as usize] += slots as u64;
        self.counters.array_ns[0] += self.array_time(tr);
        xs + xfer
    }

    /// [`Flash::read`] of a unit done as `parts` single-plane page reads one
    /// after another (each `tr`, then its share of the bytes over the
    /// bus), as firmware that copies page by page does. Returns the time
    /// the last part is in the controller.
    pub fn read_parts(&mut self, earliest: u64, die: u32, tr: u64, slots: u32, parts: u32, mode: CellMode) -> u64 {
        let d = die as usize;
        let ch = self.channel_of_die[d] as usize;
        let xfer = transfer_ns(
            self.channel_slots(slots) as u64 * self.channel_bytes_per_slot / parts as u64,
            self.channel_fs_per_byte,
        );
        let mut t = earliest;
        for _ in 0..parts {
            let start = self.dies[d].reserve(t, tr);
            let xs = self.channels[ch].reserve(start + tr, xfer);
            t = xs + xfer;
            self.counters.reads[mode as usize] += 1;
            self.counters.array_ns[0] += self.array_time(tr);
        }
        self.counters.slots_read[mode as usize] += slots as u64;
        t
    }

    /// [`Flash::program`] of a unit done as `parts` single-plane page
    /// programs one after another (each: its share of the bytes over the
    /// bus, then `tprog`). Returns the completion of the last.
    /// `(slots, parts)`: the unit's slots and the operations it is split into.
    pub fn program_parts(
        &mut self,
        earliest: u64,
        die: u32,
        block: u32,
        tprog: u64,
        (slots, parts): (u32, u32),
        mode: CellMode,
    ) -> u64 {
        let b = block as usize;
        let ch = self.channel_of_die[die as usize] as usize;
        let xfer = transfer_ns(
            self.channel_slots(slots) as u64 * self.channel_bytes_per_slot / parts as u64,
            self.channel_fs_per_byte,
        );
        let mut t = earliest;
        for _ in 0..parts {
            let xs = self.channels[ch].reserve(t, xfer);
            let start = (xs + xfer).max(self.block_erased[b]).max(self.block_prog_done[b]);
            t = self.occupy_die(start, die as usize, tprog, Lane::Priority);
            self.note_program_start(die as usize, t - tprog);
            self.block_prog_done[b] = t;
            self.counters.programs[mode as usize] += 1;
            self.counters.array_ns[1] += self.array_time(tprog);
        }
        self.counters.slots_programmed[mode as usize] += slots as u64;
        t
    }

    /// A program or erase of `dur` ns on `die` from `earliest`, paying any
    /// time owed to suspending reads.
    #[inline]
    fn occupy_die(&mut self, earliest: u64, die: usize, dur: u64, lane: Lane) -> u64 {
        if self.suspend_ns.is_none() {
            return self.die_reserve(earliest, die, dur, lane);
        }
        let dur = dur + std::mem::take(&mut self.suspend_debt[die]);
        let end = self.die_reserve(earliest, die, dur, lane);
        // The die programs or erases until `end` (queued work also for
        // the time it owed), and a suspending read may cut in.
        self.program_erase[die].reserve(end - dur, dur);
        end
    }

    /// Transfer of `slots` slots to `die`, then a program of `tprog` ns into
    /// `block`. Returns the completion time. `(mode, lane)`: the block's
    /// cell mode and the queue the program waits in.
    #[inline]
    pub fn program(
        &mut self,
        earliest: u64,
        die: u32,
        block: u32,
        tprog: u64,
        slots: u32,
        (mode, lane): (CellMode, Lane),
    ) -> u64 {
        let b = block as usize;
        // The data may cross the bus while the die is still busy (cache
        // register); the program itself waits for the block's erase and its
        // previous program (pages of a block are programmed in order).
        let xfer =
            transfer_ns(self.channel_slots(slots) as u64 * self.channel_bytes_per_slot, self.channel_fs_per_byte);
        let ch = self.channel_of_die[die as usize] as usize;
        let xs = self.channels[ch].reserve(earliest, xfer);
        let start = (xs + xfer).max(self.block_erased[b]).max(self.block_prog_done[b]);
        let done = self.occupy_die(start, die as usize, tprog, lane);
        self.note_program_start(die as usize, done - tprog);
        self.block_prog_done[b] = done;
        self.counters.programs[mode as usize] += 1;
        self.counters.slots_programmed[mode as usize] += slots as u64;
        self.counters.array_ns[1] += self.array_time(tprog);
        done
    }

    /// Erase of `block` on `die`. Returns the completion time.
    #[inline]
    pub fn erase(&mut self, earliest: u64, die: u32, block: u32, tbers: u64, mode: CellMode, lane: Lane) -> u64 {
        let b = block as usize;
        let earliest = earliest.max(self.block_prog_done[b]);
        let done = self.occupy_die(earliest, die as usize, tbers, lane);
        self.block_erased[b] = done;
        self.counters.erases[mode as usize] += 1;
        self.counters.array_ns[2] += self.array_time(tbers);
        done
    }

    /// Bytes moved over the channels so far (data and spare area).
    pub fn channel_bytes(&self) -> u64 {
        let c = &self.counters;
        (c.slots_read[0] + c.slots_read[1] + c.slots_programmed[0] + c.slots_programmed[1])
            * self.channel_bytes_per_slot
    }

    /// Time at which every die and channel has finished its reserved work.
    pub fn all_idle_at(&self) -> u64 {
        self.dies.iter().chain(&self.channels).chain(&self.queued).map(Timeline::free_at).max().unwrap_or(0)
    }

    /// Forget all reservations and block timing (secure erase, new run).
    pub fn reset_time(&mut self) {
        for t in
            self.dies.iter_mut().chain(&mut self.channels).chain(&mut self.program_erase).chain(&mut self.read_lane)
        {
            t.clear();
        }
        for t in &mut self.queued {
            t.clear();
        }
        for log in &mut self.queued_ops {
            log.clear();
        }
        self.queued_debt.fill(0);
        self.suspend_debt.fill(0);
        self.block_prog_done.fill(0);
        self.block_erased.fill(0);
        self.program_started.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_waits_for_erase_of_its_block() {
        let mut f = Flash::new(2, 1, 4, 1_000_000, 100, None, false); // 1 ns per byte, 100 bytes per slot
        let e = f.erase(0, 0, 1, 1000, CellMode::Native, Lane::Priority);
        assert_eq!(e, 1000);
        // A program into block 1 cannot start before the erase ends (its data
        // crosses the bus meanwhile).
        let done = f.program(0, 0, 1, 500, 1, (CellMode::Native, Lane::Priority));
        assert_eq!(done, 1000 + 500);
        // A read on the other die on the same channel overlaps with die 0's work
        // but queues on the shared bus.
        let r = f.read(0, 1, 50, 1, CellMode::Native, Lane::Priority);
        assert_eq!(r, 100 + 100);
    }

    #[test]
    fn a_ganged_unit_moves_at_the_combined_channels_rate() {
        // 8 channels ganged: one timeline for the gang's dies and one for
        // its channels; a member's row is 2 slots (2 planes × 4 KiB), the
        // unit 16 slots. 1 ns per byte, 100 bytes per slot.
        let mut g = Flash::new(1, 1, 4, 1_000_000, 100, None, false);
        g.set_gang(8, 2);
        // Each channel carries its member's 2 slots (200 ns), all at
        // once, then every member programs for 1000 ns.
        assert_eq!(g.program(0, 0, 0, 1000, 16, (CellMode::Native, Lane::Priority)), 200 + 1000);
        // The same 16 slots through one channel to one die take 8 times
        // the transfer: the gang moves 8 × 200 bytes in 200 ns.
        let mut f = Flash::new(1, 1, 4, 1_000_000, 100, None, false);
        assert_eq!(f.program(0, 0, 0, 1000, 16, (CellMode::Native, Lane::Priority)), 1600 + 1000);
        // A 4 KiB read comes from one member over one channel (100 ns);
        // a whole ganged row reads in one member's transfer (200 ns).
        assert_eq!(g.read(2000, 0, 50, 1, CellMode::Native, Lane::Priority), 2000 + 50 + 100);
        assert_eq!(g.read(3000, 0, 50, 16, CellMode::Native, Lane::Priority), 3000 + 50 + 200);
        // Array time (for power) counts every member die.
        assert_eq!(g.counters.array_ns, [8 * 100, 8 * 1000, 0]);
        // The gang's registers take the next unit once its program starts.
        assert_eq!(g.registers_free_at(0), 200);
    }

    #[test]
    fn suspending_reads_do_not_wait_for_programs_but_delay_the_next_one() {
        let mut f = Flash::new(1, 1, 4, 1_000_000, 10, Some(20), false);
        let p = f.program(0, 0, 0, 1000, 1, (CellMode::Native, Lane::Priority)); // die busy [10, 1010)
        assert_eq!(p, 1010);
        // The read suspends the program: it starts after the overhead.
        let r = f.read(100, 0, 50, 1, CellMode::Native, Lane::Priority);
        assert_eq!(r, 100 + 20 + 50 + 10);
        // The next program on the die pays the stolen 70 ns.
        let p2 = f.program(0, 0, 1, 1000, 1, (CellMode::Native, Lane::Priority));
        assert_eq!(p2, 1010 + 1000 + 70);
        // Without suspend the read would have waited for the program.
        let mut g = Flash::new(1, 1, 4, 1_000_000, 10, None, false);
        g.program(0, 0, 0, 1000, 1, (CellMode::Native, Lane::Priority));
        assert_eq!(g.read(100, 0, 50, 1, CellMode::Native, Lane::Priority), 1010 + 50 + 10);
    }

    #[test]
    fn host_reads_go_ahead_of_queued_work() {
        let queued = (CellMode::Native, Lane::Queued);
        let mut f = Flash::new(1, 1, 4, 1_000_000, 10, None, true);
        // Three 1000 ns programs queued back to back: die busy
        // [10, 1010), [1010, 2010), [2010, 3010).
        assert_eq!(f.program(0, 0, 0, 1000, 1, queued), 1010);
        assert_eq!(f.program(0, 0, 0, 1000, 1, queued), 2010);
        assert_eq!(f.program(0, 0, 0, 1000, 1, queued), 3010);
        // A host read at 100 waits for the program in progress only.
        assert_eq!(f.read(100, 0, 50, 1, CellMode::Native, Lane::Priority), 1010 + 50 + 10);
        // The queued work it went ahead of is owed: the next queued
        // program takes 50 ns longer.
        assert_eq!(f.program(0, 0, 0, 1000, 1, queued), 3010 + 1000 + 50);
        // First come, first served, the read waits for all three.
        let mut g = Flash::new(1, 1, 4, 1_000_000, 10, None, false);
        for _ in 0..3 {
            g.program(0, 0, 0, 1000, 1, queued);
        }
        assert_eq!(g.read(100, 0, 50, 1, CellMode::Native, Lane::Priority), 3010 + 50 + 10);
    }

    /// A die alone on its channel reading page after page: with read cache
    /// it reads while the previous page crosses the bus, so the bus sets
    /// the pace (one page per transfer); without, it holds its register
    /// until the transfer is done (one page per tR + transfer). Two dies
    /// on the channel without read cache take turns and fill the bus.
    #[test]
    fn without_read_cache_a_die_holds_its_register_until_the_bus_is_done() {
        let read = |f: &mut Flash, die: u32| f.read(0, die, 50, 10, CellMode::Native, Lane::Priority);
        // 10 slots × 10 bytes at 1 ns per byte: 100 ns of transfer.
        let mut cached = Flash::new(1, 1, 4, 1_000_000, 10, None, false);
        let last = (0..10).map(|_| read(&mut cached, 0)).last().unwrap();
        assert_eq!(last, 50 + 10 * 100, "bus-bound: the first tR, then back-to-back transfers");
        let mut plain = Flash::new(1, 1, 4, 1_000_000, 10, None, false);
        plain.set_read_cache(false);
        let last = (0..10).map(|_| read(&mut plain, 0)).last().unwrap();
        assert_eq!(last, 10 * (50 + 100), "die-bound: tR and transfer in turn");
        let mut two = Flash::new(2, 1, 4, 1_000_000, 10, None, false);
        two.set_read_cache(false);
        let last = (0..10).map(|i| read(&mut two, i % 2)).last().unwrap();
        assert_eq!(last, 50 + 10 * 100, "two dies take turns: the bus sets the pace again");
    }

    /// A plain page read is one booking of its die, tR and transfer
    /// together: queued behind programs with a gap that holds its tR but
    /// not its transfer, it waits for the gap after them rather than
    /// reading in the small gap and holding its page in a later one (which
    /// would free its data early and block the die's next work).
    #[test]
    fn a_plain_read_books_its_array_read_and_transfer_together() {
        let queued = (CellMode::Native, Lane::Queued);
        let mut f = Flash::new(1, 1, 4, 1_000_000, 10, None, true);
        f.set_read_cache(false);
        // Programs of 1 slot (10 ns on the bus): die busy 10–1010 and
        // 1210–2210, a 200 ns gap between them.
        assert_eq!(f.program(0, 0, 0, 1000, 1, queued), 1010);
        assert_eq!(f.program(1200, 0, 1, 1000, 1, queued), 2210);
        // tR 150 ns and 10 slots (100 ns) out: 250 ns, too long for the gap.
        let done = f.read(1000, 0, 150, 10, CellMode::Native, Lane::Queued);
        assert_eq!(done, 2210 + 150 + 100, "read after the second program, its transfer right after tR");
        // The die is free from then on: the next program's transfer (at
        // 2460) and tPROG follow at once.
        assert_eq!(f.program(2400, 0, 2, 1000, 1, queued), 2460 + 10 + 1000);
        // With read cache the die is free after tR: the read takes the gap
        // (1010–1160) and its page waits for the bus, busy 1200–1210 with
        // the second program's data.
        let mut g = Flash::new(1, 1, 4, 1_000_000, 10, None, true);
        g.program(0, 0, 0, 1000, 1, queued);
        g.program(1200, 0, 1, 1000, 1, queued);
        assert_eq!(g.read(1000, 0, 150, 10, CellMode::Native, Lane::Queued), 1210 + 100);
    }
}
