//! Block-trace replay: recorded workloads (MQSim, MSR Cambridge / SNIA
//! IOTTA, blkparse, fio iologs, SPC / UMass) driving the device core.
//!
//! ```text
//!  FILE(.gz|.zst) ──► TraceReader (streamed, one line buffer, format auto-detected)
//!                 ──► AddressMap (sector size, offset, out-of-range policy)
//!                 ──► replay (as-recorded | capped-idle | dependent | closed:QD, time scale)
//!                 ──► Device::submit / advance_until ──► PhaseResult + TraceStats
//! ```
//!
//! - [`TraceReader`] reads a trace lazily, line by line, from a plain,
//!   gzip or zstd file (told by its first bytes, not its name); memory
//!   does not grow with the trace's length. The format is told from the
//!   first request line unless given ([`TraceFormat`]). Every malformed
//!   line is a [`TraceError::Parse`] naming the file, the line and the
//!   field. A synthetic generator ([`synth`], e.g.
//!   `atsb-destroyer-synthetic` or a generator `.toml` file) is read
//!   through the same reader: its requests are drawn one at a time.
//! - [`ReplayMode`]: `as-recorded` issues each request at its recorded
//!   time (open loop: when the drive is slower than the recorded one,
//!   requests queue up inside it and their latency includes the wait);
//!   `capped-idle:MS` is as recorded, but a gap during which nothing is
//!   outstanding lasts at most MS (AnandTech's Storage Bench caps idle
//!   time at 25 ms); `dependent:MS` keeps the recorded concurrency: the
//!   requests outstanding together when recorded ([`GroupMark`]) are
//!   issued together, each group once the previous has completed and
//!   the recorded gap (its idle part capped at MS) has elapsed;
//!   `closed:QD` keeps QD requests outstanding, in trace order, ignoring
//!   the timestamps. `time_scale` multiplies recorded times.
//! - [`AddressMap`]: byte address = sector × sector size + offset; a request
//!   beyond the drive is an error unless wrapped (`--lba-wrap`: modulo the
//!   capacity) or scaled (`--lba-scale`: the trace's span, found by a
//!   first pass over the file, mapped onto the capacity in 1 MiB chunks,
//!   sequential runs kept contiguous).
//! - Requests are passed to the drive as recorded, unaligned or smaller
//!   than 4 KiB included: the drive reads every 4 KiB page a request
//!   touches and maps every page a write touches (a partial-page write
//!   rewrites the whole page; the read of the old data that a real drive's
//!   read-modify-write needs is not modelled), and a trim only
//!   deallocates whole pages. Statistics count the trace's bytes.
//!
//! Left out: flushes and syncs (counted, not replayed: the modelled
//! write buffer is power-safe), several devices or files of one trace
//! (they all address the one drive unless one is selected with
//! `device`), blkparse's completion events (only queue or dispatch events
//! are replayed; `trace stats` pairs them with their requests by device
//! and sector for the recorded queue depth, and under `dependent` for
//! the groups), fio's iolog file actions (add/open/close) and the
//! recorded response times beyond grouping (reported in the trace
//! statistics; `dependent` uses them only to tell the groups).

mod address;
pub mod copy;
mod formats;
mod looped;
pub mod options;
mod reader;
pub mod replay;
pub mod stats;
pub mod synth;
mod writer;

pub use address::SCALE_CHUNK_BYTES;
pub use formats::MAX_REQUEST_BYTES;
pub use looped::LoopedTrace;
pub use reader::TraceReader;
pub use replay::{replay, ReplayCounts, TraceSummary};
pub use stats::TraceStats;
pub use writer::TraceWriter;

use serde::{Deserialize, Serialize};

use crate::error::TraceError;

