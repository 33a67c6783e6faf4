//! The device core: one drive, its virtual clock and its statistics, fed
//! one command at a time by any workload source.
//!
//! Every source of commands — the closed-loop fio-style driver
//! ([`crate::run::sim`]), an open-loop trace replay, concurrent jobs, a
//! network block device server or a Python caller stepping the twin — talks
//! to the drive through this one API:
//!
//! ```text
//!  source ──submit(cmd)──► Device ──► Drive (host → controller → FTL → flash)
//!         ◄─next_event()──  │  clock, in-flight commands, idle policy,
//!         ◄─advance_until()─┘  statistics window (latency, series, counters)
//! ```
//!
//! - [`Device::submit`] issues a command at the current virtual time. The
//!   drive computes the command's whole way through the hardware at once
//!   (see [`crate::model::drive`]), so the completion time is known at
//!   submission and is returned; the completion is delivered as an
//!   [`Event::Completion`] when the clock reaches it.
//! - [`Device::next_event`] advances the clock to the next completion or
//!   driver timer ([`Device::set_timer`]) and returns it;
//!   [`Device::advance_until`] does the same but stops at a given time (an
//!   open-loop source's next arrival); [`Device::idle_until`] lets time pass
//!   with the host idle.
//! - **Idle policy**, in one place: when no command has been outstanding
//!   for the drive's idle threshold (`ftl.idle_threshold_ns` of the drive
//!   file), the drive does background work ([`Drive::background_step`]:
//!   folding, GC) a step at a time until it has none or the host returns;
//!   later commands find that work on the dies.
//! - **Statistics**: between [`Device::begin_window`] and
//!   [`Device::end_window`] every completion of a command submitted after
//!   the window's `record_from_ns` (fio's `ramp_time`) is recorded (latency
//!   histograms per direction, per-second series), and the window reports
//!   the drive's counters, energy and busy time over it.
//!
//! Events are processed in (time, order scheduled): equal times keep the
//! order in which they were scheduled, so a run is a pure function of its
//! inputs. Commands must be submitted in time order (the clock never goes
//! back). The device holds no callbacks and is `Send`.
//!
//! - **Host-side queues**: a source that wants more outstanding commands
//!   than the drive's queue depth submits them anyway. Under round robin
//!   (the default) they wait inside the drive's host interface, in
//!   arrival order; under weighted round robin (`[host.arbitration]`)
//!   [`Device::submit_prio`] holds them here in their priority class's
//!   submission queue, and the arbiter ([`crate::model::arbitration`])
//!   chooses which enters when a slot frees. Either way the wait counts in
//!   their latency, as fio sees it.

use std::collections::VecDeque;

use crate::model::arbitration::{Arbiter, QueueClass};
use crate::model::drive::{Command, Drive, IoError, IoKind};
use crate::model::ftl::zones::ZoneAction;
use crate::run::engine::{EventKind, EventQueue};

mod window;

use window::Recording;
pub use window::{ThermalWindow, Window};

/// What a driver is told by [`Device::next_event`] and
/// [`Device::advance_until`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A command completed.
    Completion(Completion),
    /// A timer set with [`Device::set_timer`] expired (its token).
    Timer(u32),
}

/// A completed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The driver's tag given at submission.
    pub tag: u32,
    /// Submission number (0 for the device's first command): the order in
    /// which the drive saw the commands.
    pub seq: u64,
    /// The command.
    pub cmd: Command,
    /// When it was submitted, ns.
    pub submitted_ns: u64,
    /// When it completed, ns.
    pub done_ns: u64,
    /// How it failed (`None`: it succeeded): a media error on a read, a
    /// write to a read-only drive.
    pub error: Option<IoError>,
    /// The Linux ioprio value it was submitted with
    /// ([`Device::submit_prio`]; 0: none).
    pub ioprio: u16,
}

impl Completion {
    /// Latency as fio reports it (submission to completion), ns.
    pub fn latency_ns(&self) -> u64 {
        self.done_ns - self.submitted_ns
    }
}

#[derive(Debug, Clone, Copy)]
struct InFlight {
    tag: u32,
    seq: u64,
    cmd: Command,
    submitted_ns: u64,
    error: Option<IoError>,
    ioprio: u16,
}

