//! The one event loop on a device and the closed-loop fio jobs it runs.
//!
//! A command source is a `Workload`: `drive` hands it the device's
//! events — the start, a completion of one of its commands, one of its
//! `Timer`s, the clock reaching the time it asked to wake at — and it
//! answers by submitting commands and setting timers on the device, until
//! it says it is done. The loop is generic over the workload (static
//! dispatch, nothing allocated per command). Its workloads: the fio jobs
//! here (`drive_sources`) and trace replay's pacing modes
//! ([`crate::run::trace`]).
//!
//! The fio jobs: every running `Source` keeps its commands outstanding,
//! completions and timers (think time, rate schedule, burst gaps) are
//! dispatched to the source they belong to, and a scheduler hook above
//! the loop decides when sources start (fio's `stonewall`, `wait_for`,
//! `startdelay` in [`crate::run::jobs`]; one source for
//! [`crate::run::sim::Simulator`]). What each source does with an event is
//! in [`crate::run::source`].

use std::convert::Infallible;

use crate::run::control::LatAction;
use crate::run::device::{Completion, Device, Event};
use crate::run::sim::{Progress, ProgressFn};
use crate::run::source::{Source, ETIMEDOUT};

/// A source of commands driven by [`drive`]. Each method is called with
/// the device's clock at the event's time; it submits and sets timers
/// through the device.
pub(crate) trait Workload {
    /// What can stop the loop early (a trace's read error).
    type Error;
    /// The loop begins at the device's current time.
    fn start(&mut self, dev: &mut Device) -> Result<(), Self::Error>;
    /// One of its commands completed.
    fn on_completion(&mut self, dev: &mut Device, c: &Completion) -> Result<(), Self::Error>;
    /// One of its timers expired.
    fn on_timer(&mut self, dev: &mut Device, t: Timer) -> Result<(), Self::Error>;
    /// The latest time the clock may move to before it acts again without
    /// an event (an open-loop arrival); `u64::MAX`: only on its events.
    #[inline]
    fn wake_at(&self, _dev: &Device) -> u64 {
        u64::MAX
    }
    /// The clock reached [`Workload::wake_at`] with no event before.
    #[inline]
    fn on_wake(&mut self, _dev: &mut Device) -> Result<(), Self::Error> {
        Ok(())
    }
    /// Nothing left to do: the loop returns (commands may still be
    /// outstanding, for the caller to drain).
    fn done(&self) -> bool;
}

/// The one loop: start `w`, then move the device's clock event by event
/// (or to the time `w` wakes at) and hand `w` each, until it is done or
/// the device has no event left.
#[inline]
pub(crate) fn drive<W: Workload>(dev: &mut Device, w: &mut W) -> Result<(), W::Error> {
    w.start(dev)?;
    while !w.done() {
        let until = w.wake_at(dev);
        match dev.advance_until(until) {
            Some(Event::Completion(c)) => w.on_completion(dev, &c)?,
            Some(Event::Timer(token)) => w.on_timer(dev, Timer::of_token(token))?,
            None if until == u64::MAX => break,
            None => w.on_wake(dev)?,
        }
    }
    Ok(())
}

/// A timer of a workload: whose (a source's index, or the scheduler's id)
/// and what for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timer {
    /// The source (or, for [`TimerKind::External`], the scheduler's id).
    pub(crate) source: u32,
    /// What it is for.
    pub(crate) kind: TimerKind,
}

/// What a [`Timer`] is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimerKind {
    /// A source's think time or rate wait is over: submit.
    Submit = 0,
    /// A source's idle gap between bursts is over.
    Burst = 1,
    /// The scheduler above the loop (e.g. a delayed job start).
    External = 2,
}

impl Timer {
    /// Set on `dev` to expire at `at`. (The device carries a `u32`
    /// token; it is packed and unpacked here only.)
    #[inline]
    pub(crate) fn set(self, dev: &mut Device, at: u64) {
        dev.set_timer(at, self.source * 4 + self.kind as u32);
    }

    #[inline]
    fn of_token(token: u32) -> Timer {
        let kind = match token % 4 {
            0 => TimerKind::Submit,
            1 => TimerKind::Burst,
            _ => TimerKind::External,
        };
        Timer { source: token / 4, kind }
    }
}

