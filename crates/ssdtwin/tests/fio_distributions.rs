//! fio's skewed `random_distribution`s end to end through the command
//! generator, against the distributions fio 3.33's code defines
//! (lib/zipf.c for Pareto, lib/gauss.c for normal, io_u.c for zones):
//! chi-square tests with a fixed seed, each failing if the mapping from
//! the option to the offsets is wrong. Skewed ranks are scattered over the
//! span (fio hashes them), so their tests use what scattering keeps (the
//! sorted block counts, the sum of squared shares); zones are positional.

use ssdtwin::run::workload::{parse_job_file, IoGenerator, IoSpec, JobOptions, Phase};

const CAP: u64 = 256 << 20;
const DRAWS: usize = 200_000;

fn spec_of(text: &str) -> IoSpec {
    match &parse_job_file(text, "d.fio", CAP, &JobOptions::new()).unwrap().jobs[0].phase {
        Phase::Io(s) => s.clone(),
        p => panic!("{p:?}"),
    }
}

/// Accesses per 4 KiB block of the first `DRAWS` commands of `dist` over
/// 1000 blocks.
fn block_counts(dist: &str) -> Vec<u64> {
    let spec = spec_of(&format!("[d]\nrw=randread\nbs=4k\nsize=4000k\nrandom_distribution={dist}\n"));
    let mut g = IoGenerator::new(&spec, CAP);
    let mut counts = vec![0u64; 1000];
    for _ in 0..DRAWS {
        counts[(g.next_command().offset / 4096) as usize] += 1;
    }
    counts
}

fn chi_square(counts: &[u64], probs: &[f64]) -> f64 {
    let n: u64 = counts.iter().sum();
    counts.iter().zip(probs).map(|(&c, &p)| (c as f64 - p * n as f64).powi(2) / (p * n as f64)).sum()
}

#[test]
fn pareto_concentrates_accesses_as_fio_defines_it() {
    // fio: rank ⌊(n − 1) · u^p⌋, p = ln h / ln (1 − h); the five most
    // accessed blocks against the five first ranks, the rest as one class.
    let (n, h) = (1000.0f64, 0.3f64);
    let p = h.ln() / (1.0 - h).ln();
    let cdf = |x: f64| (x / (n - 1.0)).min(1.0).powf(1.0 / p);
    let mut probs: Vec<f64> = (0..5).map(|k| cdf(k as f64 + 1.0) - cdf(k as f64)).collect();
    probs.push(1.0 - cdf(5.0));
    let mut counts = block_counts("pareto:0.3");
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let mut top: Vec<u64> = counts[..5].to_vec();
    top.push(counts[5..].iter().sum());
    let chi2 = chi_square(&top, &probs);
    assert!(chi2 < 20.5, "chi-square {chi2:.1} (p < 0.001 at 5 dof): {top:?} vs {probs:?}");
}

