//! Where random offsets land (fio's `random_distribution`), made ready for
//! drawing: uniform, Zipf (by rejection-inversion, exact for any θ),
//! Pareto and normal as fio draws them, and positional zones (`zoned`,
//! `zoned_abs`). This module turns a [`Distribution`] into a [`Draw`]; the
//! generator draws ranks from it and scatters skewed ranks over the span.
//! Left out: fio's `random_distribution=...:center` offset of the hot
//! spot.

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
    Pareto(f64),
    Normal(f64),
    /// Cumulative access fraction and the zone's [start, end) fraction.
    Zoned(Vec<(f64, f64, f64)>),
}

impl Draw {
    /// `d` ready for drawing ranks in `0..n`.
    pub(super) fn new(d: &Distribution, n: u64) -> Draw {
        match d {
            Distribution::Random => Draw::Uniform,
            Distribution::Zipf(t) => Draw::Zipf(Zipf::new(n, *t)),
            Distribution::Pareto(h) => Draw::Pareto((*h).ln() / (1.0 - *h).ln()),
            Distribution::Normal(sd) => Draw::Normal(*sd),
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
