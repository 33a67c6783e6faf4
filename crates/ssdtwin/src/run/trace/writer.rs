//! Writing traces: converting between formats and recording the twin's
//! own jobs (every generator can be exported and replayed elsewhere).
//!
//! Requests are given in bytes and ns. Sector formats (MQSim, blkparse,
//! SPC addresses) take 512-byte sectors: an unaligned request is widened
//! to whole sectors and counted in [`TraceWriter::widened`]. Times are
//! written in the format's unit (MSR 100 ns, fio v3 µs, blkparse and SPC
//! seconds with nine and six decimals), truncated. fio v2 has no
//! timestamps: gaps of 100 µs or more become `wait` lines, as fio reads
//! them. Output is compressed when the file name ends in `.gz` or `.zst`.
//!
//! A file is written through a temporary beside it ([`crate::fsio`]),
//! put in place by [`TraceWriter::finish`]: a writer dropped unfinished
//! (an error, a panic) removes it, and an interrupted process leaves no
//! half-written trace.
//!
//! Requests a format cannot hold (trims and flushes in MQSim, MSR and
//! SPC) are dropped and counted in [`TraceWriter::dropped`].
//!
//! Left out: response times (MSR's column is written as 0) and a trace's
//! several devices (everything is written as device 0, disk 0, ASU 0 or
//! `8,0`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::{TraceFormat, TraceOp};
use crate::error::TraceError;
use crate::model::drive::IoKind;
use crate::run::device::Completion;

/// A generator is a source, not a format a trace can be written in.
fn not_synthetic(format: TraceFormat) -> Result<(), TraceError> {
    if format == TraceFormat::Synthetic {
        return Err(TraceError::Option {
            option: "--to synthetic".into(),
            reason: "a synthetic generator is a source; write its trace as mqsim, msr, blkparse, fio-v2, fio-v3 or spc"
                .into(),
        });
    }
    Ok(())
}

/// Where a trace goes.
enum Sink {
    Plain(BufWriter<File>),
    Gzip(flate2::write::GzEncoder<BufWriter<File>>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<File>>),
    Other(Box<dyn Write>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(buf),
            Sink::Gzip(w) => w.write(buf),
            Sink::Zstd(w) => w.write(buf),
            Sink::Other(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.flush(),
            Sink::Zstd(w) => w.flush(),
            Sink::Other(w) => w.flush(),
        }
    }
}

impl Sink {
    /// Finish the compressed stream (if any) and flush everything.
    fn close(self) -> std::io::Result<()> {
        match self {
            Sink::Plain(mut w) => w.flush(),
            Sink::Gzip(w) => w.finish()?.flush(),
            Sink::Zstd(w) => w.finish()?.flush(),
            Sink::Other(mut w) => w.flush(),
        }
    }
}

/// The temporary a file is written to until it is put in place; removed
/// when dropped before.
struct Pending {
    tmp: PathBuf,
    installed: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.installed {
            crate::fsio::remove_temp(&self.tmp);
        }
    }
}

/// A trace being written.
pub struct TraceWriter {
    file: String,
    /// Files: the temporary written until [`TraceWriter::finish`].
    pending: Option<Pending>,
    out: Sink,
    format: TraceFormat,
    written: u64,
    widened: u64,
    dropped: u64,
    last_us: u64,
}

impl std::fmt::Debug for TraceWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceWriter").field("file", &self.file).field("format", &self.format).finish()
    }
}

impl TraceWriter {
    /// Create `path` (compressed if it ends in `.gz` or `.zst`; written
    /// through a temporary beside it until [`TraceWriter::finish`]) and
    /// write the format's header, if it has one.
    pub fn create(path: &str, format: TraceFormat) -> Result<TraceWriter, TraceError> {
        not_synthetic(format)?;
        let io = |e: std::io::Error| TraceError::Io { file: path.to_string(), message: e.to_string() };
        if Path::new(path).file_name().is_none() {
            return Err(io(std::io::Error::other("no file name")));
        }
        let tmp = crate::fsio::temp_beside(Path::new(path));
        let created = crate::fsio::create_temp(&tmp).map_err(io)?;
        let pending = Pending { tmp, installed: false };
        let file = BufWriter::with_capacity(256 * 1024, created);
        let out = if path.ends_with(".gz") {
            Sink::Gzip(flate2::write::GzEncoder::new(file, flate2::Compression::default()))
        } else if path.ends_with(".zst") {
            Sink::Zstd(zstd::stream::write::Encoder::new(file, 3).map_err(io)?)
        } else {
            Sink::Plain(file)
        };
        let mut w = TraceWriter::new(path, out, format)?;
        w.pending = Some(pending);
        Ok(w)
    }

    /// Write to any writer; `name` is used in messages.
    pub fn to_writer(name: &str, out: Box<dyn Write>, format: TraceFormat) -> Result<TraceWriter, TraceError> {
        TraceWriter::new(name, Sink::Other(out), format)
    }

    fn new(name: &str, out: Sink, format: TraceFormat) -> Result<TraceWriter, TraceError> {
        not_synthetic(format)?;
        let mut w = TraceWriter {
            file: name.to_string(),
            pending: None,
            out,
            format,
            written: 0,
            widened: 0,
            dropped: 0,
            last_us: 0,
        };
        let header = match format {
            TraceFormat::FioV2 => "fio version 2 iolog\nssdtwin add\nssdtwin open\n",
            TraceFormat::FioV3 => "fio version 3 iolog\n0 ssdtwin add\n0 ssdtwin open\n",
            _ => "",
        };
        w.out.write_all(header.as_bytes()).map_err(|e| w.io(e))?;
        Ok(w)
    }

