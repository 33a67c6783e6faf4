//! fio's SanDisk pseudo-random preconditioning (`sprandom`, fio 3.41 and
//! later; written from fio's sprandom.c and pcbuf.h at commit f5344384):
//! the write order that leaves a drive in the steady state of uniform
//! random writes after writing it about once plus its over-provisioning,
//! rather than after several full random passes.
//!
//! The model (sprandom.c's comment, after P. Desnoyers, "Analytic Models
//! of SSD Write Performance", ACM Transactions on Storage 8(2), 2012):
//! in steady state under greedy garbage collection the share of the
//! drive held by blocks of validity `v` is proportional to `1/v`, from
//! full blocks down to the validity of the block GC picks,
//! `1 − 1/WA`, with fio's approximation `WA = 0.5/op + 0.7` (`op` is
//! `spr_op`). fio spaces `spr_num_regions` validities evenly from 1 down
//! to that, accumulates `1/v` into a curve, resamples it at equal steps
//! (linear interpolation) and reverses it: region `i`'s validity. Each
//! region's invalid share is kept to 1/10,000.
//!
//! The writes: the physical size is the span plus `op` of it (aligned to
//! the write block size), cut into `spr_num_regions` regions of
//! `region_write_count` blocks. Offsets come from the job's LFSR (every
//! block once). Each write is, with the current region's invalid
//! probability (a draw of 0–10,000 from its own generator, seeded from
//! fio's purpose 22), remembered in a two-phase ring; when the region is
//! full the remembered offsets are committed and written again at the
//! start of the next region (overwriting, so invalidating, the earlier
//! copy), each remembered again with the new region's probability. With
//! `spr_cs` (a device write cache) the rewrites are deferred to the end of
//! the next region instead, so that they do not hit the cache. It ends
//! when the last region is full or the LFSR is exhausted (fio then ends
//! the job: `td->done`).
//!
//! fio asserts when the ring (sized six standard deviations above the
//! expected invalid count) would overflow; the twin then forgets the
//! offset instead. Nothing here allocates after [`Sprandom::new`].

use super::fio_rand::{Lfsr, Taus88};

/// fio's precision of invalid shares (`PCT_PRECISION`).
const PCT_PRECISION: u32 = 10_000;

/// fio's `linspace`: `num` values from `start` to `end` inclusive.
fn linspace(start: f64, end: f64, num: usize) -> Vec<f64> {
    if num == 1 {
        return vec![start];
    }
    let step = (end - start) / (num as f64 - 1.0);
    (0..num).map(|i| start + i as f64 * step).collect()
}

/// fio's `linear_interp` (clamped at both ends).
fn linear_interp(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len();
    if n == 1 || x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    for i in 0..n - 1 {
        if x >= xs[i] && x <= xs[i + 1] {
            let (x1, y1, x2, y2) = (xs[i], ys[i], xs[i + 1], ys[i + 1]);
            if (x2 - x1).abs() < 1e-9 {
                return y1;
            }
            return y1 + (y2 - y1) * ((x - x1) / (x2 - x1));
        }
    }
    0.0
}

/// fio's `compute_validity_dist`: each region's validity, lowest first.
fn validity_dist(regions: usize, op: f64) -> Vec<f64> {
    let waf = 0.5 / op + 0.7;
    let gc_validity = 1.0 - 1.0 / waf;
    let validity = linspace(1.0, gc_validity, regions);
    let mut acc = 0.0;
    let xs: Vec<f64> = validity
        .iter()
        .map(|v| {
            acc += 1.0 / v;
            acc
        })
        .collect();
    let new_x = linspace(xs[0], xs[regions - 1], regions);
    let mut out: Vec<f64> = new_x.iter().map(|&x| linear_interp(x, &xs, &validity)).collect();
    out.reverse();
    out
}

/// fio's `sprandom_physical_size`: the span plus `op` of it, aligned down
/// to `align` (computed in doubles, as fio does).
pub(crate) fn physical_size(op: f64, logical: u64, align: u64) -> u64 {
    let size = (logical as f64 + (logical as f64 * op).ceil()) as u64;
    size - size % align
}

/// fio's `estimate_inv_capacity`: expected invalid count plus six
/// standard deviations.
fn inv_capacity(count: u64, validity: f64) -> u64 {
    let sigma = (count as f64 * validity * (1.0 - validity)).sqrt();
    (count as f64 * (1.0 - validity) + 6.0 * sigma).ceil() as u64
}

/// fio's two-phase ring (pcbuf.h): offsets are staged, committed at a
/// region's end, and popped in order.
#[derive(Debug, Clone)]
struct PcBuf {
    buf: Vec<u64>,
    commit_head: usize,
    staging_head: usize,
    read_tail: usize,
}

impl PcBuf {
    fn new(capacity: usize) -> PcBuf {
        PcBuf { buf: vec![0; capacity.max(1)], commit_head: 0, staging_head: 0, read_tail: 0 }
    }

    fn len_between(&self, from: usize, to: usize) -> usize {
        if to >= from {
            to - from
        } else {
            self.buf.len() - from + to
        }
    }

    /// `pcb_space_available` (one slot kept free).
    fn space(&self) -> bool {
        let used =
            self.len_between(self.read_tail, self.commit_head) + self.len_between(self.commit_head, self.staging_head);
        used + 1 < self.buf.len()
    }

    fn stage(&mut self, v: u64) {
        if (self.staging_head + 1) % self.buf.len() == self.read_tail {
            return;
        }
        self.buf[self.staging_head] = v;
        self.staging_head = (self.staging_head + 1) % self.buf.len();
    }

    fn commit(&mut self) {
        self.commit_head = self.staging_head;
    }

