//! Which blocks a pass of random I/O visits: fio's random map. Two
//! forms: [`Permutation`](crate::perm::Permutation), a seeded bijection on
//! block indices computed on the fly, which visits every block once per
//! pass without memory when all commands have one size; and
//! [`RandomMap`], fio's bitmap of units already written, for variable
//! block sizes (a drawn unit that is taken moves to the next free one).
//! fio's own order, from its generators, is [`super::fio_seq`]'s, which
//! uses the bitmap too.

/// fio's random map: one bit per unit of the span, with a summary bit per
/// 64 units that are all taken, to find the next free unit quickly.
#[derive(Debug, Clone)]
pub(super) struct RandomMap {
    bits: Vec<u64>,
    full_words: Vec<u64>,
    pub(super) units: u64,
    taken: u64,
}

impl RandomMap {
    pub(super) fn new(units: u64) -> RandomMap {
        let words = units.div_ceil(64) as usize;
        RandomMap { bits: vec![0; words], full_words: vec![0; words.div_ceil(64)], units, taken: 0 }
    }

    pub(super) fn full(&self) -> bool {
        self.taken >= self.units
    }

    pub(super) fn reset(&mut self) {
        self.bits.fill(0);
        self.full_words.fill(0);
        self.taken = 0;
    }

    #[inline]
    pub(super) fn is_free(&self, u: u64) -> bool {
        self.bits[(u / 64) as usize] & (1 << (u % 64)) == 0
    }

    /// The first free unit at or after `u`, wrapping to the start (the
    /// map is not full).
    pub(super) fn next_free(&self, u: u64) -> u64 {
        if self.is_free(u) {
            return u;
        }
        let words = self.bits.len();
        let start = (u / 64) as usize;
        // The rest of u's word, then whole words that are not full.
        let first = self.bits[start] | ((1u64 << (u % 64)) - 1) | (1u64 << (u % 64));
        if first != u64::MAX {
            let f = start as u64 * 64 + (!first).trailing_zeros() as u64;
            if f < self.units {
                return f;
            }
        }
        let mut w = (start + 1) % words;
        loop {
            // Skip 64 full words at a time through the summary.
            if w % 64 == 0 && self.full_words[w / 64] == u64::MAX {
                w = (w + 64) % words.max(1);
                if w >= words {
                    w = 0;
                }
                continue;
            }
            if self.bits[w] != u64::MAX {
                let f = w as u64 * 64 + (!self.bits[w]).trailing_zeros() as u64;
                if f < self.units {
                    return f;
                }
            }
            w = (w + 1) % words;
        }
    }

    /// fio's `axmap_next_free`: the first free unit after `u`, wrapping
    /// to the start; `None` when every unit is taken.
    pub(super) fn next_free_after(&self, u: u64) -> Option<u64> {
        (!self.full()).then(|| self.next_free(if u + 1 >= self.units { 0 } else { u + 1 }))
    }

    /// Take up to `n` consecutive free units from `u` (free); stops at a
    /// taken one. Returns how many were taken.
    pub(super) fn take(&mut self, u: u64, n: u64) -> u64 {
        let mut got = 0;
        while got < n && self.is_free(u + got) {
            let x = u + got;
            let w = (x / 64) as usize;
            self.bits[w] |= 1 << (x % 64);
            if self.bits[w] == u64::MAX {
                self.full_words[w / 64] |= 1 << (w % 64);
            }
            got += 1;
        }
        self.taken += got;
        got
    }
}
