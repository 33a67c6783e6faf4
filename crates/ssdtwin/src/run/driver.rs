//! The one event loop on a device and the closed-loop fio jobs it runs.
//!
//! A command source is a `Workload`: `drive` hands it the device's
//! events — the start, a completion of one of its commands, one of its
//! `Timer`s, the clock reaching the time it asked to wake at — and it
//! answers by submitting commands and setting timers on the device, until
//! it says it is done. The loop is generic over the workload (static
//! dispatch, nothing allocated per command). `drive` runs one to its end,
//! `drive_until` up to a time (for a host that steps the device between
//! its own requests). Its workloads: the fio jobs here (`drive_sources`),
//! trace replay's pacing modes ([`crate::run::trace`]), aging
//! ([`crate::run::lifetime`]), and outside the library the NBD twin and
//! Python's `Device`.
//!
//! The fio jobs: every running `Source` keeps its commands outstanding,
//! completions and timers (think time, rate schedule, burst gaps) are
//! dispatched to the source they belong to, and a scheduler hook above
//! the loop decides when sources start (fio's `stonewall`, `wait_for`,
//! `startdelay` in [`crate::run::jobs`]; one source for
//! [`crate::run::sim::Simulator`]). What each source does with an event is
//! in [`crate::run::source`].

use std::convert::Infallible;

use crate::run::device::{Completion, Device, Event};
use crate::run::sim::{Progress, ProgressFn};
use crate::run::source::Source;

/// A source of commands driven by [`drive`]. Each method is called with
/// the device's clock at the event's time; it submits and sets timers
/// through the device. The fio jobs, trace replay's pacing modes and
/// aging are workloads run to their end by [`drive`]; a host outside the
/// library (the NBD twin, Python's `Device`) is one stepped by
/// [`drive_until`] between its own requests.
pub trait Workload {
    /// What can stop the loop early (a trace's read error).
    type Error;
    /// The loop begins at the device's current time ([`drive`] only).
    fn start(&mut self, _dev: &mut Device) -> Result<(), Self::Error> {
        Ok(())
    }
    /// One of its commands completed.
    fn on_completion(&mut self, dev: &mut Device, c: &Completion) -> Result<(), Self::Error>;
    /// One of its timers expired.
    fn on_timer(&mut self, _dev: &mut Device, _t: Timer) -> Result<(), Self::Error> {
        Ok(())
    }
    /// The latest time the clock may move to before it acts again without
    /// an event (an open-loop arrival, the next day of aging); `u64::MAX`:
    /// only on its events.
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
pub fn drive<W: Workload>(dev: &mut Device, w: &mut W) -> Result<(), W::Error> {
    w.start(dev)?;
    drive_until(dev, w, u64::MAX)
}

/// The loop up to time `until`: hand `w` every event at or before it (and
/// wake it at the times it asks for up to then) until it is done; unless
/// it is done first, the clock ends at `until` (with `u64::MAX`: where
/// the device ran out of events).
#[inline]
pub fn drive_until<W: Workload>(dev: &mut Device, w: &mut W, until: u64) -> Result<(), W::Error> {
    while !w.done() {
        let wake = w.wake_at(dev);
        match dev.advance_until(wake.min(until)) {
            Some(Event::Completion(c)) => w.on_completion(dev, &c)?,
            Some(Event::Timer(token)) => w.on_timer(dev, Timer::of_token(token))?,
            None if wake <= until && wake != u64::MAX => w.on_wake(dev)?,
            None => break,
        }
    }
    Ok(())
}

/// A timer of a workload: whose (a source's index, or the scheduler's id)
/// and what for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timer {
    /// The source (or, for [`TimerKind::External`], the scheduler's id).
    pub source: u32,
    /// What it is for.
    pub kind: TimerKind,
}

/// What a [`Timer`] is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    /// A source's think time or rate wait is over: submit.
    Submit = 0,
    /// A source's idle gap between bursts is over.
    Burst = 1,
    /// The scheduler above the loop (e.g. a delayed job start).
    External = 2,
    /// A source's FLUSH completed.
    Flush = 3,
    /// A source held by its flow has slept its `flow_sleep`.
    Flow = 4,
}

