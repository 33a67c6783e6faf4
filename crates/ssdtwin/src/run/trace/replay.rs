//! Replaying a trace on the device core: each request becomes a
//! [`Command`] submitted to a [`Device`] at its recorded time (open loop),
//! when a slot frees (closed loop), or with its recorded group once the
//! previous group has completed and the recorded gap, idle part capped,
//! has elapsed (dependent); the device's statistics window
//! gives the same [`PhaseResult`] as a closed-loop fio-style phase, plus
//! the trace's own statistics ([`TraceSummary`]).
//!
//! The loop allocates nothing per request: the reader reuses one line
//! buffer, the device its in-flight slots. The clock never goes back: a
//! request whose recorded time is earlier than the previous one's (out
//! of order) is issued at once.
//!
//! Left out: host-side queue limits (in open loop, every request is
//! submitted at its time however many are outstanding; the drive's host
//! interface makes the excess wait, and that wait counts in latency, as
//! a trace replayer such as fio's `read_iolog` with a deep queue sees it).

use serde::Serialize;

use super::address::Mapper;
use super::{GroupMark, ReplayMode, TraceFormat, TraceOp, TraceReader, TraceSpec, TraceStats};
use crate::error::TraceError;
use crate::model::drive::{Command, IoKind};
use crate::run::device::{Device, Event};
use crate::run::sim::PhaseResult;
use crate::run::workload::generator::LOOKAHEAD;
use crate::run::workload::Phase;

/// What a replay did, beyond the drive's statistics.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayCounts {
    /// Trace file.
    pub file: String,
    /// Its format.
    pub format: TraceFormat,
    /// `gzip`, `zstd` or `none`.
    pub compression: &'static str,
    /// Timing used.
    pub mode: ReplayMode,
    /// Recorded times were multiplied by this.
    pub time_scale: f64,
    /// Commands submitted to the drive.
    pub submitted: u64,
    /// Idle time removed by `capped-idle` or `dependent`, ns (for
    /// `dependent`, the recorded idle beyond the cap).
    pub idle_removed_ns: u64,
    /// `dependent`: groups issued (0 in the other modes).
    pub groups: u64,
    /// `dependent`: most requests in one group.
    pub max_group: u32,
    /// Most commands outstanding at once.
    pub max_outstanding: u32,
    /// Commands the drive failed (media errors on reads, writes to a
    /// read-only drive): what the traced host would see as I/O errors.
    pub io_errors: u64,
    /// Recorded duration times the time scale (first to last request),
    /// ns (0 in closed loop).
    pub scheduled_ns: u64,
    /// Simulated duration (first submission to last completion), ns.
    pub simulated_ns: u64,
    /// `--lba-scale`: the factor capacity / span applied to addresses
    /// (`None`: addresses as recorded).
    pub address_scale: Option<f64>,
    /// Lines of the file read.
    pub lines: u64,
}

/// A replayed trace: what the replay did and the trace's statistics (in
/// drive byte addresses, after mapping).
#[derive(Debug, Clone)]
pub struct TraceSummary {
    /// Replay counts.
    pub replay: ReplayCounts,
    /// Trace statistics.
    pub stats: TraceStats,
}

impl TraceSummary {
    /// As JSON: the replay counts and the statistics.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.replay).expect("counts serialise");
        v["stats"] = self.stats.to_json();
        v
    }

    /// The lines the run summary adds for the trace phase `p` (whose
    /// summary this is).
    pub fn summary_lines(&self, p: &PhaseResult) -> String {
        let r = &self.replay;
        let lat_sum: u128 = p.dirs.iter().map(|d| d.lat_sum_ns).sum();
        let mean_qd = if r.simulated_ns > 0 { lat_sum as f64 / r.simulated_ns as f64 } else { 0.0 };
        let s = &self.stats;
        let mut out = format!(
            "  trace: {} requests ({} reads, {} writes, {} trims), {:.1}% sequential, footprint {}\n",
            s.requests,
            s.ios[0],
            s.ios[1],
            s.ios[2],
            100.0 * s.sequential_fraction(),
            super::stats::gb(s.footprint_bytes)
        );
        out.push_str(&format!(
            "         recorded {:.3} s{}, simulated {:.3} s, max {} outstanding, mean QD {:.2}\n",
            s.recorded_ns as f64 / 1e9,
            if r.time_scale != 1.0 {
                format!(" (×{} = {:.3} s)", r.time_scale, r.scheduled_ns as f64 / 1e9)
            } else {
                String::new()
            },
            r.simulated_ns as f64 / 1e9,
            r.max_outstanding,
            mean_qd
        ));
        if r.io_errors > 0 {
            out.push_str(&format!(
                "         I/O errors: {} commands failed (media errors, read-only drive)\n",
                r.io_errors
            ));
        }
        if r.groups > 0 {
            out.push_str(&format!(
                "         dependent: {} groups, largest {} requests, {:.1} per group\n",
                r.groups,
                r.max_group,
                r.submitted as f64 / r.groups as f64
            ));
        }
        if r.idle_removed_ns > 0 {
            out.push_str(&format!("         idle removed by the cap: {:.3} s\n", r.idle_removed_ns as f64 / 1e9));
        }
        let k = &s.skipped;
        if k.flush + k.zero_length + k.other_device > 0 {
            out.push_str(&format!(
                "         skipped: {} flushes/syncs (not modelled), {} zero-length, {} of other devices\n",
                k.flush, k.zero_length, k.other_device
            ));
        }
        if s.out_of_order > 0 {
            out.push_str(&format!("         {} requests out of time order (issued at once)\n", s.out_of_order));
        }
        out
    }
}

