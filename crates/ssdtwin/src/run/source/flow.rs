//! fio's flow control between jobs (`flow`, `flow_id`, `flow_sleep`):
//! what a [`Source`] does with its [`Flow`].
//!
//! As fio (flow.c, backend.c `do_io` and `do_verify`): every job of the
//! job file with a non-zero `flow` weight joins its `flow_id`'s flow when
//! the file is read — whether it has started or not — adding its weight
//! to the flow's total; the flow's shared counter starts at 1. Before
//! each command it would issue, a job compares its own counter's share of
//! the shared counter with its weight's share of the total weight; if
//! its share is larger it is held, otherwise both counters count one and
//! it issues. A held job without `flow_sleep` retries at once (fio spins
//! on the check): in the twin it retries whenever another job's event
//! may have moved the counters ([`crate::run::driver`]). With
//! `flow_sleep`, it first waits for its commands in flight to complete
//! (fio's `io_u_quiesce`), then sleeps that long in virtual time and
//! retries. When a job ends it leaves the flow: its counter and weight
//! are taken off the flow's. The weights are fio's unsigned ints
//! (`flow=-1` is 4294967295, and the total wraps as fio's does), the
//! ratios its doubles.
//!
//! A held job is not idle: its hold counts as a pending command, so it
//! does not end while held. A time-limited job held until its runtime is
//! over ends then (fio checks the runtime before the flow). A job held
//! by a member that cannot start until it ends (a `stonewall` between
//! them) would spin forever in fio; the twin reports it as an error
//! ([`crate::run::jobs`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use super::Source;
use crate::run::device::Device;
use crate::run::driver::{Timer, TimerKind};
use crate::run::workload::Flow;

/// One flow's shared state (fio's `struct fio_flow`). Atomics only so
/// that a source stays `Send`; one thread runs a job file.
#[derive(Debug)]
pub(crate) struct FlowGroup {
    /// The flow's `flow_id`.
    pub(crate) id: i32,
    /// 1 plus the counters of the jobs in the flow.
    counter: AtomicU64,
    /// The weights of the jobs in the flow (wrapping, as fio's unsigned).
    weight: AtomicU32,
}

impl FlowGroup {
    /// A flow with no member yet.
    pub(crate) fn new(id: i32) -> FlowGroup {
        FlowGroup { id, counter: AtomicU64::new(1), weight: AtomicU32::new(0) }
    }
}

/// Why a job is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Not held.
    No,
    /// Retrying whenever the counters may have moved (no `flow_sleep`).
    Spinning,
    /// Waiting for its commands in flight before it sleeps.
    Quiescing,
    /// Sleeping `flow_sleep` (a [`TimerKind::Flow`] timer is set).
    Sleeping,
}

/// A job's place in its flow.
#[derive(Debug)]
pub(crate) struct FlowState {
    group: Arc<FlowGroup>,
    weight: u32,
    sleep_ns: u64,
    /// Commands it issued past the check (fio's `td->flow_counter`).
    counter: u64,
    hold: Hold,
    /// Still in the flow (until the job ends).
    joined: bool,
}

impl FlowState {
    /// Join `group` with `flow`'s weight (when the job file is read).
    pub(crate) fn join(flow: Flow, group: Arc<FlowGroup>) -> FlowState {
        group.weight.fetch_add(flow.weight, Relaxed);
        FlowState {
            group,
            weight: flow.weight,
            sleep_ns: flow.sleep_us as u64 * 1_000,
            counter: 0,
            hold: Hold::No,
            joined: true,
        }
    }

    /// fio's `flow_threshold_exceeded` test: the job's share of the
    /// counts is above its share of the weights.
    fn exceeded(&self) -> bool {
        let counter_ratio = self.counter as f64 / self.group.counter.load(Relaxed) as f64;
        let weight_ratio = self.weight as f64 / self.group.weight.load(Relaxed) as f64;
        counter_ratio > weight_ratio
    }

    /// Leave the flow (the job ended: fio's `flow_exit_job`).
    fn leave(&mut self) {
        if self.joined {
            self.joined = false;
            self.group.counter.fetch_sub(self.counter, Relaxed);
            self.group.weight.fetch_sub(self.weight, Relaxed);
        }
    }
}