impl Timer {
    /// Set on `dev` to expire at `at`. (The device carries a `u32`
    /// token; it is packed and unpacked here only.)
    #[inline]
    pub fn set(self, dev: &mut Device, at: u64) {
        dev.set_timer(at, self.token());
    }

    /// The token the device carries for it.
    #[inline]
    pub fn token(self) -> u32 {
        self.source * 8 + self.kind as u32
    }

    #[inline]
    fn of_token(token: u32) -> Timer {
        let kind = match token % 8 {
            0 => TimerKind::Submit,
            1 => TimerKind::Burst,
            2 => TimerKind::External,
            3 => TimerKind::Flush,
            _ => TimerKind::Flow,
        };
        Timer { source: token / 8, kind }
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

// The scheduler's hook: told when the loop begins, when one of its timers
// expires and when a source finishes; answers with what to do. Any
// `FnMut(&mut Device, &mut [Source], Hooked) -> Action`: the loop is
// generic over it too.

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
pub(crate) fn drive_sources<H: FnMut(&mut Device, &mut [Source], Hooked) -> Action>(
    dev: &mut Device,
    sources: &mut [Source],
    progress: Option<(&mut ProgressFn, usize, usize)>,
    hook: &mut H,
) {
    let next_progress = dev.now() + 1_000_000_000;
    if dev.arbitrated() {
        sources.iter_mut().for_each(Source::arbitrate);
    }
    let flows = sources.iter().any(|s| s.spec.flow.is_some());
    let mut jobs = Jobs {
        single: sources.len() == 1,
        flows,
        sources,
        progress,
        hook,
        running: 0,
        hook_timers: 0,
        work: Vec::new(),
        next_progress,
    };
    let Ok(()) = drive(dev, &mut jobs);
    if jobs.flows && jobs.running > 0 {
        spin_out(dev, &mut jobs);
    }
}

/// Nothing is left to happen but jobs spinning on their flow (a member
/// they wait for cannot start until they end): one whose runtime ends
/// stops there, as fio's does, and the loop goes on; without one, they
/// stay held (the caller reports it).
#[cold]
#[inline(never)]
fn spin_out<H: FnMut(&mut Device, &mut [Source], Hooked) -> Action>(dev: &mut Device, jobs: &mut Jobs<'_, '_, '_, H>) {
    while jobs.running > 0 {
        let Some(at) = jobs.sources.iter().filter_map(|s| s.flow_spin_deadline()).min() else { break };
        dev.idle_until(at.max(dev.now()));
        jobs.after(dev, None, dev.now());
        let Ok(()) = drive_until(dev, jobs, u64::MAX);
    }
}

/// fio jobs as one [`Workload`]: the sources, the scheduler's hook and
/// what the loop keeps about them.
struct Jobs<'s, 'p, 'h, H> {
    sources: &'s mut [Source],
    progress: Option<(&'p mut ProgressFn, usize, usize)>,
    hook: &'h mut H,
    single: bool,
    /// Some source has fio's flow control (`flow`).
    flows: bool,
    /// Sources started and not finished.
    running: usize,
    /// The hook's timers set and not expired.
    hook_timers: usize,
    /// What the hook is still to be told.
    work: Vec<Hooked>,
    next_progress: u64,
}

impl<H: FnMut(&mut Device, &mut [Source], Hooked) -> Action> Jobs<'_, '_, '_, H> {
    /// Tell the hook what happened and do what it asks.
    fn react(&mut self, dev: &mut Device) {
        while let Some(h) = self.work.pop() {
            let action = (self.hook)(dev, self.sources, h);
            for (at, id) in action.timers {
                self.hook_timers += 1;
                Timer { source: id, kind: TimerKind::External }.set(dev, at.max(dev.now()));
            }
            for j in action.start {
                if self.sources[j].start(dev, j as u32) {
                    self.running += 1;
                } else {
                    self.sources[j].leave_flow();
                    self.work.push(Hooked::Finished(j));
                }
            }
        }
    }

    /// Source `i` finished: it leaves its flow, and the hook is to be told.
    #[cold]
    fn finished(&mut self, i: usize) {
        self.running -= 1;
        self.sources[i].leave_flow();
        self.work.push(Hooked::Finished(i));
    }

    /// After an event at `now`: source `ended` (if any) has nothing
    /// outstanding or pending; sources held by their flow retry; the hook
    /// is told what finished; progress.
    #[inline]
    fn after(&mut self, dev: &mut Device, ended: Option<usize>, now: u64) {
        if let Some(i) = ended {
            if self.sources[i].on_idle(dev, i as u32, now, self.single) {
                self.finished(i);
            }
        }
        if self.flows {
            self.settle_flows(dev, now);
        } else if !self.work.is_empty() {
            self.react(dev);
        }
        if now >= self.next_progress {
            report_progress(&mut self.progress, &self.sources[0], now, &mut self.next_progress);
        }
    }

    /// With flows: held sources retry, and the hook is told what
    /// finished, until neither changes anything (a job that ends leaves
    /// its flow, which may release another; a job the hook starts may
    /// end at once).
    #[cold]
    fn settle_flows(&mut self, dev: &mut Device, now: u64) {
        loop {
            self.retry_flows(dev, now);
            if self.work.is_empty() {
                break;
            }
            self.react(dev);
        }
    }

    /// Sources spinning on their flow retry, in index order, until none
    /// is released (one released may release another).
    fn retry_flows(&mut self, dev: &mut Device, now: u64) {
        loop {
            let mut released = false;
            for i in 0..self.sources.len() {
                if let Some(idle) = self.sources[i].flow_retry(dev, i as u32) {
                    released = true;
                    if idle && self.sources[i].on_idle(dev, i as u32, now, self.single) {
                        self.finished(i);
                    }
                }
            }
            if !released {
                break;
            }
        }
    }
}

impl<H: FnMut(&mut Device, &mut [Source], Hooked) -> Action> Workload for Jobs<'_, '_, '_, H> {
    type Error = Infallible;

