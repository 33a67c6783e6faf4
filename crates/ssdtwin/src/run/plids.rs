//! The placement identifiers a job's writes carry, in fio's order
//! (dataplacement.c's `dp_fill_dspec_data`): in turn, one per write, or
//! uniformly at random, or by the write's offset (`plid_select=scheme`).
//! fio does the same for the writes it replays from an iolog (iolog.c's
//! `read_iolog_get` calls `dp_fill_dspec_data`), so the twin's trace
//! replay uses it too. The options are read in
//! `run/workload/fio/placement.rs`.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::run::workload::{Placement, SchemeEntry};

/// The chooser of a job's placement identifiers.
pub(crate) struct Placements {
    ids: Vec<u32>,
    next: usize,
    /// In turn (fio's default): neither of the choosers below.
    round_robin: bool,
    rng: Option<Pcg64Mcg>,
    /// `plid_select=scheme`: by the write's offset.
    scheme: Option<Vec<SchemeEntry>>,
}

impl Placements {
    /// The chooser of `p` on a drive with `placements` placement
    /// identifiers; `seed` seeds `plid_select=random`.
    pub(crate) fn new(p: &Placement, placements: u32, seed: u64) -> Placements {
        let ids = if p.ids.is_empty() { (0..placements).collect() } else { p.ids.clone() };
        let rng = p.random.then(|| Pcg64Mcg::seed_from_u64(seed ^ 0xfd9_5eed));
        let round_robin = rng.is_none() && p.scheme.is_none();
        Placements { ids, next: 0, round_robin, rng, scheme: p.scheme.clone() }
    }

    /// The identifier of a write at byte `offset`.
    #[inline]
    pub(crate) fn next(&mut self, offset: u64) -> u32 {
        if self.round_robin {
            // Round robin (fio's default).
            let i = if self.next >= self.ids.len() { 0 } else { self.next };
            self.next = i + 1;
            return self.ids[i];
        }
        self.next_chosen(offset)
    }

    /// [`Placements::next`] by offset or at random.
    #[cold]
    #[inline(never)]
    fn next_chosen(&mut self, offset: u64) -> u32 {
        if let Some(scheme) = &self.scheme {
            return scheme.iter().find(|e| offset >= e.start && offset < e.end).map_or(0, |e| e.plid);
        }
        let r = self.rng.as_mut().expect("a random chooser");
        self.ids[r.random_range(0..self.ids.len())]
    }
}
