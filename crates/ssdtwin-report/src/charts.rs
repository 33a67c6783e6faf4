//! The charts of a test, each a complete SVG: the score bars, the
//! per-QD or per-mix curves, throughput and SLC cache occupancy over time
//! for long write tests, IOPS over time for the consistency test (whole
//! run and steady-state window) and latency percentiles.
//!
//! Drives keep their colour on every chart; the second pass (the full
//! drive) is drawn dashed and lighter. Every chart carries `data-chart`
//! (its kind) and `data-points` (how many values it draws); every drawn
//! value carries `data-value`.

use std::fmt::Write;

use ssdtwin::study::record::StepRecord;

use crate::model::{latency_us, Doc, Test};
use crate::svg::{
    c, colour, esc, legend, legend_height, log_ticks, num, open, tick_labels, ticks, us_label, Frame, YScale,
};
use crate::timecharts;

/// One chart.
pub struct Chart {
    /// File name of the separate SVG.
    pub file: String,
    /// Kind (`scores`, `qd-curve`, `mix-curve`, `throughput`, ...).
    pub kind: &'static str,
    /// Title.
    pub title: String,
    /// How to read it (one or two sentences).
    pub how: String,
    /// The SVG document.
    pub svg: String,
}

/// A legend entry: colour, dashed, label.
pub type Entry = (String, bool, String);

/// Points of one run's curve over a sweep: (run, other swept fields, (step index, value)).
type SweepSeries = (usize, String, Vec<(usize, f64)>);

/// Legend entries of runs.
pub fn entries(doc: &Doc, runs: &[usize]) -> Vec<Entry> {
    runs.iter()
        .map(|&i| {
            let r = &doc.runs[i];
            (colour(r.drive).to_string(), r.pass > 0, doc.label(r))
        })
        .collect()
}

/// Runs that have test `test`.
pub fn runs_with(doc: &Doc, test: &str) -> Vec<usize> {
    (0..doc.runs.len()).filter(|&i| doc.runs[i].test(test).is_some()).collect()
}

