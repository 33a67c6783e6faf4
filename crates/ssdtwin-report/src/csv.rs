//! The numbers behind the charts as CSV (RFC 4180 quoting): the scores,
//! one row per step with its metrics and latency percentiles, and the
//! per-second time series of every step and idle.

use std::fmt::Write;

use serde_json::Value;

use crate::model::{f, latency_us, s, scores, steps, timeline, Doc};

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

fn opt(v: Option<&Value>) -> String {
    v.and_then(Value::as_f64).map_or(String::new(), |x| x.to_string())
}

/// `scores.csv`: test, label, unit, drive, pass, value.
pub fn scores_csv(doc: &Doc) -> String {
    let mut out = String::from("test,title,label,unit,drive,pass,value\n");
    for t in &doc.tests {
        for r in &doc.runs {
            for sc in r.test(&t.name).map_or(&[][..], scores) {
                row(
                    &mut out,
                    &[
                        t.name.clone(),
                        t.title.clone(),
                        s(sc, "label").into(),
                        s(sc, "unit").into(),
                        doc.drives[r.drive].clone(),
                        doc.passes[r.pass].clone(),
                        opt(sc.get("value")),
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
            for st in r.test(&t.name).map_or(&[][..], steps) {
                let res = st.get("result").unwrap_or(&Value::Null);
                let sweep = st.get("sweep").map_or(String::new(), |x| x.to_string());
                let m = |k: &str| opt(st.pointer(&format!("/metrics/{k}")));
                row(
                    &mut out,
                    &[
                        t.name.clone(),
                        doc.drives[r.drive].clone(),
                        doc.passes[r.pass].clone(),
                        s(st, "step").into(),
                        sweep,
                        m("iops"),
                        m("mbps"),
                        m("mean_lat_us"),
                        latency_us(res, "50.000000").to_string(),
                        latency_us(res, "99.000000").to_string(),
                        latency_us(res, "99.900000").to_string(),
                        latency_us(res, "max").to_string(),
                        opt(res.get("waf")),
                        m("duty_cycle_with_idle"),
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
    let mut out = format!("test,drive,pass,t_s,{}\n", COLS.join(","));
    for t in &doc.tests {
        for r in &doc.runs {
            let Some(res) = r.test(&t.name) else { continue };
            for sec in timeline(res) {
                let mut cells = vec![t.name.clone(), doc.drives[r.drive].clone(), doc.passes[r.pass].clone()];
                cells.push(format!("{:.3}", sec.t));
                cells.extend(COLS.iter().map(|k| f(sec.v, k).to_string()));
                row(&mut out, &cells);
            }
        }
    }
    out
}
