//! SVG primitives: escaping, number formatting, "nice" axis ticks, the
//! drive palette and a plot frame (axes with labelled ticks and units).
//!
//! Everything is written as text with fixed precision, so the same data
//! always gives the same bytes. The SVGs carry their own `font-family`
//! and colours, so the separate files look like the inline ones.

use std::fmt::Write;

/// Chart width in px (fits a laptop screen with margins).
pub const WIDTH: f64 = 760.0;

/// Colours of the drives, in order (colour-blind-safe, Okabe–Ito).
const PALETTE: &[&str] = &["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];

/// Colour of drive `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escape text for XML and HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A value for a label: few significant digits, no exponent.
pub fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 || a == 0.0 || (a >= 1.0 && x.fract() == 0.0) {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A time in µs in the unit that reads best (log-axis labels).
pub fn us_label(us: f64) -> String {
    if us >= 1e6 {
        format!("{} s", num(us / 1e6))
    } else if us >= 1e3 {
        format!("{} ms", num(us / 1e3))
    } else {
        format!("{} µs", num(us))
    }
}

/// Coordinates with two decimals (enough at screen resolution).
pub fn c(x: f64) -> String {
    format!("{x:.2}")
}

/// Ticks 0..=max (or min..=max) at 1, 2 or 5 × 10^k steps.
pub fn ticks(min: f64, max: f64, want: usize) -> Vec<f64> {
    let span = (max - min).max(1e-12);
    let raw = span / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let first = (min / step).floor() as i64;
    let last = (max / step).ceil() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Labels of evenly spaced ticks, all with the decimals the step needs.
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let step = if ticks.len() > 1 { (ticks[1] - ticks[0]).abs() } else { 1.0 };
    let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize };
    ticks.iter().map(|t| format!("{t:.decimals$}")).collect()
}

/// Decades covering `[min, max]` (for log axes).
pub fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    // At least a factor of 2 below the smallest value, so that its bar shows.
    let lo = (min / 2.0).max(1e-9).log10().floor() as i32;
    let hi = max.max(min * 10.0).log10().ceil() as i32;
    (lo..=hi).map(|e| 10f64.powi(e)).collect()
}

/// How the y axis maps values.
#[derive(Clone, Copy)]
pub enum YScale {
    /// Linear from the first to the last tick.
    Linear,
    /// Log10 from the first to the last tick.
    Log,
}

/// A plot area with axes.
pub struct Frame {
    /// Total height in px.
    pub height: f64,
    /// Left edge of the plot area.
    pub left: f64,
    /// Right edge of the plot area.
    pub right: f64,
    /// Top edge of the plot area.
    pub top: f64,
    /// Bottom edge of the plot area.
    pub bottom: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    yscale: YScale,
}

impl Frame {
    /// A frame of `height` px, plot area from `top` and `left`, with x in `[x0, x1]` and y in `[y0, y1]`.
    pub fn new(height: f64, top: f64, left: f64, (x0, x1): (f64, f64), (y0, y1): (f64, f64), yscale: YScale) -> Frame {
        Frame { height, left, right: WIDTH - 20.0, top, bottom: height - 46.0, x0, x1, y0, y1, yscale }
    }

    /// x in px.
    pub fn x(&self, v: f64) -> f64 {
        let span = (self.x1 - self.x0).max(1e-12);
        self.left + (v - self.x0) / span * (self.right - self.left)
    }

    /// y in px.
    pub fn y(&self, v: f64) -> f64 {
        let f = match self.yscale {
            YScale::Linear => (v - self.y0) / (self.y1 - self.y0).max(1e-12),
            YScale::Log => {
                let (a, b) = (self.y0.log10(), self.y1.log10());
                (v.max(self.y0).log10() - a) / (b - a).max(1e-12)
            }
        };
        self.bottom - f * (self.bottom - self.top)
    }

