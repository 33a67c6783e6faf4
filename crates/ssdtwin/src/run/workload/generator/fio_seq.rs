//! fio's own I/O sequence: the offsets, lengths and directions fio 3.33
//! issues for a job, reproduced step by step from its io_u.c
//! (`fill_io_u`, `get_next_offset`, `get_next_block`,
//! `get_next_seq_offset`, `__get_next_rand_offset`, `get_rw_ddir`,
//! `setup_strided_zone_mode`) with its generators ([`super::fio_rand`]),
//! so that `fio --ioengine=null --write_iolog=` and the twin list the same
//! commands for the same job. The twin's drive is fio's file: a block
//! device of the drive's capacity, the job's span from `offset`, `size`
//! bytes long.
//!
//! - directions: a mixed pattern keeps one direction for a run of
//!   commands and draws the next (1–100 against `rwmixread`, from the
//!   mix generator) once the current one has issued as many commands as
//!   the other had when the run began, scaled by the other's share;
//! - sequential offsets follow each direction's last position, with the
//!   `rw=...:N` step added (`ddir_seq_add`);
//! - random offsets are `blocks × r / 2^32` of the generator (`lfsr`: its
//!   next value), blocks of `blockalign` (default: the smallest size),
//!   the span shortened by the smallest size less the alignment
//!   (`last_block`); with fio's random map (the default) a block already
//!   done moves to the next free one after it, wrapping; `rw=randread:N`
//!   draws a new offset every N commands and continues (or, with
//!   `rw_sequencer=identical`, repeats) in between; `percentage_random`
//!   draws per command whether to go random (1–100 from the sequence
//!   generator);
//! - lengths (`get_next_buflen`): with `bsrange`, `min + max · r` of the
//!   direction's own generator (`FIO_RAND_BS_OFF` + direction, the
//!   writes' seed the reads' under `verify`, the trims' the writes'
//!   for `trimwrite`, so that each write repeats its trim), aligned down to the
//!   smallest size and capped at the largest; with `bssplit`, the first
//!   size, in fio's order of ascending shares, whose cumulative share
//!   `p` has `r / p ≤ max / 100`; either drawn again until the command
//!   fits in the span; the random map marks units of the smallest size;
//! - `zonemode=strided`: `zonesize` bytes in a `zonerange` at a time,
//!   the next zone `zonerange + zoneskip` on, wrapping at the drive's end;
//! - a pass ends when no offset is left (the span's end, a full map, an
//!   exhausted LFSR); fio then starts the job's files over (its
//!   `clear_io_state`): positions, map and mix reset and, with
//!   `randrepeat`, every generator reseeded. `time_based` jobs wrap
//!   without reseeding instead. `loops` need no handling of their own:
//!   the byte limit covers them and the pass restarts do the rest.
//!
//! - `sprandom` writes: fio's preconditioning order ([`super::sprandom`]),
//!   from the job's LFSR; the job ends when it is over;
//! - `random_distribution=sequence` (fio 3.41): a direction's i-th
//!   command goes to the listed block `i mod n` (plus `n` per time through
//!   the list with `random_sequence_stride`), past the span the pass ends.
//!
//! Used for jobs read from fio job files whose options all have this
//! path ([`FioSeq::covers`]), random writes under `zonemode=zbd` among
//! them (the zbd rules move each offset to a write pointer afterwards;
//! fio marks its random map with the length they cut, which this
//! sequence, drawn ahead, does not see: the same as fio's while no write
//! is cut); others (`bs_unaligned`, skewed distributions, zbd reads,
//! trims and mixes) keep the twin's own generator, which draws from the
//! same distributions. A
//! rate limit's direction switch (fio's `rate_ddir`) steers the mix
//! from outside ([`FioSeq::steer`]).

use super::fio_rand::{purpose, seed_of, Lfsr, OffsetRng, Taus258, Taus88};
use super::random_map::RandomMap;
use super::sprandom::Sprandom;
use crate::model::drive::{Command, IoKind};
use crate::run::workload::{Distribution, FioRandom, IoSpec, RandomGenerator, RwPattern, Sequencer};

