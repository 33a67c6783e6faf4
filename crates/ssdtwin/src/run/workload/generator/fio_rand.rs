//! fio's random number generators, written from their published
//! definitions so that a job draws the numbers fio 3.33 draws:
//!
//! - `tausworthe` (fio's default): L'Ecuyer's maximally equidistributed
//!   combined Tausworthe generator "taus88" (three 32-bit components with
//!   parameters (13, 19, 12), (2, 25, 4), (3, 11, 17) and masks
//!   0xfffffffe, 0xfffffff8, 0xfffffff0; P. L'Ecuyer, "Maximally
//!   Equidistributed Combined Tausworthe Generators", Mathematics of
//!   Computation 65 (1996) 203–213), seeded as fio's lib/rand.c does:
//!   each component from the previous one by the linear congruence
//!   `x·69069 ⊕ seed` starting from 53, raised above its minimum (2, 8,
//!   16), then six numbers discarded;
//! - `tausworthe64`: L'Ecuyer's five-component 64-bit "taus258"
//!   (Mathematics of Computation 68 (1999) 261–269, Table 3), seeded the
//!   same way with the multiplier 6906969069 and minimums 2, 8, 16, 34, 50;
//! - `lfsr`: a maximal-length Galois linear feedback shift register whose
//!   width is the smallest (from 3 bits) that holds the block count, with
//!   the tap table fio's lib/lfsr.c takes from Xilinx application note
//!   XAPP052 ("Efficient Shift Registers, LFSR Counters, and Long
//!   Pseudo-Random Sequence Generators", Table 3); it visits every block
//!   once without a map, values past the last block skipped.
//!
//! And fio's seeds (init.c, `setup_random_seeds`, `td_fill_rand_seeds`):
//! from `randseed` (default 0x89), multiplied by 0x9e370001 four times,
//! one seed per purpose `k` is `seed · thread_number + k` (the seed
//! multiplied again after each); with `randrepeat=1` (the default) the
//! offsets' seed is 0xb1899bed × thread_number instead, whatever
//! `randseed` says (fio 3.33; later releases let an explicit `randseed`
//! turn `randrepeat` off). Nothing here allocates.

/// fio's purposes of its per-job seeds (fio.h, `FIO_RAND_*_OFF`): the
/// index of each in the seed table.
pub(crate) mod purpose {
    /// Reads' block sizes (`FIO_RAND_BS_OFF`; writes' and trims' the next two).
    pub const BS: u64 = 0;
    /// The read/write mix (`FIO_RAND_MIX_OFF`).
    pub const MIX: u64 = 4;
    /// Random offsets (`FIO_RAND_BLOCK_OFF`).
    pub const BLOCK: u64 = 6;
    /// `percentage_random` of reads (`FIO_RAND_SEQ_RAND_READ_OFF`).
    pub const SEQ_RAND_READ: u64 = 10;
    /// `sprandom`'s invalidation draws (`FIO_RAND_SPRANDOM_OFF`, fio 3.41).
    pub const SPRANDOM: u64 = 22;
}

/// fio's offset seed under `randrepeat=1` (init.c, `FIO_RANDSEED`).
const FIO_RANDSEED: u64 = 0xb189_9bed;
/// fio's seed scrambling multiplier (init.c, `setup_random_seeds`).
const SEED_MUL: u64 = 0x9e37_0001;

/// The seed fio gives purpose `k` of job `thread_number` (1-based, in
/// file order, clones counted).
pub(crate) fn seed_of(randseed: u64, randrepeat: bool, thread_number: u64, k: u64) -> u64 {
    if k == purpose::BLOCK && randrepeat {
        return FIO_RANDSEED.wrapping_mul(thread_number);
    }
    let mut seed = randseed;
    for _ in 0..4 {
        seed = seed.wrapping_mul(SEED_MUL);
    }
    for _ in 0..k {
        seed = seed.wrapping_mul(SEED_MUL);
    }
    seed.wrapping_mul(thread_number).wrapping_add(k)
}

/// fio's 32-bit combined Tausworthe generator (taus88).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Taus88 {
    s: [u32; 3],
}

impl Taus88 {
    /// Seeded as fio's `init_rand_seed` (the seed truncated to 32 bits).
    pub(crate) fn new(seed: u64) -> Taus88 {
        let seed = seed as u32;
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let raise = |x: u32, m: u32| if x < m { x.wrapping_add(m) } else { x };
        let s1 = raise(lcg(53), 1);
        let s2 = raise(lcg(s1), 7);
        let s3 = raise(lcg(s2), 15);
        let mut t = Taus88 { s: [s1, s2, s3] };
        for _ in 0..6 {
            t.next_u32();
        }
        t
    }

    #[inline]
    pub(crate) fn next_u32(&mut self) -> u32 {
        #[inline(always)]
        fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
            ((s & c) << d) ^ (((s << a) ^ s) >> b)
        }
        let [s1, s2, s3] = &mut self.s;
        *s1 = step(*s1, 13, 19, 0xffff_fffe, 12);
        *s2 = step(*s2, 2, 25, 0xffff_fff8, 4);
        *s3 = step(*s3, 3, 11, 0xffff_fff0, 17);
        *s1 ^ *s2 ^ *s3
    }

    /// fio's `rand_between(start, end)`, both inclusive, as its 32-bit
    /// path computes it (a double product, truncated).
    #[inline]
    pub(crate) fn between(&mut self, start: u32, end: u32) -> u32 {
        let r = self.next_u32();
        let span = (end - start) as f64 + 1.0;
        start + (span * (r as f64 / 4_294_967_296.0)) as u32
    }
}