/// What a scheduler above the loop wants done: sources to start now and
/// timers (time, id) after which it is asked again.
#[derive(Debug, Default)]
pub(crate) struct Action {
    /// Indices of sources to start now.
    pub(crate) start: Vec<usize>,
    /// Timers to set: (time, id given back in [`Hooked::Timer`]).
    pub(crate) timers: Vec<(u64, u32)>,
}

/// The scheduler's hook: told when the loop begins, when one of its timers
/// expires and when a source finishes.
pub(crate) type Hook<'a> = dyn FnMut(&mut Device, &mut [Source], Hooked) -> Action + 'a;

/// What the scheduler hook is told.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Hooked {
    /// The loop begins.
    Begin,
    /// Its timer with this id expired.
    Timer(u32),
    /// Source `i` finished.
    Finished(usize),
}

/// The closed loop over one device: every running source keeps its
/// `iodepth` commands outstanding (with think time, rate limits and
/// bursts) until its limits; the hook decides when sources start. Returns
/// when no source runs and the hook has no timer left.
pub(crate) fn drive_sources(
    dev: &mut Device,
    sources: &mut [Source],
    progress: Option<(&mut ProgressFn, usize, usize)>,
    hook: &mut Hook<'_>,
) {
    let next_progress = dev.now() + 1_000_000_000;
    let mut jobs = Jobs {
        single: sources.len() == 1,
        sources,
        progress,
        hook,
        running: 0,
        hook_timers: 0,
        work: Vec::new(),
        next_progress,
    };
    let Ok(()) = drive(dev, &mut jobs);
}

/// fio jobs as one [`Workload`]: the sources, the scheduler's hook and
/// what the loop keeps about them.
struct Jobs<'s, 'p, 'h, 'a> {
    sources: &'s mut [Source],
    progress: Option<(&'p mut ProgressFn, usize, usize)>,
    hook: &'h mut Hook<'a>,
    single: bool,
    /// Sources started and not finished.
    running: usize,
    /// The hook's timers set and not expired.
    hook_timers: usize,
    /// What the hook is still to be told.
    work: Vec<Hooked>,
    next_progress: u64,
}

impl Jobs<'_, '_, '_, '_> {
    /// Tell the hook what happened and do what it asks.
    fn react(&mut self, dev: &mut Device) {
        while let Some(h) = self.work.pop() {
            let action = (self.hook)(dev, self.sources, h);
            for (at, id) in action.timers {
                self.hook_timers += 1;
                Timer { source: id, kind: TimerKind::External }.set(dev, at.max(dev.now()));
            }
            for j in action.start {
                let s = &mut self.sources[j];
                s.begin(dev.now());
                s.fill(dev, j as u32);
                if s.outstanding == 0 && s.pending == 0 {
                    s.finished = true;
                    self.work.push(Hooked::Finished(j));
                } else {
                    self.running += 1;
                }
            }
        }
    }

    /// After an event at `now`: source `ended` (if any) has nothing
    /// outstanding or pending; the hook is told what finished; progress.
    #[inline]
    fn after(&mut self, dev: &mut Device, ended: Option<usize>, now: u64) {
        if let Some(i) = ended {
            if source_ended(dev, &mut self.sources[i], i, now, self.single) {
                self.running -= 1;
                self.work.push(Hooked::Finished(i));
            }
        }
        if !self.work.is_empty() {
            self.react(dev);
        }
        if now >= self.next_progress {
            report_progress(&mut self.progress, &self.sources[0], now, &mut self.next_progress);
        }
    }
}

impl Workload for Jobs<'_, '_, '_, '_> {
    type Error = Infallible;

    fn start(&mut self, dev: &mut Device) -> Result<(), Infallible> {
        self.work.push(Hooked::Begin);
        self.react(dev);
        Ok(())
    }

