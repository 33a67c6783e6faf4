//! Garbage-collection victim selection.
//!
//! - **greedy**: the sealed block with the fewest valid slots, O(1)
//!   amortised from the valid-count buckets of [`BlockTable`];
//! - **fifo**: the block sealed longest ago (a queue per die, O(1)); for
//!   uniform random writes its write amplification has the closed form of
//!   Hu et al. (2009) / Desnoyers (2012), see [`crate::study::analytic`];
//! - **cost-benefit**: maximises `(1 − u) · age / (1 + u)` with `u` the
//!   valid fraction and `age` the number of blocks sealed since (Rosenblum
//!   and Ousterhout's LFS cleaner); a scan over the die's sealed blocks,
//!   which is O(blocks per die) once per reclaimed block.
//!
//! Age is counted in sealed blocks, not nanoseconds, so that victim choice
//! never depends on timing.

use std::collections::VecDeque;

use super::blocks::BlockTable;
use crate::model::nand::{CellMode, Geometry, NONE};
use crate::spec::GcPolicy;

/// Picks GC victims according to a policy.
#[derive(Debug, Clone)]
pub struct VictimSelector {
    policy: GcPolicy,
    // FIFO queues per (mode, die).
    fifo: Vec<VecDeque<u32>>,
    blocks_per_die: u32,
    dies: u32,
}

impl VictimSelector {
    /// A selector for `dies` dies.
    pub fn new(policy: GcPolicy, dies: u32) -> VictimSelector {
        VictimSelector {
            policy,
            fifo: if policy == GcPolicy::Fifo { vec![VecDeque::new(); 2 * dies as usize] } else { Vec::new() },
            blocks_per_die: 0,
            dies,
        }
    }

    /// The policy.
    pub fn policy(&self) -> GcPolicy {
        self.policy
    }

    /// Forget all sealed blocks.
    pub fn reset(&mut self) {
        for q in &mut self.fifo {
            q.clear();
        }
    }

    fn queue(&self, die: u32, mode: CellMode) -> usize {
        (mode as u32 * self.dies + die) as usize
    }

    /// A block was sealed.
    pub fn on_seal(&mut self, block: u32, mode: CellMode, geo: &Geometry) {
        self.blocks_per_die = geo.blocks_per_die;
        if self.policy == GcPolicy::Fifo {
            let q = self.queue(geo.die_of_block(block), mode);
            self.fifo[q].push_back(block);
        }
    }

    /// A block was chosen and taken out of the sealed set.
    pub fn on_collect(&mut self, block: u32, mode: CellMode) {
        if self.policy == GcPolicy::Fifo {
            let q = self.queue(block / self.blocks_per_die, mode);
            let q = &mut self.fifo[q];
            if q.front() == Some(&block) {
                q.pop_front();
            } else if let Some(i) = q.iter().position(|&b| b == block) {
                q.remove(i);
            }
        }
    }

    /// Whether `die` has a sealed block of `mode` with an invalid slot.
    pub fn has_candidate(&self, blocks: &BlockTable, die: u32, mode: CellMode) -> bool {
        blocks.peek_min_valid(die, mode).is_some_and(|b| blocks.valid[b as usize] < blocks.wp[b as usize])
    }

    /// Choose a victim of `mode` on `die`; `seq` is the current seal
    /// sequence number.
    pub fn select(&mut self, blocks: &mut BlockTable, die: u32, mode: CellMode, seq: u64) -> Option<u32> {
        match self.policy {
            GcPolicy::Greedy => blocks.min_valid(die, mode),
            GcPolicy::Fifo => self.fifo.get(self.queue(die, mode)).and_then(|q| q.front().copied()),
            GcPolicy::CostBenefit => {
                let mut best = NONE;
                let mut best_score = -1.0f64;
                blocks.for_each_sealed(die, mode, |b| {
                    let i = b as usize;
                    let cap = blocks.wp[i] as f64;
                    let u = blocks.valid[i] as f64 / cap;
                    let age = (seq - blocks.sealed_seq[i]) as f64 + 1.0;
                    let score = (1.0 - u) * age / (1.0 + u);
                    if score > best_score || (score == best_score && b < best) {
                        best_score = score;
                        best = b;
                    }
                });
                (best != NONE).then_some(best)
            }
        }
    }
}
