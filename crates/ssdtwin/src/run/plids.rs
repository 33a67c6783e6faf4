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
    chooser: Chooser,
}

/// How [`Placements`] chooses (fio's `plid_select`).
enum Chooser {
    /// In turn (fio's default).
    InTurn,
    /// `plid_select=random`: uniformly at random.
    Random(Pcg64Mcg),
    /// `plid_select=scheme`: by the write's offset.
    Scheme(Vec<SchemeEntry>),
}

impl Placements {
    /// The chooser of `p` on a drive with `placements` placement
    /// identifiers; `seed` seeds `plid_select=random`.
    pub(crate) fn new(p: &Placement, placements: u32, seed: u64) -> Placements {
        let ids = if p.ids.is_empty() { (0..placements).collect() } else { p.ids.clone() };
        let chooser = match (&p.scheme, p.random) {
            (Some(scheme), _) => Chooser::Scheme(scheme.clone()),
            (None, true) => Chooser::Random(Pcg64Mcg::seed_from_u64(seed ^ 0xfd9_5eed)),
            (None, false) => Chooser::InTurn,
        };
        Placements { ids, next: 0, chooser }
    }

    /// The identifier of a write at byte `offset`.
    #[inline]
    pub(crate) fn next(&mut self, offset: u64) -> u32 {
        match &mut self.chooser {
            Chooser::InTurn => {
                let i = if self.next >= self.ids.len() { 0 } else { self.next };
                self.next = i + 1;
                self.ids[i]
            }
            Chooser::Scheme(scheme) => by_offset(scheme, offset),
            Chooser::Random(rng) => at_random(rng, &self.ids),
        }
    }
}

/// `plid_select=scheme`: the identifier of the entry that holds `offset`
/// (0 outside every entry).
#[cold]
#[inline(never)]
fn by_offset(scheme: &[SchemeEntry], offset: u64) -> u32 {
    scheme.iter().find(|e| offset >= e.start && offset < e.end).map_or(0, |e| e.plid)
}

/// `plid_select=random`: one of `ids`, uniformly.
#[cold]
#[inline(never)]
fn at_random(rng: &mut Pcg64Mcg, ids: &[u32]) -> u32 {
    ids[rng.random_range(0..ids.len())]
}
