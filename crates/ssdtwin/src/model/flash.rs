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
//! Left out: cache-register pipelining, command/address cycles on the bus,
//! and die power limits.

use super::nand::{transfer_ns, CellMode};
use super::timeline::Timeline;

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
    /// When each block's most recent program completes.
    pub block_prog_done: Vec<u64>,
    /// When each block's most recent erase completes.
    pub block_erased: Vec<u64>,
    /// Operation counters.
    pub counters: FlashCounters,
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
    ) -> Flash {
        let n = if suspend_ns.is_some() { dies as usize } else { 0 };
        Flash {
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
        }
    }

    /// Drop history that ended before `now` (call as time advances).
    pub fn prune(&mut self, now: u64) {
        for t in self.dies.iter_mut().chain(&mut self.channels) {
            t.prune(now);
        }
        for t in self.program_erase.iter_mut().chain(&mut self.read_lane) {
            t.prune(now);
        }
    }

    /// Prune only the resources of one die (cheap, for the hot path).
    #[inline]
    pub fn prune_die(&mut self, die: u32, now: u64) {
        self.dies[die as usize].prune(now);
        self.channels[self.channel_of_die[die as usize] as usize].prune(now);
    }

    /// Array read of `tr` ns of `slots` slots on `die`, then their transfer
    /// to the controller. Returns the time the data is in the controller.
    #[inline]
    pub fn read(&mut self, earliest: u64, die: u32, tr: u64, slots: u32, mode: CellMode) -> u64 {
        let d = die as usize;
        let start = match self.suspend_ns {
            Some(overhead) if self.program_erase[d].busy_at(earliest) => {
                self.suspend_debt[d] += tr + overhead;
                self.read_lane[d].reserve(earliest + overhead, tr)
            }
            _ => self.dies[d].reserve(earliest, tr),
        };
        let xfer = transfer_ns(slots as u64 * self.channel_bytes_per_slot, self.channel_fs_per_byte);
        let ch = self.channel_of_die[d] as usize;
        let xs = self.channels[ch].reserve(start + tr, xfer);
        self.counters.reads[mode as usize] += 1;
        self.counters.slots_read[mode as usize] += slots as u64;
        self.counters.array_ns[0] += tr;
        xs + xfer
    }

    /// [`Flash::read`] of a unit done as `parts` single-plane page reads one
    /// after another (each `tr`, then its share of the bytes over the
    /// bus), as firmware that copies page by page does. Returns the time
    /// the last part is in the controller.
    pub fn read_parts(&mut self, earliest: u64, die: u32, tr: u64, slots: u32, parts: u32, mode: CellMode) -> u64 {
        let d = die as usize;
        let ch = self.channel_of_die[d] as usize;
        let xfer = transfer_ns(slots as u64 * self.channel_bytes_per_slot / parts as u64, self.channel_fs_per_byte);
        let mut t = earliest;
        for _ in 0..parts {
            let start = self.dies[d].reserve(t, tr);
            let xs = self.channels[ch].reserve(start + tr, xfer);
            t = xs + xfer;
            self.counters.reads[mode as usize] += 1;
            self.counters.array_ns[0] += tr;
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
        let xfer = transfer_ns(slots as u64 * self.channel_bytes_per_slot / parts as u64, self.channel_fs_per_byte);
        let mut t = earliest;
        for _ in 0..parts {
            let xs = self.channels[ch].reserve(t, xfer);
            let start = (xs + xfer).max(self.block_erased[b]).max(self.block_prog_done[b]);
            t = self.occupy_die(start, die as usize, tprog);
            self.block_prog_done[b] = t;
            self.counters.programs[mode as usize] += 1;
            self.counters.array_ns[1] += tprog;
        }
        self.counters.slots_programmed[mode as usize] += slots as u64;
        t
    }

    /// A program or erase of `dur` ns on `die` from `earliest`, paying any
    /// time owed to suspending reads.
    #[inline]
    fn occupy_die(&mut self, earliest: u64, die: usize, dur: u64) -> u64 {
        if self.suspend_ns.is_none() {
            return self.dies[die].reserve(earliest, dur) + dur;
        }
        let dur = dur + std::mem::take(&mut self.suspend_debt[die]);
        let s = self.dies[die].reserve(earliest, dur);
        self.program_erase[die].reserve(s, dur);
        s + dur
    }

    /// Transfer of `slots` slots to `die`, then a program of `tprog` ns into
    /// `block`. Returns the completion time.
    #[inline]
    pub fn program(&mut self, earliest: u64, die: u32, block: u32, tprog: u64, slots: u32, mode: CellMode) -> u64 {
        let b = block as usize;
        // The data may cross the bus while the die is still busy (cache
        // register); the program itself waits for the block's erase and its
        // previous program (pages of a block are programmed in order).
        let xfer = transfer_ns(slots as u64 * self.channel_bytes_per_slot, self.channel_fs_per_byte);
        let ch = self.channel_of_die[die as usize] as usize;
        let xs = self.channels[ch].reserve(earliest, xfer);
        let start = (xs + xfer).max(self.block_erased[b]).max(self.block_prog_done[b]);
        let done = self.occupy_die(start, die as usize, tprog);
        self.block_prog_done[b] = done;
        self.counters.programs[mode as usize] += 1;
        self.counters.slots_programmed[mode as usize] += slots as u64;
        self.counters.array_ns[1] += tprog;
        done
    }

    /// Erase of `block` on `die`. Returns the completion time.
    #[inline]
    pub fn erase(&mut self, earliest: u64, die: u32, block: u32, tbers: u64, mode: CellMode) -> u64 {
        let b = block as usize;
        let earliest = earliest.max(self.block_prog_done[b]);
        let done = self.occupy_die(earliest, die as usize, tbers);
        self.block_erased[b] = done;
        self.counters.erases[mode as usize] += 1;
        self.counters.array_ns[2] += tbers;
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
        self.dies.iter().chain(&self.channels).map(Timeline::free_at).max().unwrap_or(0)
    }

    /// Forget all reservations and block timing (secure erase, new run).
    pub fn reset_time(&mut self) {
        for t in
            self.dies.iter_mut().chain(&mut self.channels).chain(&mut self.program_erase).chain(&mut self.read_lane)
        {
            t.clear();
        }
        self.suspend_debt.fill(0);
        self.block_prog_done.fill(0);
        self.block_erased.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_waits_for_erase_of_its_block() {
        let mut f = Flash::new(2, 1, 4, 1_000_000, 100, None); // 1 ns per byte, 100 bytes per slot
        let e = f.erase(0, 0, 1, 1000, CellMode::Native);
        assert_eq!(e, 1000);
        // A program into block 1 cannot start before the erase ends (its data
        // crosses the bus meanwhile).
        let done = f.program(0, 0, 1, 500, 1, CellMode::Native);
        assert_eq!(done, 1000 + 500);
        // A read on the other die on the same channel overlaps with die 0's work
        // but queues on the shared bus.
        let r = f.read(0, 1, 50, 1, CellMode::Native);
        assert_eq!(r, 100 + 100);
    }

    #[test]
    fn suspending_reads_do_not_wait_for_programs_but_delay_the_next_one() {
        let mut f = Flash::new(1, 1, 4, 1_000_000, 10, Some(20));
        let p = f.program(0, 0, 0, 1000, 1, CellMode::Native); // die busy [10, 1010)
        assert_eq!(p, 1010);
        // The read suspends the program: it starts after the overhead.
        let r = f.read(100, 0, 50, 1, CellMode::Native);
        assert_eq!(r, 100 + 20 + 50 + 10);
        // The next program on the die pays the stolen 70 ns.
        let p2 = f.program(0, 0, 1, 1000, 1, CellMode::Native);
        assert_eq!(p2, 1010 + 1000 + 70);
        // Without suspend the read would have waited for the program.
        let mut g = Flash::new(1, 1, 4, 1_000_000, 10, None);
        g.program(0, 0, 0, 1000, 1, CellMode::Native);
        assert_eq!(g.read(100, 0, 50, 1, CellMode::Native), 1010 + 50 + 10);
    }
}
