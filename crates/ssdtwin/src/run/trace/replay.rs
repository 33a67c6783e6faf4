//! Replaying a trace on the device core: each request becomes a
//! [`Command`] submitted to a [`Device`] at its recorded time (open loop),
//! when a slot frees (closed loop), or with its recorded group once the
//! previous group has completed and the recorded gap, idle part capped,
//! has elapsed (dependent) or its recorded idle, capped, has passed since
//! that completion (think); the device's statistics window
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
use crate::run::device::{Completion, Device};
use crate::run::driver::{drive, Timer, Workload};
use crate::run::plids::Placements;
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
    if matches!(mode, ReplayMode::Dependent { .. } | ReplayMode::Think { .. }) && format == TraceFormat::Blkparse {
        // Groups come from completion events: a first pass tells whether
        // the trace has any (it stops at the first one paired).
        reader.set_blkparse_groups(has_completions(spec)?);
    }
    let capacity = device.drive().user_bytes();
    let mapper = Mapper::new(spec, format, capacity)?;
    let mut src = Source::new(reader, mapper, spec);
    if let (Some(p), Some(f)) = (&spec.placement, device.drive().ftl().fdp()) {
        // fio's default randseed.
        src.placement = Some(Box::new(Placements::new(p, f.model().placements(), 0x89)));
    }

    let start = device.now();
    device.begin_window(start);
    let mut t = Tally::default();
    let mut next_progress = start + 1_000_000_000;
    let tick = |now: u64| {
        if now >= next_progress {
            next_progress = now + 1_000_000_000;
            progress(now - start);
        }
    };
    match mode {
        ReplayMode::Closed { depth } => {
            drive(device, &mut Closed { src: &mut src, t: &mut t, tick, depth, done: false })?
        }
        ReplayMode::AsRecorded | ReplayMode::CappedIdle { .. } => {
            let cap = match mode {
                ReplayMode::CappedIdle { max_idle_ns } => Some(max_idle_ns),
                _ => None,
            };
            let scale = spec.time_scale;
            let mut w =
                Timed { src: &mut src, t: &mut t, tick, scale, cap, start, shift: 0, idle_from: start, next: None };
            drive(device, &mut w)?
        }
        ReplayMode::Dependent { max_idle_ns } | ReplayMode::Think { max_idle_ns } => {
            let mut w = Dependent {
                src: &mut src,
                t: &mut t,
                tick,
                time_scale: spec.time_scale,
                cap: max_idle_ns,
                after_completion: matches!(mode, ReplayMode::Think { .. }),
                start,
                group_at: start,
                group_recorded: 0,
                group_len: 0,
                next: None,
                at: None,
            };
            drive(device, &mut w)?
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
    /// Submit `cmd` now (a write with placement identifier `pid`, if
    /// any), counting it and whether it failed.
    fn submit(&mut self, device: &mut Device, (cmd, pid): (Command, Option<u32>)) {
        match pid {
            Some(pid) => device.submit_placed(cmd, pid, self.submitted as u32),
            None => device.submit(cmd, self.submitted as u32),
        };
        self.io_errors += device.drive().last_error().is_some() as u64;
        self.submitted += 1;
    }
}

/// Closed loop: `depth` requests outstanding, each issued as one completes.
struct Closed<'a, T> {
    src: &'a mut Source,
    t: &'a mut Tally,
    tick: T,
    depth: u32,
    done: bool,
}

impl<T: FnMut(u64)> Closed<'_, T> {
    /// Fill the queue to the depth; done when nothing is left outstanding.
    #[inline]
    fn fill(&mut self, device: &mut Device) -> Result<(), TraceError> {
        while device.outstanding() < self.depth {
            let Some((cmd, _, _)) = self.src.next(device)? else { break };
            let placed = self.src.placed(cmd);
            self.t.submit(device, placed);
        }
        self.t.max_outstanding = self.t.max_outstanding.max(device.outstanding());
        self.done = device.outstanding() == 0;
        Ok(())
    }
}