/// Replay `spec` on `device` from its current time, as one statistics
/// window. `progress` is called about once per simulated second with the
/// time since the start, ns.
pub fn replay(device: &mut Device, spec: &TraceSpec, progress: &mut dyn FnMut(u64)) -> Result<PhaseResult, TraceError> {
    if !(spec.time_scale.is_finite() && spec.time_scale > 0.0) {
        return Err(TraceError::Option {
            option: format!("--time-scale {}", spec.time_scale),
            reason: "must be a number above 0".into(),
        });
    }
    let mut reader = TraceReader::open(&spec.file, spec.format)?;
    reader.set_blkparse_dispatch(spec.blkparse_dispatch);
    let format = reader.format();
    let mode = spec.mode_for(format);
    if matches!(mode, ReplayMode::Dependent { .. }) && format == TraceFormat::Blkparse {
        // Groups come from completion events: a first pass tells whether
        // the trace has any (it stops at the first one paired).
        reader.set_blkparse_groups(has_completions(spec)?);
    }
    let capacity = device.drive().user_bytes();
    let mapper = Mapper::new(spec, format, capacity)?;
    let mut src = Source::new(reader, mapper, spec);

    let start = device.now();
    device.begin_window(start);
    let mut t = Tally::default();
    let mut next_progress = start + 1_000_000_000;
    let mut tick = |now: u64| {
        if now >= next_progress {
            next_progress = now + 1_000_000_000;
            progress(now - start);
        }
    };
    match mode {
        ReplayMode::Closed { depth } => replay_closed(device, &mut src, depth, &mut t, &mut tick)?,
        ReplayMode::AsRecorded | ReplayMode::CappedIdle { .. } => {
            let cap = match mode {
                ReplayMode::CappedIdle { max_idle_ns } => Some(max_idle_ns),
                _ => None,
            };
            replay_timed(device, &mut src, spec.time_scale, cap, &mut t, &mut tick)?
        }
        ReplayMode::Dependent { max_idle_ns } => {
            replay_dependent(device, &mut src, spec.time_scale, max_idle_ns, &mut t, &mut tick)?
        }
    }
    while device.outstanding() > 0 {
        device.next_event();
    }
    let end = device.now();
    let w = device.end_window(end);
    src.requests.stats.finish();
    let lines = src.requests.reader.lines();
    let compression = src.requests.reader.compression();
    let replay = ReplayCounts {
        file: spec.file.clone(),
        format,
        compression,
        mode,
        time_scale: spec.time_scale,
        submitted: t.submitted,
        idle_removed_ns: t.idle_removed,
        groups: t.groups,
        max_group: t.max_group,
        max_outstanding: t.max_outstanding,
        io_errors: t.io_errors,
        scheduled_ns: t.scheduled_ns,
        simulated_ns: end - start,
        address_scale: src.requests.mapper.scale.map(|(n, d)| n as f64 / d as f64),
        lines,
    };
    let mut r = PhaseResult::from_window(Phase::Trace(spec.clone()), w);
    r.trace = Some(Box::new(TraceSummary { replay, stats: src.requests.stats }));
    Ok(r)
}

/// What a replay counts as it goes.
#[derive(Default)]
struct Tally {
    max_outstanding: u32,
    submitted: u64,
    io_errors: u64,
    idle_removed: u64,
    scheduled_ns: u64,
    groups: u64,
    max_group: u32,
}

impl Tally {
    /// Submit `cmd` now, counting it and whether it failed.
    fn submit(&mut self, device: &mut Device, cmd: Command) {
        device.submit(cmd, self.submitted as u32);
        self.io_errors += device.drive().last_error().is_some() as u64;
        self.submitted += 1;
    }
}