/// A command waiting in the host's arbitrated submission queues.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    cmd: Command,
    tag: u32,
    submitted_ns: u64,
    ioprio: u16,
    /// The placement identifier a write carries ([`Drive::place_next`]:
    /// 0, the default, for any other command).
    pid: u32,
    /// What it is.
    what: Held,
}

/// What a command waiting in the arbitrated submission queues is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// A read, write or trim.
    Io,
    /// A write with Force Unit Access.
    Fua,
    /// A FLUSH; its `tag` is the timer token its completion is delivered
    /// as ([`Device::flush_prio`]).
    Flush,
}

/// A drive with its clock, in-flight commands, idle policy and statistics.
#[derive(Debug, Clone)]
pub struct Device {
    drive: Drive,
    events: EventQueue,
    inflight: Vec<InFlight>,
    free_slots: Vec<u32>,
    outstanding: u32,
    submitted: u64,
    /// Bumped at every submission: an idle check of an older generation
    /// finds the host has been back.
    activity: u32,
    /// Activity generation that has a chain of idle checks scheduled.
    idle_chain: Option<u32>,
    /// The last completion left nothing outstanding; the idle check is
    /// scheduled once the driver has had its chance to submit more.
    became_idle: bool,
    idle_threshold_ns: u64,
    wait_token: u32,
    busy_since: u64,
    busy_ns: u64,
    /// The last completion, or the submission that ended an idle: where
    /// the current interval without completions began.
    progress_ns: u64,
    /// Completions that arrived while the host waited in
    /// [`Device::idle_until`], delivered first by [`Device::next_event`].
    held: VecDeque<Event>,
    recording: Option<Recording>,
    log: Option<Vec<Completion>>,
    /// The in-flight slot of the last command the drive took.
    last_slot: u32,
    /// The host's submission queues under weighted round robin (`None`:
    /// round robin, in the drive's host interface).
    arbiter: Option<Box<Arbiter<Waiting>>>,
    /// An [`EventKind::Dispatch`] is scheduled.
    dispatch_pending: bool,
}

impl Device {
    /// A device at time 0 around a drive.
    pub fn new(drive: Drive) -> Device {
        let idle_threshold_ns = drive.model().spec.ftl.idle_threshold_ns;
        let host = &drive.model().spec.host;
        let arbiter =
            host.arbitration.and_then(|a| Arbiter::new(&a, host.max_queue_depth.min(4096) as usize)).map(Box::new);
        Device {
            drive,
            events: EventQueue::default(),
            inflight: Vec::new(),
            free_slots: Vec::new(),
            outstanding: 0,
            submitted: 0,
            activity: 0,
            idle_chain: None,
            became_idle: false,
            idle_threshold_ns,
            wait_token: 0,
            busy_since: 0,
            busy_ns: 0,
            progress_ns: 0,
            held: VecDeque::new(),
            recording: None,
            log: None,
            last_slot: 0,
            arbiter,
            dispatch_pending: false,
        }
    }

    /// Current virtual time, ns.
    #[inline]
    pub fn now(&self) -> u64 {
        self.events.now()
    }

    /// The drive.
    pub fn drive(&self) -> &Drive {
        &self.drive
    }

    /// The drive, to change between commands (tests, states, settings).
    pub fn drive_mut(&mut self) -> &mut Drive {
        &mut self.drive
    }

    /// Give the drive back.
    pub fn into_drive(self) -> Drive {
        self.drive
    }

    /// Commands submitted and not yet delivered as completed.
    #[inline]
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// Total time during which commands were outstanding since the clock
    /// began, ns (up to the last time nothing was outstanding).
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// Keep every completion from now on, in completion order (a command
    /// log, like fio's `write_iolog` with times); [`Device::take_log`]
    /// returns it.
    pub fn log_commands(&mut self, on: bool) {
        self.log = on.then(Vec::new);
    }