    fn io(&self, e: std::io::Error) -> TraceError {
        TraceError::Io { file: self.file.clone(), message: e.to_string() }
    }

    /// Requests written.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Requests widened to whole 512-byte sectors.
    pub fn widened(&self) -> u64 {
        self.widened
    }

    /// Requests dropped because the format cannot hold them.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Write one request: `op` at byte `offset`, `len` bytes, issued at
    /// `time_ns` from the trace's start.
    pub fn write(&mut self, time_ns: u64, op: TraceOp, offset: u64, len: u64) -> Result<(), TraceError> {
        let (sector, sectors) = (offset / 512, (offset + len).div_ceil(512) - offset / 512);
        let sector_format = matches!(self.format, TraceFormat::Mqsim | TraceFormat::Blkparse | TraceFormat::Spc);
        if sector_format && (offset % 512 != 0 || len % 512 != 0) {
            self.widened += 1;
        }
        let r = match (self.format, op) {
            (TraceFormat::Mqsim, TraceOp::Read | TraceOp::Write) => {
                writeln!(self.out, "{time_ns} 0 {sector} {sectors} {}", if op == TraceOp::Write { 0 } else { 1 })
            }
            (TraceFormat::Msr, TraceOp::Read | TraceOp::Write) => writeln!(
                self.out,
                "{},ssdtwin,0,{},{offset},{len},0",
                time_ns / 100,
                if op == TraceOp::Write { "Write" } else { "Read" }
            ),
            (TraceFormat::Spc, TraceOp::Read | TraceOp::Write) => writeln!(
                self.out,
                "0,{sector},{},{},{}.{:06}",
                sectors * 512,
                if op == TraceOp::Write { "w" } else { "r" },
                time_ns / 1_000_000_000,
                time_ns % 1_000_000_000 / 1000
            ),
            (TraceFormat::Blkparse, _) => {
                let rwbs = match op {
                    TraceOp::Read => "R",
                    TraceOp::Write => "W",
                    TraceOp::Trim => "D",
                    TraceOp::Flush => "FN",
                };
                let secs = format!("{}.{:09}", time_ns / 1_000_000_000, time_ns % 1_000_000_000);
                if op == TraceOp::Flush {
                    writeln!(self.out, "  8,0    0 {:>8} {secs:>14}     0  Q {rwbs:>3} [ssdtwin]", self.written + 1)
                } else {
                    writeln!(
                        self.out,
                        "  8,0    0 {:>8} {secs:>14}     0  Q {rwbs:>3} {sector} + {sectors} [ssdtwin]",
                        self.written + 1
                    )
                }
            }
            (TraceFormat::FioV2 | TraceFormat::FioV3, _) => {
                let action = match op {
                    TraceOp::Read => "read",
                    TraceOp::Write => "write",
                    TraceOp::Trim => "trim",
                    TraceOp::Flush => "sync",
                };
                let us = time_ns / 1000;
                if self.format == TraceFormat::FioV3 {
                    self.last_us = self.last_us.max(us);
                    writeln!(self.out, "{us} ssdtwin {action} {offset} {len}")
                } else {
                    let gap = us.saturating_sub(self.last_us);
                    if gap >= 100 {
                        self.last_us = us;
                        writeln!(self.out, "ssdtwin wait {gap} 0")
                            .and_then(|_| writeln!(self.out, "ssdtwin {action} {offset} {len}"))
                    } else {
                        writeln!(self.out, "ssdtwin {action} {offset} {len}")
                    }
                }
            }
            _ => {
                self.dropped += 1;
                return Ok(());
            }
        };
        r.map_err(|e| self.io(e))?;
        self.written += 1;
        Ok(())
    }

    /// Write the commands of a device's log
    /// ([`crate::run::device::Device::log_commands`]) in submission order,
    /// with times from `origin_ns`: the twin's own job as a trace.
    pub fn write_log(&mut self, log: &mut [Completion], origin_ns: u64) -> Result<(), TraceError> {
        log.sort_unstable_by_key(|c| c.seq);
        for c in log.iter() {
            let op = match c.cmd.kind {
                IoKind::Read => TraceOp::Read,
                IoKind::Write => TraceOp::Write,
                IoKind::Trim => TraceOp::Trim,
            };
            self.write(c.submitted_ns.saturating_sub(origin_ns), op, c.cmd.offset, c.cmd.len as u64)?;
        }
        Ok(())
    }

    /// Write the format's trailer, flush and close (compressed output is
    /// finished here).
    pub fn finish(mut self) -> Result<(), TraceError> {
        if matches!(self.format, TraceFormat::FioV2 | TraceFormat::FioV3) {
            let r = if self.format == TraceFormat::FioV3 {
                writeln!(self.out, "{} ssdtwin close", self.last_us)
            } else {
                writeln!(self.out, "ssdtwin close")
            };
            r.map_err(|e| self.io(e))?;
        }
        let file = self.file;
        self.out.close().map_err(|e| TraceError::Io { file: file.clone(), message: e.to_string() })?;
        if let Some(mut p) = self.pending {
            p.installed = true;
            crate::fsio::install(&p.tmp, Path::new(&file))
                .map_err(|e| TraceError::Io { file, message: e.to_string() })?;
        }
        Ok(())
    }
}