/// fio's 64-bit combined Tausworthe generator (taus258).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Taus258 {
    s: [u64; 5],
}

impl Taus258 {
    pub(crate) fn new(seed: u64) -> Taus258 {
        let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
        let raise = |x: u64, m: u64| if x < m { x.wrapping_add(m) } else { x };
        let mut s = [0u64; 5];
        let mins = [1, 7, 15, 33, 49];
        let mut prev = 53;
        for (i, m) in mins.iter().enumerate() {
            s[i] = raise(lcg(prev), *m);
            prev = s[i];
        }
        let mut t = Taus258 { s };
        for _ in 0..6 {
            t.next_u64();
        }
        t
    }

    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        // (q, s, k-mask, r) per component: x = ((s << q) ^ s) >> (64 - ... )
        const P: [(u32, u32, u64, u32); 5] = [
            (1, 53, 0xffff_ffff_ffff_fffe, 10),
            (24, 50, 0xffff_ffff_ffff_fe00, 5),
            (3, 23, 0xffff_ffff_ffff_f000, 29),
            (5, 24, 0xffff_ffff_fffe_0000, 23),
            (3, 33, 0xffff_ffff_ff80_0000, 8),
        ];
        let mut out = 0;
        for (s, &(q, sh, mask, r)) in self.s.iter_mut().zip(P.iter()) {
            let x = ((*s << q) ^ *s) >> sh;
            *s = ((*s & mask) << r) ^ x;
            out ^= *s;
        }
        out
    }
}

/// The generator of a job's random offsets (`random_generator`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum OffsetRng {
    Taus(Taus88),
    Taus64(Taus258),
}

impl OffsetRng {
    /// The next raw value and the generator's largest (fio's `__rand`,
    /// `rand_max`).
    #[inline]
    pub(crate) fn raw(&mut self) -> (u64, u64) {
        match self {
            OffsetRng::Taus(t) => (t.next_u32() as u64, u32::MAX as u64),
            OffsetRng::Taus64(t) => (t.next_u64(), u64::MAX),
        }
    }

    /// A block in `0..lastb`: fio's `lastb · (r / (max + 1.0))`.
    #[inline]
    pub(crate) fn block(&mut self, lastb: u64) -> u64 {
        match self {
            OffsetRng::Taus(t) => (lastb as f64 * (t.next_u32() as f64 / 4_294_967_296.0)) as u64,
            OffsetRng::Taus64(t) => (lastb as f64 * (t.next_u64() as f64 / 18_446_744_073_709_551_616.0)) as u64,
        }
    }
}

/// Taps of the maximal-length LFSRs, by width (XAPP052 Table 3, as fio's
/// lib/lfsr.c lists them), from 3 bits.
const TAPS: [&[u8]; 64] = [
    &[],
    &[],
    &[],
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

/// fio's LFSR over `0..n` (one step per value, fio's `spin` 0).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lfsr {
    xormask: u64,
    top_bit: u64,
    max_val: u64,
    last: u64,
    /// Values handed out since the last reset.
    count: u64,
    seed: u64,
    /// fio steps twice for the first value after `lfsr_init` (its cycle
    /// bookkeeping starts at one), not after a reset.
    double_first: bool,
}

impl Lfsr {
    /// An LFSR for `n` values seeded with `seed`; `None` when `n` needs
    /// more than 63 bits or the seed is the all-ones state (fio fails the
    /// job then).
    pub(crate) fn new(n: u64, seed: u64) -> Option<Lfsr> {
        let width = (3..64).find(|&i| (1u64 << i) > n)?;
        let taps = TAPS[width];
        let xormask = taps.iter().fold(0u64, |m, &t| m | 1u64 << (t - 1));
        let top_bit = 1u64 << (taps[0] - 1);
        let mut l =
            Lfsr { xormask, top_bit, max_val: n.saturating_sub(1), last: 0, count: 0, seed, double_first: true };
        l.reset().then_some(l)
    }

    /// Start over from the seed (fio's `lfsr_reset`); `false` for the
    /// all-ones state.
    pub(crate) fn reset(&mut self) -> bool {
        let mask = (self.top_bit << 1) - 1;
        self.count = 0;
        self.last = self.seed & mask;
        self.last != mask
    }

    /// The next value below `n`, `None` once all `n` were given.
    #[inline]
    pub(crate) fn next(&mut self) -> Option<u64> {
        let c = self.count;
        self.count += 1;
        if c > self.max_val {
            return None;
        }
        loop {
            if std::mem::take(&mut self.double_first) {
                self.step();
            }
            self.step();
            if self.last <= self.max_val {
                return Some(self.last);
            }
        }
    }

    /// One shift (fio's form: shift right with the top bit set, the taps
    /// flipped when the bit shifted out was 0).
    #[inline(always)]
    fn step(&mut self) {
        let v = self.last;
        self.last = ((v >> 1) | self.top_bit) ^ ((v & 1).wrapping_sub(1) & self.xormask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lfsr_visits_every_value_once() {
        for n in [5u64, 16, 100, 1000] {
            let mut l = Lfsr::new(n, seed_of(0x89, true, 1, purpose::BLOCK)).unwrap();
            let mut seen = vec![false; n as usize];
            for _ in 0..n {
                let v = l.next().unwrap();
                assert!(!seen[v as usize], "{v} twice of {n}");
                seen[v as usize] = true;
            }
        }
    }

    #[test]
    fn between_stays_in_range() {
        let mut t = Taus88::new(7);
        for _ in 0..10_000 {
            let v = t.between(1, 100);
            assert!((1..=100).contains(&v));
        }
    }
}
