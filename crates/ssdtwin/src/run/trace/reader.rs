//! Reading a trace lazily: decompression told from the first bytes,
//! format told from the first request line, one reused line buffer.
//!
//! A synthetic generator (a built-in name such as
//! `atsb-destroyer-synthetic`, or a generator `.toml` file) is read
//! through the same interface: each request is drawn when asked for.
//!
//! Memory is the decompressor's window plus one line: it does not grow
//! with the trace. Lines that are not valid UTF-8, too long (over 64 KiB)
//! or malformed are errors naming the file and line.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use super::formats::{self, LineState};
use super::synth::{self, Generator};
use super::{GroupMark, TraceFormat, TraceRequest};
use crate::error::TraceError;

/// Longest line accepted, bytes.
const MAX_LINE: usize = 64 * 1024;

/// Read buffer of the file and of the decompressed stream.
const BUF_BYTES: usize = 256 * 1024;

/// A trace being read, one request at a time.
pub struct TraceReader {
    file: String,
    input: Box<dyn BufRead + Send>,
    line: Vec<u8>,
    line_no: u64,
    format: TraceFormat,
    /// The line in `line` (read while detecting) has not been parsed yet.
    pending: bool,
    state: LineState,
    /// Time of the first request, in the format's ticks.
    first_ticks: Option<u64>,
    ns_per_tick: u64,
    compression: &'static str,
    /// The generator, when the source is synthetic.
    synth: Option<Box<Generator>>,
    /// Formats with response times: the current group's last recorded
    /// completion, ns from the first request (`None` before the first).
    group_done_ns: Option<u64>,
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader").field("file", &self.file).field("format", &self.format).finish()
    }
}

