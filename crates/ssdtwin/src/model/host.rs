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
//! Left out: per-queue arbitration of NVMe submission queues, interrupt
//! coalescing and host software latency.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::model::nand::transfer_ns;
use crate::model::timeline::Timeline;
use crate::spec::DriveModel;

/// The link and the drive's command slots.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct HostInterface {
    to_device: Timeline,
    to_host: Timeline,
    full_duplex: bool,
    fs_per_byte: u64,
    max_queue_depth: usize,
    in_device: BinaryHeap<Reverse<u64>>,
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
            bytes_moved: 0,
        }
    }

    /// Time a command submitted at `t` enters the drive (after waiting for
    /// a free queue slot).
    #[inline(always)]
    pub fn admit(&mut self, t: u64) -> u64 {
        while let Some(&Reverse(c)) = self.in_device.peek() {
            if c <= t {
                self.in_device.pop();
            } else {
                break;
            }
        }
        if self.in_device.len() < self.max_queue_depth {
            t
        } else {
            let Reverse(c) = self.in_device.pop().expect("queue is full, so not empty");
            t.max(c)
        }
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
            ..*self
        };
    }
}