/// The trace formats understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// MQSim's ASCII trace: `arrival_ns device lba size_in_sectors type`
    /// (type 0 write, 1 read), 512-byte sectors.
    Mqsim,
    /// MSR Cambridge / SNIA IOTTA CSV: `Timestamp,Hostname,DiskNumber,
    /// Type,Offset,Size,ResponseTime` (Windows FILETIME in 100 ns,
    /// byte offsets and sizes).
    Msr,
    /// blkparse's default text output: `maj,min cpu seq time pid action
    /// rwbs sector + count [process]` (seconds.nanoseconds, 512-byte
    /// sectors).
    Blkparse,
    /// fio's iolog version 2 (`filename action offset length`, no
    /// timestamps; `wait` actions add µs between requests).
    FioV2,
    /// fio's iolog version 3 (`timestamp filename action offset length`,
    /// timestamps in µs since the start, as fio writes them).
    FioV3,
    /// SPC / UMass trace repository: `ASU,LBA,Size,Opcode,Timestamp`
    /// (512-byte sectors, bytes, r/w, seconds).
    Spc,
    /// A synthetic generator ([`synth`]): byte addresses and lengths, ns.
    /// Not a file format: it is never detected and cannot be written.
    Synthetic,
}

impl TraceFormat {
    /// Every format, in the order detection tries them.
    pub const ALL: [TraceFormat; 6] = [
        TraceFormat::FioV2,
        TraceFormat::FioV3,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::Mqsim,
    ];

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::FioV2 => "fio-v2",
            TraceFormat::FioV3 => "fio-v3",
            TraceFormat::Spc => "spc",
            TraceFormat::Synthetic => "synthetic",
        }
    }

    /// Parse a name (also `fio`, which means "the version the header
    /// says", and `umass` for `spc`).
    pub fn parse(s: &str) -> Option<TraceFormat> {
        Some(match s.to_ascii_lowercase().as_str() {
            "mqsim" => TraceFormat::Mqsim,
            "msr" | "msr-cambridge" | "snia" | "iotta" => TraceFormat::Msr,
            "blkparse" | "blktrace" => TraceFormat::Blkparse,
            "fio-v2" | "fio2" => TraceFormat::FioV2,
            "fio-v3" | "fio3" | "fio" => TraceFormat::FioV3,
            "spc" | "umass" => TraceFormat::Spc,
            _ => return None,
        })
    }

    /// Names for messages.
    pub fn known() -> String {
        TraceFormat::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    }

    /// Whether the format records when each request was issued (fio's
    /// version 2 does not: its requests replay closed loop by default).
    pub fn timed(self) -> bool {
        !matches!(self, TraceFormat::FioV2)
    }

    /// Bytes per address unit of the format (its sector, or 1 for byte
    /// addresses).
    pub fn default_sector_bytes(self) -> u64 {
        match self {
            TraceFormat::Mqsim | TraceFormat::Blkparse | TraceFormat::Spc => 512,
            TraceFormat::Msr | TraceFormat::FioV2 | TraceFormat::FioV3 | TraceFormat::Synthetic => 1,
        }
    }
}

/// Byte offset and length of `req`, a request of a `format` trace read
/// with `sector_bytes` per address unit (`None`: the format's): the
/// offset of [`AddressMap`] and the drive's capacity are not applied.
pub fn byte_extent(format: TraceFormat, sector_bytes: Option<u64>, req: &TraceRequest) -> (u64, u64) {
    let sector = sector_bytes.unwrap_or(format.default_sector_bytes());
    let len = if matches!(format, TraceFormat::Mqsim | TraceFormat::Blkparse) {
        req.len.saturating_mul(sector)
    } else {
        req.len
    };
    (req.address.saturating_mul(sector), len)
}

/// Open the trace of `spec` with its reading options (format, blkparse
/// events).
pub fn open(spec: &TraceSpec) -> Result<TraceReader, TraceError> {
    let mut r = TraceReader::open(&spec.file, spec.format)?;
    r.set_blkparse_dispatch(spec.blkparse_dispatch);
    Ok(r)
}