impl<T: FnMut(u64)> Workload for Closed<'_, T> {
    type Error = TraceError;

    fn start(&mut self, device: &mut Device) -> Result<(), TraceError> {
        self.fill(device)
    }

    #[inline]
    fn on_completion(&mut self, device: &mut Device, _: &Completion) -> Result<(), TraceError> {
        (self.tick)(device.now());
        self.fill(device)
    }

    fn on_timer(&mut self, device: &mut Device, _: Timer) -> Result<(), TraceError> {
        (self.tick)(device.now());
        self.fill(device)
    }

    #[inline]
    fn done(&self) -> bool {
        self.done
    }
}

/// Open loop at the recorded times (scaled by `scale`), with idle periods
/// capped at `cap` when given: each request is submitted when the clock
/// wakes at its time.
struct Timed<'a, T> {
    src: &'a mut Source,
    t: &'a mut Tally,
    tick: T,
    scale: f64,
    cap: Option<u64>,
    start: u64,
    /// Time removed by the cap so far.
    shift: u64,
    /// When the drive last had nothing outstanding.
    idle_from: u64,
    /// The next request and its time.
    next: Option<(Command, u64)>,
}

impl<T: FnMut(u64)> Timed<'_, T> {
    /// Read the next request and place it in time.
    #[inline]
    fn read(&mut self, device: &Device) -> Result<(), TraceError> {
        self.next = match self.src.next(device)? {
            None => None,
            Some((cmd, recorded, _)) => {
                let scaled = if self.scale == 1.0 { recorded } else { (recorded as f64 * self.scale).round() as u64 };
                self.t.scheduled_ns = self.t.scheduled_ns.max(scaled);
                Some((cmd, (self.start + scaled.saturating_sub(self.shift)).max(device.now())))
            }
        };
        Ok(())
    }
}

impl<T: FnMut(u64)> Workload for Timed<'_, T> {
    type Error = TraceError;

    fn start(&mut self, device: &mut Device) -> Result<(), TraceError> {
        self.read(device)
    }

    #[inline]
    fn on_completion(&mut self, device: &mut Device, c: &Completion) -> Result<(), TraceError> {
        if device.outstanding() == 0 {
            self.idle_from = c.done_ns;
        }
        Ok(())
    }

    fn on_timer(&mut self, _: &mut Device, _: Timer) -> Result<(), TraceError> {
        Ok(())
    }

    /// The request's time, or the end of the capped idle gap before it.
    #[inline]
    fn wake_at(&self, device: &Device) -> u64 {
        let Some((_, at)) = self.next else { return u64::MAX };
        match self.cap {
            Some(c) if device.outstanding() == 0 => at.min(self.idle_from + c).max(device.now()),
            _ => at,
        }
    }

    /// Submit the request (the idle cut short by the cap is removed from
    /// the times of the requests after it).
    #[inline]
    fn on_wake(&mut self, device: &mut Device) -> Result<(), TraceError> {
        let Some((cmd, at)) = self.next.take() else { return Ok(()) };
        let removed = at - device.now();
        self.shift += removed;
        self.t.idle_removed += removed;
        let placed = self.src.placed(cmd);
        self.t.submit(device, placed);
        self.t.max_outstanding = self.t.max_outstanding.max(device.outstanding());
        (self.tick)(device.now());
        self.read(device)
    }

    #[inline]
    fn done(&self) -> bool {
        self.next.is_none()
    }
}

/// Dependent replay: requests in groups, a group issued once the previous
/// one has completed and its recorded gap (idle part capped at `cap`) has
/// elapsed, or (`think`) its recorded idle, capped, after the previous
/// group's completion; times scaled by `time_scale`.
struct Dependent<'a, T> {
    src: &'a mut Source,
    t: &'a mut Tally,
    tick: T,
    time_scale: f64,
    cap: u64,
    /// `think`: a group's idle runs from the previous group's completion
    /// (otherwise its recorded gap runs from the previous group's start).
    after_completion: bool,
    start: u64,
    /// The current group: when it was issued, its recorded start and how
    /// many requests it has.
    group_at: u64,
    group_recorded: u64,
    group_len: u32,
    /// The next request, its recorded time (scaled) and, when it starts a
    /// group, the recorded idle before it.
    next: Option<(Command, u64, Option<u64>)>,
    /// When it is submitted (`None`: it starts a group and waits for the
    /// previous one to complete).
    at: Option<u64>,
}

