//! A suite run once per seed (`--repeat N`), as the vendor guide reports
//! the median of repeated runs: every score's value for each seed, the
//! median (which becomes the reported score) and the spread (smallest and
//! largest). The seeds are `seed`, `seed + 1`, …, so a given seed list
//! gives the same medians every time. The steps' own results (series,
//! histograms) and the charts drawn from them are the first seed's; only
//! the scores are over all of them.

use super::run::{run_suite, DriveUnderTest, SuiteOptions, SuiteProgressFn, SuiteResult};
use super::Suite;
use crate::error::SuiteError;
use crate::study::record::{RepeatRecord, RepeatedScore};

/// Run `suite` `n` times with the seeds `opts.seed`, `opts.seed + 1`, …:
/// the first seed's result with every score replaced by its median over
/// the seeds, and [`SuiteResult::repeat`] set. `n = 1` is one plain run.
pub fn run_repeated(
    suite: &Suite,
    drives: &[DriveUnderTest],
    opts: &SuiteOptions,
    n: u32,
    progress: Option<SuiteProgressFn>,
) -> Result<SuiteResult, SuiteError> {
    let mut first = run_suite(suite, drives, opts, progress.clone())?;
    if n <= 1 {
        return Ok(first);
    }
    let seeds: Vec<u64> = (0..n as u64).map(|k| opts.seed.wrapping_add(k)).collect();
    // values[run][test][score][seed]
    let mut values: Vec<Vec<Vec<Vec<Option<f64>>>>> = first
        .runs
        .iter()
        .map(|r| r.tests.iter().map(|t| t.scores.iter().map(|s| vec![s.value]).collect()).collect())
        .collect();
    for &seed in &seeds[1..] {
        let o = SuiteOptions { seed, ..opts.clone() };
        // Only the scores are kept of the later seeds.
        let r = run_suite(suite, drives, &o, progress.clone())?;
        for (ri, run) in r.runs.iter().enumerate() {
            for (ti, t) in run.tests.iter().enumerate() {
                for (si, s) in t.scores.iter().enumerate() {
                    values[ri][ti][si].push(s.value);
                }
            }
        }
    }
    let mut scores = Vec::new();
    for (ri, run) in first.runs.iter_mut().enumerate() {
        for (ti, t) in run.tests.iter_mut().enumerate() {
            let test = suite.tests[t.setup.test].name.clone();
            for (si, s) in t.scores.iter_mut().enumerate() {
                let vals = std::mem::take(&mut values[ri][ti][si]);
                let (median, min, max) = median_and_range(&vals);
                s.value = median;
                scores.push(RepeatedScore {
                    test: test.clone(),
                    label: s.label.clone(),
                    unit: s.unit.clone(),
                    drive: first.drives[run.drive].name.clone(),
                    pass: first.passes[run.pass].name.clone(),
                    values: vals,
                    median,
                    min,
                    max,
                });
            }
        }
    }
    first.repeat = Some(RepeatRecord { seeds, scores });
    Ok(first)
}

/// The spread of every score over the seeds, one line each: median,
/// smallest, largest and half the range as a share of the median.
pub fn spread_table(rep: &RepeatRecord) -> String {
    let fmt = |v: Option<f64>| match v {
        None => "—".to_string(),
        Some(x) if x.abs() >= 1000.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    };
    let rows: Vec<[String; 8]> = rep
        .scores
        .iter()
        .map(|r| {
            let half = match (r.median, r.min, r.max) {
                (Some(m), Some(lo), Some(hi)) if m != 0.0 => format!("{:.1}", 50.0 * (hi - lo) / m.abs()),
                _ => "—".into(),
            };
            [
                r.test.clone(),
                r.label.clone(),
                r.unit.clone(),
                format!("{} · {}", r.drive, r.pass),
                fmt(r.median),
                fmt(r.min),
                fmt(r.max),
                half,
            ]
        })
        .collect();
    let head = ["test", "score", "unit", "drive · pass", "median", "min", "max", "±%"];
    let width =
        |k: usize| rows.iter().map(|r| r[k].chars().count()).chain([head[k].chars().count()]).max().unwrap_or(0);
    let w: Vec<usize> = (0..8).map(width).collect();
    let line = |cells: [&str; 8]| {
        let mut l = String::new();
        for (k, c) in cells.iter().enumerate() {
            let pad = " ".repeat(w[k].saturating_sub(c.chars().count()));
            if k < 4 {
                l.push_str(&format!("{c}{pad}  "));
            } else {
                l.push_str(&format!("{pad}{c}  "));
            }
        }
        l.trim_end().to_string() + "\n"
    };
    let mut out = format!("spread over {} seeds ({:?})\n", rep.seeds.len(), rep.seeds);
    out.push_str(&line(head));
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6], &r[7]]));
    }
    out
}

/// Median (the mean of the middle two for an even count), smallest and
/// largest of the defined values.
pub fn median_and_range(values: &[Option<f64>]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let mut v: Vec<f64> = values.iter().flatten().copied().collect();
    if v.is_empty() {
        return (None, None, None);
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    let median = if v.len() % 2 == 1 { v[m] } else { (v[m - 1] + v[m]) / 2.0 };
    (Some(median), v.first().copied(), v.last().copied())
}

#[cfg(test)]
mod tests {
    use super::median_and_range;

    #[test]
    fn median_and_range_by_hand() {
        assert_eq!(median_and_range(&[Some(3.0), Some(1.0), Some(2.0)]), (Some(2.0), Some(1.0), Some(3.0)));
        assert_eq!(
            median_and_range(&[Some(4.0), Some(1.0), None, Some(2.0), Some(3.0)]),
            (Some(2.5), Some(1.0), Some(4.0))
        );
        assert_eq!(median_and_range(&[None, None]), (None, None, None));
    }
}