    /// The completions logged since [`Device::log_commands`] (empty when
    /// logging is off).
    pub fn take_log(&mut self) -> Vec<Completion> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Submit `cmd` at the current time, with the driver's `tag` (returned
    /// in its completion). Returns its completion time.
    #[inline(always)]
    pub fn submit(&mut self, cmd: Command, tag: u32) -> u64 {
        let now = self.begin_submission();
        let done = self.drive.submit(cmd, now);
        self.track(cmd, tag, now, done);
        done
    }

    /// Submit `cmd` at the current time with Linux I/O priority `ioprio`
    /// (class and level, as fio's `prioclass`/`prio`/`cmdprio*` set it;
    /// carried into its [`Completion`]). Under weighted round robin it
    /// waits in its class's submission queue
    /// ([`QueueClass::of_ioprio`]) when the drive's queue is full or
    /// others wait; its completion time is then not yet known (`None`).
    pub fn submit_prio(&mut self, cmd: Command, tag: u32, ioprio: u16) -> Option<u64> {
        self.submit_arbitrated(cmd, tag, ioprio, Held::Io)
    }

    /// Whether the host's submission queues are arbitrated (the drive's
    /// `[host.arbitration]` is weighted round robin): every command of a
    /// host that wants its priority honoured then goes through
    /// [`Device::submit_prio`] (ioprio 0 for none: the medium class) and
    /// [`Device::flush_prio`].
    #[inline]
    pub fn arbitrated(&self) -> bool {
        self.arbiter.is_some()
    }

    /// A FLUSH at the current time with Linux I/O priority `ioprio`
    /// (fio's job priority: a flush carries its task's, never a
    /// `cmdprio` draw): under weighted round robin it waits in its
    /// class's submission queue as any command of that class (NVMe's
    /// Flush is an I/O command of the queue it was submitted to). Its
    /// completion is delivered as [`Event::Timer`]`(token)`; returns its
    /// completion time when the drive took it at once, `None` when it
    /// waits. Like [`Device::flush`], it is not counted as outstanding.
    pub fn flush_prio(&mut self, ioprio: u16, token: u32) -> Option<u64> {
        let now = self.now();
        if let Some(a) = self.arbiter.as_mut() {
            let free_at = if a.waiting() > 0 { u64::MAX } else { self.drive.next_free_slot(now) };
            if free_at > now {
                let cmd = Command { kind: IoKind::Write, offset: 0, len: 0 };
                a.push(
                    QueueClass::of_ioprio(ioprio),
                    Waiting { cmd, tag: token, submitted_ns: now, ioprio, pid: 0, what: Held::Flush },
                );
                self.activity = self.activity.wrapping_add(1);
                if !self.dispatch_pending {
                    self.dispatch_pending = true;
                    self.events.schedule(free_at, EventKind::Dispatch);
                }
                return None;
            }
        }
        let done = self.flush();
        self.events.schedule(done, EventKind::Timer(token));
        Some(done)
    }

    /// [`Device::submit_prio`] for a write with Force Unit Access
    /// ([`Device::submit_fua`]): it waits in its class's submission queue
    /// as any command of that class, and enters the drive as a FUA write.
    pub fn submit_prio_fua(&mut self, cmd: Command, tag: u32, ioprio: u16) -> Option<u64> {
        self.submit_arbitrated(cmd, tag, ioprio, Held::Fua)
    }

    fn submit_arbitrated(&mut self, cmd: Command, tag: u32, ioprio: u16, what: Held) -> Option<u64> {
        let now = self.begin_submission();
        if let Some(a) = self.arbiter.as_mut() {
            let free_at = if a.waiting() > 0 { u64::MAX } else { self.drive.next_free_slot(now) };
            if free_at > now {
                // The command keeps the placement it was given until the
                // arbiter lets it into the drive.
                let pid = self.drive.take_placement();
                a.push(QueueClass::of_ioprio(ioprio), Waiting { cmd, tag, submitted_ns: now, ioprio, pid, what });
                self.activity = self.activity.wrapping_add(1);
                self.outstanding += 1;
                if !self.dispatch_pending {
                    self.dispatch_pending = true;
                    self.events.schedule(free_at, EventKind::Dispatch);
                }
                return None;
            }
        }
        let done = if what == Held::Fua { self.drive.submit_fua(cmd, now) } else { self.drive.submit(cmd, now) };
        self.track(cmd, tag, now, done);
        self.inflight_set_prio(ioprio);
        Some(done)
    }

