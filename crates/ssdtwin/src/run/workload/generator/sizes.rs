//! Block sizes of one direction drawn per command (fio's `bs` per
//! direction, `bsrange`, `bssplit`): a cumulative weight table, one draw
//! per command when there is more than one size. Left out: fio's
//! `bssplit` with a separate list per file.

use rand::RngExt;
use rand_pcg::Pcg64Mcg;

/// Sizes of one direction, made ready for drawing.
#[derive(Debug, Clone)]
pub(super) struct Sizes {
    /// Cumulative weights and sizes; one entry = fixed.
    table: Vec<(u32, u32)>,
    total: u32,
}

impl Sizes {
    /// The table of `(size, weight)` choices.
    pub(super) fn new(choices: &[(u32, u32)]) -> Sizes {
        let mut acc = 0;
        let table = choices
            .iter()
            .map(|&(size, w)| {
                acc += w;
                (acc, size)
            })
            .collect();
        Sizes { table, total: acc.max(1) }
    }

    /// The next command's size.
    #[inline]
    pub(super) fn draw(&self, rng: &mut Pcg64Mcg) -> u32 {
        if self.table.len() == 1 {
            self.table[0].1
        } else {
            let r = rng.random_range(0..self.total);
            self.table.iter().find(|e| r < e.0).map_or(self.table[0].1, |e| e.1)
        }
    }
}