/// A job's successive passes, counted on a copy of its sequence: each
/// starts over as the job's own does ([`FioSeq::next`]).
#[derive(Debug, Clone)]
pub(crate) struct PassWalk {
    seq: FioSeq,
    started: bool,
}

impl PassWalk {
    /// Bytes of the job's directions in the next whole pass (until fio's
    /// files are done); `None` when the pass reaches `cap` bytes first
    /// or has no command.
    pub(crate) fn next_pass(&mut self, cap: u64) -> Option<u64> {
        if std::mem::replace(&mut self.started, true) {
            self.seq.restart();
        }
        let mut bytes = 0u64;
        while bytes < cap {
            match self.seq.fill() {
                Some(c) => bytes += c.len as u64,
                None => return (bytes > 0).then_some(bytes),
            }
        }
        None
    }
}

/// fio's I/O sequence for one job.
#[derive(Debug, Clone)]
pub(crate) struct FioSeq {
    fio: FioRandom,
    random: bool,
    mixed: bool,
    /// The direction of a pattern that is not mixed.
    ddir: usize,
    bs: [u64; 3],
    /// fio's `min_bs`, `max_bs` and `ba` per direction.
    min_bs: [u64; 3],
    max_bs: [u64; 3],
    ba: [u64; 3],
    /// `bssplit` per direction in fio's order (ascending shares): (size,
    /// share); empty for a fixed size or a `bsrange`.
    split: [Vec<(u64, u64)>; 3],
    /// fio's `bsrange_state` per direction.
    bs_rng: [OffsetRng; 3],
    /// `verify`: the writes' sizes drawn from the reads' seed.
    verify_seeds: bool,
    rwmixread: u32,
    perc_rand: u32,
    time_based: bool,
    /// `rw=randread:N`: a new random offset every N commands.
    seq_nr_opt: u64,
    seq_nr: u64,
    /// `rw=read:N`: bytes added after each command.
    seq_add: i64,
    identical: bool,
    /// The job's first byte (fio's `get_start_offset`).
    start: u64,
    /// fio's `f->file_offset`: the start, moved by strided zones.
    file_offset: u64,
    /// The span (fio's `f->io_size`).
    io_size: u64,
    /// The drive (fio's `f->real_file_size`).
    real_size: u64,
    last_pos: [u64; 3],
    last_start: [u64; 3],
    zones: Option<(u64, u64, u64)>,
    zone_bytes: u64,
    // Generators and mix state.
    offsets: OffsetRng,
    lfsr: Option<Lfsr>,
    map: Option<RandomMap>,
    mix: Taus88,
    seq_rand: [Taus88; 3],
    rwmix_ddir: usize,
    rwmix_issues: u64,
    io_issues: [u64; 3],
    /// `sprandom`: fio's preconditioning order of the writes.
    spr: Option<Box<Sprandom>>,
    /// Seeded as fio 3.36 on (a `sprandom` job).
    spr_seeds: bool,
    /// `random_distribution=sequence:...` per direction.
    sequence: [Option<Distribution>; 3],
    /// The generators were seeded once.
    seeded: bool,
    /// Commands generated so far.
    generated: u64,
    /// Where passes after the first began (the index of their first
    /// command), kept once [`FioSeq::track_passes`] asks.
    pass_starts: Option<std::collections::VecDeque<u64>>,
    /// `trimwrite` and `randtrimwrite`: each trim is followed by a write
    /// (fio's `td_trimwrite`); the trims draw sizes from the writes' seed.
    trimwrite: bool,
    /// `randtrimwrite`: the write is of the trim's own blocks.
    randtrimwrite: bool,
    /// A steered mix: the direction the next command takes.
    chosen: Option<usize>,
}