    /// The command [`Device::track`] just recorded carries `ioprio`.
    #[inline]
    fn inflight_set_prio(&mut self, ioprio: u16) {
        let slot = self.last_slot as usize;
        self.inflight[slot].ioprio = ioprio;
    }

    /// Slots free in the drive: the arbiter moves waiting commands in, one
    /// per free slot, at the current time.
    fn dispatch(&mut self) {
        self.dispatch_pending = false;
        let now = self.now();
        while self.arbiter.as_ref().is_some_and(|a| a.waiting() > 0) {
            let free_at = self.drive.next_free_slot(now);
            if free_at > now {
                self.dispatch_pending = true;
                self.events.schedule(free_at, EventKind::Dispatch);
                return;
            }
            let w = self.arbiter.as_mut().and_then(|a| a.pop()).expect("a command waits");
            if w.what == Held::Flush {
                let done = self.flush();
                self.events.schedule(done, EventKind::Timer(w.tag));
                continue;
            }
            self.drive.place_next(w.pid);
            let done =
                if w.what == Held::Fua { self.drive.submit_fua(w.cmd, now) } else { self.drive.submit(w.cmd, now) };
            self.record_inflight(w.cmd, w.tag, w.submitted_ns, done);
            self.inflight_set_prio(w.ioprio);
        }
    }

    /// Submit a trim of several ranges in one command now (fio's
    /// `num_range`; see [`Drive::submit_trims`]): its completion carries
    /// the ranges' total length at the last range's offset (fio's io_u).
    /// Returns its completion time.
    pub fn submit_trims(&mut self, ranges: &[Command], tag: u32) -> u64 {
        let now = self.begin_submission();
        let done = self.drive.submit_trims(ranges, now);
        let len = ranges.iter().map(|r| r.len).sum();
        let last = ranges.last().map_or(0, |r| r.offset);
        self.track(Command { kind: IoKind::Trim, offset: last, len }, tag, now, done);
        done
    }

    /// Submit a write carrying placement identifier `pid` (flexible data
    /// placement; see [`Drive::submit_placed`]). Returns its completion
    /// time.
    pub fn submit_placed(&mut self, cmd: Command, pid: u32, tag: u32) -> u64 {
        if cmd.kind == IoKind::Write {
            self.drive.place_next(pid);
        }
        self.submit(cmd, tag)
    }

    /// The next command submitted carries placement identifier `pid`
    /// ([`Drive::place_next`]).
    #[inline]
    pub(crate) fn place_next(&mut self, pid: u32) {
        self.drive.place_next(pid);
    }

    /// Submit a write with Force Unit Access (see [`Drive::submit_fua`]).
    /// Returns its completion time.
    pub fn submit_fua(&mut self, cmd: Command, tag: u32) -> u64 {
        let now = self.begin_submission();
        let done = self.drive.submit_fua(cmd, now);
        self.track(cmd, tag, now, done);
        done
    }

    /// Submit a Zone Append of `cmd.len` bytes to the zone starting at
    /// byte `cmd.offset` (a zoned drive; see [`Drive::submit_append`]).
    /// Returns its completion time and the offset the drive wrote it at
    /// (its completion carries that offset).
    pub fn submit_append(&mut self, cmd: Command, tag: u32) -> (u64, u64) {
        let now = self.begin_submission();
        let (done, offset) = self.drive.submit_append(cmd, now);
        self.track(Command { offset, ..cmd }, tag, now, done);
        (done, offset)
    }

    /// Reclaim Unit Handle Update of the placement identifiers `pids`
    /// issued now (see [`Drive::update_handles`]): not an I/O of the
    /// statistics. Returns when it completes (its status is
    /// [`Drive::last_error`]).
    pub fn update_handles(&mut self, pids: &[u32]) -> u64 {
        let done = self.drive.update_handles(pids, self.now());
        self.activity = self.activity.wrapping_add(1);
        done
    }