    #[inline]
    fn on_completion(&mut self, dev: &mut Device, c: &Completion) -> Result<(), Infallible> {
        let now = dev.now();
        if self.single && self.running == 1 && self.hook_timers == 0 && self.sources[0].plain {
            // The common case (one job with nothing but its depth and
            // limits): the same steps as below without the branches it
            // cannot take.
            let s = &mut self.sources[0];
            s.outstanding -= 1;
            s.completions += 1;
            if s.can_issue(now) {
                s.submit(dev, 0);
            }
            if s.outstanding == 0 {
                s.end_ns = now;
                s.finished = true;
                self.running -= 1;
                self.work.push(Hooked::Finished(0));
                self.react(dev);
            } else if now >= self.next_progress {
                report_progress(&mut self.progress, &self.sources[0], now, &mut self.next_progress);
            }
            return Ok(());
        }
        let ended = on_completion(dev, self.sources, c, now);
        self.after(dev, ended, now);
        Ok(())
    }

    fn on_timer(&mut self, dev: &mut Device, t: Timer) -> Result<(), Infallible> {
        let now = dev.now();
        let i = t.source as usize;
        let mut ended = None;
        match t.kind {
            TimerKind::Submit => ended = on_submit_timer(dev, &mut self.sources[i], i, now),
            TimerKind::Burst => {
                let s = &mut self.sources[i];
                s.pending -= 1;
                s.end_ns = now;
                if !restart_burst(dev, s, i) {
                    self.running -= 1;
                    self.work.push(Hooked::Finished(i));
                }
            }
            TimerKind::External => {
                self.hook_timers -= 1;
                self.work.push(Hooked::Timer(t.source));
            }
        }
        self.after(dev, ended, now);
        Ok(())
    }