/// Each request of `spec`'s trace that its device selection and request
/// limit keep, with its byte extent (see [`byte_extent`]), in order;
/// skipped requests are counted in `stats`.
pub fn for_each_request(
    spec: &TraceSpec,
    stats: &mut TraceStats,
    mut f: impl FnMut(&TraceRequest, u64, u64) -> Result<(), TraceError>,
) -> Result<TraceReader, TraceError> {
    let mut r = open(spec)?;
    let format = r.format();
    let mut n = 0u64;
    while let Some(req) = r.next_request()? {
        if spec.device.is_some_and(|d| d != req.device) {
            stats.skipped.other_device += 1;
            continue;
        }
        if spec.max_requests.is_some_and(|m| n >= m) {
            stats.skipped.over_limit += 1;
            continue;
        }
        n += 1;
        let (offset, len) = byte_extent(format, spec.address.sector_bytes, &req);
        if len > formats::MAX_REQUEST_BYTES {
            // Only a --sector-size larger than the format's gets here.
            return Err(TraceError::Parse {
                file: r.file().to_string(),
                line: req.line,
                field: "size",
                reason: format!("{len} bytes with --sector-size: requests must be shorter than 4 GiB"),
            });
        }
        f(&req, offset, len)?;
    }
    Ok(r)
}

/// The statistics of `spec`'s trace (what `ssdtwin trace stats` prints),
/// in one streamed pass.
pub fn trace_stats(spec: &TraceSpec) -> Result<(TraceFormat, TraceStats), TraceError> {
    let mut stats = TraceStats::default();
    let mut inner = TraceStats::default();
    let r = for_each_request(spec, &mut stats, |req, offset, len| {
        inner.record(req.op, offset, len, req.time_ns, req.response_ns);
        Ok(())
    })?;
    inner.finish();
    if let Some((sum, _)) = r.paired_response_ns() {
        // blkparse: the time from each request to its completion event.
        inner.response_sum_ns = Some(sum);
    }
    inner.skipped.other_device = stats.skipped.other_device;
    inner.skipped.over_limit = stats.skipped.over_limit;
    Ok((r.format(), inner))
}

/// Convert `spec`'s trace to `to` in the file `out` (compressed when its
/// name ends in `.gz` or `.zst`); returns the writer's counts (written,
/// widened, dropped) and the source format.
pub fn convert(spec: &TraceSpec, out: &str, to: TraceFormat) -> Result<(TraceFormat, [u64; 3]), TraceError> {
    let mut w = TraceWriter::create(out, to)?;
    let mut stats = TraceStats::default();
    let r = for_each_request(spec, &mut stats, |req, offset, len| w.write(req.time_ns, req.op, offset, len))?;
    let counts = [w.written(), w.widened(), w.dropped()];
    w.finish()?;
    Ok((r.format(), counts))
}

/// What a trace request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceOp {
    /// Read.
    Read,
    /// Write.
    Write,
    /// Discard / trim / deallocate.
    Trim,
    /// Flush or sync: counted, not replayed.
    Flush,
}

/// One request of a trace, in the trace's own units converted to ns and
/// address units (see [`TraceFormat::default_sector_bytes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRequest {
    /// Issue time relative to the trace's first request, ns (0 for
    /// untimed formats, or the sum of fio v2's `wait`s).
    pub time_ns: u64,
    /// What it does.
    pub op: TraceOp,
    /// Address, in the format's units (sectors or bytes).
    pub address: u64,
    /// Length, in the format's units of *length* (sectors for MQSim and
    /// blkparse, bytes otherwise): see [`TraceRequest::len_bytes`].
    pub len: u64,
    /// Length in bytes.
    pub len_bytes: u64,
    /// Device, disk, ASU or (blkparse) `major << 20 | minor`.
    pub device: u64,
    /// Recorded response time, ns, if the format has one (MSR).
    pub response_ns: Option<u64>,
    /// Line in the file (1-based).
    pub line: u64,
    /// Where the request stands in the recorded dependency structure
    /// (for `dependent` replay).
    pub group: GroupMark,
}