impl FioSeq {
    /// Whether fio's sequence is reproduced for `spec` (see the module
    /// documentation).
    pub(crate) fn covers(spec: &IoSpec) -> bool {
        spec.fio.is_some_and(|f| !f.bs_unaligned)
            && fios(&spec.distribution)
            && spec.distributions.as_ref().is_none_or(|d| d.iter().all(fios))
            && spec.random_center.is_none()
            // zonemode=zbd: random writes (zbd.c moves each to a write
            // pointer; fio's own offsets choose the zone).
            && (spec.zbd.is_none() || spec.rw == RwPattern::RandWrite)
    }

    /// The sequence of `spec` (which [`FioSeq::covers`]) on a drive of
    /// `capacity` bytes.
    pub(crate) fn new(spec: &IoSpec, capacity: u64) -> FioSeq {
        let fio = spec.fio.expect("a job read from a fio job file");
        let random = spec.rw.is_random();
        let ddir = match spec.rw {
            RwPattern::Read | RwPattern::RandRead | RwPattern::ReadWrite | RwPattern::RandRw => 0,
            RwPattern::Write | RwPattern::RandWrite => 1,
            _ => 2,
        };
        let mixed = matches!(spec.rw, RwPattern::ReadWrite | RwPattern::RandRw);
        let trimwrite = spec.rw.is_trimwrite();
        let randtrimwrite = spec.rw == RwPattern::RandTrimWrite;
        let bs: [u64; 3] = std::array::from_fn(|k| spec.bs_of(k) as u64);
        let choices = |k: usize| -> Vec<(u64, u64)> {
            match &spec.sizes {
                Some(s) if !s[k].choices.is_empty() => {
                    s[k].choices.iter().map(|&(b, w)| (b as u64, w as u64)).collect()
                }
                _ => vec![(bs[k], 100)],
            }
        };
        let min_bs: [u64; 3] = std::array::from_fn(|k| choices(k).iter().map(|c| c.0).min().unwrap_or(bs[k]));
        let max_bs: [u64; 3] = std::array::from_fn(|k| choices(k).iter().map(|c| c.0).max().unwrap_or(bs[k]));
        let split = std::array::from_fn(|k| {
            let mut c = choices(k);
            if fio.bsrange || c.len() < 2 {
                return Vec::new();
            }
            // fio's bssplit_ddir sorts by share (glibc's stable qsort).
            c.sort_by_key(|e| e.1);
            c
        });
        let used: &[usize] = match (mixed, trimwrite) {
            (true, _) => &[0, 1],
            (_, true) => &[1, 2],
            _ => std::slice::from_ref(&ddir),
        };
        let rw_min_bs = used.iter().map(|&k| min_bs[k]).min().unwrap_or(4096);
        let io_size = spec.size.unwrap_or(capacity - spec.offset);
        let (seq_nr_opt, seq_add, identical) = match spec.modifier {
            Some((n, s)) if random => (n.unsigned_abs().max(1), 0, s == Sequencer::Identical),
            Some((n, s)) => (1, n, s == Sequencer::Identical),
            None => (1, 0, false),
        };
        let zones = spec.strided.map(|z| (z.size, z.range, z.skip));
        let map_span = zones.map_or(io_size.min(capacity), |z| z.1);
        let blocks = map_span / rw_min_bs;
        let mut seq = FioSeq {
            fio,
            random,
            mixed,
            trimwrite,
            randtrimwrite,
            ddir,
            bs,
            min_bs,
            max_bs,
            ba: std::array::from_fn(|k| spec.blockalign.map_or(min_bs[k], |b| b as u64)),
            split,
            bs_rng: [OffsetRng::Taus(Taus88::new(0)); 3],
            verify_seeds: spec.verify.is_some(),
            rwmixread: spec.rwmixread,
            perc_rand: spec.percentage_random,
            time_based: spec.time_based,
            seq_nr_opt,
            seq_nr: 1,
            seq_add,
            identical,
            start: spec.offset,
            file_offset: spec.offset,
            io_size,
            real_size: capacity,
            last_pos: [spec.offset; 3],
            last_start: [u64::MAX; 3],
            zones,
            zone_bytes: 0,
            offsets: OffsetRng::Taus(Taus88::new(0)),
            lfsr: None,
            map: None,
            mix: Taus88::new(0),
            seq_rand: [Taus88::new(0); 3],
            rwmix_ddir: 0,
            rwmix_issues: 0,
            io_issues: [0; 3],
            spr: None,
            spr_seeds: spec.sprandom.is_some(),
            seeded: false,
            generated: 0,
            pass_starts: None,
            chosen: None,
            sequence: std::array::from_fn(|k| {
                Some(spec.distribution_of(k).clone()).filter(|d| matches!(d, Distribution::Sequence { .. }))
            }),
        };
        seq.seed();
        if random {
            match fio.generator {
                RandomGenerator::Lfsr => {
                    seq.lfsr = Lfsr::new(blocks, seq.seed_of(purpose::BLOCK)).or(Lfsr::new(blocks, 0));
                }
                _ if !spec.norandommap => seq.map = Some(RandomMap::new(blocks.max(1))),
                _ => {}
            }
        }
        if let Some(s) = spec.sprandom {
            let logical = io_size.min(capacity);
            let seed = seq.seed_of(purpose::SPRANDOM);
            seq.spr = Some(Box::new(Sprandom::new(s.op, s.regions, s.cache, logical, bs[1], seed)));
        }
        seq
    }

