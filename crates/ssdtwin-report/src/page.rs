//! The HTML page: the header (suite, drive states, seed, tool version,
//! drive specs), then per test its scores as a table and its charts with
//! a "how to read this", filled into `templates/report.html` by minijinja
//! (which escapes every value; only the SVGs are inserted as they are).

use serde::Serialize;
use serde_json::Value;

use crate::charts::Chart;
use crate::model::{f, s, scores, Doc};
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

fn spec_rows(doc: &Doc) -> Vec<SpecRow> {
    let drives: Vec<&Value> = doc.root.get("drives").and_then(Value::as_array).map_or(vec![], |v| v.iter().collect());
    let p = |d: &Value, path: &str| d.pointer(&format!("/spec{path}")).and_then(Value::as_f64).unwrap_or(0.0);
    let row = |name: &'static str, get: &dyn Fn(&Value) -> String| SpecRow {
        name,
        values: drives.iter().map(|d| get(d)).collect(),
    };
    vec![
        row("Description", &|d| d.pointer("/spec/description").and_then(Value::as_str).unwrap_or("").to_string()),
        row("Capacity", &|d| gb(f(d, "user_capacity_bytes"))),
        row("Interface", &|d| {
            let h = d.pointer("/spec/host").unwrap_or(&Value::Null);
            if s(h, "interface") == "nvme" {
                format!("NVMe, PCIe {}.0 ×{}", f(h, "pcie_gen"), f(h, "pcie_lanes"))
            } else {
                s(h, "interface").to_uppercase()
            }
        }),
        row("Controller", &|d| {
            let model = d.pointer("/spec/controller/model").and_then(Value::as_str).unwrap_or("not stated");
            format!("{model}, {} cores", p(d, "/controller/cores"))
        }),
        row("NAND", &|d| {
            let bits = p(d, "/geometry/bits_per_cell") as u32;
            let cell = ["", "SLC", "MLC", "TLC", "QLC"].get(bits as usize).copied().unwrap_or("?");
            let part = d.pointer("/spec/nand/part").and_then(Value::as_str);
            let part = part.map_or(String::new(), |x| format!("{x}; "));
            format!("{part}{cell} ({bits} bit/cell), {} MT/s bus", p(d, "/nand/channel_mts"))
        }),
        row("Channels", &|d| format!("{}", p(d, "/geometry/channels"))),
        row("Dies", &|d| {
            let dies = p(d, "/geometry/channels") * p(d, "/geometry/dies_per_channel");
            format!("{dies} ({} planes each)", p(d, "/geometry/planes_per_die"))
        }),
        row("DRAM", &|d| match d.pointer("/spec/controller/dram_bytes").and_then(Value::as_f64) {
            None => "not stated".into(),
            Some(0.0) => "none (DRAM-less)".into(),
            Some(b) if b >= 1e9 => format!("{:.0} GB", b / 1073741824.0),
            Some(b) => format!("{:.0} MB", b / 1048576.0),
        }),
        row("Write buffer", &|d| {
            let bytes = p(d, "/controller/write_buffer_bytes");
            let size = if bytes >= 1048576.0 {
                format!("{:.0} MiB", bytes / 1048576.0)
            } else {
                format!("{:.0} KiB", bytes / 1024.0)
            };
            format!("{size}, {}", d.pointer("/spec/controller/write_cache").and_then(Value::as_str).unwrap_or(""))
        }),
        row("SLC cache", &|d| match d.pointer("/spec/slc_cache") {
            None | Some(Value::Null) => "none".into(),
            Some(c) => {
                let curve = c.get("capacity_curve").and_then(Value::as_array);
                let max = curve.map_or(0.0, |v| v.iter().filter_map(|p| p.get(1)?.as_f64()).fold(0.0, f64::max));
                format!("{} static, up to {} when empty; {}", gb(f(c, "static_bytes")), gb(max), s(c, "write_policy"))
            }
        }),
        row("Overrides", &|d| {
            let o: Vec<&str> = d
                .get("overrides")
                .and_then(Value::as_array)
                .map_or(vec![], |v| v.iter().filter_map(Value::as_str).collect());
            if o.is_empty() {
                "none".into()
            } else {
                o.join(", ")
            }
        }),
    ]
}

fn value_text(v: Option<f64>, unit: &str) -> String {
    v.map_or("—".into(), |x| format!("{} {unit}", crate::svg::num(x)))
}

/// Render the page; `charts[k]` are the charts of test `k`.
pub fn render(doc: &Doc, charts: &[Vec<Chart>]) -> Result<String, ReportError> {
    let root = doc.root;
    let opts = root.get("options").unwrap_or(&Value::Null);
    let suite = root.get("suite").unwrap_or(&Value::Null);
    let passes: Vec<PassRow> = root
        .get("passes")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|p| PassRow { name: s(p, "name").into(), description: s(p, "description").into() })
        .collect();
    let mut tests = Vec::new();
    for (t, chs) in doc.tests.iter().zip(charts) {
        let mut rows = Vec::new();
        let mut states: Vec<String> = Vec::new();
        for r in &doc.runs {
            let Some(res) = r.test(&t.name) else { continue };
            let prepared = res.pointer("/prep/0/size").and_then(Value::as_f64);
            let base = root.pointer(&format!("/passes/{}/base", r.pass)).and_then(Value::as_str);
            // A pass with a base state (the full drive) starts from it, not from the test's own data.
            let st = match base {
                Some(b) => format!("{} pass: {}", doc.passes[r.pass], state_words(b, None)),
                None => state_words(s(res, "state"), prepared),
            };
            let st =
                if doc.passes.len() > 1 && base.is_none() { format!("{} pass: {st}", doc.passes[r.pass]) } else { st };
            if !states.contains(&st) {
                states.push(st);
            }
            for sc in scores(res) {
                rows.push(ScoreRow {
                    drive: doc.drives[r.drive].clone(),
                    colour: colour(r.drive),
                    pass: doc.passes[r.pass].clone(),
                    label: s(sc, "label").into(),
                    value: value_text(sc.get("value").and_then(Value::as_f64), s(sc, "unit")),
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
    let scale = f(opts, "scale");
    let time_scale = f(opts, "time_scale");
    let only: Vec<&str> =
        opts.get("only").and_then(Value::as_array).map_or(vec![], |v| v.iter().filter_map(Value::as_str).collect());
    let ctx = minijinja::context! {
        version => s(root, "ssdtwin_version"),
        suite => minijinja::context! { name => s(suite, "name"), title => s(suite, "title"), source => s(suite, "source") },
        drive_names => doc.drives.join(", "),
        options => minijinja::context! {
            seed => opts.get("seed").map_or(String::new(), |v| v.to_string()),
            scale => scale,
            time_scale => time_scale,
            scaled => scale != 1.0 || time_scale != 1.0,
            only => only.join(", "),
            state => opts.get("state").and_then(Value::as_str).map(|st| state_words(st, None)),
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
