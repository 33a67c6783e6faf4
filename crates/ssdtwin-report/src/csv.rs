//! The numbers behind the charts as CSV (RFC 4180 quoting): the scores,
//! one row per step with its metrics and latency percentiles, and the
//! per-second time series of every step and idle.

use std::fmt::Write;

use crate::model::{latency_us, timeline, Doc};

fn field(x: &str) -> String {
    if x.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", x.replace('"', "\"\""))
    } else {
        x.to_string()
    }
}

fn row(out: &mut String, cells: &[String]) {
    let line: Vec<String> = cells.iter().map(|x| field(x)).collect();
    let _ = writeln!(out, "{}", line.join(","));
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// `scores.csv`: test, label, unit, drive, pass, value.
pub fn scores_csv(doc: &Doc) -> String {
    let mut out = String::from("test,title,label,unit,drive,pass,value\n");
    for t in &doc.tests {
        for r in &doc.runs {
            for sc in r.test(&t.name).map_or(&[][..], |x| &x.scores) {
                row(
                    &mut out,
                    &[
                        t.name.clone(),
                        t.title.clone(),
                        sc.label.clone(),
                        sc.unit.clone(),
                        doc.drives[r.drive].clone(),
                        doc.passes[r.pass].clone(),
                        opt(sc.value),
                    ],
                );
            }
        }
    }
    out
}

/// `steps.csv`: one row per test step and run.
pub fn steps_csv(doc: &Doc) -> String {
    let mut out = String::from(
        "test,drive,pass,step,sweep,iops,mbps,mean_lat_us,p50_us,p99_us,p99.9_us,max_us,waf,duty_cycle_with_idle\n",
    );
    for t in &doc.tests {
        for r in &doc.runs {
            for st in r.test(&t.name).map_or(&[][..], |x| &x.steps) {
                let res = &st.result;
                let sweep = serde_json::to_string(&st.sweep).expect("a map of numbers serialises");
                let m = &st.metrics;
                row(
                    &mut out,
                    &[
                        t.name.clone(),
                        doc.drives[r.drive].clone(),
                        doc.passes[r.pass].clone(),
                        st.step.clone(),
                        sweep,
                        opt(m.iops),
                        opt(m.mbps),
                        opt(m.mean_lat_us),
                        latency_us(res, "50.000000").to_string(),
                        latency_us(res, "99.000000").to_string(),
                        latency_us(res, "99.900000").to_string(),
                        latency_us(res, "max").to_string(),
                        res.waf.to_string(),
                        m.duty_cycle_with_idle.to_string(),
                    ],
                );
            }
        }
    }
    out
}

/// `timeseries.csv`: every point (a second, or `span_s` seconds of a
/// coarsened series) of every test, on the test's time line.
pub fn timeseries_csv(doc: &Doc) -> String {
    const COLS: [&str; 10] = [
        "span_s",
        "read_ios",
        "write_ios",
        "read_bytes",
        "write_bytes",
        "mean_lat_ns",
        "max_lat_ns",
        "slc_cache_bytes",
        "slc_used_bytes",
        "fold_backlog_bytes",
    ];
    let values = |v: &ssdtwin::run::stats::Second| {
        [
            v.span_s,
            v.read_ios,
            v.write_ios,
            v.read_bytes,
            v.write_bytes,
            v.mean_lat_ns,
            v.max_lat_ns,
            v.slc_cache_bytes,
            v.slc_used_bytes,
            v.fold_backlog_bytes,
        ]
    };
    let mut out = format!("test,drive,pass,t_s,{}\n", COLS.join(","));
    for t in &doc.tests {
        for r in &doc.runs {
            let Some(res) = r.test(&t.name) else { continue };
            for sec in timeline(res) {
                let mut cells = vec![t.name.clone(), doc.drives[r.drive].clone(), doc.passes[r.pass].clone()];
                cells.push(format!("{:.3}", sec.t));
                cells.extend(values(sec.v).iter().map(|x| x.to_string()));
                row(&mut out, &cells);
            }
        }
    }
    out
}