    /// The seed of purpose `k`. A `sprandom` job is seeded as the fio
    /// releases that have it (3.36 on) seed every job: the offsets' seed
    /// from `randseed` too.
    fn seed_of(&self, k: u64) -> u64 {
        let repeat = self.fio.randrepeat && !self.spr_seeds;
        seed_of(self.fio.randseed, repeat, self.fio.thread_number, k)
    }

    /// How many commands the job issues before its preconditioning is
    /// over (`sprandom`: fio then ends the job), at most `max`, counted
    /// on a copy; `None` for other jobs. Passes that end otherwise (a
    /// mixed job's reads exhausting the LFSR) start over, as fio's do.
    pub(crate) fn command_limit(&self, max: u64) -> Option<u64> {
        self.spr.as_ref()?;
        let mut copy = self.clone();
        let mut n = 0;
        let mut empty_passes = 0;
        while n < max && empty_passes < 2 {
            if copy.fill().is_some() {
                n += 1;
                empty_passes = 0;
            } else if copy.spr.as_ref().is_some_and(|s| s.is_over()) {
                break;
            } else {
                empty_passes += 1;
                copy.restart();
            }
        }
        Some(n)
    }

    /// The job's passes as it will run them, counted on a copy
    /// ([`PassWalk`]).
    pub(crate) fn pass_walk(&self) -> PassWalk {
        PassWalk { seq: self.clone(), started: false }
    }

    /// Whether every pass issues what the first does: fio's
    /// `clear_io_state` resets positions, map and seeds, but not the
    /// count of an `rw=…:N` run (`ddir_seq_nr`) nor a mix's issue counts,
    /// so a pass of a job with either may differ from the one before.
    pub(crate) fn passes_repeat(&self) -> bool {
        self.seq_nr_opt == 1 && !self.mixed
    }

    /// fio's `td_fill_rand_seeds` for the generators the sequence uses.
    fn seed(&mut self) {
        let block = self.seed_of(purpose::BLOCK);
        // A switch to tausworthe64 for a large span reaches the offsets at
        // the first reseeding (fio 3.33).
        let first = !std::mem::replace(&mut self.seeded, true);
        let use64 = self.fio.generator == RandomGenerator::Tausworthe64 && !(first && self.fio.switched64);
        let rng = |seed| if use64 { OffsetRng::Taus64(Taus258::new(seed)) } else { OffsetRng::Taus(Taus88::new(seed)) };
        self.offsets = rng(block);
        // fio's td_fill_rand_seeds_internal: the block-size generators.
        let read = self.seed_of(purpose::BS);
        let write = if self.verify_seeds { read } else { self.seed_of(purpose::BS + 1) };
        // A trim-then-write job draws its writes' sizes as its trims'.
        let trim = if self.trimwrite { write } else { self.seed_of(purpose::BS + 2) };
        self.bs_rng = [rng(read), rng(write), rng(trim)];
        self.mix = Taus88::new(self.seed_of(purpose::MIX));
        self.seq_rand = [Taus88::new(self.seed_of(purpose::SEQ_RAND_READ)); 3];
        let spr = self.seed_of(purpose::SPRANDOM);
        if let Some(s) = &mut self.spr {
            s.reseed(spr);
        }
    }

