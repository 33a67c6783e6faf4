//! Controller resources: processor cores and the write buffer.
//!
//! - **Cores**: every host command costs `cmd_overhead_ns` of one core
//!   (fetch, FTL lookup, completion). Commands take the core that frees
//!   first; at high queue depth this is what caps random IOPS.
//! - **Write buffer** (DRAM or SRAM): a write-back buffer acknowledges a
//!   write as soon as its data is in the buffer; the space is released when
//!   the program operation that carries the data completes. When the buffer
//!   is full the command waits (on SATA the drive reports "not ready"), so
//!   the host feels the flash once the buffer is saturated.
//!
//! The command flow through these (and the FTL and flash) is in
//! [`crate::model::drive`]. Left out: a mapping-table cache for DRAM-less drives
//! and coalescing of overwrites inside the buffer.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Controller processor cores.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Cores {
    free_at: Vec<u64>,
    cost_ns: u64,
}

impl Cores {
    /// `n` cores, each spending `cost_ns` per command.
    pub fn new(n: u32, cost_ns: u64) -> Cores {
        Cores { free_at: vec![0; n as usize], cost_ns }
    }

    /// Process a command that arrives at `t`; returns when the core is done.
    /// Commands arrive in time order, so each core is a simple busy-until.
    #[inline]
    pub fn process(&mut self, t: u64) -> u64 {
        let (i, &f) = self.free_at.iter().enumerate().min_by_key(|&(_, &f)| f).expect("at least one core");
        let done = t.max(f) + self.cost_ns;
        self.free_at[i] = done;
        done
    }

    /// Keep the core that finished a command at `ready` busy until `until`
    /// (work the command started, such as a merge, runs on it).
    pub fn hold(&mut self, ready: u64, until: u64) {
        if let Some(f) = self.free_at.iter_mut().find(|f| **f == ready) {
            *f = (*f).max(until);
        }
    }

    /// Forget all state.
    pub fn reset_time(&mut self) {
        self.free_at.fill(0);
    }
}

/// Write buffer occupancy.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct WriteBuffer {
    capacity: u64,
    /// Bytes written by the host whose program has not been issued yet.
    pending: u64,
    /// Bytes whose program is issued, released at its completion.
    scheduled: u64,
    releases: BinaryHeap<Reverse<(u64, u64)>>,
    /// Total time commands waited for space, ns.
    pub blocked_ns: u64,
}

impl WriteBuffer {
    /// An empty buffer of `capacity` bytes.
    pub fn new(capacity: u64) -> WriteBuffer {
        WriteBuffer { capacity, pending: 0, scheduled: 0, releases: BinaryHeap::new(), blocked_ns: 0 }
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    fn drain(&mut self, t: u64) {
        while let Some(&Reverse((when, bytes))) = self.releases.peek() {
            if when > t {
                break;
            }
            self.releases.pop();
            self.scheduled -= bytes;
        }
    }

    /// Earliest time ≥ `t` at which `bytes` fit; the bytes are then pending.
    #[inline]
    pub fn admit(&mut self, t: u64, bytes: u64) -> u64 {
        self.drain(t);
        let mut at = t;
        while self.pending + self.scheduled + bytes > self.capacity {
            let Reverse((when, freed)) =
                self.releases.pop().expect("validation keeps room for one program unit beyond pending data");
            self.scheduled -= freed;
            at = at.max(when);
        }
        self.blocked_ns += at - t;
        self.pending += bytes;
        at
    }

    /// A program carrying `bytes` of pending data completes at `done`.
    #[inline]
    pub fn release_at(&mut self, done: u64, bytes: u64) {
        let bytes = bytes.min(self.pending);
        self.pending -= bytes;
        self.scheduled += bytes;
        self.releases.push(Reverse((done, bytes)));
    }

    /// Drop `bytes` of pending data that will never be programmed (a
    /// zone reset discards its partial program unit).
    pub fn discard(&mut self, bytes: u64) {
        self.pending -= bytes.min(self.pending);
    }

    /// When every program issued so far has released its bytes (`t` if
    /// none is outstanding). Data still pending (not yet issued) is not
    /// counted: a flush issues it first.
    pub fn drained_at(&self, t: u64) -> u64 {
        self.releases.iter().map(|r| r.0 .0).max().unwrap_or(t).max(t)
    }

    /// Bytes in the buffer at time `t`.
    pub fn used_at(&mut self, t: u64) -> u64 {
        self.drain(t);
        self.pending + self.scheduled
    }

    /// Forget all state (secure erase, new run).
    pub fn reset(&mut self) {
        *self = WriteBuffer::new(self.capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_waits_for_the_earliest_release() {
        let mut b = WriteBuffer::new(8192);
        assert_eq!(b.admit(0, 4096), 0);
        b.release_at(500, 4096);
        assert_eq!(b.admit(10, 4096), 10);
        b.release_at(300, 4096);
        // Full: the next write waits for the release at 300.
        assert_eq!(b.admit(20, 4096), 300);
        assert_eq!(b.blocked_ns, 280);
    }

    #[test]
    fn cores_share_the_load() {
        let mut c = Cores::new(2, 100);
        assert_eq!(c.process(0), 100);
        assert_eq!(c.process(0), 100);
        assert_eq!(c.process(0), 200);
    }
}