impl Source {
    /// Before a command is issued: fio's flow check. `true`: the job is
    /// held and issues nothing now (the hold is a pending command until
    /// it is released; a job already held stays so).
    #[cold]
    pub(super) fn flow_holds(&mut self, dev: &mut Device, me: u32) -> bool {
        let Some(f) = self.flow.as_mut() else { return false };
        if f.hold != Hold::No {
            return true;
        }
        if !f.exceeded() {
            f.group.counter.fetch_add(1, Relaxed);
            f.counter += 1;
            return false;
        }
        self.pending += 1;
        f.hold = if f.sleep_ns == 0 {
            Hold::Spinning
        } else if self.outstanding > 0 {
            Hold::Quiescing
        } else {
            Timer { source: me, kind: TimerKind::Flow }.set(dev, dev.now() + f.sleep_ns);
            Hold::Sleeping
        };
        true
    }

    /// Whether the job is held (it issues nothing until released).
    #[inline]
    pub(super) fn flow_held(&self) -> bool {
        self.flow.as_ref().is_some_and(|f| f.hold != Hold::No)
    }

    /// With nothing in flight: a job quiescing before its `flow_sleep`
    /// starts sleeping.
    #[cold]
    pub(super) fn flow_quiesced(&mut self, dev: &mut Device, me: u32) {
        if let Some(f) = self.flow.as_mut().filter(|f| f.hold == Hold::Quiescing) {
            f.hold = Hold::Sleeping;
            Timer { source: me, kind: TimerKind::Flow }.set(dev, dev.now() + f.sleep_ns);
        }
    }

    /// Its `flow_sleep` is over: retry, filling its queue (each command
    /// checked again). `true`: nothing is left outstanding or pending.
    #[cold]
    pub(crate) fn on_flow_timer(&mut self, dev: &mut Device, me: u32) -> bool {
        self.release_hold();
        self.fill(dev, me);
        self.idle_after_hold(dev.now())
    }

    /// A spinning job retries after another job's event (`me` its
    /// index): `None` while it stays held; `Some(idle)` once released and
    /// its queue filled again, `idle` when nothing is outstanding or
    /// pending (its limits or runtime are reached).
    pub(crate) fn flow_retry(&mut self, dev: &mut Device, me: u32) -> Option<bool> {
        let f = self.flow.as_ref().filter(|f| f.hold == Hold::Spinning)?;
        let over = self.deadline.is_some_and(|d| dev.now() >= d);
        if f.exceeded() && !over {
            return None;
        }
        self.release_hold();
        self.fill(dev, me);
        Some(self.idle_after_hold(dev.now()))
    }

    /// After a hold is released at `now`: `true` when nothing is
    /// outstanding or pending; the job then ran until now (it was held,
    /// not done).
    fn idle_after_hold(&mut self, now: u64) -> bool {
        let idle = self.outstanding == 0 && self.pending == 0;
        if idle {
            self.end_ns = now;
        }
        idle
    }

    /// The hold is over (its pending command with it).
    fn release_hold(&mut self) {
        if let Some(f) = self.flow.as_mut().filter(|f| f.hold != Hold::No) {
            f.hold = Hold::No;
            self.pending -= 1;
        }
    }

    /// A spinning job's runtime end (`None`: none), when the driver has
    /// nothing else to wake it.
    pub(crate) fn flow_spin_deadline(&self) -> Option<u64> {
        self.flow.as_ref().filter(|f| f.hold == Hold::Spinning && !self.finished).and(self.deadline)
    }

    /// The flow it is held in forever (`None`: not held), for the error.
    pub(crate) fn flow_stuck(&self) -> Option<i32> {
        self.flow.as_ref().filter(|f| f.hold != Hold::No && !self.finished).map(|f| f.group.id)
    }

    /// The job ended: it leaves its flow.
    pub(crate) fn leave_flow(&mut self) {
        if let Some(f) = self.flow.as_mut() {
            f.leave();
        }
    }
}
