//! The placement identifiers of a job's writes under fio's `fdp=1`
//! (`plis`, `plid_select`, `dp_scheme`); the options are read in
//! [`crate::run::workload::fio::placement`].

use rand::RngExt;
use rand_pcg::Pcg64Mcg;

/// The placement identifiers a job's writes carry, in fio's order
/// (dataplacement.c's `dp_fill_dspec_data`): in turn, one per write, or
/// uniformly at random.
pub(super) struct Placements {
    pub(super) ids: Vec<u32>,
    pub(super) next: usize,
    pub(super) rng: Option<Pcg64Mcg>,
    /// `plid_select=scheme`: by the write's offset.
    pub(super) scheme: Option<Vec<crate::run::workload::SchemeEntry>>,
}

impl Placements {
    /// The identifier of a write at byte `offset`.
    pub(super) fn next(&mut self, offset: u64) -> u32 {
        if let Some(scheme) = &self.scheme {
            return scheme.iter().find(|e| offset >= e.start && offset < e.end).map_or(0, |e| e.plid);
        }
        match &mut self.rng {
            Some(r) => self.ids[r.random_range(0..self.ids.len())],
            None => {
                if self.next >= self.ids.len() {
                    self.next = 0;
                }
                self.next += 1;
                self.ids[self.next - 1]
            }
        }
    }
}
