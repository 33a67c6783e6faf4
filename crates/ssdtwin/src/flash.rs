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
//! Left out: program/erase suspend (a later issue adds it for reads that
//! hit a busy die), cache-register pipelining, command/address cycles on
//! the bus, and die power limits.

use std::collections::VecDeque;

use crate::nand::{transfer_ns, CellMode};

/// Busy intervals of one resource, sorted and non-overlapping.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    busy: VecDeque<(u64, u64)>,
}

impl Timeline {
    /// Forget intervals that ended at or before `now`.
    #[inline]
    pub fn prune(&mut self, now: u64) {
        while let Some(&(_, end)) = self.busy.front() {
            if end <= now {
                self.busy.pop_front();
            } else {
                break;
            }
        }
    }

    /// Reserve `dur` ns at the earliest time ≥ `earliest` at which the
    /// resource is free for that long; returns the start time.
    pub fn reserve(&mut self, earliest: u64, dur: u64) -> u64 {
        let mut t = earliest;
        // First interval that ends after `earliest`.
        let mut i = self.busy.partition_point(|&(_, end)| end <= t);
        while i < self.busy.len() {
            let (s, e) = self.busy[i];
            if s >= t + dur {
                break;
            }
            t = t.max(e);
            i += 1;
        }
        let end = t + dur;
        // Merge with the neighbours it touches.
        let touches_prev = i > 0 && self.busy[i - 1].1 == t;
        let touches_next = i < self.busy.len() && self.busy[i].0 == end;
        match (touches_prev, touches_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = t,
            (false, false) => self.busy.insert(i, (t, end)),
        }
        t
    }

    /// Time at which all reserved work ends.
    pub fn free_at(&self) -> u64 {
        self.busy.back().map_or(0, |&(_, e)| e)
    }

    /// Whether the resource has no reservation ending after `now`.
    pub fn idle_at(&self, now: u64) -> bool {
        self.free_at() <= now
    }
}

/// NAND operation counters by cell mode (index `CellMode as usize`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
}

/// The flash array as the controller's scheduler sees it.
#[derive(Debug, Clone)]
pub struct Flash {
    dies: Vec<Timeline>,
    channels: Vec<Timeline>,
    channel_of_die: Vec<u32>,
    channel_fs_per_byte: u64,
    /// When each block's most recent program completes.
    pub block_prog_done: Vec<u64>,
    /// When each block's most recent erase completes.
    pub block_erased: Vec<u64>,
    /// Operation counters.
    pub counters: FlashCounters,
}

impl Flash {
    /// A flash array of `dies` dies on `channels` channels.
    pub fn new(dies: u32, channels: u32, blocks: u32, channel_fs_per_byte: u64) -> Flash {
        Flash {
            dies: vec![Timeline::default(); dies as usize],
            channels: vec![Timeline::default(); channels as usize],
            channel_of_die: (0..dies).map(|d| d % channels).collect(),
            channel_fs_per_byte,
            block_prog_done: vec![0; blocks as usize],
            block_erased: vec![0; blocks as usize],
            counters: FlashCounters::default(),
        }
    }

    /// Drop history that ended before `now` (call as time advances).
    pub fn prune(&mut self, now: u64) {
        for t in &mut self.dies {
            t.prune(now);
        }
        for t in &mut self.channels {
            t.prune(now);
        }
    }

    /// Prune only the resources of one die (cheap, for the hot path).
    #[inline]
    pub fn prune_die(&mut self, die: u32, now: u64) {
        self.dies[die as usize].prune(now);
        self.channels[self.channel_of_die[die as usize] as usize].prune(now);
    }

    /// Array read of `tr` ns on `die`, then transfer of `bytes` to the
    /// controller. Returns the time the data is in the controller.
    #[inline]
    pub fn read(&mut self, earliest: u64, die: u32, tr: u64, bytes: u64, mode: CellMode) -> u64 {
        let start = self.dies[die as usize].reserve(earliest, tr);
        let xfer = transfer_ns(bytes, self.channel_fs_per_byte);
        let ch = self.channel_of_die[die as usize] as usize;
        let xs = self.channels[ch].reserve(start + tr, xfer);
        self.counters.reads[mode as usize] += 1;
        self.counters.slots_read[mode as usize] += bytes / 4096;
        xs + xfer
    }

    /// Transfer of `bytes` to `die`, then a program of `tprog` ns into
    /// `block`. Returns the completion time.
    #[inline]
    pub fn program(
        &mut self,
        earliest: u64,
        die: u32,
        block: u32,
        tprog: u64,
        bytes: u64,
        mode: CellMode,
    ) -> u64 {
        let b = block as usize;
        let earliest = earliest
            .max(self.block_erased[b])
            .max(self.block_prog_done[b]);
        let xfer = transfer_ns(bytes, self.channel_fs_per_byte);
        let ch = self.channel_of_die[die as usize] as usize;
        let xs = self.channels[ch].reserve(earliest, xfer);
        let ps = self.dies[die as usize].reserve(xs + xfer, tprog);
        let done = ps + tprog;
        self.block_prog_done[b] = done;
        self.counters.programs[mode as usize] += 1;
        self.counters.slots_programmed[mode as usize] += bytes / 4096;
        done
    }

    /// Erase of `block` on `die`. Returns the completion time.
    #[inline]
    pub fn erase(
        &mut self,
        earliest: u64,
        die: u32,
        block: u32,
        tbers: u64,
        mode: CellMode,
    ) -> u64 {
        let b = block as usize;
        let earliest = earliest.max(self.block_prog_done[b]);
        let s = self.dies[die as usize].reserve(earliest, tbers);
        let done = s + tbers;
        self.block_erased[b] = done;
        self.counters.erases[mode as usize] += 1;
        done
    }

    /// Time at which every die and channel has finished its reserved work.
    pub fn all_idle_at(&self) -> u64 {
        self.dies
            .iter()
            .chain(&self.channels)
            .map(Timeline::free_at)
            .max()
            .unwrap_or(0)
    }

    /// Forget all reservations and block timing (secure erase, new run).
    pub fn reset_time(&mut self) {
        for t in self.dies.iter_mut().chain(self.channels.iter_mut()) {
            t.busy.clear();
        }
        self.block_prog_done.fill(0);
        self.block_erased.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_backfills_gaps_and_merges() {
        let mut t = Timeline::default();
        assert_eq!(t.reserve(100, 50), 100); // [100,150)
        assert_eq!(t.reserve(0, 50), 0); // [0,50) before it
        assert_eq!(t.reserve(0, 60), 150); // gap [50,100) too small
        assert_eq!(t.reserve(0, 50), 50); // fills the gap exactly, merges all
        assert_eq!(t.busy.len(), 1);
        assert_eq!(t.free_at(), 210);
        t.prune(210);
        assert!(t.idle_at(210));
    }

    #[test]
    fn program_waits_for_erase_of_its_block() {
        let mut f = Flash::new(2, 1, 4, 1_000_000); // 1 ns per byte
        let e = f.erase(0, 0, 1, 1000, CellMode::Native);
        assert_eq!(e, 1000);
        // A program into block 1 cannot start its transfer before the erase ends.
        let done = f.program(0, 0, 1, 500, 100, CellMode::Native);
        assert_eq!(done, 1000 + 100 + 500);
        // A read on the other die on the same channel overlaps with die 0's work
        // but queues on the shared bus.
        let r = f.read(1000, 1, 50, 100, CellMode::Native);
        assert_eq!(r, 1100 + 100);
    }
}
