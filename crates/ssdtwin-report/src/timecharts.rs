//! Charts over simulated time: throughput and SLC cache occupancy for long
//! write tests (steps and the idle between them on one time line), the
//! drive's composite temperature for long tests of drives with a thermal
//! model, and
//! IOPS per second for the consistency test, over the whole run and over
//! the steady-state window the score averages.

use std::fmt::Write;

use crate::charts::{entries, runs_with, style, Chart, Entry};
use crate::model::{parse_secs, span_s, step_seconds, timeline, Doc, Test};
use crate::svg::{c, legend, legend_height, open, tick_labels, ticks, Frame, YScale};

/// Points of one run over time: (run, (s, value), drawn thin and dotted).
type TimeSeries = (usize, Vec<(f64, f64)>, bool);

/// A time chart of per-second values: lines (or dots) per run.
struct TimeSpec<'a> {
    kind: &'static str,
    title: String,
    ylabel: &'a str,
    /// The x axis's label (`None`: simulated time).
    xlabel: Option<&'a str>,
    scatter: bool,
    series: Vec<TimeSeries>,
}

fn time_chart(doc: &Doc, t: &Test, spec: TimeSpec, extra: &[Entry]) -> Option<String> {
    let xmax = spec.series.iter().flat_map(|s| s.1.iter().map(|p| p.0)).fold(f64::MIN, f64::max);
    let xmin = spec.series.iter().flat_map(|s| s.1.iter().map(|p| p.0)).fold(f64::MAX, f64::min);
    let ymax = spec.series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).fold(0.0, f64::max);
    if xmax < xmin {
        return None;
    }
    let xt = ticks(xmin.floor(), xmax.ceil(), 8);
    let yt = ticks(0.0, if ymax > 0.0 { ymax * 1.05 } else { 1.0 }, 5);
    let mut runs: Vec<usize> = Vec::new();
    for sr in &spec.series {
        if !runs.contains(&sr.0) {
            runs.push(sr.0);
        }
    }
    let mut ents = entries(doc, &runs);
    ents.extend_from_slice(extra);
    let top = 34.0 + legend_height(&ents) + 8.0;
    let height = top + 300.0;
    let fr = Frame::new(height, top, 70.0, (xt[0], *xt.last()?), (yt[0], *yt.last()?), YScale::Linear);
    let npoints = spec.series.iter().map(|s| s.1.len()).sum();
    let full = format!("{} — {}", t.title, spec.title);
    // Long titles would run off the chart: name the test by its short name.
    let title = if full.chars().count() > 84 { format!("{} — {}", t.name, spec.title) } else { full };
    let mut svg = open(spec.kind, height, npoints, &title);
    legend(&mut svg, &ents);
    fr.y_axis(&mut svg, &yt, spec.ylabel);
    let xl: Vec<(f64, String)> = xt.iter().zip(tick_labels(&xt)).map(|(v, l)| (*v, l)).collect();
    fr.x_axis(&mut svg, &xl, spec.xlabel.unwrap_or("Time since the test started (simulated s)"));
    for (i, pts, thin) in &spec.series {
        let (col, dash, _) = style(doc, *i);
        let total: f64 = pts.iter().map(|p| p.1).sum();
        let d: Vec<String> = pts.iter().map(|(x, y)| format!("{},{}", c(fr.x(*x)), c(fr.y(*y)))).collect();
        if spec.scatter {
            let _ = write!(
                svg,
                r#"<path d="M{}h0" fill="none" stroke="{col}" stroke-width="4.5" stroke-linecap="round" stroke-opacity="0.7" data-value="{total}" data-n="{}"/>"#,
                d.join("h0M"),
                pts.len()
            );
        } else {
            let (w, dash) = if *thin { ("1.2", r#" stroke-dasharray="2 3""#) } else { ("1.8", dash) };
            let _ = write!(
                svg,
                r#"<path d="M{}" fill="none" stroke="{col}" stroke-width="{w}"{dash} stroke-linejoin="round" data-value="{total}" data-n="{}"/>"#,
                d.join(" L"),
                pts.len()
            );
        }
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// Throughput and SLC occupancy over time, for tests that mostly write
/// for at least a few seconds.
pub fn write_timelines(doc: &Doc, t: &Test) -> Vec<Chart> {
    let runs = runs_with(doc, &t.name);
    let mut tp = Vec::new();
    let mut slc = Vec::new();
    let mut temp = Vec::new();
    let (mut wr, mut rd, mut long, mut has_slc) = (0.0, 0.0, false, false);
    for &i in &runs {
        let Some(res) = doc.runs[i].test(&t.name) else { continue };
        let secs = timeline(res);
        long |= secs.len() >= 4;
        wr += secs.iter().map(|x| x.v.write_bytes as f64).sum::<f64>();
        rd += secs.iter().map(|x| x.v.read_bytes as f64).sum::<f64>();
        has_slc |= secs.iter().any(|x| x.v.slc_cache_bytes > 0);
        // Throughput as stairs: each second's rate over its own length.
        let stairs = secs.iter().flat_map(|x| {
            let rate = (x.v.write_bytes + x.v.read_bytes) as f64 / 1e6 / x.dur;
            [(x.t, rate), (x.t + x.dur, rate)]
        });
        tp.push((i, stairs.collect(), false));
        // Occupancy is a state at the end of each second.
        slc.push((i, secs.iter().map(|x| (x.t + x.dur, x.v.slc_used_bytes as f64 / 1e9)).collect(), false));
        slc.push((i, secs.iter().map(|x| (x.t + x.dur, x.v.slc_cache_bytes as f64 / 1e9)).collect(), true));
        // Temperature is sampled when each second begins.
        let pts: Vec<(f64, f64)> = secs.iter().filter_map(|x| x.v.temp_c.map(|c| (x.t, c))).collect();
        if !pts.is_empty() {
            temp.push((i, pts, false));
        }
    }
    let mut out = Vec::new();
    if long && !temp.is_empty() {
        let spec = TimeSpec {
            kind: "temperature",
            title: "temperature over time".into(),
            ylabel: "°C",
            xlabel: None,
            scatter: false,
            series: temp,
        };
        if let Some(svg) = time_chart(doc, t, spec, &[]) {
            out.push(Chart {
                file: String::new(),
                kind: "temperature",
                title: format!("{}: composite temperature over time", t.title),
                how: "The composite temperature NVMe reports (the hotter of the controller and NAND nodes of the \
                      thermal model) when each simulated second began, steps and idle on one time line. Past the \
                      drive's warning temperature its firmware throttles."
                    .into(),
                svg,
            });
        }
    }
    if !(long && wr > rd) {
        return out;
    }
    let spec = TimeSpec {
        kind: "throughput",
        title: "throughput over time".into(),
        ylabel: "MB/s",
        xlabel: None,
        scatter: false,
        series: tp,
    };
    if let Some(svg) = time_chart(doc, t, spec, &[]) {
        out.push(Chart {
            file: String::new(),
            kind: "throughput",
            title: format!("{}: throughput over time", t.title),
            how: "MB/s transferred in each simulated second, steps and the idle between them on one time line. \
                  A drop marks the SLC cache filling or garbage collection starting."
                .into(),
            svg,
        });
    }
    if has_slc {
        let extra = [("#666".to_string(), true, "dotted: cache size".to_string())];
        let spec = TimeSpec {
            kind: "slc-cache",
            title: "SLC cache over time".into(),
            ylabel: "GB",
            xlabel: None,
            scatter: false,
            series: slc,
        };
        if let Some(svg) = time_chart(doc, t, spec, &extra) {
            out.push(Chart {
                file: String::new(),
                kind: "slc-cache",
                title: format!("{}: SLC cache occupancy over time", t.title),
                how: "Solid: GB held in the SLC cache at the end of each second; dotted: the cache's size then \
                      (it shrinks as the drive fills). Falling solid lines during idle are folding into the native cells."
                    .into(),
                svg,
            });
        }
    }
    out
}

/// A whole-drive fill's write rate against the data written, as the
/// reviews chart it: the rate of each 1 GB written (of each 1% of the
/// data on fills under 100 GB), from the simulated seconds' bytes with
/// the rate taken as even within a second.
pub fn fill(doc: &Doc, t: &Test) -> Option<Chart> {
    let mut series = Vec::new();
    for &i in &runs_with(doc, &t.name) {
        let res = &doc.runs[i].test(&t.name)?.steps.first()?.result;
        // (s, GB written by then) at each second's end.
        let mut cum = vec![(0.0, 0.0)];
        for x in step_seconds(res) {
            let (_, gb) = *cum.last()?;
            cum.push((x.t + x.dur, gb + x.v.write_bytes as f64 / 1e9));
        }
        let total = cum.last()?.1;
        let segment = if total >= 100.0 { 1.0 } else { total / 100.0 };
        if segment <= 0.0 {
            continue;
        }
        // The time at which `gb` had been written.
        let mut k = 0;
        let mut time_at = |gb: f64| {
            while k + 1 < cum.len() && cum[k + 1].1 < gb {
                k += 1;
            }
            let (a, b) = (cum[k], cum[(k + 1).min(cum.len() - 1)]);
            if b.1 > a.1 {
                a.0 + (b.0 - a.0) * (gb - a.1) / (b.1 - a.1)
            } else {
                b.0
            }
        };
        let mut pts = Vec::new();
        let (mut gb, mut t0) = (0.0, 0.0);
        while gb + segment <= total + 1e-9 {
            let t1 = time_at(gb + segment);
            let rate = if t1 > t0 { segment * 1e3 / (t1 - t0) } else { 0.0 };
            pts.push((gb, rate));
            pts.push((gb + segment, rate));
            gb += segment;
            t0 = t1;
        }
        series.push((i, pts, false));
    }
    let spec = TimeSpec {
        kind: "fill",
        title: "write rate against data written".into(),
        ylabel: "MB/s",
        xlabel: Some("Data written since the drive was erased (GB)"),
        scatter: false,
        series,
    };
    let svg = time_chart(doc, t, spec, &[])?;
    Some(Chart {
        file: String::new(),
        kind: "fill",
        title: format!("{}: write rate against data written", t.title),
        how: "The write rate of each GB written (each 1% of the data on fills under 100 GB), as the reviews chart \
              a fill. The first fall is where the SLC cache runs out (the test's cache-size score); the level after it is the rate of writing \
              straight to the native cells, folding and collecting as the drive fills."
            .into(),
        svg,
    })
}

/// IOPS per second of a steady-state test: the whole run, or the window.
pub fn consistency(doc: &Doc, t: &Test, window: bool) -> Option<Chart> {
    let runs = runs_with(doc, &t.name);
    let time_scale = doc.root.options.time_scale;
    let win = t.def.and_then(|d| d.score.window.as_deref()).and_then(parse_secs);
    let win = (win.unwrap_or(400.0) * time_scale).round().max(1.0) as usize;
    let mut series = Vec::new();
    for &i in &runs {
        let res = &doc.runs[i].test(&t.name)?.steps.first()?.result;
        let whole = (res.elapsed_ns as f64 / 1e9).floor();
        let secs: Vec<(f64, f64)> = step_seconds(res)
            .iter()
            .filter(|x| x.t < whole)
            .map(|x| (x.t, (x.v.read_ios + x.v.write_ios) as f64 / span_s(x.v)))
            .collect();
        let pts = if window { secs[secs.len().saturating_sub(win)..].to_vec() } else { secs };
        series.push((i, pts, false));
    }
    let (kind, title) = if window {
        ("consistency-window", format!("IOPS per second, steady-state window (last {win} s)"))
    } else {
        ("consistency", "IOPS per second, whole run".to_string())
    };
    let spec = TimeSpec { kind, title: title.clone(), ylabel: "IOPS", xlabel: None, scatter: true, series };
    let svg = time_chart(doc, t, spec, &[])?;
    let how = if window {
        "The same dots for the window the score averages. A tight band is consistent; spread means \
         the drive stalls on garbage collection."
    } else {
        "One dot per simulated second: the I/Os completed in it. Fresh-out-of-box speed on the left, \
         the fall to steady state as the spare area runs out, and how widely the drive varies after."
    };
    Some(Chart { file: String::new(), kind, title: format!("{}: {title}", t.title), how: how.into(), svg })
}
