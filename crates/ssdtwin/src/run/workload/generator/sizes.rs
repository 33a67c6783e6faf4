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
    /// The table of `(size, weight)` choices. With `percent` (a `bssplit`)
    /// the weights are percentages, and weights short of 100 (left-out
    /// shares rounded down) leave the rest to the size fio falls back to:
    /// the last of the sizes with a share in fio's order of ascending
    /// shares (its `get_next_buflen` loop ends on it). Without (a
    /// `bsrange`'s multiples, one weight each) they are relative weights.
    pub(super) fn new(choices: &[(u32, u32)], percent: bool) -> Sizes {
        let given: u32 = choices.iter().map(|c| c.1).sum();
        let mut weights: Vec<u32> = choices.iter().map(|c| c.1).collect();
        if percent && choices.len() > 1 && given > 0 && given < 100 {
            // The last maximum in a stable ascending sort: the maximum
            // listed last.
            let max = *weights.iter().max().expect("sizes");
            let fallback = weights.iter().rposition(|&w| w == max).expect("a maximum");
            weights[fallback] += 100 - given;
        }
        let mut acc = 0;
        let table = choices
            .iter()
            .zip(&weights)
            .map(|(&(size, _), &w)| {
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
