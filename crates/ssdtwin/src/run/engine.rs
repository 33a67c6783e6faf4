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
#[derive(Debug, Clone, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
    now: u64,
}

impl EventQueue {
    /// Current virtual time, ns.
    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Schedule `kind` at `time` (not before now).
    #[inline]
    pub fn schedule(&mut self, time: u64, kind: EventKind) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        self.seq += 1;
        self.heap.push(Reverse(Event { time: time.max(self.now), seq: self.seq, kind }));
    }

    /// Take the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let Reverse(e) = self.heap.pop()?;
        self.now = e.time;
        Some(e)
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(e)| e.time)
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no events wait.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Move the clock forward to `t` without an event (nothing pending
    /// before `t` may exist).
    pub fn advance_to(&mut self, t: u64) {
        debug_assert!(self.heap.peek().is_none_or(|Reverse(e)| e.time >= t));
        self.now = self.now.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