    /// fio's `fio_file_reset`: positions back to the start, the random
    /// map emptied, the LFSR back at its seed.
    fn file_reset(&mut self) {
        self.last_pos = [self.file_offset; 3];
        self.last_start = [u64::MAX; 3];
        if let Some(m) = &mut self.map {
            m.reset();
        }
        if let Some(l) = &mut self.lfsr {
            l.reset();
        }
    }

    /// Keep where each pass begins, for [`FioSeq::pass_began`].
    pub(crate) fn track_passes(&mut self) {
        self.pass_starts.get_or_insert_with(Default::default);
    }

    /// Whether a pass began after command `index` - 1 and at or before
    /// command `index` (each start is reported once).
    pub(crate) fn pass_began(&mut self, index: u64) -> bool {
        let Some(q) = self.pass_starts.as_mut() else { return false };
        let mut began = false;
        while q.front().is_some_and(|&s| s <= index) {
            q.pop_front();
            began = true;
        }
        began
    }

    /// Commands generated so far.
    pub(crate) fn generated(&self) -> u64 {
        self.generated
    }

    /// fio's `clear_io_state` between passes.
    fn restart(&mut self) {
        if let Some(q) = self.pass_starts.as_mut() {
            // The command being generated (`generated` counts it) is the
            // new pass's first.
            q.push_back(self.generated.saturating_sub(1));
        }
        self.zone_bytes = 0;
        self.rwmix_issues = 0;
        self.file_offset = self.start;
        self.file_reset();
        if self.fio.randrepeat {
            self.seed();
        }
    }

    /// The next command.
    pub(crate) fn next(&mut self) -> Command {
        // A pass that fails at once (a span smaller than a block) would
        // fail again: issue its first block anyway rather than loop.
        self.generated += 1;
        for _ in 0..2 {
            if let Some(c) = self.fill() {
                return c;
            }
            self.restart();
        }
        let k = self.ddir;
        Command { kind: kind_of(k), offset: self.start, len: self.bs[k] as u32 }
    }

    /// fio's `get_rw_ddir` up to its rate check, for a steered mix
    /// ([`super::IoGenerator::steered`]).
    pub(crate) fn draw_direction(&mut self) -> usize {
        self.chosen = None;
        self.direction()
    }

    /// The rate check's direction `d`: the mix's current direction
    /// (`td->rwmix_ddir = rate_ddir(td, ddir)`) and the next command's.
    pub(crate) fn steer(&mut self, d: usize) {
        self.rwmix_ddir = d;
        self.chosen = Some(d);
    }

    /// fio's `get_rw_ddir` (without syncs, which the job issues itself).
    fn direction(&mut self) -> usize {
        if self.trimwrite {
            // fio's set_rw_ddir: a trim unless the last trim is unwritten.
            return if self.last_start[1] == self.last_start[2] { 2 } else { 1 };
        }
        if !self.mixed {
            return self.ddir;
        }
        if let Some(d) = self.chosen.take() {
            return d;
        }
        if self.io_issues[self.rwmix_ddir] >= self.rwmix_issues {
            let v = self.mix.between(1, 100);
            let d = if v <= self.rwmixread { 0 } else { 1 };
            if d != self.rwmix_ddir {
                // fio's set_rwmix_bytes, from the direction ending.
                let share = if d == 0 { self.rwmixread } else { 100 - self.rwmixread } as u64;
                self.rwmix_issues = self.io_issues[self.rwmix_ddir] * share / 100;
            }
            self.rwmix_ddir = d;
        }
        self.rwmix_ddir
    }

