//! Where random offsets land (fio's `random_distribution`), made ready for
//! drawing: uniform, Zipf (by rejection-inversion, exact for any θ),
//! Pareto and normal as fio 3.33 draws them (lib/zipf.c, lib/gauss.c; fio's
//! `normal:σ` is a bell of standard deviation `n / 12` widened by a
//! uniform deviation σ % of the ranks wide, not a Gaussian of σ %), and
//! positional zones (`zoned`, `zoned_abs`). This module turns a
//! [`Distribution`] into a [`Draw`]; the generator draws ranks from it,
//! scatters skewed ranks over the span (fio hashes them; ssdtwin uses a
//! seeded bijection, so no two ranks share a block) and turns the hot spot
//! by fio's `center`. Left out: fio's Zipf approximation (Gray et al.);
//! ssdtwin draws the exact Zipf law.

use rand::RngExt;
use rand_pcg::Pcg64Mcg;

use crate::run::workload::Distribution;

/// Zipf ranks by rejection-inversion (Hörmann and Derflinger 1996): exact
/// for any exponent > 0 and any number of ranks, O(1) per draw.
#[derive(Debug, Clone)]
pub(crate) struct Zipf {
    e: f64,
    n: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    pub(crate) fn new(n: u64, e: f64) -> Zipf {
        let mut z = Zipf { e, n: n as f64, h_x1: 0.0, h_n: 0.0, s: 0.0 };
        z.h_x1 = z.h_int(1.5) - 1.0;
        z.h_n = z.h_int(n as f64 + 0.5);
        z.s = 2.0 - z.h_int_inv(z.h_int(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.e * x.ln()).exp()
    }
    fn h_int(&self, x: f64) -> f64 {
        let l = x.ln();
        helper2((1.0 - self.e) * l) * l
    }
    fn h_int_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.e)).max(-1.0);
        (helper1(t) * x).exp()
    }
    /// A rank in `0..n` (0 the most frequent).
    #[inline]
    pub(crate) fn sample(&self, rng: &mut Pcg64Mcg) -> u64 {
        loop {
            let u = self.h_n + rng.random::<f64>() * (self.h_x1 - self.h_n);
            let x = self.h_int_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_int(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }
}

/// A distribution made ready for drawing.
#[derive(Debug, Clone)]
pub(super) enum Draw {
    Uniform,
    Zipf(Zipf),
    /// fio's exponent `ln h / ln (1 − h)`.
    Pareto(f64),
    /// fio's deviation, percent of the ranks.
    Normal(f64),
    /// Cumulative access fraction and the zone's [start, end) fraction.
    Zoned(Vec<(f64, f64, f64)>),
    /// fio's `sequence`: the blocks, the stride, commands so far.
    Sequence(Vec<u32>, bool, u64),
}

/// fio's `sequence` block of a direction's `i`-th command (io_u.c,
/// `__get_next_rand_offset_sequence`).
pub(super) fn sequence_block(blocks: &[u32], stride: bool, i: u64) -> u64 {
    let len = blocks.len() as u64;
    let base = if stride { i / len * len } else { 0 };
    base + blocks[(i % len) as usize] as u64
}

/// fio's `normal` adds 12 draws (lib/gauss.c's GAUSS_ITERS).
const GAUSS_ITERS: u64 = 12;

/// fio 3.33's `normal:σ` rank in `0..n` (lib/gauss.c): the mean of 12
/// uniform draws from `0..=n`, rounded up (an Irwin–Hall bell around
/// `n / 2` with a standard deviation of `n / 12`, whatever σ), plus a
/// uniform deviation of width `⌈n·σ/100⌉` (at most `n / 2`) centred on
/// zero, halved until the sum stays inside `0..n`.
#[inline]
pub(crate) fn fio_gauss_rank(rng: &mut Pcg64Mcg, n: u64, sigma_pct: f64) -> u64 {
    let mut sum = 0u64;
    for _ in 0..GAUSS_ITERS {
        sum += rng.random_range(0..=n);
    }
    sum = sum.div_ceil(GAUSS_ITERS);
    let width = fio_gauss_width(n, sigma_pct);
    if width > 0 {
        let vr = (width as f64 * rng.random::<f64>()) as i64;
        let mut dev = vr - (width / 2) as i64;
        // fio: `while (dev + sum >= nranges) dev /= 2;` in unsigned
        // arithmetic, so a negative total counts as too large too.
        while dev != 0 && !(0..n as i64).contains(&(sum as i64 + dev)) {
            dev /= 2;
        }
        sum = (sum as i64 + dev) as u64;
    }
    sum.min(n - 1)
}

/// fio's width of the `normal` deviation for `n` ranks (`gs->stddev`).
pub(crate) fn fio_gauss_width(n: u64, sigma_pct: f64) -> u64 {
    if sigma_pct == 0.0 {
        return 0;
    }
    ((n as f64 * sigma_pct) / 100.0).ceil().min((n / 2) as f64) as u64
}

impl Draw {
    /// A rank of a skewed distribution (Zipf, Pareto, normal) among `n`
    /// (Zipf: among the `n` it was made for); `None` for uniform and zoned
    /// draws, which are positional.
    #[inline]
    pub(super) fn rank(&self, rng: &mut Pcg64Mcg, n: u64) -> Option<u64> {
        Some(match self {
            Draw::Zipf(z) => z.sample(rng),
            // fio: (nranges − 1) · u^pow, truncated.
            Draw::Pareto(pow) => ((n - 1) as f64 * rng.random::<f64>().powf(*pow)) as u64,
            Draw::Normal(sd) => fio_gauss_rank(rng, n, *sd),
            Draw::Uniform | Draw::Zoned(_) | Draw::Sequence(..) => return None,
        })
    }

    /// `d` ready for drawing ranks in `0..n`.
    pub(super) fn new(d: &Distribution, n: u64) -> Draw {
        match d {
            Distribution::Random => Draw::Uniform,
            Distribution::Zipf(t) => Draw::Zipf(Zipf::new(n, *t)),
            Distribution::Pareto(h) => Draw::Pareto((*h).ln() / (1.0 - *h).ln()),
            Distribution::Normal(sd) => Draw::Normal(*sd),
            Distribution::Sequence { blocks, stride } => Draw::Sequence(blocks.clone(), *stride, 0),
            Distribution::Zoned(zones) => {
                let total: f64 = zones.iter().map(|z| z.0).sum();
                let mut acc = 0.0;
                let mut at = 0.0;
                Draw::Zoned(
                    zones
                        .iter()
                        .map(|&(pct, share)| {
                            acc += pct / total;
                            let z = (acc, at, (at + share).min(1.0));
                            at += share;
                            z
                        })
                        .collect(),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// Pearson's chi-square of `counts` against `probs` (same bins).
    fn chi_square(counts: &[u64], probs: &[f64]) -> f64 {
        let n: u64 = counts.iter().sum();
        counts.iter().zip(probs).map(|(&c, &p)| (c as f64 - p * n as f64).powi(2) / (p * n as f64)).sum()
    }

    /// Counts of `draws` ranks of `draw` among `n`, and the expected
    /// probabilities `pmf`, merged into the bins that start at `edges`.
    fn binned(draw: &Draw, n: u64, draws: usize, pmf: &[f64], edges: &[usize]) -> (Vec<u64>, Vec<f64>) {
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let mut per_rank = vec![0u64; n as usize];
        for _ in 0..draws {
            per_rank[draw.rank(&mut rng, n).unwrap() as usize] += 1;
        }
        let bins = |i: usize| edges[i]..*edges.get(i + 1).unwrap_or(&(n as usize));
        let counts = (0..edges.len()).map(|i| per_rank[bins(i)].iter().sum()).collect();
        let probs = (0..edges.len()).map(|i| pmf[bins(i)].iter().sum()).collect();
        (counts, probs)
    }

    #[test]
    fn pareto_ranks_follow_fios_formula() {
        // fio: rank = ⌊(n − 1) · u^p⌋ with p = ln h / ln (1 − h), so
        // P(rank < x) = (x / (n − 1))^(1/p).
        let (n, h) = (1000u64, 0.2f64);
        let p = h.ln() / (1.0 - h).ln();
        let cdf = |x: f64| (x / (n - 1) as f64).min(1.0).powf(1.0 / p);
        let pmf: Vec<f64> = (0..n).map(|k| cdf(k as f64 + 1.0) - cdf(k as f64)).collect();
        let edges = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 50, 100, 200, 500];
        let draw = Draw::new(&Distribution::Pareto(h), n);
        let (counts, probs) = binned(&draw, n, 200_000, &pmf, &edges);
        let chi2 = chi_square(&counts, &probs);
        assert!(chi2 < 37.7, "chi-square {chi2:.1} (p < 0.001 at 15 dof): {counts:?}");
        // The most popular rank takes (1 / 999)^(1/p) ≈ 38 %.
        assert!((counts[0] as f64 / 200_000.0 - pmf[0]).abs() < 0.005);
    }

    /// fio 3.33's `normal:σ` rank probabilities among `n`, from its
    /// definition: T, the sum of 12 uniform draws from 0..=n (by
    /// convolution); S = ⌈T / 12⌉; plus a deviation `vr − w/2`, `vr`
    /// uniform in 0..w, halved (towards zero) while S + dev is outside
    /// 0..n.
    fn fio_normal_pmf(n: u64, sigma_pct: f64) -> Vec<f64> {
        let n = n as usize;
        let mut t = vec![1.0f64];
        for _ in 0..12 {
            // Convolve with the uniform on 0..=n: a sliding sum.
            let mut next = vec![0.0; t.len() + n];
            let mut window = 0.0;
            for (i, x) in next.iter_mut().enumerate() {
                window += t.get(i).copied().unwrap_or(0.0);
                if i > n {
                    window -= t[i - n - 1];
                }
                *x = window / (n + 1) as f64;
            }
            t = next;
        }
        let mut s = vec![0.0; n + 1];
        for (sum, p) in t.iter().enumerate() {
            s[sum.div_ceil(12)] += p;
        }
        let w = if sigma_pct == 0.0 { 0 } else { ((n as f64 * sigma_pct / 100.0).ceil() as usize).min(n / 2) };
        let mut pmf = vec![0.0; n];
        for (base, &p) in s.iter().enumerate() {
            if w == 0 {
                pmf[base.min(n - 1)] += p;
                continue;
            }
            for vr in 0..w {
                let mut dev = vr as i64 - (w / 2) as i64;
                while dev != 0 && !(0..n as i64).contains(&(base as i64 + dev)) {
                    dev /= 2;
                }
                pmf[((base as i64 + dev) as usize).min(n - 1)] += p / w as f64;
            }
        }
        pmf
    }

    #[test]
    fn normal_ranks_follow_fios_definition() {
        let n = 1000u64;
        let edges: Vec<usize> = (0..20).map(|i| i * 50).collect();
        for sigma in [0.0, 10.0, 60.0] {
            let pmf = fio_normal_pmf(n, sigma);
            assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            let draw = Draw::new(&Distribution::Normal(sigma), n);
            let (counts, probs) = binned(&draw, n, 200_000, &pmf, &edges);
            // Bins the bell leaves empty are merged into their neighbours.
            let (mut c, mut p) = (vec![], vec![]);
            for (&ci, &pi) in counts.iter().zip(&probs) {
                if pi * 200_000.0 < 5.0 || p.is_empty() {
                    if let (Some(lc), Some(lp)) = (c.last_mut(), p.last_mut()) {
                        if pi * 200_000.0 < 5.0 {
                            *lc += ci;
                            *lp += pi;
                            continue;
                        }
                    }
                }
                c.push(ci);
                p.push(pi);
            }
            let chi2 = chi_square(&c, &p);
            // p < 0.001 at up to 19 dof.
            assert!(chi2 < 43.8, "σ {sigma}: chi-square {chi2:.1} over {} bins: {c:?}", c.len());
        }
        // The bell is fio's: a standard deviation of about n / 12 at σ = 0,
        // not σ % of the span.
        let pmf = fio_normal_pmf(n, 0.0);
        let mean: f64 = pmf.iter().enumerate().map(|(k, p)| k as f64 * p).sum();
        let sd = pmf.iter().enumerate().map(|(k, p)| (k as f64 - mean).powi(2) * p).sum::<f64>().sqrt();
        assert!((sd - n as f64 / 12.0).abs() < 1.0, "{sd}");
    }
}