/// A request's place in the trace's groups: the requests that were
/// outstanding together when it was recorded. A group ends when all its
/// requests have completed; the next request starts a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupMark {
    /// The format records no completions: the request is its own group
    /// (QD1 with think time), and the whole recorded gap before it
    /// counts as idle.
    Own,
    /// The request starts a group; `idle_ns` is the recorded time before
    /// it with nothing outstanding (its arrival minus the previous
    /// group's last recorded completion; 0 for the first request).
    Starts {
        /// Recorded idle before the group, ns.
        idle_ns: u64,
    },
    /// The request arrived while earlier requests of the current group
    /// were outstanding (recorded): it joins that group.
    Joins,
}

/// How requests are timed during replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum ReplayMode {
    /// Open loop: each request at its recorded time (times `time_scale`).
    AsRecorded,
    /// As recorded, but a gap with nothing outstanding lasts at most
    /// `max_idle_ns`.
    CappedIdle {
        /// Longest idle gap, ns.
        max_idle_ns: u64,
    },
    /// Closed loop: `depth` requests outstanding, trace order kept.
    Closed {
        /// Requests outstanding.
        depth: u32,
    },
    /// Dependent playback, as a trace playback tool that keeps the
    /// recorded ordering and concurrency: the requests are in groups
    /// ([`GroupMark`]); a group is issued once the previous group has
    /// completed and the recorded gap since the previous group's start
    /// has elapsed, the part of that gap with nothing outstanding capped
    /// at `max_idle_ns`; within a group, requests are issued at their
    /// recorded offsets from its first.
    Dependent {
        /// Longest idle part of a gap, ns.
        max_idle_ns: u64,
    },
    /// Dependent playback with the recorded think time: groups as in
    /// [`ReplayMode::Dependent`], but a group is issued the recorded idle
    /// before it (the part of the gap with nothing outstanding, capped at
    /// `max_idle_ns`) after the previous group has completed, so the
    /// drive's own time replaces the recorded drive's and the run lasts
    /// the trace's idle plus the time the drive kept it waiting (PCMark
    /// 8's playback, idle not compressed).
    Think {
        /// Longest idle, ns (`u64::MAX`: not capped).
        max_idle_ns: u64,
    },
}

impl ReplayMode {
    /// Parse `as-recorded`, `capped-idle:MS`, `dependent:MS`, `think:MS`
    /// (milliseconds, fractions allowed), `think` (idle not capped) or
    /// `closed:QD`.
    pub fn parse(s: &str) -> Result<ReplayMode, TraceError> {
        let bad = |reason: &str| TraceError::Option { option: format!("--replay {s}"), reason: reason.to_string() };
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        match (name, arg) {
            ("as-recorded", None) => Ok(ReplayMode::AsRecorded),
            ("capped-idle", Some(ms)) => {
                let ms: f64 =
                    ms.parse().map_err(|_| bad("the cap is a number of milliseconds, e.g. capped-idle:25"))?;
                if !(ms.is_finite() && ms >= 0.0) {
                    return Err(bad("the cap must be 0 ms or more"));
                }
                Ok(ReplayMode::CappedIdle { max_idle_ns: (ms * 1e6).round() as u64 })
            }
            ("dependent", Some(ms)) => {
                let ms: f64 = ms.parse().map_err(|_| bad("the cap is a number of milliseconds, e.g. dependent:25"))?;
                if !(ms.is_finite() && ms >= 0.0) {
                    return Err(bad("the cap must be 0 ms or more"));
                }
                Ok(ReplayMode::Dependent { max_idle_ns: (ms * 1e6).round() as u64 })
            }
            ("think", None) => Ok(ReplayMode::Think { max_idle_ns: u64::MAX }),
            ("think", Some(ms)) => {
                let ms: f64 = ms.parse().map_err(|_| bad("the cap is a number of milliseconds, e.g. think:25"))?;
                if !(ms.is_finite() && ms >= 0.0) {
                    return Err(bad("the cap must be 0 ms or more"));
                }
                Ok(ReplayMode::Think { max_idle_ns: (ms * 1e6).round() as u64 })
            }
            ("closed", Some(qd)) => match qd.parse::<u32>() {
                Ok(depth) if depth >= 1 => Ok(ReplayMode::Closed { depth }),
                _ => Err(bad("the queue depth is a whole number of at least 1, e.g. closed:32")),
            },
            _ => Err(bad("expected as-recorded, capped-idle:MS, dependent:MS, think[:MS] or closed:QD")),
        }
    }