    /// fio's `fill_io_u`: `None` when the pass has no command left.
    fn fill(&mut self) -> Option<Command> {
        let d = self.direction();
        if self.randtrimwrite && d == 1 {
            // `randtrimwrite`'s write: the last trim's blocks, outside
            // the random map (io_u.c: get_next_offset, get_next_buflen).
            // It counts off `rw=randtrimwrite:N`'s run as any command does.
            self.seq_nr -= 1;
            if self.seq_nr == 0 {
                self.seq_nr = self.seq_nr_opt;
            }
            let (offset, len) = (self.last_start[2], self.last_pos[2] - self.last_start[2]);
            self.last_start[1] = offset;
            self.last_pos[1] = offset + len;
            self.io_issues[1] += 1;
            return Some(Command { kind: IoKind::Write, offset, len: len as u32 });
        }
        if let Some((size, range, skip)) = self.zones {
            if self.zone_bytes >= size {
                self.zone_bytes = 0;
                self.file_offset += range + skip;
                if self.file_offset >= self.real_size {
                    self.file_offset = self.start;
                }
                self.last_pos[d] = self.file_offset;
            }
            if self.last_pos[d] >= self.file_offset + range {
                self.last_pos[d] = self.file_offset;
            }
            if self.zone_bytes % range == 0 {
                self.file_reset();
            }
        }
        let (rel, busy_ok) = self.offset(d)?;
        if rel >= self.io_size {
            return None;
        }
        let offset = rel + self.file_offset;
        if offset >= self.real_size {
            return None;
        }
        if self.randtrimwrite && self.last_start[2] == offset {
            // A trim drawn where the last one was: fio moves the last
            // write's start so that this trim's write still follows.
            self.last_start[1] = self.last_start[1].wrapping_sub(1);
        }
        let mut len = self.buflen(d, offset)?;
        if offset + len > self.real_size {
            return None;
        }
        if self.random && !busy_ok {
            if let Some(m) = &mut self.map {
                let unit = self.min_bs[d];
                let block = (offset - self.file_offset) / unit;
                let got = if block < m.units { m.take(block, len.div_ceil(unit)) } else { 0 };
                if got > 0 && got * unit < len {
                    len = got * unit;
                }
            }
        }
        self.zone_bytes += len;
        self.last_start[d] = offset;
        self.last_pos[d] = offset + len;
        self.io_issues[d] += 1;
        Some(Command { kind: kind_of(d), offset, len: len as u32 })
    }

    /// fio's `get_next_offset` up to the span check: the offset within the
    /// file's current start and whether it skips the random map.
    fn offset(&mut self, d: usize) -> Option<(u64, bool)> {
        self.seq_nr -= 1;
        let hit = self.seq_nr == 0;
        if hit {
            self.seq_nr = self.seq_nr_opt;
        }
        if hit {
            if !self.random {
                return self.seq_offset(d).map(|o| (o, false));
            }
            if self.perc_rand >= 100 || self.seq_rand[d].between(1, 100) <= self.perc_rand {
                return self.rand_block(d).map(|b| (b * self.ba[d], false));
            }
            return match self.seq_offset(d) {
                Some(o) => Some((o, true)),
                None => self.rand_block(d).map(|b| (b * self.ba[d], true)),
            };
        }
        if self.identical {
            let o = match self.last_start[d] {
                u64::MAX => 0,
                s => s - self.file_offset,
            };
            return Some((o, true));
        }
        match self.seq_offset(d) {
            Some(o) => Some((o, true)),
            None => self.rand_block(d).map(|b| (b * self.ba[d], true)),
        }
    }