/// Closed loop: `depth` requests outstanding, each issued as one completes.
fn replay_closed(
    device: &mut Device,
    src: &mut Source,
    depth: u32,
    t: &mut Tally,
    tick: &mut dyn FnMut(u64),
) -> Result<(), TraceError> {
    loop {
        while device.outstanding() < depth {
            let Some((cmd, _, _)) = src.next(device)? else { break };
            t.submit(device, cmd);
        }
        t.max_outstanding = t.max_outstanding.max(device.outstanding());
        if device.outstanding() == 0 {
            return Ok(());
        }
        device.next_event();
        tick(device.now());
    }
}

/// Open loop at the recorded times (scaled by `scale`), with idle periods
/// capped at `cap` when given.
fn replay_timed(
    device: &mut Device,
    src: &mut Source,
    scale: f64,
    cap: Option<u64>,
    t: &mut Tally,
    tick: &mut dyn FnMut(u64),
) -> Result<(), TraceError> {
    let start = device.now();
    // Time removed by the cap so far, and when the drive last had
    // nothing outstanding.
    let mut shift = 0u64;
    let mut idle_from = start;
    while let Some((cmd, recorded, _)) = src.next(device)? {
        let scaled = if scale == 1.0 { recorded } else { (recorded as f64 * scale).round() as u64 };
        t.scheduled_ns = t.scheduled_ns.max(scaled);
        let at = (start + scaled.saturating_sub(shift)).max(device.now());
        loop {
            let target = match cap {
                Some(c) if device.outstanding() == 0 => at.min(idle_from + c).max(device.now()),
                _ => at,
            };
            match device.advance_until(target) {
                Some(Event::Completion(c)) => {
                    if device.outstanding() == 0 {
                        idle_from = c.done_ns;
                    }
                }
                Some(Event::Timer(_)) => {}
                None => {
                    shift += at - target;
                    t.idle_removed += at - target;
                    break;
                }
            }
        }
        t.submit(device, cmd);
        t.max_outstanding = t.max_outstanding.max(device.outstanding());
        tick(device.now());
    }
    Ok(())
}

/// Dependent replay: requests in groups, a group issued once the previous
/// one has completed and its recorded gap (idle part capped at `cap`) has
/// elapsed; times scaled by `time_scale`.
fn replay_dependent(
    device: &mut Device,
    src: &mut Source,
    time_scale: f64,
    cap: u64,
    t: &mut Tally,
    tick: &mut dyn FnMut(u64),
) -> Result<(), TraceError> {
    let start = device.now();
    let scale = |x: u64| if time_scale == 1.0 { x } else { (x as f64 * time_scale).round() as u64 };
    // The current group: when it was issued, its recorded start
    // and how many requests it has.
    let mut group_at = start;
    let mut group_recorded = 0u64;
    let mut group_len = 0u32;
    while let Some((cmd, recorded, mark)) = src.next(device)? {
        let recorded = scale(recorded);
        t.scheduled_ns = t.scheduled_ns.max(recorded);
        let idle = match mark {
            _ if t.groups == 0 => Some(0),
            GroupMark::Joins => None,
            GroupMark::Starts { idle_ns } => Some(scale(idle_ns)),
            GroupMark::Own => Some(recorded.saturating_sub(group_recorded)),
        };
        let at = match idle {
            None => {
                group_len += 1;
                group_at + recorded.saturating_sub(group_recorded)
            }
            Some(idle) => {
                // A new group: after the previous one has
                // completed and its recorded gap (idle part
                // capped) has elapsed.
                while device.outstanding() > 0 {
                    device.next_event();
                }
                let gap = recorded.saturating_sub(group_recorded);
                let idle = idle.min(gap);
                t.idle_removed += idle - idle.min(cap);
                let at = if t.groups == 0 { start } else { group_at + gap - idle + idle.min(cap) };
                t.groups += 1;
                group_at = at.max(device.now());
                group_recorded = recorded;
                group_len = 1;
                group_at
            }
        };
        t.max_group = t.max_group.max(group_len);
        let at = at.max(device.now());
        while device.advance_until(at).is_some() {}
        t.submit(device, cmd);
        t.max_outstanding = t.max_outstanding.max(device.outstanding());
        tick(device.now());
    }
    Ok(())
}

/// The trace's requests as drive commands, skipped ones counted, read
/// [`LOOKAHEAD`] commands ahead so that the map entries they will touch
/// can be requested from memory before they are needed (as the
/// closed-loop driver does): same commands, same order.
struct Source {
    requests: Requests,
    ring: [(Command, u64, GroupMark); LOOKAHEAD],
    head: usize,
    len: usize,
    exhausted: bool,
}