/// fio 3.33's `normal:0` rank probabilities among `n`: ⌈T / 12⌉, T the sum
/// of 12 uniform draws from 0..=n (Irwin–Hall, by convolution).
fn fio_normal0_pmf(n: usize) -> Vec<f64> {
    let mut t = vec![1.0f64];
    for _ in 0..12 {
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
    let mut s = vec![0.0; n];
    for (sum, p) in t.iter().enumerate() {
        s[sum.div_ceil(12).min(n - 1)] += p;
    }
    s
}

#[test]
fn normal_spreads_accesses_as_fio_defines_it() {
    // Scattering keeps each block's share, so the sum of squared shares
    // (the chance that two accesses hit one block) is the rank law's:
    // E[Σ c(c − 1)] = N(N − 1) Σ p². fio's bell has a standard deviation
    // of n / 12 (83 blocks here); a Gaussian of 5 % (50 blocks) would give
    // 1.7 times as much.
    let pmf = fio_normal0_pmf(1000);
    let expected: f64 = pmf.iter().map(|p| p * p).sum();
    let counts = block_counts("normal:0");
    let n = DRAWS as f64;
    let observed = counts.iter().map(|&c| c as f64 * (c as f64 - 1.0)).sum::<f64>() / (n * (n - 1.0));
    // The estimator's relative standard deviation is about 0.2 % here.
    assert!((observed / expected - 1.0).abs() < 0.01, "Σp² {observed:.6} vs fio's {expected:.6}");
    // A wider deviation spreads the accesses (σ = 60 %: width 500 blocks).
    let wide = block_counts("normal:60");
    let observed_wide = wide.iter().map(|&c| c as f64 * (c as f64 - 1.0)).sum::<f64>() / (n * (n - 1.0));
    assert!(observed_wide < 0.8 * observed, "{observed_wide} vs {observed}");
    // The center turns the hot spot, not the law.
    let centred = block_counts("normal:0:0.25");
    let mut a = counts.clone();
    let mut b = centred.clone();
    a.sort_unstable();
    b.sort_unstable();
    assert_ne!(counts, centred);
    let (sa, sb): (u64, u64) = (a[900..].iter().sum(), b[900..].iter().sum());
    assert!((sa as f64 / sb as f64 - 1.0).abs() < 0.02, "{sa} vs {sb}");
}

/// Chi-square of `counts` over 1000 blocks in bins of 25 blocks against
/// zones given as (share of accesses, first block, end block): uniform
/// within each zone, as fio draws inside a zone.
fn zones_chi_square(counts: &[u64], zones: &[(f64, usize, usize)]) -> (f64, usize) {
    let mut c = Vec::new();
    let mut p = Vec::new();
    for bin in (0..1000).step_by(25) {
        let z = zones.iter().find(|z| bin >= z.1 && bin < z.2).expect("bins inside zones");
        c.push(counts[bin..bin + 25].iter().sum());
        p.push(z.0 * 25.0 / (z.2 - z.1) as f64);
    }
    (chi_square(&c, &p), c.len() - 1)
}

#[test]
fn zoned_accesses_follow_fios_zones() {
    // fio's example: 60 % of accesses to the first 10 %, 30 % to the next
    // 20 %, 8 % to the next 30 %, 2 % to the last 40 %.
    let counts = block_counts("zoned:60/10:30/20:8/30:2/40");
    let zones = [(0.60, 0, 100), (0.30, 100, 300), (0.08, 300, 600), (0.02, 600, 1000)];
    let (chi2, dof) = zones_chi_square(&counts, &zones);
    assert_eq!(dof, 39);
    assert!(chi2 < 72.1, "chi-square {chi2:.1} (p < 0.001 at 39 dof)");
    // zoned_abs: the same in bytes (1000 blocks of 4 KiB).
    let counts = block_counts("zoned_abs:50/400k:30/1200k:20/2400k");
    let zones = [(0.5, 0, 100), (0.3, 100, 400), (0.2, 400, 1000)];
    let (chi2, _) = zones_chi_square(&counts, &zones);
    assert!(chi2 < 72.1, "chi-square {chi2:.1} (p < 0.001 at 39 dof)");
}

#[test]
fn distribution_values_follow_fio() {
    // A missing number is fio's default; a center is kept for the job.
    let s = spec_of("[d]\nrw=randread\nrandom_distribution=zipf\n");
    assert_eq!(format!("{:?}", s.distribution), "Zipf(1.1)");
    let s = spec_of("[d]\nrw=randread\nrandom_distribution=pareto:0.3:0.25\n");
    assert_eq!((format!("{:?}", s.distribution), s.random_center), ("Pareto(0.3)".into(), Some(0.25)));
    let bad = |d: &str| {
        parse_job_file(&format!("[d]\nrw=randread\nrandom_distribution={d}\n"), "d.fio", CAP, &JobOptions::new())
            .unwrap_err()
            .to_string()
    };
    assert!(bad("normal:100").contains("normal deviation out of range"));
    assert!(bad("zipf:1.2:1.5").contains("center out of range"));
}