    /// fio's `get_next_buflen` for a command of direction `d` at
    /// `offset`: `None` when not even the smallest size fits in the span.
    fn buflen(&mut self, d: usize, offset: u64) -> Option<u64> {
        let (min, max) = (self.min_bs[d], self.max_bs[d]);
        if min == max {
            return Some(min);
        }
        let end = self.io_size + self.start;
        if offset + min > end {
            return None;
        }
        loop {
            let (r, r_max) = self.bs_rng[d].raw();
            let mut len = 0;
            if self.split[d].is_empty() {
                len = min + (max as f64 * (r as f64 / (r_max as f64 + 1.0))) as u64;
            } else {
                let mut perc = 0;
                for &(size, share) in self.split[d].iter().filter(|e| e.1 > 0) {
                    len = size;
                    perc += share;
                    if r / perc <= r_max / 100 && offset + len <= end {
                        break;
                    }
                }
            }
            len = if min.is_power_of_two() { len & !(min - 1) } else { len - len % min };
            len = len.min(max);
            if offset + len <= end {
                return Some(len);
            }
        }
    }

    /// fio's `get_next_seq_offset`.
    fn seq_offset(&mut self, d: usize) -> Option<u64> {
        if self.last_pos[d] >= self.io_size + self.start && self.time_based {
            self.last_pos[d] = self.file_offset;
        }
        if self.last_pos[d] >= self.real_size {
            return None;
        }
        if self.last_pos[d] == self.file_offset && self.file_offset != 0 && self.seq_add < 0 {
            self.last_pos[d] = self.real_size.min(self.io_size);
        }
        let mut pos = self.last_pos[d].wrapping_sub(self.file_offset);
        if pos != 0 && self.seq_add != 0 {
            pos = pos.wrapping_add_signed(self.seq_add);
            if pos >= self.real_size {
                pos = if self.seq_add > 0 {
                    self.file_offset
                } else {
                    self.real_size.min(self.io_size).wrapping_add_signed(self.seq_add)
                };
            }
        }
        Some(pos)
    }

    /// fio's `get_next_rand_block`: a block of direction `d`'s size.
    fn rand_block(&mut self, d: usize) -> Option<u64> {
        if let Some(b) = self.rand_offset(d) {
            return Some(b);
        }
        if self.time_based {
            self.file_reset();
            return self.rand_offset(d);
        }
        None
    }

    /// fio's `__get_next_rand_offset` for a uniform distribution, or its
    /// `_sequence` (no random map: a block listed again is written again).
    fn rand_offset(&mut self, d: usize) -> Option<u64> {
        if let Some(Distribution::Sequence { blocks, stride }) = &self.sequence[d] {
            let b = super::distribution::sequence_block(blocks, *stride, self.io_issues[d]);
            return (b < self.io_size / self.bs[d]).then_some(b);
        }
        let span = match self.zones {
            Some((_, range, _)) => range,
            None => self.io_size.min(self.real_size),
        };
        // fio's last_block: the span less what the smallest size
        // overhangs the alignment, in units of the alignment.
        let span = span.saturating_sub(self.min_bs[d].saturating_sub(self.ba[d]));
        let lastb = span / self.ba[d];
        if lastb == 0 {
            return None;
        }
        let b = match &mut self.lfsr {
            Some(l) if d == 1 && self.spr.is_some() => self.spr.as_mut()?.next(l)?,
            Some(l) => l.next()?,
            None => self.offsets.block(lastb),
        };
        // fio's axmap_isset: a block past the map (blocks of
        // `blockalign` smaller than the map's units) is free.
        match &self.map {
            Some(m) if b < m.units && !m.is_free(b) => m.next_free_after(b),
            _ => Some(b),
        }
    }
}

/// A distribution fio's sequence is reproduced for: uniform, or `sequence`.
fn fios(d: &Distribution) -> bool {
    matches!(d, Distribution::Random | Distribution::Sequence { .. })
}

fn kind_of(d: usize) -> IoKind {
    match d {
        0 => IoKind::Read,
        1 => IoKind::Write,
        _ => IoKind::Trim,
    }
}