    /// Zone Management Send issued now (see [`Drive::zone_send`]): not an
    /// I/O of the statistics. Returns when it completes (its status is
    /// [`Drive::last_error`]).
    pub fn zone_send(&mut self, action: ZoneAction, zslba: Option<u64>) -> u64 {
        let done = self.drive.zone_send(action, zslba, self.now());
        self.activity = self.activity.wrapping_add(1);
        done
    }

    /// A write the host issues now outside any job's statistics (fio's
    /// `zbd_move_zone_wp`, the write `recover_zbd_write_error` moves a
    /// zone's write pointer with). Returns when it completes (its status
    /// is [`Drive::last_error`]).
    pub fn write_outside_jobs(&mut self, cmd: Command) -> u64 {
        let done = self.drive.submit(cmd, self.now());
        self.activity = self.activity.wrapping_add(1);
        done
    }

    /// A trim that the host carries out as the reset of the zone starting
    /// at `cmd.offset` (fio's `zonemode=zbd` trims, `zbd_do_io_u_trim`):
    /// a Zone Management Send Reset issued now, counted in the statistics
    /// as the command `cmd`, which completes when the reset does (with the
    /// reset's status). Returns its completion time.
    pub fn submit_zone_reset(&mut self, cmd: Command, tag: u32) -> u64 {
        let now = self.begin_submission();
        let done = self.drive.zone_send(ZoneAction::Reset, Some(cmd.offset), now);
        self.track(cmd, tag, now, done);
        done
    }

    /// A command the host completes itself, now, without sending it to the
    /// drive (fio's trim of an empty zone in `zonemode=zbd`, which has no
    /// write pointer to reset): counted in the statistics with no latency.
    /// Returns its completion time, now.
    pub fn complete_at_once(&mut self, cmd: Command, tag: u32) -> u64 {
        let now = self.begin_submission();
        self.track(cmd, tag, now, now);
        self.inflight[self.last_slot as usize].error = None;
        now
    }

    /// The current time, at which a command is submitted: a submission to
    /// an idle host starts a busy interval and a stretch without
    /// completions.
    #[inline(always)]
    fn begin_submission(&mut self) -> u64 {
        let now = self.now();
        if self.outstanding == 0 {
            self.busy_since = now;
            self.progress_ns = now;
        }
        now
    }

    /// Keep a submitted command in flight until `done`.
    #[inline(always)]
    fn track(&mut self, cmd: Command, tag: u32, now: u64, done: u64) {
        self.record_inflight(cmd, tag, now, done);
        self.outstanding += 1;
    }

