//! Host interface: the link between host and drive, and the drive's
//! command queue.
//!
//! NVMe over PCIe has independent links in each direction (full duplex);
//! SATA has one link shared by both directions (half duplex). Payload moves
//! at the link's usable rate (line rate after encoding, times the
//! protocol efficiency of the drive file). The drive accepts at most
//! `max_queue_depth` commands at once (NCQ's 32 on SATA); further commands
//! wait in the host, and that wait counts in their latency, as fio sees it.
//!
//! Which waiting command enters when a slot frees is arrival order (round
//! robin, the default); under weighted round robin the host's queues are
//! held by the device core and arbitrated by
//! [`crate::model::arbitration`], which asks [`HostInterface::next_free`].
//!
//! Left out: interrupt coalescing and host software latency.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::model::nand::transfer_ns;
use crate::model::params::DriveModel;
use crate::model::timeline::Timeline;

/// Smallest number of admitted commands at which those completed are
/// dropped from the queue's record.
const EXPIRE_BATCH: usize = 64;

/// The link and the drive's command slots.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct HostInterface {
    to_device: Timeline,
    to_host: Timeline,
    full_duplex: bool,
    fs_per_byte: u64,
    max_queue_depth: usize,
    /// Completion times of the commands admitted, earliest first; entries
    /// already past are dropped in batches (see [`HostInterface::admit`]).
    in_device: BinaryHeap<Reverse<u64>>,
    /// Length of `in_device` at which its past entries are next dropped
    /// (0: at the next admission).
    #[serde(skip)]
    expire_at: usize,
    /// Payload bytes moved over the link, both directions.
    pub bytes_moved: u64,
}

impl HostInterface {
    /// The host interface of a drive.
    pub fn new(model: &DriveModel) -> HostInterface {
        HostInterface {
            to_device: Timeline::default(),
            to_host: Timeline::default(),
            full_duplex: model.link_full_duplex,
            fs_per_byte: model.link_fs_per_byte,
            max_queue_depth: model.spec.host.max_queue_depth as usize,
            in_device: BinaryHeap::with_capacity(model.spec.host.max_queue_depth as usize + 1),
            expire_at: 0,
            bytes_moved: 0,
        }
    }

    /// Time a command submitted at `t` enters the drive (after waiting for
    /// a free queue slot).
    ///
    /// Commands that completed by `t` are forgotten in batches: while the
    /// queue would have room even counting them, the answer is `t` at
    /// once; when they reach the next batch size (twice the commands
    /// still in the drive, at least [`EXPIRE_BATCH`], at most the queue
    /// depth), the past ones are dropped in one pass. Once the queue
    /// depth is in reach, every admission looks at the exact set.
    #[inline(always)]
    pub fn admit(&mut self, t: u64) -> u64 {
        if self.in_device.len() < self.expire_at {
            return t;
        }
        self.expire(t);
        if self.in_device.len() < self.max_queue_depth {
            t
        } else {
            let Reverse(c) = self.in_device.pop().expect("queue is full, so not empty");
            t.max(c)
        }
    }

    /// When a command arriving at `t` would enter the drive: `t` if a slot
    /// is free then, else the earliest completion of those in the drive.
    pub fn next_free(&mut self, t: u64) -> u64 {
        if self.in_device.len() < self.expire_at {
            return t;
        }
        self.expire(t);
        if self.in_device.len() < self.max_queue_depth {
            t
        } else {
            self.in_device.peek().map_or(t, |&Reverse(c)| c)
        }
    }

    /// Drop the commands completed by `t` and set the next batch size.
    fn expire(&mut self, t: u64) {
        if self.expire_at < self.max_queue_depth {
            self.in_device.retain(|&Reverse(c)| c > t);
        } else {
            while let Some(&Reverse(c)) = self.in_device.peek() {
                if c > t {
                    break;
                }
                self.in_device.pop();
            }
        }
        self.expire_at = (2 * self.in_device.len()).max(EXPIRE_BATCH).min(self.max_queue_depth);
    }

    /// Record that an admitted command completes at `done`.
    #[inline]
    pub fn occupy_until(&mut self, done: u64) {
        self.in_device.push(Reverse(done));
    }

    /// Move `bytes` from host to drive, starting at or after `earliest`;
    /// returns when the transfer ends.
    #[inline]
    pub fn to_device(&mut self, earliest: u64, bytes: u64) -> u64 {
        self.bytes_moved += bytes;
        let d = transfer_ns(bytes, self.fs_per_byte);
        d + self.to_device.reserve(earliest, d)
    }

    /// Move `bytes` from drive to host; returns when the transfer ends.
    #[inline]
    pub fn to_host(&mut self, earliest: u64, bytes: u64) -> u64 {
        self.bytes_moved += bytes;
        let d = transfer_ns(bytes, self.fs_per_byte);
        let link = if self.full_duplex { &mut self.to_host } else { &mut self.to_device };
        d + link.reserve(earliest, d)
    }

    /// Drop link history before `now`.
    pub fn prune(&mut self, now: u64) {
        self.to_device.prune(now);
        self.to_host.prune(now);
    }

    /// Forget all state (new run).
    pub fn reset_time(&mut self) {
        *self = HostInterface {
            to_device: Timeline::default(),
            to_host: Timeline::default(),
            in_device: BinaryHeap::with_capacity(self.max_queue_depth + 1),
            expire_at: 0,
            ..*self
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::DriveSpec;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    /// Admission with past commands dropped in batches gives the same
    /// times as keeping the exact set of commands in the drive, at queue
    /// depths below, at and far above the batch size, with bursts that
    /// fill the queue and gaps that empty it.
    #[test]
    fn batched_expiry_admits_as_the_exact_queue() {
        for depth in [1u32, 3, 32, 64, 100, 1024] {
            // SATA's NCQ allows at most 32.
            let preset = if depth <= 32 { "intel-x25m-80gb" } else { "intel-660p-1tb" };
            let mut spec = DriveSpec::load(preset, &[]).unwrap();
            spec.host.max_queue_depth = depth;
            let model = spec.build("test").unwrap();
            let mut host = HostInterface::new(&model);
            let mut exact: Vec<u64> = Vec::new();
            let mut rng = Pcg64Mcg::seed_from_u64(depth as u64);
            let mut t = 0u64;
            let mut waited = 0;
            for _ in 0..50_000 {
                // Mostly back-to-back arrivals (the queue fills), now and
                // then a gap long enough to drain it.
                t += if rng.random_range(0..100u32) == 0 { 5_000_000 } else { rng.random_range(0..2_000u64) };
                exact.retain(|&c| c > t);
                let want = if exact.len() < depth as usize {
                    t
                } else {
                    let (i, &c) = exact.iter().enumerate().min_by_key(|&(_, &c)| c).unwrap();
                    exact.swap_remove(i);
                    t.max(c)
                };
                let got = host.admit(t);
                assert_eq!(got, want, "depth {depth}");
                waited += usize::from(got > t);
                let done = got + rng.random_range(1_000..200_000u64);
                host.occupy_until(done);
                exact.push(done);
            }
            // The queue was full often enough to test the waiting case.
            assert!(waited > 1000 || depth == 1024, "depth {depth}: {waited} waits");
        }
    }
}