    fn start(&mut self, dev: &mut Device) -> Result<(), Infallible> {
        self.work.push(Hooked::Begin);
        self.react(dev);
        Ok(())
    }

    #[inline]
    fn on_completion(&mut self, dev: &mut Device, c: &Completion) -> Result<(), Infallible> {
        let now = dev.now();
        if self.single && self.running == 1 && self.hook_timers == 0 && self.sources[0].plain && c.error.is_none() {
            // The common case (one job with nothing but its depth and
            // limits): the same steps as below without the branches it
            // cannot take.
            if self.sources[0].on_plain_completion(dev, now) {
                self.finished(0);
                self.react(dev);
            } else if now >= self.next_progress {
                report_progress(&mut self.progress, &self.sources[0], now, &mut self.next_progress);
            }
            return Ok(());
        }
        let i = c.tag as usize;
        let steady = self.sources[i].on_completion(c, dev.drive());
        if (steady && self.sources[i].ss_holder) || self.sources[i].ss_forward.is_some() {
            group_steady_state(self.sources, i, c, steady);
        }
        let ended = self.sources[i].after_completion(dev, c, i as u32, now).then_some(i);
        self.after(dev, ended, now);
        Ok(())
    }

    fn on_timer(&mut self, dev: &mut Device, t: Timer) -> Result<(), Infallible> {
        let now = dev.now();
        let i = t.source as usize;
        let mut ended = None;
        match t.kind {
            TimerKind::Submit => ended = self.sources[i].on_submit_timer(dev, i as u32, now).then_some(i),
            TimerKind::Burst => {
                if !self.sources[i].on_burst_timer(dev, i as u32, now) {
                    self.finished(i);
                }
            }
            TimerKind::Flow => ended = self.sources[i].on_flow_timer(dev, i as u32).then_some(i),
            TimerKind::Flush => ended = self.sources[i].on_flush_done(dev, i as u32, now).then_some(i),
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
    cb(&Progress {
        phase: s.spec.name.clone(),
        phase_index: *index,
        phases: *phases,
        phase_ns: now - s.start,
        fraction: s.progress(now),
    });
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
            (h, counted && sources[h].count_member_completion(c))
        }
    };
    if reached {
        for s in sources.iter_mut().filter(|s| s.ss_forward == Some(holder)) {
            s.stop = true;
        }
    }
}