    #[inline]
    fn done(&self) -> bool {
        self.running == 0 && self.hook_timers == 0
    }
}

/// Source `c.tag`'s command completed at `now`: record it, run the job's
/// controllers and issue what may follow. `Some(i)`: source `i` has
/// nothing left outstanding or pending.
#[inline]
fn on_completion(dev: &mut Device, sources: &mut [Source], c: &Completion, now: u64) -> Option<usize> {
    let i = c.tag as usize;
    let s = &mut sources[i];
    s.outstanding -= 1;
    s.completions += 1;
    let steady = s.record(c, dev.drive());
    if (steady && s.ss_holder) || s.ss_forward.is_some() {
        group_steady_state(sources, i, c, steady);
    }
    let s = &mut sources[i];
    if let Some(max) = s.spec.max_latency_ns.filter(|&m| c.latency_ns() > m) {
        lat_fatal(s, c, max);
    }
    let mut raised = false;
    if let Some(l) = &mut s.lat {
        match l.on_completion(c.latency_ns(), now, s.completions, c.submitted_ns >= s.ramp_end) {
            LatAction::Go => raised = true,
            LatAction::Drain => {}
            LatAction::Fatal => {
                let target = s.spec.latency_target.map_or(0, |t| t.target_ns);
                lat_fatal(s, c, target);
            }
            LatAction::Done => s.stop = true,
        }
    }
    if s.can_issue(now) && s.outstanding + s.pending < s.limit() {
        let think = s.spec.thinktime_ns > 0 && s.completions % s.spec.thinktime_blocks as u64 == 0;
        s.issue_or_wait(dev, i as u32, think);
    }
    if raised {
        s.fill(dev, i as u32);
    }
    if s.outstanding == 0 && s.pending == 0 && s.draining() {
        s.drain_over(dev, i as u32);
    }
    if s.outstanding == 0 {
        s.end_ns = now;
        if let Some(st) = &mut s.stats {
            st.busy_ns += now - s.busy_since;
        }
        if s.pending == 0 {
            return Some(i);
        }
    }
    None
}

/// Source `i`'s think time or rate wait is over at `now`: submit, or see
/// whether it has ended (`Some(i)`).
#[inline]
fn on_submit_timer(dev: &mut Device, s: &mut Source, i: usize, now: u64) -> Option<usize> {
    s.pending -= 1;
    if s.can_issue(now) && s.outstanding + s.pending < s.limit() {
        s.submit(dev, i as u32);
    } else if s.outstanding == 0 && s.pending == 0 {
        if s.draining() {
            s.drain_over(dev, i as u32);
        }
        if s.outstanding == 0 && s.pending == 0 {
            return Some(i);
        }
    }
    None
}

/// Source `i` has nothing outstanding or pending at `now`: a burst ends
/// (idle for the duty cycle, then the next burst), or the source is done.
/// `true`: it has finished.
fn source_ended(dev: &mut Device, s: &mut Source, i: usize, now: u64, single: bool) -> bool {
    match s.spec.burst {
        Some(burst) if s.error == 0 => {
            // End of a burst: idle so that busy / (busy + idle) is
            // the duty cycle, then start the next burst.
            let busy = now - s.seg_start;
            let idle = (busy as f64 * (1.0 - burst.duty_cycle) / burst.duty_cycle).round() as u64;
            if single {
                dev.idle_until(now + idle);
                s.end_ns = dev.now();
                !restart_burst(dev, s, i)
            } else {
                s.pending += 1;
                Timer { source: i as u32, kind: TimerKind::Burst }.set(dev, now + idle);
                false
            }
        }
        _ => {
            s.finished = true;
            true
        }
    }
}

/// The progress callback, told how far the (first) source is at `now`;
/// the next report is due a simulated second later.
fn report_progress(
    progress: &mut Option<(&mut ProgressFn, usize, usize)>,
    s: &Source,
    now: u64,
    next_progress: &mut u64,
) {
    *next_progress = now + 1_000_000_000;
    let Some((cb, index, phases)) = progress.as_mut() else { return };
    let by_bytes = (s.byte_limit != u64::MAX).then(|| s.issued as f64 / s.byte_limit as f64);
    let by_time = s.deadline.map(|d| (now - s.start) as f64 / (d - s.start).max(1) as f64);
    let fraction = match (by_bytes, by_time) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    cb(&Progress {
        phase: s.spec.name.clone(),
        phase_index: *index,
        phases: *phases,
        phase_ns: now - s.start,
        fraction: fraction.map(|f| f.min(1.0)),
    });
}

/// After a burst's idle gap: start the next burst; false (and the source
/// finished) when its limits are reached.
fn restart_burst(dev: &mut Device, s: &mut Source, me: usize) -> bool {
    let t = dev.now();
    if s.stop || s.issued >= s.byte_limit || s.issued_ios >= s.ios_limit || s.deadline.is_some_and(|dl| t >= dl) {
        s.finished = true;
        return false;
    }
    s.seg_start = t;
    s.seg_issued = 0;
    s.bursts += 1;
    s.fill(dev, me as u32);
    if s.outstanding == 0 && s.pending == 0 {
        s.finished = true;
        return false;
    }
    true
}

/// A command slower than `max_ns` ends the job with ETIMEDOUT and fio's
/// message (io_u.c's `lat_fatal`).
fn lat_fatal(s: &mut Source, c: &Completion, max_ns: u64) {
    let dir = ["read", "write", "trim"][c.cmd.kind as usize];
    let why = format!(
        "latency of {} nsec exceeds specified max ({max_ns} nsec): {dir} {} {}",
        c.latency_ns(),
        c.cmd.offset,
        c.cmd.len
    );
    s.fail(ETIMEDOUT, why);
}

/// Steady state judged on a reporting group's summed rate (fio with
/// `group_reporting`): a member's completion counts in the holder's
/// tracker (after the member's ramp and the holder's, while the holder
/// runs), and once the holder's tracker reaches steady state every member
/// stops issuing, as fio terminates the whole group. `own_steady`: the
/// holder's tracker reached it with its own completion `i`.
fn group_steady_state(sources: &mut [Source], i: usize, c: &Completion, own_steady: bool) {
    let (holder, reached) = match sources[i].ss_forward {
        None => (i, own_steady),
        Some(h) => {
            let counted = c.submitted_ns >= sources[i].ramp_end;
            let hs = &mut sources[h];
            let mut reached = false;
            if counted && !hs.finished && c.done_ns >= hs.ramp_end {
                if let Some(ss) = &mut hs.ss {
                    reached = ss.on_completion(c.done_ns - hs.ramp_end, c.cmd.len as u64);
                }
            }
            if reached {
                hs.stop = true;
            }
            (h, reached)
        }
    };
    if reached {
        for s in sources.iter_mut().filter(|s| s.ss_forward == Some(holder)) {
            s.stop = true;
        }
    }
}
