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
//!
//! Options beyond these take a second path, chosen once per phase (the
//! basic path stays as it was, so suites give the same commands): block
//! sizes drawn per command (`bsrange`, `bssplit`, a size per direction),
//! offsets aligned to `blockalign`, skewed distributions (Zipf by
//! rejection-inversion, exact for any θ; Pareto and normal as fio draws
//! them; skewed ranks scattered over the span through the same seeded
//! bijection; zones positional), `rw=...:N` offset modifiers and
//! `trimwrite` pairs, a distribution per direction. With variable sizes,
//! uniform random offsets follow fio's random map at the smallest block
//! size: a drawn unit already written moves to the next free one, and a
//! command that would run into a written unit is shortened to the free
//! ones, so every unit is covered once per pass (then the map starts
//! over).
//!
//! A job read from a fio job file takes fio's own sequence instead when
//! its options allow ([`fio_seq`], with fio's generators in
//! [`fio_rand`]): the same commands as fio 3.33 issues.
//!
//! Parts, by concept: [`random_map`] (which blocks a pass visits),
//! [`distribution`] (where skewed offsets land), [`sizes`] (block sizes per
//! command). Arrivals (think time, rate limits) are not the generator's:
//! see [`crate::run::source`].

mod distribution;
pub(crate) mod fio_rand;
mod fio_seq;
mod random_map;
mod sizes;
mod sprandom;

use distribution::Draw;
use fio_seq::FioSeq;
pub(crate) use fio_seq::PassWalk;
use random_map::RandomMap;
use sizes::Sizes;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{Distribution, IoSpec, RwPattern, Sequencer, Strided};
use crate::model::drive::{Command, IoKind};
use crate::perm::Permutation;

/// `sprandom`'s physical size (the job's `io_size`) and region size,
/// bytes, for a span of `logical` bytes written in blocks of `align`.
pub(crate) fn sprandom_sizes(s: &super::Sprandom, logical: u64, align: u64) -> (u64, u64) {
    let physical = sprandom::physical_size(s.op, logical, align);
    (physical, physical / s.regions.max(1) as u64)
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
    /// Everything beyond fio's basic options: `None` keeps the fast path.
    ext: Option<Box<Ext>>,
    /// fio's own sequence, for jobs from fio job files it covers.
    fio: Option<Box<FioSeq>>,
    /// The job's rate schedule picks each command's direction at its
    /// issue: nothing is computed ahead ([`IoGenerator::steer`]).
    steered: bool,
    /// The direction the next command of a steered mix takes.
    chosen: Option<IoKind>,
}

/// State of the options beyond the basic ones (variable block sizes,
/// distributions, offset modifiers, trimwrite).
#[derive(Debug, Clone)]
struct Ext {
    span: u64,
    /// Offset unit per direction, bytes.
    unit: [u64; 3],
    /// Units per direction.
    units: [u64; 3],
    sizes: [Sizes; 3],
    /// Distribution per direction.
    draw: [Draw; 3],
    /// fio's random map when block sizes vary (each unit once per pass).
    map: Option<RandomMap>,
    modifier: Option<(i64, Sequencer)>,
    /// Commands left in the current run of the offset modifier.
    run_left: [u64; 3],
    /// Next sequential byte position per direction.
    pos: [u64; 3],
    /// Last command of each direction (offset within span, len).
    prev: [(u64, u32); 3],
    /// trimwrite: the write that follows the trim.
    pending_write: Option<Command>,
    /// fio's `center` of a skewed distribution (`zipf:θ:c`), 0–1.
    center: Option<f64>,
    /// `zonemode=strided`: the zone the offsets are in.
    zones: Option<Zones>,
}

/// The current zone of `zonemode=strided`.
#[derive(Debug, Clone)]
struct Zones {
    z: Strided,
    /// The whole span, bytes.
    whole: u64,
    /// The zone's start within the span.
    base: u64,
    /// Bytes issued in the zone.
    bytes: u64,
}