    /// The spelling [`ReplayMode::parse`] reads.
    pub fn name(&self) -> String {
        match self {
            ReplayMode::AsRecorded => "as-recorded".into(),
            ReplayMode::CappedIdle { max_idle_ns } => format!("capped-idle:{}", *max_idle_ns as f64 / 1e6),
            ReplayMode::Closed { depth } => format!("closed:{depth}"),
            ReplayMode::Dependent { max_idle_ns } => format!("dependent:{}", *max_idle_ns as f64 / 1e6),
            ReplayMode::Think { max_idle_ns: u64::MAX } => "think".into(),
            ReplayMode::Think { max_idle_ns } => format!("think:{}", *max_idle_ns as f64 / 1e6),
        }
    }
}

/// What to do with a request beyond the drive's capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutOfRange {
    /// Stop with [`TraceError::OutOfRange`].
    #[default]
    Error,
    /// Byte address modulo the capacity (a request that would then cross
    /// the end is moved back to end at it).
    Wrap,
    /// Scale addresses by capacity / the trace's span (the largest end
    /// address in the trace, found by a first pass) in 1 MiB chunks: the
    /// chunk's index is scaled, the offset within it kept; a request that
    /// begins where the previous one of its kind ended in the trace
    /// continues it on the drive, so sequential runs stay sequential.
    Scale,
}

/// How trace addresses become byte offsets on the drive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressMap {
    /// Bytes per address unit (`None`: the format's, 512 or 1).
    pub sector_bytes: Option<u64>,
    /// Bytes added to every address (negative to remove a partition's
    /// start).
    pub offset: i64,
    /// Requests beyond the capacity.
    pub out_of_range: OutOfRange,
}

impl Default for AddressMap {
    fn default() -> AddressMap {
        AddressMap { sector_bytes: None, offset: 0, out_of_range: OutOfRange::Error }
    }
}

/// A trace phase: which file, how to read it and how to replay it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSpec {
    /// Phase name.
    pub name: String,
    /// Trace file (plain, `.gz` or `.zst`).
    pub file: String,
    /// Format (`None`: told from the content).
    pub format: Option<TraceFormat>,
    /// Timing (`None`: `as-recorded` for timed formats, `closed:1` for
    /// fio's untimed version 2).
    pub mode: Option<ReplayMode>,
    /// Recorded times are multiplied by this (0.5 = twice as fast).
    pub time_scale: f64,
    /// Addresses.
    pub address: AddressMap,
    /// Replay only the requests of this device / disk / ASU (blkparse:
    /// `major << 20 | minor`); `None`: all.
    pub device: Option<u64>,
    /// blkparse: replay dispatch (`D`) events instead of queue (`Q`)
    /// events.
    pub blkparse_dispatch: bool,
    /// Stop after this many requests replayed (`None`: the whole trace).
    pub max_requests: Option<u64>,
    /// fio's data placement options (`fdp=1`, `plids`, `plid_select`,
    /// `dp_scheme`): the placement identifiers the replayed writes carry,
    /// chosen as fio chooses them for an iolog's writes (no trace format
    /// has a placement field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Box<crate::run::workload::Placement>>,
}

impl TraceSpec {
    /// A phase replaying `file` with every default (format told from the
    /// content, timing as recorded, addresses as recorded).
    pub fn new(name: &str, file: &str) -> TraceSpec {
        TraceSpec {
            name: name.to_string(),
            file: file.to_string(),
            format: None,
            mode: None,
            time_scale: 1.0,
            address: AddressMap::default(),
            device: None,
            blkparse_dispatch: false,
            max_requests: None,
            placement: None,
        }
    }

    /// The replay mode used for a trace of `format`.
    pub fn mode_for(&self, format: TraceFormat) -> ReplayMode {
        self.mode.unwrap_or(if format.timed() { ReplayMode::AsRecorded } else { ReplayMode::Closed { depth: 1 } })
    }
}
