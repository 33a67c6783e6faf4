//! The HTML page: the header (suite, drive states, seed, tool version,
//! drive specs), then per test its scores as a table and its charts with
//! a "how to read this", filled into `templates/report.html` by minijinja
//! (which escapes every value; only the SVGs are inserted as they are).

use serde::Serialize;
use ssdtwin::study::record::DriveRecord;

use crate::charts::Chart;
use crate::model::Doc;
use crate::svg::colour;
use crate::ReportError;

const TEMPLATE: &str = include_str!("../templates/report.html");

#[derive(Serialize)]
struct DriveCol {
    name: String,
    colour: &'static str,
}

#[derive(Serialize)]
struct SpecRow {
    name: &'static str,
    values: Vec<String>,
}

#[derive(Serialize)]
struct PassRow {
    name: String,
    description: String,
}

#[derive(Serialize)]
struct ScoreRow {
    drive: String,
    colour: &'static str,
    pass: String,
    label: String,
    value: String,
}

#[derive(Serialize)]
struct ChartView<'a> {
    title: &'a str,
    how: &'a str,
    file: &'a str,
    svg: String,
}

#[derive(Serialize)]
struct TestView<'a> {
    name: &'a str,
    title: &'a str,
    state: String,
    score_rows: Vec<ScoreRow>,
    charts: Vec<ChartView<'a>>,
}

fn gb(bytes: f64) -> String {
    if bytes >= 1e12 {
        format!("{:.2} TB", bytes / 1e12)
    } else {
        format!("{:.1} GB", bytes / 1e9)
    }
}

/// A drive state as the suite writes it, in words; `actual` is the size
/// of the test data as prepared (after scaling), when known.
pub fn state_words(st: &str, actual: Option<f64>) -> String {
    let size = |x: &str| actual.map(gb).unwrap_or_else(|| x.parse::<f64>().map_or(x.to_string(), gb));
    match st.split_once(':') {
        Some(("data", n)) => format!("holding {} of test data", size(n)),
        Some(("fragmented", n)) => format!("{} of test data, each 4 KiB rewritten once at random", size(n)),
        None if st == "data" => "holding the test data".into(),
        None if st == "fresh" => "secure-erased".into(),
        None if st == "full" => "full (100% written sequentially)".into(),
        _ => st.to_string(),
    }
}

/// An enum's name as the drive file spells it.
fn spelled<T: Serialize>(x: &T) -> String {
    serde_json::to_value(x).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn spec_rows(doc: &Doc) -> Vec<SpecRow> {
    let drives: Vec<&DriveRecord> = doc.root.drives.iter().collect();
    let row = |name: &'static str, get: &dyn Fn(&DriveRecord) -> String| SpecRow {
        name,
        values: drives.iter().map(|d| get(d)).collect(),
    };
    let num = |x: Option<u32>| x.map_or("0".to_string(), |v| v.to_string());
    vec![
        row("Description", &|d| d.spec.description.clone()),
        row("Capacity", &|d| gb(d.user_capacity_bytes as f64)),
        row("Interface", &|d| {
            let h = &d.spec.host;
            let interface = spelled(&h.interface);
            if interface == "nvme" {
                format!("NVMe, PCIe {}.0 ×{}", num(h.pcie_gen), num(h.pcie_lanes))
            } else {
                interface.to_uppercase()
            }
        }),
        row("Controller", &|d| {
            let c = &d.spec.controller;
            format!("{}, {} cores", c.model.as_deref().unwrap_or("not stated"), c.cores)
        }),
        row("NAND", &|d| {
            let bits = d.spec.geometry.bits_per_cell;
            let cell = ["", "SLC", "MLC", "TLC", "QLC"].get(bits as usize).copied().unwrap_or("?");
            let part = d.spec.nand.part.as_ref().map_or(String::new(), |x| format!("{x}; "));
            format!("{part}{cell} ({bits} bit/cell), {} MT/s bus", d.spec.nand.channel_mts)
        }),
        row("Channels", &|d| format!("{}", d.spec.geometry.channels)),
        row("Dies", &|d| {
            let g = &d.spec.geometry;
            format!("{} ({} planes each)", g.channels * g.dies_per_channel, g.planes_per_die)
        }),
        row("DRAM", &|d| match d.spec.controller.dram_bytes {
            None => "not stated".into(),
            Some(0) => "none (DRAM-less)".into(),
            Some(b) if b as f64 >= 1e9 => format!("{:.0} GB", b as f64 / 1073741824.0),
            Some(b) => format!("{:.0} MB", b as f64 / 1048576.0),
        }),
        row("Write buffer", &|d| {
            let bytes = d.spec.controller.write_buffer_bytes as f64;
            let size = if bytes >= 1048576.0 {
                format!("{:.0} MiB", bytes / 1048576.0)
            } else {
                format!("{:.0} KiB", bytes / 1024.0)
            };
            format!("{size}, {}", spelled(&d.spec.controller.write_cache))
        }),
        row("SLC cache", &|d| match &d.spec.slc_cache {
            None => "none".into(),
            Some(c) => {
                let max = c.capacity_curve.iter().map(|p| p[1]).fold(0.0, f64::max);
                format!(
                    "{} static, up to {} when empty; {}",
                    gb(c.static_bytes as f64),
                    gb(max),
                    spelled(&c.write_policy)
                )
            }
        }),
        row("Overrides", &|d| if d.overrides.is_empty() { "none".into() } else { d.overrides.join(", ") }),
    ]
}

