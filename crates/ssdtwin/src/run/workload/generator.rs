//! Offsets and directions of the commands of an I/O phase.
//!
//! Sequential patterns keep one position per direction and wrap at the
//! end of the span. Random patterns follow fio: by default every
//! `bs`-aligned block of the span is visited exactly once per pass in a
//! pseudo-random order (fio's random map), here a seeded bijection on the
//! block indices (odd multiplications and xor-shifts modulo a power of two,
//! with cycle walking) that needs no memory; with `norandommap` blocks are
//! drawn independently with replacement. The read/write choice of mixed
//! patterns is drawn per command with probability `rwmixread`. With
//! `percentage_random` below 100, a random pattern sends only that share
//! of its commands to random offsets; the others continue from the
//! previous command of the same direction (as fio does).

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{IoSpec, RwPattern};
use crate::model::drive::{Command, IoKind};

/// A permutation of `0..n` computed on the fly.
#[derive(Debug, Clone)]
pub(crate) struct Permutation {
    n: u64,
    bits: u32,
    mask: u64,
    keys: [u64; 3],
    counter: u64,
}

impl Permutation {
    pub(crate) fn new(n: u64, rng: &mut Pcg64Mcg) -> Permutation {
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        Permutation {
            n,
            bits,
            mask,
            keys: [rng.random::<u64>(), rng.random::<u64>() | 1, rng.random::<u64>() | 1],
            counter: 0,
        }
    }

    #[inline]
    fn mix(&self, mut x: u64) -> u64 {
        let m = self.mask;
        let sh = self.bits / 2 + 1;
        x = (x ^ self.keys[0]) & m;
        x = x.wrapping_mul(self.keys[1]) & m;
        x ^= x >> sh;
        x = x.wrapping_mul(self.keys[2]) & m;
        x ^= x >> sh;
        x
    }

    #[inline]
    pub(crate) fn next(&mut self) -> u64 {
        // Cycle walking: P restricted to 0..n stays a bijection on 0..n.
        let mut v = self.mix(self.counter);
        while v >= self.n {
            v = self.mix(v);
        }
        self.counter += 1;
        if self.counter == self.n {
            self.counter = 0;
        }
        v
    }
}

/// How many commands the generator computes ahead of the one it returns
/// (so that the simulator can warm the map entries they will touch).
pub const LOOKAHEAD: usize = 16;

/// Generates the commands of one I/O phase.
#[derive(Debug, Clone)]
pub struct IoGenerator {
    ring: [Command; LOOKAHEAD],
    ring_pos: usize,
    primed: bool,
    rng: Pcg64Mcg,
    rw: RwPattern,
    rwmixread: u32,
    bs: u32,
    base: u64,
    blocks: u64,
    seq_next: [u64; 3],
    perm: [Permutation; 3],
    norandommap: bool,
    percentage_random: u32,
    last: [u64; 3],
}

impl IoGenerator {
    /// A generator for `spec` on a drive of `capacity` bytes.
    pub fn new(spec: &IoSpec, capacity: u64) -> IoGenerator {
        let span = spec.size.unwrap_or(capacity - spec.offset);
        let blocks = (span / spec.bs as u64).max(1);
        let mut rng = Pcg64Mcg::seed_from_u64(spec.randseed);
        let perm = [
            Permutation::new(blocks, &mut rng),
            Permutation::new(blocks, &mut rng),
            Permutation::new(blocks, &mut rng),
        ];
        IoGenerator {
            ring: [Command { kind: IoKind::Read, offset: 0, len: 0 }; LOOKAHEAD],
            ring_pos: 0,
            primed: false,
            rng,
            rw: spec.rw,
            rwmixread: spec.rwmixread,
            bs: spec.bs,
            base: spec.offset,
            blocks,
            seq_next: [0; 3],
            perm,
            norandommap: spec.norandommap,
            percentage_random: spec.percentage_random,
            last: [u64::MAX; 3],
        }
    }

    /// The next command. The sequence does not depend on how far ahead
    /// it is computed.
    #[inline]
    pub fn next_command(&mut self) -> Command {
        if !self.primed {
            for i in 0..LOOKAHEAD {
                self.ring[i] = self.generate();
            }
            self.primed = true;
        }
        let c = self.ring[self.ring_pos];
        self.ring[self.ring_pos] = self.generate();
        self.ring_pos = (self.ring_pos + 1) % LOOKAHEAD;
        c
    }