    /// Horizontal grid lines and y tick labels, the y axis title.
    pub fn y_axis(&self, out: &mut String, ticks: &[f64], title: &str) {
        let labels = match self.yscale {
            YScale::Linear => tick_labels(ticks),
            YScale::Log => ticks.iter().map(|t| us_label(*t)).collect(),
        };
        for (&t, label) in ticks.iter().zip(labels) {
            let y = self.y(t);
            let _ = write!(
                out,
                r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
                c(self.left),
                c(self.right),
                c(self.left - 6.0),
                c(y + 4.0),
                label,
                y = c(y)
            );
        }
        let _ = write!(
            out,
            r#"<text transform="translate(14,{}) rotate(-90)" text-anchor="middle" class="axis">{}</text>"#,
            c((self.top + self.bottom) / 2.0),
            esc(title)
        );
    }

    /// x tick labels at given positions, and the x axis title.
    pub fn x_axis(&self, out: &mut String, ticks: &[(f64, String)], title: &str) {
        let _ = write!(
            out,
            r##"<line x1="{l}" y1="{b}" x2="{r}" y2="{b}" stroke="#444"/><line x1="{l}" y1="{t}" x2="{l}" y2="{b}" stroke="#444"/>"##,
            l = c(self.left),
            r = c(self.right),
            b = c(self.bottom),
            t = c(self.top)
        );
        // Label every k-th tick when labels would run into each other
        // (about 7 px per character at 12 px).
        let spacing = ticks.windows(2).map(|w| (self.x(w[1].0) - self.x(w[0].0)).abs()).fold(f64::MAX, f64::min);
        let widest = ticks.iter().map(|(_, l)| l.chars().count()).max().unwrap_or(0) as f64 * 7.0 + 6.0;
        let every = if spacing < f64::MAX && spacing > 0.0 { (widest / spacing).ceil().max(1.0) as usize } else { 1 };
        for (i, (v, label)) in ticks.iter().enumerate() {
            let x = c(self.x(*v));
            let _ = write!(
                out,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#444"/>"##,
                c(self.bottom),
                c(self.bottom + 4.0)
            );
            if i % every == 0 {
                let _ = write!(
                    out,
                    r#"<text x="{x}" y="{}" text-anchor="middle">{}</text>"#,
                    c(self.bottom + 17.0),
                    esc(label)
                );
            }
        }
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" class="axis">{}</text>"#,
            c((self.left + self.right) / 2.0),
            c(self.height - 8.0),
            esc(title)
        );
    }
}

/// Open an SVG document with the chart's kind and its number of data
/// points as data attributes (tests and scripts read them).
pub fn open(kind: &str, height: f64, points: usize, title: &str) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{kind}" data-points="{points}" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="12" role="img"><title>{t}</title><style>.axis{{font-weight:600}}</style><rect width="{w}" height="{h}" fill="#fff"/><text x="10" y="20" font-size="14" font-weight="600">{t}</text>"##,
        w = WIDTH,
        h = height,
        t = esc(title)
    )
}

/// Legend entries (colour, dashed, label) from the left, wrapping;
/// returns the height in px the legend takes.
pub fn legend(out: &mut String, entries: &[(String, bool, String)]) -> f64 {
    let (x0, mut x, mut y) = (60.0, 60.0, 40.0);
    for (col, dashed, label) in entries {
        let w = 34.0 + 6.6 * label.chars().count() as f64;
        if x + w > WIDTH - 10.0 && x > x0 {
            x = x0;
            y += 18.0;
        }
        let dash = if *dashed { r#" stroke-dasharray="5 3""# } else { "" };
        let _ = write!(
            out,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{col}" stroke-width="3"{dash}/><text x="{}" y="{}">{}</text>"#,
            c(x),
            c(y),
            c(x + 20.0),
            c(y),
            c(x + 24.0),
            c(y + 4.0),
            esc(label)
        );
        x += w;
    }
    y - 40.0 + 18.0
}

/// Height the legend of `entries` takes (as [`legend`] draws it).
pub fn legend_height(entries: &[(String, bool, String)]) -> f64 {
    let mut probe = String::new();
    legend(&mut probe, entries)
}
