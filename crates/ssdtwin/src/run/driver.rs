//! The event loop of closed-loop I/O on one device: every running
//! [`Source`] keeps its commands outstanding, completions and timers (think
//! time, rate schedule, burst gaps) are dispatched to the source they
//! belong to, and a scheduler hook above the loop decides when sources
//! start (fio's `stonewall`, `wait_for`, `startdelay` in
//! [`crate::run::jobs`]; one source for [`crate::run::sim::Simulator`]).
//! What each source does with an event is in [`crate::run::source`]. Left
//! out: open-loop trace replay, which has its own loop
//! ([`crate::run::trace`]).

use crate::run::control::LatAction;
use crate::run::device::{Completion, Device, Event};
use crate::run::sim::{Progress, ProgressFn};
use crate::run::source::{Source, ETIMEDOUT, TIMER_BURST, TIMER_EXTERNAL, TIMER_SUBMIT};

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
    mut progress: Option<(&mut ProgressFn, usize, usize)>,
    hook: &mut Hook<'_>,
) {
    let single = sources.len() == 1;
    let mut running = 0usize;
    let mut hook_timers = 0usize;
    let mut work = vec![Hooked::Begin];
    let mut react = |dev: &mut Device,
                     sources: &mut [Source],
                     work: &mut Vec<Hooked>,
                     running: &mut usize,
                     hook_timers: &mut usize| {
        while let Some(h) = work.pop() {
            let action = hook(dev, sources, h);
            for (at, id) in action.timers {
                *hook_timers += 1;
                dev.set_timer(at.max(dev.now()), id * 4 + TIMER_EXTERNAL);
            }
            for j in action.start {
                let s = &mut sources[j];
                s.begin(dev.now());
                s.fill(dev, j as u32);
                if s.outstanding == 0 && s.pending == 0 {
                    s.finished = true;
                    work.push(Hooked::Finished(j));
                } else {
                    *running += 1;
                }
            }
        }
    };
    react(dev, sources, &mut work, &mut running, &mut hook_timers);
    let mut next_progress = dev.now() + 1_000_000_000;
    while running > 0 || hook_timers > 0 {
        if single && running == 1 && hook_timers == 0 && sources[0].plain {
            // The common case (one job with nothing but its depth and
            // limits) in a loop of its own: the same steps as below
            // without the branches it cannot take.
            if !drive_plain(dev, &mut sources[0], &mut progress, &mut next_progress) {
                break;
            }
            sources[0].finished = true;
            running -= 1;
            work.push(Hooked::Finished(0));
            react(dev, sources, &mut work, &mut running, &mut hook_timers);
            continue;
        }
        let Some(ev) = dev.next_event() else { break };
        let now = dev.now();
        let mut ended = None;
        match ev {
            Event::Completion(c) => ended = on_completion(dev, sources, &c, now),
            Event::Timer(token) => {
                let i = (token / 4) as usize;
                match token % 4 {
                    TIMER_SUBMIT => ended = on_submit_timer(dev, &mut sources[i], i, now),
                    TIMER_BURST => {
                        let s = &mut sources[i];
                        s.pending -= 1;
                        s.end_ns = now;
                        if !restart_burst(dev, s, i) {
                            running -= 1;
                            work.push(Hooked::Finished(i));
                        }
                    }
                    _ => {
                        hook_timers -= 1;
                        work.push(Hooked::Timer(i as u32));
                    }
                }
            }
        }
        if let Some(i) = ended {
            if source_ended(dev, &mut sources[i], i, now, single) {
                running -= 1;
                work.push(Hooked::Finished(i));
            }
        }
        if !work.is_empty() {
            react(dev, sources, &mut work, &mut running, &mut hook_timers);
        }
        if now >= next_progress {
            report_progress(&mut progress, &sources[0], now, &mut next_progress);
        }
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
                dev.set_timer(now + idle, i as u32 * 4 + TIMER_BURST);
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

/// [`drive_sources`]' loop for one plain source ([`Source::plain`]):
/// every completion is answered by the next command while the limits
/// allow. Returns true when the source ended (nothing outstanding), false
/// when the device ran out of events first.
fn drive_plain(
    dev: &mut Device,
    s: &mut Source,
    progress: &mut Option<(&mut ProgressFn, usize, usize)>,
    next_progress: &mut u64,
) -> bool {
    while let Some(ev) = dev.next_event() {
        let Event::Completion(_) = ev else { unreachable!("a plain source sets no timers and the hook has none") };
        let now = dev.now();
        s.outstanding -= 1;
        s.completions += 1;
        if s.can_issue(now) {
            s.submit(dev, 0);
        }
        if s.outstanding == 0 {
            s.end_ns = now;
            return true;
        }
        if now >= *next_progress {
            report_progress(progress, s, now, next_progress);
        }
    }
    false
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