/// Colour, dash attribute and fill opacity of run `i`.
pub fn style(doc: &Doc, i: usize) -> (&'static str, &'static str, &'static str) {
    let r = &doc.runs[i];
    if r.pass > 0 {
        (colour(r.drive), r#" stroke-dasharray="5 3""#, "0.45")
    } else {
        (colour(r.drive), "", "1")
    }
}

/// All charts of test `k`.
pub fn test_charts(doc: &Doc, k: usize) -> Vec<Chart> {
    let t = &doc.tests[k];
    let mut out = Vec::new();
    let steady = t.def.is_some_and(|d| d.score.kind == "steady-state");
    out.extend(score_bars(doc, t, None));
    // The Storage Bench's charts: latencies, outliers and energy beside
    // the data rate, each unit on its own axis; in any test, the latency
    // outliers and stall counts (the 2008 review's pauses).
    let mut units: Vec<String> = Vec::new();
    for &i in &runs_with(doc, &t.name) {
        for sc in doc.runs[i].test(&t.name).map_or(&[][..], |x| &x.scores) {
            if !units.contains(&sc.unit) {
                units.push(sc.unit.clone());
            }
        }
    }
    let trace = is_trace_test(t);
    for u in units.iter().skip(1) {
        if trace || matches!(u.as_str(), "%" | "stalls" | "W" | "MB/s/W") {
            out.extend(score_bars(doc, t, Some(u)));
        }
    }
    out.extend(sweep_curves(doc, t, false));
    out.extend(sweep_curves(doc, t, true));
    if t.def.is_some_and(|d| d.score.kind == "fill") {
        out.extend(timecharts::fill(doc, t));
    }
    if steady {
        out.extend(timecharts::consistency(doc, t, false));
        out.extend(timecharts::consistency(doc, t, true));
    } else {
        out.extend(timecharts::write_timelines(doc, t));
    }
    out.extend(crate::placement::zone_states(doc, t));
    out.extend(crate::placement::handle_waf(doc, t));
    out.extend(latency(doc, t));
    for ch in &mut out {
        ch.file = format!("{:02}-{}-{}.svg", k + 1, t.name, ch.kind);
    }
    out
}

/// Whether the test replays a trace (the synthetic Storage Bench and
/// PCMark tests).
fn is_trace_test(t: &Test) -> bool {
    trace_source(t).is_some()
}

/// The trace the test's first trace step replays.
fn trace_source(t: &Test) -> Option<String> {
    t.def?.steps.iter().find_map(|st| st.option("trace")?.into_iter().next())
}

/// Bars of the test's scores in `unit` (`None`: the primary score's).
fn score_bars(doc: &Doc, t: &Test, only_unit: Option<&str>) -> Option<Chart> {
    let runs = runs_with(doc, &t.name);
    let mut labels: Vec<(String, String)> = Vec::new();
    for &i in &runs {
        for sc in &doc.runs[i].test(&t.name)?.scores {
            if !labels.iter().any(|(l, _)| *l == sc.label) {
                labels.push((sc.label.clone(), sc.unit.clone()));
            }
        }
    }
    // The primary score, and any others in its unit (one axis, one unit);
    // the rest are in the page's table.
    let unit0 = match only_unit {
        Some(u) => u.to_string(),
        None => labels.first()?.1.clone(),
    };
    labels.retain(|l| l.1 == unit0);
    if labels.is_empty() {
        return None;
    }
    let value = |i: usize, label: &str| {
        doc.runs[i].test(&t.name).and_then(|x| x.scores.iter().find(|sc| sc.label == label)?.value)
    };
    let max = runs.iter().flat_map(|&i| labels.iter().filter_map(move |(l, _)| value(i, l))).fold(0.0, f64::max);
    let xt = ticks(0.0, if max > 0.0 { max * 1.08 } else { 1.0 }, 6);
    let ents = entries(doc, &runs);
    let top = 34.0 + legend_height(&ents) + 8.0;
    let (row, head) = (22.0, if labels.len() > 1 { 20.0 } else { 0.0 });
    let content = labels.len() as f64 * (head + runs.len() as f64 * row + 8.0);
    let height = top + content + 46.0;
    let fr = Frame::new(height, top, 210.0, (xt[0], *xt.last()?), (0.0, 1.0), YScale::Linear);
    let unit = labels[0].1.clone();
    let mut svg = open("scores", height, runs.len() * labels.len(), &t.title);
    legend(&mut svg, &ents);
    for (&v, l) in xt.iter().zip(tick_labels(&xt)) {
        let _ = write!(
            svg,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
            c(fr.top),
            c(fr.bottom),
            c(fr.bottom + 17.0),
            l,
            x = c(fr.x(v))
        );
    }
    let mut y = fr.top + 4.0;
    for (label, unit) in &labels {
        if head > 0.0 {
            let _ = write!(svg, r#"<text x="10" y="{}" class="axis">{}</text>"#, c(y + 13.0), esc(label));
            y += head;
        }
        for &i in &runs {
            let (col, dash, op) = style(doc, i);
            let name = doc.label(&doc.runs[i]);
            let _ = write!(svg, r#"<text x="202" y="{}" text-anchor="end">{}</text>"#, c(y + 15.0), esc(&name));
            match value(i, label) {
                Some(v) => {
                    let w = fr.x(v) - fr.left;
                    let _ = write!(
                        svg,
                        r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{col}" fill-opacity="{op}" stroke="{col}"{dash} data-value="{}"><title>{} {}: {} {}</title></rect><text x="{}" y="{}">{} {}</text>"#,
                        c(fr.left),
                        c(y + 2.0),
                        c(w.max(0.5)),
                        c(row - 5.0),
                        v,
                        esc(&name),
                        esc(label),
                        num(v),
                        esc(unit),
                        c(fr.left + w + 4.0),
                        c(y + 15.0),
                        num(v),
                        esc(unit)
                    );
                }
                None => {
                    let _ = write!(svg, r#"<text x="{}" y="{}">no value</text>"#, c(fr.left + 4.0), c(y + 15.0));
                }
            }
            y += row;
        }
        y += 8.0;
    }
    let _ = write!(
        svg,
        r##"<line x1="{l}" y1="{t}" x2="{l}" y2="{b}" stroke="#444"/><text x="{}" y="{}" text-anchor="middle" class="axis">{}</text></svg>"##,
        c((fr.left + fr.right) / 2.0),
        c(height - 8.0),
        esc(&format!("{} ({unit})", labels.iter().map(|l| l.0.as_str()).collect::<Vec<_>>().join(", "))),
        l = c(fr.left),
        t = c(fr.top),
        b = c(fr.bottom)
    );
    let passes =
        if doc.passes.len() > 1 { " Lighter, dashed bars are the later pass (e.g. the full drive)." } else { "" };
    let synthetic = match trace_source(t) {
        Some(src) if src.starts_with("pcmark10-") => {
            " Synthetic: file copies generated by ssdtwin with the published statistics of UL's PCMark 10 \
             traces, not UL's traces; the score is unscaled (UL's constant is not published)."
        }
        Some(src) if src.starts_with("pcmark8-") || src.starts_with("vantage-") => {
            " Synthetic: traces generated by ssdtwin with the published statistics of Futuremark's PCMark \
             traces, not Futuremark's traces."
        }
        Some(_) => {
            " Synthetic: a trace generated by ssdtwin with the published character of AnandTech's Storage Bench \
             test, not AnandTech's trace."
        }
        None => "",
    };
    let (kind, what, better) = match only_unit {
        None => ("scores", "score", "longer is better for throughput and IOPS"),
        Some("µs") => ("scores-latency", "latency", "shorter is better"),
        Some("J") => ("scores-energy", "energy", "shorter is better"),
        Some("%") => ("scores-outliers", "latency outliers", "shorter is better"),
        Some("W") => ("scores-power", "average power", "shorter is better for the same work"),
        Some("MB/s/W") => ("scores-efficiency", "power efficiency", "longer is better"),
        Some("stalls") => ("scores-stalls", "stalls", "shorter is better"),
        Some("MB/s") => ("scores-bandwidth", "throughput", "longer is better"),
        Some("s") => ("scores-time", "service time", "shorter is better"),
        Some(_) => ("scores-other", "other scores", "see the table above"),
    };
    Some(Chart {
        file: String::new(),
        kind,
        title: format!("{}: {what}", t.title),
        how: format!(
            "The test's {what} per drive ({unit}); {better}. Other scores of the test are in the table above.\
             {passes}{synthetic}"
        ),
        svg,
    })
}

/// Throughput (or, with `power`, average power) of every step of a sweep
/// against the swept field.
fn sweep_curves(doc: &Doc, t: &Test, power: bool) -> Option<Chart> {
    let runs = runs_with(doc, &t.name);
    let first = doc.runs[*runs.first()?].test(&t.name)?;
    let keys: Vec<String> = first.steps.first()?.sweep.keys().cloned().collect();
    let distinct = |k: &str| {
        let mut v: Vec<String> = Vec::new();
        for st in &first.steps {
            let x = st.sweep.get(k).map(|x| x.to_string());
            if let Some(x) = x.filter(|x| !v.contains(x)) {
                v.push(x);
            }
        }
        v
    };
    let key = keys.iter().max_by_key(|k| (distinct(k).len(), std::cmp::Reverse(k.as_str())))?.clone();
    let cats = distinct(&key);
    if cats.len() < 2 {
        return None;
    }
    let metric = t.def.and_then(|d| d.score.metric.as_deref()).unwrap_or("mbps");
    let iops = metric == "iops";
    let unit = if power {
        "W"
    } else if iops {
        "IOPS"
    } else {
        "MB/s"
    };
    let sweep_val = |st: &StepRecord, k: &str| st.sweep.get(k).map_or(String::new(), |x| x.to_string());
    // A step list that alternates directions (e.g. write then read at
    // every transfer size) draws one line per direction.
    let rw_of = |st: &StepRecord| st.result.io_spec().map_or("", |s| s.rw.name()).to_string();
    let rw_varies = first.steps.iter().any(|st| rw_of(st) != rw_of(&first.steps[0]));
    // Series: run × the values of the other swept fields (× direction).
    let mut series: Vec<SweepSeries> = Vec::new();
    for &i in &runs {
        for st in &doc.runs[i].test(&t.name)?.steps {
            let mut rest: Vec<String> =
                keys.iter().filter(|k| **k != key).map(|k| format!("{k}={}", sweep_val(st, k))).collect();
            if rw_varies {
                rest.push(rw_of(st));
            }
            let rest = rest.join(" ");
            let x = cats.iter().position(|cv| *cv == sweep_val(st, &key))?;
            let y = if power {
                // Drives without a power model have no power curve.
                let Some(w) = st.metrics.power_w else { continue };
                w
            } else if iops {
                st.metrics.iops.unwrap_or(0.0)
            } else {
                st.metrics.mbps.unwrap_or(0.0)
            };
            match series.iter_mut().find(|(r, rs, _)| *r == i && *rs == rest) {
                Some(sr) => sr.2.push((x, y)),
                None => series.push((i, rest, vec![(x, y)])),
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    let max = series.iter().flat_map(|sr| sr.2.iter().map(|p| p.1)).fold(0.0, f64::max);
    let yt = ticks(0.0, if max > 0.0 { max * 1.05 } else { 1.0 }, 5);
    let ents: Vec<Entry> = series
        .iter()
        .map(|(i, rest, _)| {
            let (col, dash, _) = style(doc, *i);
            let lab = doc.label(&doc.runs[*i]);
            // Reads dashed where a sweep draws both directions.
            let dashed = !dash.is_empty() || (rw_varies && rest.ends_with("read"));
            (col.to_string(), dashed, if rest.is_empty() { lab } else { format!("{lab} · {rest}") })
        })
        .collect();
    let top = 34.0 + legend_height(&ents) + 8.0;
    let height = top + 300.0;
    let fr = Frame::new(height, top, 70.0, (-0.3, cats.len() as f64 - 0.7), (yt[0], *yt.last()?), YScale::Linear);
    let (kind, xlabel) = match key.as_str() {
        "iodepth" => ("qd-curve", "Queue depth (outstanding I/Os)".to_string()),
        "rwmixread" => ("mix-curve", "Reads in the mix (%)".to_string()),
        "bs" => ("size-curve", "Transfer size".to_string()),
        "percentage_random" => ("random-curve", "Random share (%)".to_string()),
        other => ("sweep-curve", other.to_string()),
    };
    let kind = match (power, kind) {
        (false, k) => k,
        (true, "qd-curve") => "qd-power",
        (true, "mix-curve") => "mix-power",
        (true, "size-curve") => "size-power",
        (true, "random-curve") => "random-power",
        (true, _) => "sweep-power",
    };
    let npoints = series.iter().map(|sr| sr.2.len()).sum();
    let mut svg = open(kind, height, npoints, &t.title);
    legend(&mut svg, &ents);
    fr.y_axis(&mut svg, &yt, unit);
    let label = |v: &String| if key == "bs" { v.parse::<u64>().map_or(v.clone(), size_label) } else { v.clone() };
    let xt: Vec<(f64, String)> = cats.iter().enumerate().map(|(k, v)| (k as f64, label(v))).collect();
    fr.x_axis(&mut svg, &xt, &xlabel);
    for (si, (i, _, pts)) in series.iter().enumerate() {
        let (col, dash, _) = style(doc, *i);
        let dash = if dash.is_empty() && ents[si].1 { r#" stroke-dasharray="5 3""# } else { dash };
        let d: Vec<String> = pts.iter().map(|(x, y)| format!("{},{}", c(fr.x(*x as f64)), c(fr.y(*y)))).collect();
        let _ = write!(svg, r#"<path d="M{}" fill="none" stroke="{col}" stroke-width="2"{dash}/>"#, d.join(" L"));
        for (x, y) in pts {
            let _ = write!(
                svg,
                r#"<circle cx="{}" cy="{}" r="3.5" fill="{col}" data-value="{y}"><title>{} {}: {} {unit}</title></circle>"#,
                c(fr.x(*x as f64)),
                c(fr.y(*y)),
                esc(&ents[si].2),
                esc(&label(&cats[*x])),
                num(*y)
            );
        }
    }
    svg.push_str("</svg>");
    let what = match kind {
        "qd-curve" => "each queue depth",
        "mix-curve" => "each read/write mix, from all reads (100) to all writes (0)",
        "size-curve" if rw_varies => "each transfer size (writes solid, reads dashed)",
        "size-curve" => "each transfer size",
        _ => "each step of the sweep",
    };
    let how = if power {
        format!(
            "One point per step: the drive's average power (W) at {what}, bursts and gaps included, as the \
             reviews draw it beside efficiency. Lower is better for the same work."
        )
    } else {
        format!("One point per step: the {unit} measured at {what}. Higher is better; the score averages the steps it names.")
    };
    let title = if power { format!("{}: power per step", t.title) } else { format!("{}: {unit} per step", t.title) };
    Some(Chart { file: String::new(), kind, title, how, svg })
}

/// A transfer size as reviewers label it: 512 B, 4 KiB, 1 MiB.
fn size_label(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

fn latency(doc: &Doc, t: &Test) -> Option<Chart> {
    const KEYS: [(&str, &str); 4] =
        [("50.000000", "p50"), ("99.000000", "p99"), ("99.900000", "p99.9"), ("max", "max")];
    let runs = runs_with(doc, &t.name);
    let mut vals: Vec<(usize, [f64; 4])> = Vec::new();
    for &i in &runs {
        let mut v = [0.0f64; 4];
        for st in &doc.runs[i].test(&t.name)?.steps {
            for (k, (key, _)) in KEYS.iter().enumerate() {
                v[k] = v[k].max(latency_us(&st.result, key));
            }
        }
        vals.push((i, v));
    }
    let max = vals.iter().flat_map(|v| v.1).fold(0.0, f64::max);
    let min = vals.iter().flat_map(|v| v.1).filter(|x| *x > 0.0).fold(f64::MAX, f64::min);
    if max <= 0.0 {
        return None;
    }
    let yt = log_ticks(min, max);
    let ents = entries(doc, &runs);
    let top = 34.0 + legend_height(&ents) + 8.0;
    let height = top + 300.0;
    let fr = Frame::new(height, top, 70.0, (0.0, 4.0), (yt[0], *yt.last()?), YScale::Log);
    let mut svg = open("latency", height, vals.len() * 4, &format!("{} — latency", t.title));
    legend(&mut svg, &ents);
    fr.y_axis(&mut svg, &yt, "Completion latency (log scale)");
    let xt: Vec<(f64, String)> = KEYS.iter().enumerate().map(|(k, (_, l))| (k as f64 + 0.5, l.to_string())).collect();
    fr.x_axis(&mut svg, &xt, "Percentile of completion latency (worst step of the test)");
    let group = (fr.right - fr.left) / 4.0;
    let bw = group * 0.8 / vals.len() as f64;
    for (n, (i, v)) in vals.iter().enumerate() {
        let (col, dash, op) = style(doc, *i);
        let name = doc.label(&doc.runs[*i]);
        for (k, x) in v.iter().enumerate() {
            let x0 = fr.left + group * k as f64 + group * 0.1 + bw * n as f64;
            let y = fr.y(*x);
            let _ = write!(
                svg,
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{col}" fill-opacity="{op}" stroke="{col}"{dash} data-value="{x}"><title>{} {}: {}</title></rect>"#,
                c(x0),
                c(y),
                c(bw * 0.92),
                c((fr.bottom - y).max(0.0)),
                esc(&name),
                KEYS[k].1,
                us_label(*x)
            );
        }
    }
    svg.push_str("</svg>");
    Some(Chart {
        file: String::new(),
        kind: "latency",
        title: format!("{}: latency percentiles", t.title),
        how: "Completion latency of the test's main direction (reads or writes): median, 99th, 99.9th percentile \
              and maximum, each the worst over the test's steps. Log scale: each grid line is 10× the one below; \
              shorter is better."
            .into(),
        svg,
    })
}