    fn pop(&mut self) -> Option<u64> {
        if self.read_tail == self.commit_head {
            return None;
        }
        let v = self.buf[self.read_tail];
        self.read_tail = (self.read_tail + 1) % self.buf.len();
        Some(v)
    }
}

/// fio's `sprandom_info`: the state of one job's preconditioning.
#[derive(Debug, Clone)]
pub(crate) struct Sprandom {
    /// Invalid share per region, of [`PCT_PRECISION`].
    invalid_pct: Vec<u32>,
    region_write_count: u64,
    writes_remaining: u64,
    regions: u32,
    current_region: u32,
    phase: usize,
    invalid_count: [u64; 2],
    cache: bool,
    buf: PcBuf,
    rand: Taus88,
    done: bool,
}

impl Sprandom {
    /// fio's `sprandom_setup` for a span of `logical` bytes written in
    /// blocks of `align` bytes; `seed` is the job's purpose-22 seed.
    /// The options are checked by the job parser (regions ≥ 1, `op` below
    /// 5/3, `cache` at most a region).
    pub(crate) fn new(op: f64, regions: u32, cache: u64, logical: u64, align: u64, seed: u64) -> Sprandom {
        let n = regions.max(1) as usize;
        let validity = validity_dist(n, op);
        let invalid_pct = validity.iter().map(|v| ((1.0 - v) * PCT_PRECISION as f64).round() as i32 as u32).collect();
        let region_write_count = physical_size(op, logical, align) / regions.max(1) as u64 / align;
        let capacity = inv_capacity(region_write_count, validity[0]) * if cache > 0 { 2 } else { 1 };
        Sprandom {
            invalid_pct,
            region_write_count,
            writes_remaining: region_write_count,
            regions: regions.max(1),
            current_region: 0,
            phase: 0,
            invalid_count: [0; 2],
            cache: cache > 0,
            buf: PcBuf::new(capacity as usize),
            rand: Taus88::new(seed),
            done: false,
        }
    }

    /// Whether the preconditioning is over.
    pub(crate) fn is_over(&self) -> bool {
        self.done
    }

    /// Its generator seeded again (fio's `td_fill_rand_seeds` between
    /// passes, with `randrepeat`).
    pub(crate) fn reseed(&mut self, seed: u64) {
        self.rand = Taus88::new(seed);
    }

    /// fio's `sprandom_add_with_probability`.
    fn remember(&mut self, block: u64, phase: usize) {
        let v = self.rand.between(0, PCT_PRECISION);
        // Past the last region fio reads beyond its table; nothing
        // remembered there is written again.
        let pct = self.invalid_pct.get(self.current_region as usize).copied().unwrap_or(0);
        if v <= pct && self.buf.space() {
            self.buf.stage(block);
            self.invalid_count[phase] += 1;
        }
    }

    /// fio's `sprandom_get_next_offset`: the next block to write, `None`
    /// once the preconditioning is over (and from then on).
    pub(crate) fn next(&mut self, lfsr: &mut Lfsr) -> Option<u64> {
        if self.done {
            return None;
        }
        let b = self.step(lfsr);
        self.done = b.is_none();
        b
    }

    fn step(&mut self, lfsr: &mut Lfsr) -> Option<u64> {
        let mut phase = self.phase;
        if !self.cache {
            if let Some(b) = self.buf.pop() {
                self.remember(b, phase ^ 1);
                return Some(b);
            }
        }
        if self.writes_remaining == 0 {
            if self.cache {
                if let Some(b) = self.buf.pop() {
                    self.remember(b, phase ^ 1);
                    return Some(b);
                }
            }
            if self.current_region >= self.regions {
                return None;
            }
            self.invalid_count[phase] = 0;
            self.current_region += 1;
            phase ^= 1;
            self.writes_remaining = self.region_write_count.wrapping_sub(self.invalid_count[phase]);
            self.phase = phase;
            self.buf.commit();
        }
        let Some(b) = lfsr.next() else {
            return if self.cache { self.buf.pop() } else { None };
        };
        self.writes_remaining = self.writes_remaining.saturating_sub(1);
        self.remember(b, phase ^ 1);
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand check of fio's curve for two regions at op 0.15: WA is
    /// 0.5/0.15 plus 0.7, 4.0333, and the GC validity 1 − 1/WA = 0.75207;
    /// the curve's points (1, 1) and (1 + 1/0.75207, 0.75207) resample to
    /// themselves, so the regions (reversed) are 0.75207 and 1: invalid
    /// shares 2479 and 0.
    #[test]
    fn two_regions_are_the_curves_ends() {
        let v = validity_dist(2, 0.15);
        assert!((v[0] - (1.0 - 1.0 / (0.5 / 0.15 + 0.7))).abs() < 1e-12 && v[1] == 1.0, "{v:?}");
        let s = Sprandom::new(0.15, 2, 0, 1 << 20, 4096, 1);
        assert_eq!(s.invalid_pct, vec![2479, 0]);
        // 1 MiB + 15% = 1,205,863 bytes, aligned to 4 KiB: 294 blocks, 147 a region.
        assert_eq!(s.region_write_count, 147);
    }

    #[test]
    fn the_ring_keeps_order_and_one_slot_free() {
        let mut b = PcBuf::new(4);
        for v in 1..=5 {
            if b.space() {
                b.stage(v);
            }
        }
        assert_eq!(b.pop(), None, "nothing committed yet");
        b.commit();
        // Four slots, one kept free: three staged.
        assert_eq!((b.pop(), b.pop(), b.pop(), b.pop()), (Some(1), Some(2), Some(3), None));
    }
}
