//! fio's terse output (`--output-format=terse`, version 3 as fio 3.33
//! writes by default): one line of `;`-separated fields per job (or per
//! group with `group_reporting`), in fio's order:
//!
//! `3;fio-3.33;jobname;groupid;error`, then for reads and for writes
//! `io_kbytes;bw_KiB/s;iops;runtime_ms`, submission latency
//! `min;max;mean;stddev` (µs), completion latency likewise, 20
//! completion-latency percentiles `P%=µs` (fio's 17 and three empty
//! `0%=0`), total latency `min;max;mean;stddev`, bandwidth samples
//! `min;max;share_of_group%;mean;stddev` (KiB/s); then
//! `usr_cpu%;sys_cpu%;ctx;majf;minf`, the 7 I/O depth shares, 10 µs and
//! 12 ms latency bucket shares. Version 3 has no trim fields; the twin has
//! no disk utilisation (fio leaves it out for files too), no CPU figures
//! (0) and submits instantly (submission latency 0).

use crate::run::stats::DirStats;
use crate::study::fio_out::{latency_shares, rate, sample_stats, Entry, FioReport, FIO_VERSION};
use crate::study::report::PERCENTILES;

impl FioReport<'_> {
    /// fio's terse output, version 3.
    pub fn terse(&self) -> String {
        let entries = self.entries();
        let mut out = String::new();
        for e in &entries {
            out.push_str(&format!("3;{FIO_VERSION};{};{};{}", e.name, e.groupid, e.error));
            for k in 0..2 {
                let group_bw: f64 = entries
                    .iter()
                    .filter(|o| o.groupid == e.groupid)
                    .map(|o| rate(o.dirs[k].bytes as f64, o.measured_ns))
                    .sum();
                out.push_str(&dir_fields(e, k, group_bw));
            }
            out.push_str(";0.000000%;0.000000%;0;0;0");
            let submits: u64 = e.depth_levels.iter().sum();
            for &n in &e.depth_levels {
                let p = if submits == 0 { 0.0 } else { n as f64 * 100.0 / submits as f64 };
                out.push_str(&format!(";{p:3.1}%"));
            }
            let mut all = DirStats::default();
            for d in &e.dirs {
                all.merge(d);
            }
            let (ns, mut us, ms) = latency_shares(&all.hist, all.ios);
            // fio folds the nanosecond buckets into the first microsecond one.
            us[0] += ns.iter().sum::<f64>();
            for x in us.iter().chain(&ms) {
                out.push_str(&format!(";{x:3.2}%"));
            }
            if let Some(c) = e.errors {
                out.push_str(&format!(";{};{}", c.total, c.first));
            }
            out.push('\n');
        }
        out
    }
}

/// One direction's fields.
fn dir_fields(e: &Entry, k: usize, group_bw: f64) -> String {
    let d = &e.dirs[k];
    let runtime_ms = if d.ios > 0 { e.measured_ns / 1_000_000 } else { 0 };
    let bw = (1000 * d.bytes).checked_div(runtime_ms).map_or(0, |b| b / 1024);
    let iops = (1000 * d.ios).checked_div(runtime_ms).unwrap_or(0);
    let mut s = format!(";{};{bw};{iops};{runtime_ms}", d.bytes >> 10);
    let lat = |s: &mut String| {
        if d.ios == 0 {
            s.push_str(";0;0;0.000000;0.000000");
        } else {
            s.push_str(&format!(
                ";{};{};{:.6};{:.6}",
                d.lat_min_ns / 1000,
                d.lat_max_ns / 1000,
                d.mean_ns() / 1000.0,
                d.hist.stdev() / 1000.0
            ));
        }
    };
    // Submission latency: commands are submitted the instant they are
    // issued.
    s.push_str(";0;0;0.000000;0.000000");
    lat(&mut s);
    for i in 0..20 {
        match PERCENTILES.get(i) {
            Some(&p) if d.ios > 0 => s.push_str(&format!(";{p:.6}%={}", d.percentile_ns(p) / 1000)),
            // fio lists its percentiles with 0 for a direction without I/O.
            Some(&p) => s.push_str(&format!(";{p:.6}%=0")),
            _ => s.push_str(";0%=0"),
        }
    }
    lat(&mut s);
    // Bandwidth samples (whole 500 ms intervals, KiB/s).
    let (bw, _) = sample_stats(e, k);
    if bw.n == 0 {
        s.push_str(";0;0;0.000000%;0.000000;0.000000");
    } else {
        let (lo, hi, mean, dev) = bw.summary;
        let agg_kib = (group_bw as u64 / 1024) as f64;
        let share = if agg_kib > 0.0 { (mean * 100.0 / agg_kib).min(100.0) } else { 100.0 };
        s.push_str(&format!(";{};{};{share:.6}%;{mean:.6};{dev:.6}", lo as u64, hi as u64));
    }
    s
}