impl IoGenerator {
    /// A generator for `spec` on a drive of `capacity` bytes.
    pub fn new(spec: &IoSpec, capacity: u64) -> IoGenerator {
        let whole = spec.size.unwrap_or(capacity - spec.offset);
        // Strided zones: offsets are drawn inside one zone at a time.
        let span = spec.strided.map_or(whole, |z| z.range.min(whole));
        let blocks = (span / spec.bs as u64).max(1);
        let mut rng = Pcg64Mcg::seed_from_u64(spec.randseed);
        let plain = spec.sizes.is_none()
            && spec.blockalign.is_none()
            && spec.distribution == Distribution::Random
            && spec.distributions.is_none()
            && spec.modifier.is_none()
            && spec.strided.is_none()
            && !spec.rw.is_trimwrite();
        let fixed = spec.sizes.as_ref().map(|s| s.iter().all(|d| d.choices.len() == 1)).unwrap_or(true);
        let (unit, units, perm) = if plain {
            let perm = [
                Permutation::new(blocks, &mut rng),
                Permutation::new(blocks, &mut rng),
                Permutation::new(blocks, &mut rng),
            ];
            ([spec.bs as u64; 3], [blocks; 3], perm)
        } else {
            let unit: [u64; 3] = std::array::from_fn(|k| {
                let u = match (spec.blockalign, fixed) {
                    (Some(a), _) => a,
                    (None, true) => spec.bs_of(k),
                    (None, false) => spec.min_bs(),
                };
                u.max(512) as u64
            });
            let units: [u64; 3] = std::array::from_fn(|k| (span / unit[k]).max(1));
            let perm = std::array::from_fn(|k| Permutation::new(units[k], &mut rng));
            (unit, units, perm)
        };
        let ext = (!plain).then(|| {
            let sizes = std::array::from_fn(|k| {
                let choices = match &spec.sizes {
                    Some(s) => s[k].choices.clone(),
                    None => vec![(spec.bs, 100)],
                };
                // A `bsrange`'s multiples have equal weights that are not
                // percentages: nothing is left for a fallback size.
                Sizes::new(&choices, !spec.fio.is_some_and(|f| f.bsrange))
            });
            let n = units[1].max(units[0]);
            let draw = std::array::from_fn(|k| Draw::new(spec.distribution_of(k), n));
            // fio's random map for variable block sizes: one bit per unit
            // of the span, shared by the directions.
            let map =
                (spec.rw.is_random() && !spec.norandommap && !fixed).then(|| RandomMap::new(units[0].max(units[1])));
            Box::new(Ext {
                span,
                unit,
                units,
                sizes,
                draw,
                map,
                modifier: spec.modifier,
                run_left: [0; 3],
                pos: [0; 3],
                prev: [(u64::MAX, 0); 3],
                pending_write: None,
                center: spec.random_center,
                zones: spec.strided.map(|z| Zones { z, whole, base: 0, bytes: 0 }),
            })
        });
        let _ = unit;
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
            ext,
            fio: FioSeq::covers(spec).then(|| Box::new(FioSeq::new(spec, capacity))),
            steered: false,
            chosen: None,
        }
    }

    /// From now on, a read/write mix whose directions the job's rate
    /// schedule may change (fio's `rate_ddir`): each command is computed
    /// when it is issued, its direction drawn first
    /// ([`IoGenerator::draw_direction`]) and possibly changed
    /// ([`IoGenerator::steer`]); [`IoGenerator::ahead`] has nothing to
    /// show. Call before the first command.
    pub(crate) fn steered(&mut self) {
        debug_assert!(!self.primed, "steered before the first command");
        self.steered = true;
    }

    /// A steered mix: draw the next command's direction as fio's
    /// `get_rw_ddir` does before its rate check (0 read, 1 write).
    pub(crate) fn draw_direction(&mut self) -> usize {
        let d = match &mut self.fio {
            Some(f) => f.draw_direction(),
            None => {
                self.chosen = None;
                self.kind() as usize
            }
        };
        self.steer(d);
        d
    }

    /// A steered mix: the next command goes in direction `d` (fio keeps it
    /// as the mix's current direction: `td->rwmix_ddir`).
    pub(crate) fn steer(&mut self, d: usize) {
        match &mut self.fio {
            Some(f) => f.steer(d),
            None => self.chosen = Some(if d == 0 { IoKind::Read } else { IoKind::Write }),
        }
    }

    /// Whether a job from a fio job file follows fio's own sequence
    /// ([`fio_seq`]).
    pub(crate) fn follows_fio(spec: &IoSpec) -> bool {
        FioSeq::covers(spec)
    }

    /// How many commands (at most `max`) the phase has before its
    /// sequence ends on its own (`sprandom`'s end), if it does.
    pub fn command_limit(&self, max: u64) -> Option<u64> {
        self.fio.as_ref().and_then(|f| f.command_limit(max))
    }

    /// Bytes of the first whole pass of fio's sequence, at most `cap`
    /// (see [`PassWalk::next_pass`]); `None` for a job without fio's
    /// sequence, or a pass of `cap` bytes or more.
    pub fn pass_bytes(&self, cap: u64) -> Option<u64> {
        self.fio.as_ref().and_then(|f| f.pass_walk().next_pass(cap))
    }

    /// fio's passes one after another, counted on a copy, and whether
    /// each repeats the first ([`FioSeq::passes_repeat`]); `None` for a
    /// job without fio's sequence.
    pub(crate) fn pass_walk(&self) -> Option<(PassWalk, bool)> {
        self.fio.as_ref().map(|f| (f.pass_walk(), f.passes_repeat()))
    }

    /// Keep where fio's passes begin ([`IoGenerator::pass_began`]; only
    /// fio's own sequence has passes of its own).
    pub(crate) fn track_passes(&mut self) {
        if let Some(f) = &mut self.fio {
            f.track_passes();
        }
    }

    /// Whether the command [`IoGenerator::next_command`] returned last is
    /// the first of a new pass (fio's `clear_io_state` ran before it).
    pub(crate) fn pass_began(&mut self) -> bool {
        let ahead = if self.primed { LOOKAHEAD as u64 } else { 0 };
        match &mut self.fio {
            Some(f) => {
                let index = f.generated().saturating_sub(ahead + 1);
                f.pass_began(index)
            }
            None => false,
        }
    }

    /// The next command. The sequence does not depend on how far ahead
    /// it is computed.
    #[inline]
    pub fn next_command(&mut self) -> Command {
        if !self.primed {
            if self.steered {
                return self.generate();
            }
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

    #[inline]
    fn kind(&mut self) -> IoKind {
        match self.rw {
            RwPattern::Read | RwPattern::RandRead => IoKind::Read,
            RwPattern::Write | RwPattern::RandWrite => IoKind::Write,
            RwPattern::Trim | RwPattern::RandTrim | RwPattern::TrimWrite | RwPattern::RandTrimWrite => IoKind::Trim,
            RwPattern::ReadWrite | RwPattern::RandRw => {
                if let Some(k) = self.chosen.take() {
                    k
                } else if self.rng.random_range(0..100u32) < self.rwmixread {
                    IoKind::Read
                } else {
                    IoKind::Write
                }
            }
        }
    }

    fn generate(&mut self) -> Command {
        if let Some(f) = &mut self.fio {
            return f.next();
        }
        if self.ext.is_some() {
            return self.generate_ext();
        }
        let kind = self.kind();
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

    /// A unit index in `0..n` drawn from the distribution.
    fn draw_unit(&mut self, k: usize, n: u64) -> u64 {
        if let Some(Draw::Sequence(blocks, stride, i)) = self.ext.as_mut().map(|e| &mut e.draw[k]) {
            *i += 1;
            return distribution::sequence_block(blocks, *stride, *i - 1) % n.max(1);
        }
        let ext = self.ext.as_ref().expect("extended generator");
        let draw = &ext.draw[k];
        let Some(rank) = draw.rank(&mut self.rng, n) else {
            return match draw {
                Draw::Zoned(zones) => {
                    let u: f64 = self.rng.random();
                    let &(_, a, b) = zones.iter().find(|z| u < z.0).unwrap_or(zones.last().expect("zones"));
                    let lo = (a * n as f64) as u64;
                    let hi = ((b * n as f64) as u64).clamp(lo + 1, n);
                    self.rng.random_range(lo..hi)
                }
                _ if self.norandommap || n != ext.units[k] => self.rng.random_range(0..n),
                _ => self.perm[k].next(),
            };
        };
        // Skewed ranks are scattered over the span (fio hashes them), then
        // turned by fio's `center` (lib/zipf.c, lib/gauss.c: `rand_off`).
        let block = self.perm[k].at(rank % ext.units[k]) % n;
        match ext.center {
            None => block,
            Some(c) => {
                let off = match draw {
                    Draw::Normal(_) => (n as f64 * (c - 0.5)) as i64,
                    _ => (n as f64 * c) as i64,
                };
                (block as i64 + off).rem_euclid(n as i64) as u64
            }
        }
    }

    fn generate_ext(&mut self) -> Command {
        if let Some(e) = self.ext.as_mut() {
            if let Some(w) = e.pending_write.take() {
                if let Some(zs) = &mut e.zones {
                    zs.bytes += w.len as u64;
                }
                return w;
            }
            // fio's strided zones: the next zone once this one had its
            // bytes (from the first when the next would pass the span's end).
            if let Some(zs) = &mut e.zones {
                if zs.bytes >= zs.z.size {
                    zs.bytes = 0;
                    zs.base += zs.z.range + zs.z.skip;
                    if zs.base + e.span > zs.whole {
                        zs.base = 0;
                    }
                    e.pos = [0; 3];
                    e.prev = [(0, 0); 3];
                }
            }
        }
        let kind = self.kind();
        let k = kind as usize;
        let mut len = self.ext.as_ref().expect("ext").sizes[k].draw(&mut self.rng);
        let (span, unit, prev, modifier) = {
            let e = self.ext.as_ref().expect("ext");
            (e.span, e.unit[k], e.prev[k], e.modifier)
        };
        // Positions where a command of `len` bytes fits.
        let fit = ((span.saturating_sub(len as u64)) / unit + 1).max(1);
        let random = self.rw.is_random();
        let continue_run = match modifier {
            Some((n, _)) if random => {
                let e = self.ext.as_mut().expect("ext");
                continues_run(&mut e.run_left[k], n.unsigned_abs(), prev.0 != u64::MAX)
            }
            _ => false,
        };
        let identical = matches!(modifier, Some((_, Sequencer::Identical)));
        let offset = if random {
            let sequential_turn = continue_run
                || (self.percentage_random < 100
                    && prev.0 != u64::MAX
                    && self.rng.random_range(0..100u32) >= self.percentage_random);
            if sequential_turn && identical && continue_run {
                prev.0
            } else if sequential_turn {
                let next = prev.0 + prev.1 as u64;
                if next + len as u64 > span {
                    0
                } else {
                    next
                }
            } else if let Some(map) =
                self.ext.as_mut().and_then(|e| matches!(e.draw[k], Draw::Uniform).then_some(()).and(e.map.as_mut()))
            {
                // A free unit (the next one after a taken draw), then as
                // many free units as the command covers: fio shortens a
                // command that runs into a taken unit.
                if map.full() {
                    map.reset();
                }
                let drawn = self.rng.random_range(0..map.units);
                let b = map.next_free(drawn);
                let want = (len as u64).div_ceil(unit).min(map.units - b);
                let got = map.take(b, want);
                len = (got * unit) as u32;
                b * unit
            } else {
                self.draw_unit(k, fit) * unit
            }
        } else {
            let e = self.ext.as_mut().expect("ext");
            let mut p = e.pos[k];
            if p + len as u64 > span {
                p = 0;
            }
            let repeat = match modifier {
                Some((n, Sequencer::Identical)) => continues_run(&mut e.run_left[k], n.unsigned_abs(), true),
                _ => false,
            };
            let skip = match modifier {
                Some((n, Sequencer::Sequential)) => n,
                _ => 0,
            };
            if !repeat || e.run_left[k] == 0 {
                let end = p + len as u64;
                // fio's ddir_seq_add: a step back before the span's start
                // goes to the step back from its end.
                e.pos[k] = match end.checked_add_signed(skip) {
                    Some(next) => next,
                    None => span.saturating_add_signed(skip),
                };
            }
            p
        };
        let e = self.ext.as_mut().expect("ext");
        e.prev[k] = (offset, len);
        let zone = match &mut e.zones {
            Some(zs) => {
                zs.bytes += len as u64;
                zs.base
            }
            None => 0,
        };
        let cmd = Command { kind, offset: self.base + zone + offset, len };
        if self.rw.is_trimwrite() {
            e.pending_write = Some(Command { kind: IoKind::Write, ..cmd });
        }
        cmd
    }
}

/// fio's `rw=…:N` runs: whether the next command continues the current run
/// of `n` (it can only if `can_continue`), counting it off `left`; a new
/// run leaves `n - 1` to follow.
#[inline]
fn continues_run(left: &mut u64, n: u64, can_continue: bool) -> bool {
    if *left > 0 && can_continue {
        *left -= 1;
        true
    } else {
        *left = n.saturating_sub(1);
        false
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