impl TraceReader {
    /// Open `path` (plain, gzip or zstd, told from its first bytes) and
    /// tell its format from the content unless `format` is given.
    pub fn open(path: &str, format: Option<TraceFormat>) -> Result<TraceReader, TraceError> {
        if synth::is_generator(path) && (path.ends_with(".toml") || !std::path::Path::new(path).exists()) {
            if let Some(f) = format.filter(|&f| f != TraceFormat::Synthetic) {
                return Err(TraceError::Option {
                    option: format!("--trace-format {}", f.name()),
                    reason: format!("`{path}` is a synthetic generator, not a {} trace", f.name()),
                });
            }
            return Ok(TraceReader::synthetic(path, Generator::open(path)?));
        }
        let io = |e: std::io::Error| TraceError::Io { file: path.to_string(), message: e.to_string() };
        let file = File::open(path).map_err(io)?;
        let mut raw = BufReader::with_capacity(BUF_BYTES, file);
        let magic = raw.fill_buf().map_err(io)?;
        let (input, compression): (Box<dyn BufRead + Send>, &'static str) = if magic.starts_with(&[0x1f, 0x8b]) {
            (Box::new(BufReader::with_capacity(BUF_BYTES, flate2::bufread::MultiGzDecoder::new(raw))), "gzip")
        } else if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            let dec = zstd::stream::read::Decoder::with_buffer(raw).map_err(io)?;
            (Box::new(BufReader::with_capacity(BUF_BYTES, dec)), "zstd")
        } else {
            (Box::new(raw), "none")
        };
        let mut r = TraceReader::from_reader(path, input, format)?;
        r.compression = compression;
        Ok(r)
    }

    /// Read the requests a generator draws; `name` is used in messages.
    pub fn synthetic(name: &str, generator: Generator) -> TraceReader {
        TraceReader {
            file: name.to_string(),
            input: Box::new(std::io::empty()),
            line: Vec::new(),
            line_no: 0,
            format: TraceFormat::Synthetic,
            pending: false,
            state: LineState::default(),
            first_ticks: None,
            ns_per_tick: 1,
            compression: "none",
            synth: Some(Box::new(generator)),
            group_done_ns: None,
        }
    }

    /// The highest byte address a source can touch when it is known
    /// without reading it (a generator's span), for `--lba-scale`.
    pub fn known_span(&self) -> Option<u64> {
        self.synth.as_ref().map(|g| g.span())
    }

    /// Read a trace from any buffered reader; `name` is used in messages.
    pub fn from_reader(
        name: &str,
        input: Box<dyn BufRead + Send>,
        format: Option<TraceFormat>,
    ) -> Result<TraceReader, TraceError> {
        let mut r = TraceReader {
            file: name.to_string(),
            input,
            line: Vec::with_capacity(256),
            line_no: 0,
            format: format.unwrap_or(TraceFormat::Mqsim),
            pending: false,
            state: LineState::default(),
            first_ticks: None,
            ns_per_tick: 1,
            compression: "none",
            synth: None,
            group_done_ns: None,
        };
        // The first meaningful line tells the format (and for fio, its
        // version).
        let mut found = false;
        while r.read_line()? {
            if !is_blank(r.text()?) {
                found = true;
                break;
            }
        }
        let detected = if found { formats::detect(r.text()?) } else { None };
        let fmt = match (format, detected) {
            // fio's header gives the version.
            (Some(TraceFormat::FioV2 | TraceFormat::FioV3), Some(d @ (TraceFormat::FioV2 | TraceFormat::FioV3))) => d,
            (Some(f @ (TraceFormat::FioV2 | TraceFormat::FioV3)), _) if found => {
                let reason = format!(
                    "expected `fio version 2 iolog` or `fio version 3 iolog` as the first line of a {} trace",
                    f.name()
                );
                return Err(r.parse_err("header", reason));
            }
            (Some(f), _) => f,
            (None, Some(d)) => d,
            (None, None) => {
                let reason = if found {
                    format!("line {} is `{}`", r.line_no, r.text()?.trim().chars().take(80).collect::<String>())
                } else {
                    "the file holds no request".to_string()
                };
                return Err(TraceError::UnknownFormat { file: r.file.clone(), reason, known: TraceFormat::known() });
            }
        };
        r.format = fmt;
        r.ns_per_tick = formats::ns_per_tick(fmt);
        // fio's header is not a request; any other first line is.
        r.pending = found && !matches!(fmt, TraceFormat::FioV2 | TraceFormat::FioV3);
        Ok(r)
    }

    /// The trace's format.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The file name given.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// `gzip`, `zstd` or `none`.
    pub fn compression(&self) -> &'static str {
        self.compression
    }

    /// blkparse: replay dispatch (`D`) events instead of queue (`Q`)
    /// events.
    pub fn set_blkparse_dispatch(&mut self, on: bool) {
        self.state.blkparse_dispatch = on;
    }

    /// blkparse: mark each request's group from the completion events
    /// (see [`GroupMark`]); off, every request is its own group.
    pub fn set_blkparse_groups(&mut self, on: bool) {
        self.state.blkparse_groups = on;
    }

    /// blkparse: Σ (completion − queue time) over the requests paired with
    /// their completion (`C`) event so far, ns, and how many; `None` for
    /// other formats or when no completion was paired.
    pub fn paired_response_ns(&self) -> Option<(u128, u64)> {
        (self.format == TraceFormat::Blkparse && self.state.blkparse_paired > 0)
            .then_some((self.state.blkparse_response_sum_ns, self.state.blkparse_paired))
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.line_no
    }

    /// The next request, `None` at the end of the trace.
    pub fn next_request(&mut self) -> Result<Option<TraceRequest>, TraceError> {
        if let Some(g) = &mut self.synth {
            let Some(r) = g.next_request() else { return Ok(None) };
            self.line_no += 1;
            return Ok(Some(TraceRequest {
                time_ns: r.time_ns,
                op: r.op,
                address: r.offset,
                len: r.len,
                len_bytes: r.len,
                device: 0,
                response_ns: None,
                line: self.line_no,
                group: r.group,
            }));
        }
        loop {
            if self.pending {
                self.pending = false;
            } else if !self.read_line()? {
                return Ok(None);
            }
            let Ok(text) = std::str::from_utf8(&self.line) else {
                return Err(self.parse_err("line", "not valid UTF-8 text".into()));
            };
            if is_blank(text) {
                continue;
            }
            let raw = match formats::parse_line(self.format, text, &mut self.state) {
                Ok(Some(raw)) => raw,
                Ok(None) => continue,
                Err((field, reason)) => return Err(self.parse_err(field, reason)),
            };
            let first = *self.first_ticks.get_or_insert(raw.ticks);
            let time_ns = raw.ticks.saturating_sub(first).saturating_mul(self.ns_per_tick);
            let group = match (raw.group, raw.response_ns) {
                (Some(g), _) => g,
                (None, Some(response)) => self.group_by_response(time_ns, response),
                (None, None) => GroupMark::Own,
            };
            return Ok(Some(TraceRequest {
                time_ns,
                op: raw.op,
                address: raw.address,
                len: raw.len,
                len_bytes: raw.len_bytes,
                device: raw.device,
                response_ns: raw.response_ns,
                line: self.line_no,
                group,
            }));
        }
    }

    /// The group of a request arriving at `time_ns` whose recorded
    /// response time is `response_ns`: it joins the current group when it
    /// arrived before the group's last recorded completion.
    fn group_by_response(&mut self, time_ns: u64, response_ns: u64) -> GroupMark {
        let done = time_ns.saturating_add(response_ns);
        match self.group_done_ns {
            Some(end) if time_ns < end => {
                self.group_done_ns = Some(end.max(done));
                GroupMark::Joins
            }
            prev => {
                self.group_done_ns = Some(done);
                GroupMark::Starts { idle_ns: prev.map_or(0, |end| time_ns - end) }
            }
        }
    }

    /// Read the next line into the buffer; false at the end.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.line.clear();
        let n = (&mut self.input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut self.line).map_err(|e| {
            TraceError::Io { file: self.file.clone(), message: format!("line {}: {e}", self.line_no + 1) }
        })?;
        if n == 0 {
            return Ok(false);
        }
        self.line_no += 1;
        if self.line.len() > MAX_LINE {
            return Err(self.parse_err("line", format!("longer than {MAX_LINE} bytes")));
        }
        Ok(true)
    }

    fn text(&self) -> Result<&str, TraceError> {
        std::str::from_utf8(&self.line).map_err(|_| self.parse_err("line", "not valid UTF-8 text".into()))
    }

    fn parse_err(&self, field: &'static str, reason: String) -> TraceError {
        TraceError::Parse { file: self.file.clone(), line: self.line_no, field, reason }
    }
}

/// Blank or a `#` comment.
fn is_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}
