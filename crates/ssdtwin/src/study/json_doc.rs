//! Writing a result document whose per-second series are long, without
//! building those series as `serde_json::Value` trees.
//!
//! A run over simulated months keeps up to
//! [`crate::run::stats::MAX_SERIES_POINTS`] points per phase and again in
//! the run's overall series. As `Value`s (a sorted map per point) they
//! took several hundred bytes of heap per field, more than the drive's own
//! state for a small drive; written as a pretty string they were held
//! whole once more. Here the document is built as a small `Value` in which
//! each long series is a placeholder, and the series stay in their compact
//! typed form until written: the writer streams the document, turning each
//! placeholder into its points one at a time. The bytes are those
//! `serde_json::to_string_pretty` gives for the whole `Value` (each point
//! is itself written through a `Value`, so its keys are sorted).
//!
//! Leaves out: compact (non-pretty) output, which no writer here uses.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use crate::run::stats::Second;
use crate::study::record::SeriesPoint;

/// A series held back from the `Value` until written.
#[derive(Debug, Clone)]
pub enum LongArray {
    /// A phase's seconds.
    Seconds(Vec<Second>),
    /// A run's seconds, on the run's clock.
    Points(Vec<SeriesPoint>),
}

impl LongArray {
    fn len(&self) -> usize {
        match self {
            LongArray::Seconds(v) => v.len(),
            LongArray::Points(v) => v.len(),
        }
    }

    fn item(&self, i: usize) -> Value {
        fn value<T: Serialize>(x: &T) -> Value {
            serde_json::to_value(x).expect("series points serialise")
        }
        match self {
            LongArray::Seconds(v) => value(&v[i]),
            LongArray::Points(v) => value(&v[i]),
        }
    }
}

/// The long arrays of one document, and the placeholders that stand for
/// them in its `Value`.
#[derive(Debug, Clone, Default)]
pub struct Deferred {
    arrays: Vec<LongArray>,
}

/// A placeholder's text: a control character no result string holds,
/// then the array's index.
const MARK: &str = "\u{1}ssdtwin-long-array:";

impl Deferred {
    /// Hold `array` back; the returned placeholder goes where it belongs.
    pub fn defer(&mut self, array: LongArray) -> Value {
        self.arrays.push(array);
        Value::String(format!("{MARK}{}", self.arrays.len() - 1))
    }

    fn index_of(v: &Value) -> Option<usize> {
        v.as_str()?.strip_prefix(MARK)?.parse().ok()
    }

    /// The whole document as one `Value` (placeholders filled in), for
    /// callers that read it rather than write it.
    pub fn fill(&self, mut v: Value) -> Value {
        self.fill_in(&mut v);
        v
    }

    fn fill_in(&self, v: &mut Value) {
        if let Some(i) = Self::index_of(v) {
            *v = Value::Array((0..self.arrays[i].len()).map(|k| self.arrays[i].item(k)).collect());
            return;
        }
        match v {
            Value::Array(xs) => xs.iter_mut().for_each(|x| self.fill_in(x)),
            Value::Object(m) => m.values_mut().for_each(|x| self.fill_in(x)),
            _ => {}
        }
    }

    /// Write `doc` pretty-printed (two-space indents, a newline at the
    /// end) with each placeholder's array streamed in its place.
    pub fn write_pretty(&self, doc: &Value, w: &mut dyn Write) -> io::Result<()> {
        let head = serde_json::to_string_pretty(doc).map_err(io::Error::other)?;
        let quoted_mark = serde_json::to_string(MARK).map_err(io::Error::other)?;
        let quoted_mark = &quoted_mark[..quoted_mark.len() - 1]; // without the closing quote
        let mut rest = head.as_str();
        while let Some(at) = rest.find(quoted_mark) {
            let after = &rest[at + quoted_mark.len()..];
            let end = after.find('"').ok_or_else(|| io::Error::other("unterminated placeholder"))?;
            let i: usize = after[..end].parse().map_err(|_| io::Error::other("bad placeholder"))?;
            w.write_all(&rest.as_bytes()[..at])?;
            // The indentation of the line the placeholder is on.
            let line_start = head[..head.len() - rest.len() + at].rfind('\n').map_or(0, |n| n + 1);
            let indent = head[line_start..].bytes().take_while(|&b| b == b' ').count();
            self.write_array(&self.arrays[i], indent, w)?;
            rest = &after[end + 1..];
        }
        w.write_all(rest.as_bytes())?;
        w.write_all(b"\n")
    }

    fn write_array(&self, a: &LongArray, indent: usize, w: &mut dyn Write) -> io::Result<()> {
        if a.len() == 0 {
            return w.write_all(b"[]");
        }
        let inner = " ".repeat(indent + 2);
        w.write_all(b"[")?;
        for k in 0..a.len() {
            w.write_all(if k == 0 { b"\n" } else { b",\n" })?;
            let text = serde_json::to_string_pretty(&a.item(k)).map_err(io::Error::other)?;
            for (n, line) in text.split('\n').enumerate() {
                if n > 0 {
                    w.write_all(b"\n")?;
                }
                w.write_all(inner.as_bytes())?;
                w.write_all(line.as_bytes())?;
            }
        }
        w.write_all(b"\n")?;
        w.write_all(" ".repeat(indent).as_bytes())?;
        w.write_all(b"]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seconds(n: u64) -> Vec<Second> {
        (0..n)
            .map(|t| {
                let mut s = Second::default();
                s.t_s = t;
                s.write_ios = t * 3;
                s.waf = 1.0 + t as f64 / 7.0;
                s
            })
            .collect()
    }

    /// Streaming gives the bytes of pretty-printing the filled `Value`, at
    /// any depth, for empty and long arrays.
    #[test]
    fn streamed_bytes_equal_the_whole_values_pretty_print() {
        let mut d = Deferred::default();
        let doc = json!({
            "a": 1,
            "jobs": [{ "name": "x", "ssdtwin": { "time_series": d.defer(LongArray::Seconds(seconds(3))) } }],
            "empty": d.defer(LongArray::Seconds(vec![])),
            "overall": { "time_series": d.defer(LongArray::Seconds(seconds(2))), "z": "text \"quoted\"" },
        });
        let mut out = Vec::new();
        d.write_pretty(&doc, &mut out).unwrap();
        let whole = serde_json::to_string_pretty(&d.fill(doc)).unwrap() + "\n";
        assert_eq!(String::from_utf8(out).unwrap(), whole);
        assert!(whole.contains("\"write_ios\": 6"), "{whole}");
    }
}