impl<T: FnMut(u64)> Dependent<'_, T> {
    #[inline]
    fn scale(&self, x: u64) -> u64 {
        if self.time_scale == 1.0 {
            x
        } else {
            (x as f64 * self.time_scale).round() as u64
        }
    }

    /// Read the next request and place it in time (or wait for its
    /// group's predecessor).
    #[inline]
    fn read(&mut self, device: &Device) -> Result<(), TraceError> {
        let Some((cmd, recorded, mark)) = self.src.next(device)? else {
            self.next = None;
            return Ok(());
        };
        let recorded = self.scale(recorded);
        self.t.scheduled_ns = self.t.scheduled_ns.max(recorded);
        let idle = match mark {
            _ if self.t.groups == 0 => Some(0),
            GroupMark::Joins => None,
            GroupMark::Starts { idle_ns } => Some(self.scale(idle_ns)),
            GroupMark::Own => Some(recorded.saturating_sub(self.group_recorded)),
        };
        self.next = Some((cmd, recorded, idle));
        self.at = None;
        match idle {
            None => {
                self.group_len += 1;
                self.place(device, self.group_at + recorded.saturating_sub(self.group_recorded));
            }
            Some(_) if device.outstanding() > 0 => {}
            Some(idle) => self.begin_group(device, recorded, idle),
        }
        Ok(())
    }

    /// A new group, now that the previous one has completed: after its
    /// recorded gap (idle part capped) has elapsed.
    fn begin_group(&mut self, device: &Device, recorded: u64, idle: u64) {
        let gap = recorded.saturating_sub(self.group_recorded);
        let idle = idle.min(gap);
        self.t.idle_removed += idle - idle.min(self.cap);
        let at = if self.t.groups == 0 {
            self.start
        } else if self.after_completion {
            // Called once the previous group has completed: now.
            device.now().saturating_add(idle.min(self.cap))
        } else {
            self.group_at + gap - idle + idle.min(self.cap)
        };
        self.t.groups += 1;
        self.group_at = at.max(device.now());
        self.group_recorded = recorded;
        self.group_len = 1;
        self.place(device, self.group_at);
    }

    #[inline]
    fn place(&mut self, device: &Device, at: u64) {
        self.t.max_group = self.t.max_group.max(self.group_len);
        self.at = Some(at.max(device.now()));
    }
}

impl<T: FnMut(u64)> Workload for Dependent<'_, T> {
    type Error = TraceError;

    fn start(&mut self, device: &mut Device) -> Result<(), TraceError> {
        self.read(device)
    }

    #[inline]
    fn on_completion(&mut self, device: &mut Device, _: &Completion) -> Result<(), TraceError> {
        if self.at.is_none() && device.outstanding() == 0 {
            if let Some((_, recorded, Some(idle))) = self.next {
                self.begin_group(device, recorded, idle);
            }
        }
        Ok(())
    }

    fn on_timer(&mut self, device: &mut Device, _: Timer) -> Result<(), TraceError> {
        if self.at.is_none() && device.outstanding() == 0 {
            if let Some((_, recorded, Some(idle))) = self.next {
                self.begin_group(device, recorded, idle);
            }
        }
        Ok(())
    }

    #[inline]
    fn wake_at(&self, _: &Device) -> u64 {
        self.at.unwrap_or(u64::MAX)
    }

    #[inline]
    fn on_wake(&mut self, device: &mut Device) -> Result<(), TraceError> {
        let Some((cmd, _, _)) = self.next.take() else { return Ok(()) };
        let placed = self.src.placed(cmd);
        self.t.submit(device, placed);
        self.t.max_outstanding = self.t.max_outstanding.max(device.outstanding());
        (self.tick)(device.now());
        self.read(device)
    }

    #[inline]
    fn done(&self) -> bool {
        self.next.is_none()
    }
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
    /// fio's data placement options: the writes' placement identifiers.
    placement: Option<Box<Placements>>,
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
            placement: None,
        }
    }

    /// `cmd` with the placement identifier it carries (writes, with
    /// fio's placement options), chosen in submission order as fio
    /// chooses them.
    #[inline]
    fn placed(&mut self, cmd: Command) -> (Command, Option<u32>) {
        match &mut self.placement {
            Some(p) if cmd.kind == IoKind::Write => (cmd, Some(p.next(cmd.offset))),
            _ => (cmd, None),
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
