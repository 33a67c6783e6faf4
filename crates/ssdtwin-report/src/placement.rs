//! Charts of the data-placement interfaces, for tests run on drives with
//! a zoned namespace or flexible data placement: zones by state over
//! time (open and active zones against the drive's limits' scale; full
//! zones), and the write amplification of each reclaim unit handle over
//! the test (media bytes over host bytes, summed over its steps).
//!
//! Drawn only when a test's records carry them (`zones` in the per-second
//! series, `placement.handles` in the steps): conventional drives' reports
//! are unchanged.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::charts::{entries, runs_with, style, Chart};
use crate::model::{timeline, Doc, Test};
use crate::svg::{c, esc, legend, legend_height, num, open, tick_labels, ticks, Frame, YScale};

/// One run's zone counts over time: (run, (s, value)).
type Line = (usize, Vec<(f64, f64)>);

fn lines_chart(doc: &Doc, t: &Test, kind: &str, title: &str, ylabel: &str, lines: &[(Line, bool)]) -> Option<String> {
    let pts = || lines.iter().flat_map(|((_, p), _)| p.iter());
    let (xmin, xmax) = pts().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let ymax = pts().fold(0.0, |a: f64, p| a.max(p.1));
    if xmax < xmin {
        return None;
    }
    let xt = ticks(xmin.floor(), xmax.ceil().max(xmin.floor() + 1.0), 8);
    let yt = ticks(0.0, if ymax > 0.0 { ymax * 1.05 } else { 1.0 }, 5);
    let mut runs: Vec<usize> = Vec::new();
    for ((i, _), _) in lines {
        if !runs.contains(i) {
            runs.push(*i);
        }
    }
    let mut ents = entries(doc, &runs);
    if lines.iter().any(|(_, thin)| *thin) {
        ents.push(("#666".to_string(), true, "dotted: active (open + closed)".to_string()));
    }
    let top = 34.0 + legend_height(&ents) + 8.0;
    let height = top + 300.0;
    let fr = Frame::new(height, top, 70.0, (xt[0], *xt.last()?), (yt[0], *yt.last()?), YScale::Linear);
    let npoints = lines.iter().map(|((_, p), _)| p.len()).sum();
    let mut svg = open(kind, height, npoints, &format!("{} — {title}", t.name));
    legend(&mut svg, &ents);
    fr.y_axis(&mut svg, &yt, ylabel);
    let xl: Vec<(f64, String)> = xt.iter().zip(tick_labels(&xt)).map(|(v, l)| (*v, l)).collect();
    fr.x_axis(&mut svg, &xl, "Time since the test started (simulated s)");
    for ((i, p), thin) in lines {
        let (col, dash, _) = style(doc, *i);
        let (w, dash) = if *thin { ("1.2", r#" stroke-dasharray="2 3""#) } else { ("1.8", dash) };
        let d: Vec<String> = p.iter().map(|(x, y)| format!("{},{}", c(fr.x(*x)), c(fr.y(*y)))).collect();
        let total: f64 = p.iter().map(|q| q.1).sum();
        let _ = write!(
            svg,
            r#"<path d="M{}" fill="none" stroke="{col}" stroke-width="{w}"{dash} data-value="{total}" data-n="{}"/>"#,
            d.join(" L"),
            p.len()
        );
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// Zones by state over time (zoned drives): open and active zones, and
/// full zones, each as stairs per second.
pub fn zone_states(doc: &Doc, t: &Test) -> Vec<Chart> {
    let mut open_lines = Vec::new();
    let mut full_lines = Vec::new();
    for i in runs_with(doc, &t.name) {
        let Some(res) = doc.runs[i].test(&t.name) else { continue };
        let secs = timeline(res);
        let z: Vec<(f64, f64, _)> = secs.iter().filter_map(|x| x.v.zones.map(|z| (x.t, x.t + x.dur, z))).collect();
        if z.is_empty() {
            continue;
        }
        let stairs = |f: &dyn Fn(&ssdtwin::run::placement_stats::ZoneStates) -> u32| -> Vec<(f64, f64)> {
            z.iter().flat_map(|(a, b, s)| [(*a, f(s) as f64), (*b, f(s) as f64)]).collect()
        };
        open_lines.push(((i, stairs(&|s| s.open())), false));
        open_lines.push(((i, stairs(&|s| s.active())), true));
        full_lines.push(((i, stairs(&|s| s.full)), false));
    }
    let mut out = Vec::new();
    if open_lines.is_empty() {
        return out;
    }
    if let Some(svg) = lines_chart(doc, t, "open-zones", "open zones over time", "zones", &open_lines) {
        out.push(Chart {
            file: String::new(),
            kind: "open-zones",
            title: format!("{}: open and active zones over time", t.title),
            how: "Solid: zones implicitly or explicitly opened when each simulated second began; dotted: active \
                  zones (opened or closed). The drive's max_open_zones and max_active_zones bound them."
                .into(),
            svg,
        });
    }
    if let Some(svg) = lines_chart(doc, t, "full-zones", "full zones over time", "zones", &full_lines) {
        out.push(Chart {
            file: String::new(),
            kind: "full-zones",
            title: format!("{}: full zones over time", t.title),
            how: "Zones written to their capacity (or finished) when each simulated second began; a fall is the \
                  host resetting zones."
                .into(),
            svg,
        });
    }
    out
}

/// Write amplification of each reclaim unit handle over the test (FDP
/// drives): one bar per run and handle that took writes.
pub fn handle_waf(doc: &Doc, t: &Test) -> Option<Chart> {
    // (run, group, handle) → (host bytes, media bytes), over the steps.
    let mut bars: BTreeMap<(usize, u32, u32), (u64, u64)> = BTreeMap::new();
    let runs = runs_with(doc, &t.name);
    for &i in &runs {
        let Some(res) = doc.runs[i].test(&t.name) else { continue };
        for st in &res.steps {
            for h in st.result.placement.iter().flat_map(|p| &p.handles) {
                let e = bars.entry((i, h.group, h.handle)).or_default();
                e.0 += h.host_bytes;
                e.1 += h.media_bytes;
            }
        }
    }
    bars.retain(|_, (host, _)| *host > 0);
    if bars.is_empty() {
        return None;
    }
    let wafs: Vec<f64> = bars.values().map(|(h, m)| *m as f64 / *h as f64).collect();
    let ymax = wafs.iter().fold(1.0, |a: f64, w| a.max(*w));
    let yt = ticks(0.0, ymax * 1.1, 5);
    let used: Vec<usize> = runs.into_iter().filter(|i| bars.keys().any(|k| k.0 == *i)).collect();
    let ents = entries(doc, &used);
    let top = 34.0 + legend_height(&ents) + 8.0;
    let height = top + 300.0;
    let n = bars.len() as f64;
    let fr = Frame::new(height, top, 70.0, (0.0, n), (yt[0], *yt.last()?), YScale::Linear);
    let mut svg = open("handle-waf", height, bars.len(), &format!("{} — write amplification per handle", t.name));
    legend(&mut svg, &ents);
    fr.y_axis(&mut svg, &yt, "WAF (media / host bytes)");
    let labels: Vec<(f64, String)> =
        bars.keys().enumerate().map(|(k, (_, g, h))| (k as f64 + 0.5, format!("RG{g} RUH{h}"))).collect();
    fr.x_axis(&mut svg, &labels, "Reclaim group and reclaim unit handle");
    for (k, ((i, _, _), w)) in bars.keys().zip(&wafs).enumerate() {
        let (col, _, opacity) = style(doc, *i);
        let (x0, x1) = (fr.x(k as f64 + 0.15), fr.x(k as f64 + 0.85));
        let _ = write!(
            svg,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{col}" fill-opacity="{opacity}" data-value="{w}"><title>{}</title></rect>"#,
            c(x0),
            c(fr.y(*w)),
            c(x1 - x0),
            c(fr.y(0.0) - fr.y(*w)),
            esc(&format!("WAF {}", num(*w)))
        );
    }
    svg.push_str("</svg>");
    Some(Chart {
        file: String::new(),
        kind: "handle-waf",
        title: format!("{}: write amplification per reclaim unit handle", t.title),
        how: "Media bytes programmed into each handle's reclaim units over the host bytes written through it, \
              summed over the test's steps (the FDP statistics log's counts, split by handle). 1 means the \
              handle's data never moved."
            .into(),
        svg,
    })
}