impl Source {
    fn new(reader: TraceReader, mapper: Mapper, spec: &TraceSpec) -> Source {
        let none = (Command { kind: IoKind::Read, offset: 0, len: 0 }, 0, GroupMark::Own);
        Source {
            requests: Requests::new(reader, mapper, spec),
            ring: [none; LOOKAHEAD],
            head: 0,
            len: 0,
            exhausted: false,
        }
    }

    /// The next command to replay, its recorded time, ns, and its group;
    /// hints the drive about the commands that follow.
    #[inline]
    fn next(&mut self, device: &Device) -> Result<Option<(Command, u64, GroupMark)>, TraceError> {
        while self.len < LOOKAHEAD && !self.exhausted {
            match self.requests.read()? {
                Some(c) => {
                    self.ring[(self.head + self.len) % LOOKAHEAD] = c;
                    self.len += 1;
                }
                None => self.exhausted = true,
            }
        }
        if self.len == 0 {
            return Ok(None);
        }
        let c = self.ring[self.head];
        self.head = (self.head + 1) % LOOKAHEAD;
        self.len -= 1;
        if self.len > 0 {
            let drive = device.drive();
            drive.prefetch_map(self.ring[(self.head + self.len - 1) % LOOKAHEAD].0);
            drive.prefetch_update(self.ring[(self.head + (self.len - 1) / 2) % LOOKAHEAD].0);
        }
        Ok(Some(c))
    }
}

/// A trace's requests as drive commands, in file order: other devices'
/// requests, flushes and empty requests skipped (and counted), addresses
/// mapped, at most the spec's `max_requests`. Replay and aging
/// ([`super::LoopedTrace`]) read their commands through it.
pub(super) struct Requests {
    pub(super) reader: TraceReader,
    pub(super) mapper: Mapper,
    max_requests: Option<u64>,
    device: Option<u64>,
    pub(super) stats: TraceStats,
    taken: u64,
}

impl Requests {
    pub(super) fn new(reader: TraceReader, mapper: Mapper, spec: &TraceSpec) -> Requests {
        Requests {
            reader,
            mapper,
            max_requests: spec.max_requests,
            device: spec.device,
            stats: TraceStats::default(),
            taken: 0,
        }
    }

    /// The next command of the file. A request that is not replayed
    /// (a flush, zero length) passes its group start on to the next.
    #[inline]
    pub(super) fn read(&mut self) -> Result<Option<(Command, u64, GroupMark)>, TraceError> {
        let mut carried: Option<GroupMark> = None;
        loop {
            if self.max_requests.is_some_and(|m| self.taken >= m) {
                return Ok(None);
            }
            let Some(req) = self.reader.next_request()? else { return Ok(None) };
            if self.device.is_some_and(|d| d != req.device) {
                self.stats.skipped.other_device += 1;
                continue;
            }
            let kind = match req.op {
                TraceOp::Read => IoKind::Read,
                TraceOp::Write => IoKind::Write,
                TraceOp::Trim => IoKind::Trim,
                TraceOp::Flush => {
                    self.stats.record(TraceOp::Flush, 0, 0, req.time_ns, None);
                    carried = carried.or(starts(req.group));
                    continue;
                }
            };
            let len = self.mapper.len_bytes(&req);
            if len == 0 {
                self.stats.record(req.op, 0, 0, req.time_ns, None);
                carried = carried.or(starts(req.group));
                continue;
            }
            let offset = self.mapper.map(&req, len, self.reader.file())?;
            self.stats.record(req.op, offset, len, req.time_ns, req.response_ns);
            self.taken += 1;
            let group = match (carried, req.group) {
                (Some(g), GroupMark::Joins) => g,
                (_, g) => g,
            };
            return Ok(Some((Command { kind, offset, len: len as u32 }, req.time_ns, group)));
        }
    }
}

/// The group start a skipped request marks, to pass on.
fn starts(g: GroupMark) -> Option<GroupMark> {
    matches!(g, GroupMark::Starts { .. }).then_some(g)
}

/// Whether `spec`'s blkparse trace has completion events paired with its
/// replayed requests (read up to the first such pair).
fn has_completions(spec: &TraceSpec) -> Result<bool, TraceError> {
    let mut r = TraceReader::open(&spec.file, Some(TraceFormat::Blkparse))?;
    r.set_blkparse_dispatch(spec.blkparse_dispatch);
    while r.next_request()?.is_some() {
        if r.paired_response_ns().is_some() {
            return Ok(true);
        }
    }
    Ok(r.paired_response_ns().is_some())
}