fn value_text(v: Option<f64>, unit: &str) -> String {
    v.map_or("—".into(), |x| format!("{} {unit}", crate::svg::num(x)))
}

/// Render the page; `charts[k]` are the charts of test `k`.
pub fn render(doc: &Doc, charts: &[Vec<Chart>]) -> Result<String, ReportError> {
    let root = doc.root;
    let opts = &root.options;
    let suite = &root.suite;
    let passes: Vec<PassRow> =
        root.passes.iter().map(|p| PassRow { name: p.name.clone(), description: p.description.clone() }).collect();
    let mut tests = Vec::new();
    for (t, chs) in doc.tests.iter().zip(charts) {
        let mut rows = Vec::new();
        let mut states: Vec<String> = Vec::new();
        for r in &doc.runs {
            let Some(res) = r.test(&t.name) else { continue };
            let prepared = res.prep.first().and_then(|p| p.size).map(|b| b as f64);
            let base = root.passes.get(r.pass).and_then(|p| p.base.as_deref());
            // A pass with a base state (the full drive) starts from it, not from the test's own data.
            let st = match base {
                Some(b) => format!("{} pass: {}", doc.passes[r.pass], state_words(b, None)),
                None => state_words(&res.state, prepared),
            };
            let st =
                if doc.passes.len() > 1 && base.is_none() { format!("{} pass: {st}", doc.passes[r.pass]) } else { st };
            if !states.contains(&st) {
                states.push(st);
            }
            for sc in &res.scores {
                rows.push(ScoreRow {
                    drive: doc.drives[r.drive].clone(),
                    colour: colour(r.drive),
                    pass: doc.passes[r.pass].clone(),
                    label: sc.label.clone(),
                    value: value_text(sc.value, &sc.unit),
                });
            }
        }
        let charts = chs
            .iter()
            .map(|ch| ChartView {
                title: &ch.title,
                how: &ch.how,
                file: &ch.file,
                // Inline SVG in HTML needs no namespace (and the page names no URL).
                svg: ch.svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1),
            })
            .collect();
        tests.push(TestView { name: &t.name, title: &t.title, state: states.join("; "), score_rows: rows, charts });
    }
    let (scale, time_scale) = (opts.scale, opts.time_scale);
    let ctx = minijinja::context! {
        version => &root.ssdtwin_version,
        suite => minijinja::context! { name => &suite.name, title => &suite.title, source => &suite.source },
        drive_names => doc.drives.join(", "),
        options => minijinja::context! {
            seed => opts.seed.to_string(),
            scale => scale,
            time_scale => time_scale,
            scaled => scale != 1.0 || time_scale != 1.0,
            only => opts.only.join(", "),
            state => opts.state.as_deref().map(|st| state_words(st, None)),
        },
        passes => passes,
        drives => doc.drives.iter().enumerate().map(|(i, n)| DriveCol { name: n.clone(), colour: colour(i) }).collect::<Vec<_>>(),
        spec_rows => spec_rows(doc),
        tests => tests,
    };
    let mut env = minijinja::Environment::new();
    env.add_template("report.html", TEMPLATE).map_err(|e| ReportError::Template(e.to_string()))?;
    let tmpl = env.get_template("report.html").map_err(|e| ReportError::Template(e.to_string()))?;
    tmpl.render(ctx).map_err(|e| ReportError::Template(e.to_string()))
}