    /// A command the drive has taken, submitted by the host at
    /// `submitted_ns`, is in flight until `done`.
    #[inline(always)]
    fn record_inflight(&mut self, cmd: Command, tag: u32, submitted_ns: u64, done: u64) {
        let entry = InFlight { tag, seq: self.submitted, cmd, submitted_ns, error: self.drive.last_error(), ioprio: 0 };
        self.submitted += 1;
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.inflight[s as usize] = entry;
                s
            }
            None => {
                self.inflight.push(entry);
                self.inflight.len() as u32 - 1
            }
        };
        self.last_slot = slot;
        self.events.schedule(done, EventKind::Complete(slot));
        self.activity = self.activity.wrapping_add(1);
    }

    /// A format with user-data erase at the current time (every block
    /// holding data erased, the map emptied; see [`Drive::format`]).
    /// Returns when it completes; the host should wait for it
    /// ([`Device::idle_until`]).
    pub fn format(&mut self) -> u64 {
        let done = self.drive.format(self.now());
        self.activity = self.activity.wrapping_add(1);
        done
    }

    /// A flush issued now (see [`Drive::flush`]); returns when it
    /// completes. It is not an I/O of the statistics (it moves no data);
    /// the caller delivers its completion.
    pub fn flush(&mut self) -> u64 {
        let done = self.drive.flush(self.now());
        self.activity = self.activity.wrapping_add(1);
        done
    }

    /// Set the host's HCTM thresholds `[TMT1, TMT2]` (°C) now, or turn
    /// HCTM off (see [`Drive::set_hctm`]); false without `[thermal]`.
    pub fn set_hctm(&mut self, tmt_c: Option<[f64; 2]>) -> bool {
        let now = self.now();
        self.drive.set_hctm(tmt_c, now)
    }

    /// Turn the host's link power management on or off now.
    pub fn set_link_pm(&mut self, on: bool) {
        let now = self.now();
        self.drive.set_link_pm(on, now);
    }

    /// Turn the host's APST setting on or off now.
    pub fn set_apst(&mut self, on: bool) {
        let now = self.now();
        self.drive.set_apst(on, now);
    }

    /// Deliver [`Event::Timer`]`(token)` at time `at` (not before now).
    #[inline]
    pub fn set_timer(&mut self, at: u64, token: u32) {
        self.events.schedule(at, EventKind::Timer(token));
    }

    /// Advance to the next completion or timer and return it, doing
    /// background work on the way when the host is idle. `None` when
    /// nothing is outstanding and no timer is set (any background work
    /// that was due has then run to its end).
    #[inline]
    pub fn next_event(&mut self) -> Option<Event> {
        self.advance_until(u64::MAX)
    }

    /// As [`Device::next_event`], but stop at time `until`: returns the
    /// next completion or timer at or before `until`, or `None` with the
    /// clock at `until`. Background work due *before* `until` is done; a
    /// step due at `until` itself waits, so that a command the caller
    /// submits at `until` comes first (firmware checks its queues before
    /// it starts background work).
    #[inline(always)]
    pub fn advance_until(&mut self, until: u64) -> Option<Event> {
        if let Some(e) = self.held.pop_front() {
            return Some(e);
        }
        self.settle_idle();
        let mut deferred = None;
        while let Some(t) = self.events.peek_time() {
            if t > until {
                break;
            }
            let ev = self.events.pop().expect("peeked");
            match ev.kind {
                EventKind::Complete(slot) => {
                    self.reschedule(deferred, t);
                    return Some(Event::Completion(self.complete(slot, ev.time)));
                }
                EventKind::Timer(token) => {
                    self.reschedule(deferred, t);
                    return Some(Event::Timer(token));
                }
                // Due exactly at `until`: it waits behind the caller's
                // command (which makes it stale).
                EventKind::IdleCheck(g) if t == until && until != u64::MAX => deferred = Some(g),
                EventKind::IdleCheck(g) => self.idle_check(g),
                EventKind::Dispatch => self.dispatch(),
                EventKind::WaitEnd(_) => {}
            }
        }
        self.reschedule(deferred, until);
        if until != u64::MAX {
            self.events.advance_to(until);
        }
        None
    }

    /// Let virtual time pass to `until` with the host submitting nothing,
    /// the drive doing background work when it wants. In a statistics
    /// window each point of the series (a second, or longer once the
    /// series is coarsened) is opened as its boundary passes, so power and
    /// drive state are sampled on time; the number of points is bounded,
    /// so a long wait costs O(1) per point. Completions that fall
    /// in the wait are delivered by the next [`Device::next_event`].
    pub fn idle_until(&mut self, until: u64) {
        let Some(start) = self.recording.as_ref().map(|r| r.series.start_ns) else {
            self.wait(until);
            return;
        };
        loop {
            let next = start + self.recording.as_ref().map_or(0, |r| r.series.next_point_ns());
            if next >= until {
                break;
            }
            self.wait(next);
            self.drive.thermal_advance(next);
            self.touch_series(next - start);
        }
        self.wait(until);
    }

    fn wait(&mut self, until: u64) {
        if until <= self.now() {
            return;
        }
        self.settle_idle();
        self.wait_token = self.wait_token.wrapping_add(1);
        let token = self.wait_token;
        self.events.schedule(until, EventKind::WaitEnd(token));
        if self.outstanding == 0 {
            self.schedule_idle_check();
        }
        while let Some(ev) = self.events.pop() {
            match ev.kind {
                EventKind::WaitEnd(t) if t == token => break,
                EventKind::IdleCheck(g) => self.idle_check(g),
                EventKind::Complete(slot) => {
                    let c = self.complete(slot, ev.time);
                    self.held.push_back(Event::Completion(c));
                    self.settle_idle();
                }
                EventKind::Timer(t) => self.held.push_back(Event::Timer(t)),
                EventKind::Dispatch => self.dispatch(),
                EventKind::WaitEnd(_) => {}
            }
        }
    }

    /// The host shuts the drive down at `off` (not before now; nothing
    /// may be outstanding, and the drive should have finished its booked
    /// work by then) and powers it up at `on`: the clock moves to `on`
    /// with no background work, no energy and no heating in between (see
    /// [`Drive::power_off`]). The drive then idles as after any command.
    ///
    /// # Panics
    /// If commands are outstanding.
    pub fn power_off(&mut self, off: u64, on: u64) {
        assert_eq!(self.outstanding, 0, "power off with commands outstanding");
        let off = off.max(self.now());
        // Pending idle checks are stale: nothing starts before power-off.
        self.activity = self.activity.wrapping_add(1);
        self.idle_chain = None;
        self.became_idle = false;
        while let Some(t) = self.events.peek_time() {
            if t > on {
                break;
            }
            if let EventKind::Timer(token) = self.events.pop().expect("peeked").kind {
                self.held.push_back(Event::Timer(token));
            }
        }
        self.drive.power_off(off, on.max(off));
        self.events.advance_to(on.max(off));
        self.schedule_idle_check();
    }

    #[inline(always)]
    fn complete(&mut self, slot: u32, now: u64) -> Completion {
        let f = self.inflight[slot as usize];
        self.free_slots.push(slot);
        self.outstanding -= 1;
        if self.outstanding == 0 {
            self.busy_ns += now - self.busy_since;
            self.became_idle = true;
        }
        let c = Completion {
            tag: f.tag,
            seq: f.seq,
            cmd: f.cmd,
            submitted_ns: f.submitted_ns,
            done_ns: now,
            error: f.error,
            ioprio: f.ioprio,
        };
        let gap = now - self.progress_ns;
        self.progress_ns = now;
        if let Some(r) = &mut self.recording {
            if now >= r.record_from_ns {
                r.stalls.record(gap);
            }
            // A failed command is not counted (fio's `io_completed`).
            if f.submitted_ns >= r.record_from_ns && f.error.is_none() {
                if self.drive.thermal().is_some() && now - r.series.start_ns >= r.series.next_point_ns() {
                    // A point opens: its temperature is sampled now.
                    self.drive.thermal_advance(now);
                }
                let lat = now - f.submitted_ns;
                let kind = f.cmd.kind as usize;
                r.dirs[kind].record(f.cmd.len as u64, lat);
                r.series.record(now - r.series.start_ns, kind, f.cmd.len as u64, lat, &self.drive);
            }
        }
        if let Some(log) = &mut self.log {
            log.push(c);
        }
        c
    }

    /// The driver has reacted to the last completion: if it left the host
    /// idle, start counting the idle threshold.
    #[inline]
    fn settle_idle(&mut self) {
        if self.became_idle {
            self.became_idle = false;
            if self.outstanding == 0 {
                self.schedule_idle_check();
            }
        }
    }

    #[inline]
    fn reschedule(&mut self, idle_check: Option<u32>, at: u64) {
        if let Some(g) = idle_check {
            self.events.schedule(at, EventKind::IdleCheck(g));
        }
    }

    fn schedule_idle_check(&mut self) {
        if self.idle_chain == Some(self.activity) {
            return;
        }
        self.idle_chain = Some(self.activity);
        let at = self.now() + self.idle_threshold_ns;
        self.events.schedule(at, EventKind::IdleCheck(self.activity));
    }

    fn idle_check(&mut self, generation: u32) {
        if generation != self.activity {
            return;
        }
        let now = self.now();
        match self.drive.background_step(now) {
            Some(done) => self.events.schedule(done.max(now + 1), EventKind::IdleCheck(generation)),
            None => self.idle_chain = None,
        }
    }
}

/// Kinds of I/O in the order statistics index them.
pub const KINDS: [IoKind; 3] = [IoKind::Read, IoKind::Write, IoKind::Trim];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_is_send() {
        fn send<T: Send>() {}
        send::<Device>();
    }
}
