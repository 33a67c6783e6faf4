//! Discrete-event engine: an integer-nanosecond clock and an event queue.
//!
//! Events are ordered by (time, sequence number): events at the same time
//! are processed in the order they were scheduled, so a run is a pure
//! function of its inputs and seed. Scheduling an event in the past is a
//! bug and panics in debug builds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens at an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKind {
    /// The command in the device's in-flight slot `n` completes.
    Complete(u32),
    /// A timer a workload driver set (think time, an arrival) with token `n`.
    Timer(u32),
    /// Check whether the host has been idle since activity generation `n`.
    IdleCheck(u32),
    /// A wait (idle phase, gap between bursts) with token `n` ends.
    WaitEnd(u32),
    /// A queue slot of the drive frees while commands wait in the host's
    /// arbitrated submission queues.
    Dispatch,
}

/// A scheduled event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// When, ns.
    pub time: u64,
    seq: u64,
    /// What.
    pub kind: EventKind,
}

impl Event {
    /// The queue's order: time, then scheduling order (sequence numbers
    /// are unique, so the kind never decides), as one number.
    #[inline]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

impl PartialOrd for Event {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// The event queue and the clock.
///
/// The event [`EventQueue::pop`] hands out stays at the top of the heap,
/// marked taken, until the queue is next used: a closed-loop driver
/// answers most completions with a new command at once, and that event
/// then replaces the taken one in a single sift instead of a pop and a
/// push.
#[derive(Debug, Clone, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
    now: u64,
    /// The top of `heap` was handed out by `pop` and is no longer queued.
    taken: bool,
}

impl EventQueue {
    /// Current virtual time, ns.
    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Schedule `kind` at `time` (not before now). Always inlined: it is
    /// one push on every submission path (left to the compiler, it was
    /// inlined into some and not others, which made a write's cost
    /// depend on which path submitted it).
    #[inline(always)]
    pub fn schedule(&mut self, time: u64, kind: EventKind) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        self.seq += 1;
        let e = Reverse(Event { time: time.max(self.now), seq: self.seq, kind });
        if std::mem::take(&mut self.taken) {
            // Overwrite the taken top; the heap restores its order when
            // the `PeekMut` is dropped.
            *self.heap.peek_mut().expect("a taken event is in the heap") = e;
        } else {
            self.heap.push(e);
        }
    }

    /// Drop the event handed out last, if it is still in the heap.
    #[inline]
    fn drop_taken(&mut self) {
        if std::mem::take(&mut self.taken) {
            self.heap.pop();
        }
    }

    /// Take the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.drop_taken();
        let &Reverse(e) = self.heap.peek()?;
        self.taken = true;
        self.now = e.time;
        Some(e)
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<u64> {
        self.drop_taken();
        self.heap.peek().map(|Reverse(e)| e.time)
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.taken)
    }

    /// Whether no events wait.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Move the clock forward to `t` without an event (nothing pending
    /// before `t` may exist).
    pub fn advance_to(&mut self, t: u64) {
        self.drop_taken();
        debug_assert!(self.heap.peek().is_none_or(|Reverse(e)| e.time >= t));
        self.now = self.now.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn equal_times_keep_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(10, EventKind::Timer(2));
        q.schedule(5, EventKind::Timer(9));
        q.schedule(10, EventKind::Complete(1));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.kind)).collect();
        assert_eq!(order, vec![(5, EventKind::Timer(9)), (10, EventKind::Timer(2)), (10, EventKind::Complete(1))]);
        assert_eq!(q.now(), 10);
    }

    /// Popping leaves the event in the heap until the next call; the
    /// order of events, the clock and the count are as if it had been
    /// removed at once (checked against a sorted list).
    #[test]
    fn taken_events_leave_as_if_removed_at_once() {
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u64, EventKind)> = Vec::new();
        let mut seq = 0u64;
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut next = |n: u64| rng.random_range(0..n);
        for step in 0..20_000u32 {
            if next(3) > 0 || reference.is_empty() {
                // Ties at the current time included.
                let time = q.now() + next(4) * next(50);
                seq += 1;
                reference.push((time, seq, EventKind::Timer(step)));
                q.schedule(time, EventKind::Timer(step));
            } else {
                reference.sort();
                let (time, _, kind) = reference.remove(0);
                assert_eq!(q.peek_time(), Some(time));
                let e = q.pop().expect("an event waits");
                assert_eq!((e.time, e.kind), (time, kind));
                assert_eq!(q.now(), time);
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(q.is_empty(), reference.is_empty());
        }
    }
}