    /// The command that the `k`-th next call of
    /// [`IoGenerator::next_command`] will return (`1 ≤ k ≤ LOOKAHEAD`;
    /// meaningful once `next_command` has been called).
    #[inline]
    pub fn ahead(&self, k: usize) -> Command {
        debug_assert!((1..=LOOKAHEAD).contains(&k));
        self.ring[(self.ring_pos + k - 1) % LOOKAHEAD]
    }

    fn generate(&mut self) -> Command {
        let kind = match self.rw {
            RwPattern::Read | RwPattern::RandRead => IoKind::Read,
            RwPattern::Write | RwPattern::RandWrite => IoKind::Write,
            RwPattern::Trim | RwPattern::RandTrim => IoKind::Trim,
            RwPattern::ReadWrite | RwPattern::RandRw => {
                if self.rng.random_range(0..100u32) < self.rwmixread {
                    IoKind::Read
                } else {
                    IoKind::Write
                }
            }
        };
        let k = kind as usize;
        let sequential_turn = self.percentage_random < 100
            && self.rw.is_random()
            && self.last[k] != u64::MAX
            && self.rng.random_range(0..100u32) >= self.percentage_random;
        let block = if sequential_turn {
            let b = self.last[k] + 1;
            if b == self.blocks {
                0
            } else {
                b
            }
        } else if self.rw.is_random() {
            if self.norandommap {
                self.rng.random_range(0..self.blocks)
            } else {
                self.perm[k].next()
            }
        } else {
            let b = self.seq_next[k];
            self.seq_next[k] = if b + 1 == self.blocks { 0 } else { b + 1 };
            b
        };
        self.last[k] = block;
        Command { kind, offset: self.base + block * self.bs as u64, len: self.bs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookahead_shows_the_commands_that_follow() {
        let mut spec = IoSpec::new("t", RwPattern::RandRw);
        spec.size = Some(1 << 30);
        let mut g = IoGenerator::new(&spec, 1 << 30);
        let mut expected = Vec::new();
        for _ in 0..100 {
            let c = g.next_command();
            if let Some(e) = expected.first().copied() {
                assert_eq!(c, e);
                expected.remove(0);
            }
            if expected.is_empty() {
                expected = (1..=LOOKAHEAD).map(|k| g.ahead(k)).collect();
            }
        }
    }

    #[test]
    fn random_map_visits_every_block_once_per_pass() {
        let mut spec = IoSpec::new("t", RwPattern::RandWrite);
        spec.size = Some(1000 * 4096);
        let mut g = IoGenerator::new(&spec, 1 << 30);
        let mut seen = vec![false; 1000];
        for _ in 0..1000 {
            let c = g.next_command();
            let b = (c.offset / 4096) as usize;
            assert!(!seen[b], "block {b} twice in one pass");
            seen[b] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn percentage_random_mixes_sequential_runs() {
        let mut spec = IoSpec::new("t", RwPattern::RandWrite);
        spec.size = Some(1 << 30);
        spec.percentage_random = 10;
        let mut g = IoGenerator::new(&spec, 1 << 30);
        let offs: Vec<_> = (0..10_000).map(|_| g.next_command().offset).collect();
        let seq = offs.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        assert!((8700..9300).contains(&seq), "{seq}");
    }

    #[test]
    fn sequential_wraps_and_mix_follows_rwmixread() {
        let mut spec = IoSpec::new("t", RwPattern::ReadWrite);
        spec.size = Some(4 * 4096);
        spec.rwmixread = 70;
        let mut g = IoGenerator::new(&spec, 1 << 30);
        let cmds: Vec<_> = (0..10_000).map(|_| g.next_command()).collect();
        let reads = cmds.iter().filter(|c| c.kind == IoKind::Read).count();
        assert!((6700..7300).contains(&reads), "{reads}");
        let write_offsets: Vec<_> =
            cmds.iter().filter(|c| c.kind == IoKind::Write).take(5).map(|c| c.offset / 4096).collect();
        assert_eq!(write_offsets, vec![0, 1, 2, 3, 0]);
    }
}
