//! A seeded permutation of `0..n` computed on the fly (odd
//! multiplications and xor-shifts modulo a power of two, with cycle
//! walking): the order in which a pass of random I/O visits blocks. The
//! workload generator draws its random offsets from it, and the FTL's
//! installer of a random-write state lays data out in the same order.
//! Leaves out: any other generator (fio's `random_generator` choices only
//! change the order).

use rand::RngExt;
use rand_pcg::Pcg64Mcg;

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

    /// The value at position `i` of the permutation (`i < n`).
    #[inline]
    pub(crate) fn at(&self, i: u64) -> u64 {
        let mut v = self.mix(i);
        while v >= self.n {
            v = self.mix(v);
        }
        v
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
