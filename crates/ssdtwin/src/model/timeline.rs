//! A resource's busy time: the intervals in which a die, a channel bus or
//! a host link direction is occupied, with first-come-first-served
//! reservation and back-filling of gaps. The flash scheduler
//! ([`super::flash`]) and the host interface ([`super::host`]) time every
//! transfer and array operation on these.
//!
//! A timeline may also be a plain record of operations, one interval each
//! ([`Timeline::record_op`]), so that the operation in progress at a time
//! can be found ([`Timeline::op_end_at`]); the flash scheduler uses that
//! to let host reads go ahead of queued work.
//!
//! Left out: moving a reservation once made (an operation that another
//! goes ahead of keeps its times; the scheduler charges the delay to the
//! next reservation instead).

/// Gaps examined before a reservation gives up back-filling.
const MAX_GAP_SCAN: usize = 256;

/// Busy intervals of one resource, sorted and non-overlapping.
///
/// A vector whose live part starts at `head`: pruning advances `head` and
/// compacts now and then, so lookups are binary searches over one slice.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Timeline {
    busy: Vec<(u64, u64)>,
    head: usize,
}

impl Timeline {
    /// The live intervals.
    #[inline]
    fn live(&self) -> &[(u64, u64)] {
        &self.busy[self.head..]
    }

    /// Forget intervals that ended at or before `now`.
    #[inline]
    pub fn prune(&mut self, now: u64) {
        while self.head < self.busy.len() && self.busy[self.head].1 <= now {
            self.head += 1;
        }
        if self.head >= 64 && self.head * 2 >= self.busy.len() {
            self.busy.drain(..self.head);
            self.head = 0;
        }
    }

    /// Forget every interval.
    pub fn clear(&mut self) {
        self.busy.clear();
        self.head = 0;
    }

    /// Reserve `dur` ns at the earliest time ≥ `earliest` at which the
    /// resource is free for that long; returns the start time.
    pub fn reserve(&mut self, earliest: u64, dur: u64) -> u64 {
        // Common case: after everything booked.
        if self.head == self.busy.len() {
            self.busy.push((earliest, earliest + dur));
            return earliest;
        }
        let last = self.busy.len() - 1;
        if earliest >= self.busy[last].1 {
            if earliest == self.busy[last].1 {
                self.busy[last].1 = earliest + dur;
            } else {
                self.busy.push((earliest, earliest + dur));
            }
            return earliest;
        }
        let (i, t) = self.fit(earliest, dur);
        let live = self.live();
        let end = t + dur;
        let len = live.len();
        // Merge with the neighbours it touches.
        let touches_prev = i > 0 && live[i - 1].1 == t;
        let touches_next = i < len && live[i].0 == end;
        let i = self.head + i;
        match (touches_prev, touches_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = t,
            (false, false) => self.busy.insert(i, (t, end)),
        }
        t
    }

    /// Where the first gap of `dur` ns at or after `earliest` lies: the
    /// index (in the live intervals) the reservation would take, and its
    /// start.
    #[inline]
    fn fit(&self, earliest: u64, dur: u64) -> (usize, u64) {
        let live = self.live();
        let mut t = earliest;
        // First interval that ends after `earliest`.
        let mut i = live.partition_point(|&(_, end)| end <= t);
        let mut scanned = 0;
        while i < live.len() {
            let (s, e) = live[i];
            if s >= t + dur {
                break;
            }
            if s > t {
                // A gap, too small (intervals that touch are one busy run).
                scanned += 1;
            }
            t = t.max(e);
            i += 1;
            if scanned == MAX_GAP_SCAN {
                // A long run of gaps too small to use (a die or bus booked
                // far ahead by GC): go to the end rather than search on, so
                // that a reservation costs O(1) amortised, not O(bookings).
                i = live.len();
                t = t.max(self.free_at());
                break;
            }
        }
        (i, t)
    }

    /// Start of the first gap of `dur` ns at or after `earliest` (what
    /// [`Timeline::reserve`] would return), reserving nothing.
    #[inline]
    pub fn first_fit(&self, earliest: u64, dur: u64) -> u64 {
        if earliest >= self.free_at() {
            return earliest;
        }
        self.fit(earliest, dur).1
    }

    /// [`Timeline::reserve`] at the first time at or after `earliest` at
    /// which `other` is free for `dur` ns too (two queues of one resource).
    #[inline]
    pub fn reserve_clear_of(&mut self, earliest: u64, dur: u64, other: &Timeline) -> u64 {
        if other.free_at() <= earliest {
            return self.reserve(earliest, dur);
        }
        let mut t = earliest;
        loop {
            let here = self.first_fit(t, dur);
            t = other.first_fit(here, dur);
            if t == here {
                return self.reserve(t, dur);
            }
        }
    }

    /// End of the interval in progress at `t` (`None`: free at `t`): one
    /// operation's end on a timeline of [`Timeline::record_op`]s.
    #[inline]
    pub fn op_end_at(&self, t: u64) -> Option<u64> {
        let live = self.live();
        let i = live.partition_point(|&(_, end)| end <= t);
        (i < live.len() && live[i].0 <= t).then(|| live[i].1)
    }

    /// Record an operation of `dur` ns starting at `start` as an interval
    /// of its own, without looking for room (the caller reserved it on
    /// another timeline): [`Timeline::op_end_at`] then finds where it ends.
    #[inline]
    pub fn record_op(&mut self, start: u64, dur: u64) {
        if self.busy.last().is_none_or(|&(s, _)| s <= start) {
            self.busy.push((start, start + dur));
            return;
        }
        let i = self.head + self.live().partition_point(|&(s, _)| s <= start);
        self.busy.insert(i, (start, start + dur));
    }

    /// Time at which all reserved work ends.
    pub fn free_at(&self) -> u64 {
        self.live().last().map_or(0, |&(_, e)| e)
    }

    /// Whether the resource has no reservation ending after `now`.
    pub fn idle_at(&self, now: u64) -> bool {
        self.free_at() <= now
    }

    /// Whether the resource is busy at `t`.
    pub fn busy_at(&self, t: u64) -> bool {
        let live = self.live();
        let i = live.partition_point(|&(_, end)| end <= t);
        i < live.len() && live[i].0 <= t
    }

    /// Number of live intervals (tests).
    pub fn len(&self) -> usize {
        self.busy.len() - self.head
    }

    /// Whether no interval is booked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_backfills_gaps_and_merges() {
        let mut t = Timeline::default();
        assert_eq!(t.reserve(100, 50), 100); // [100,150)
        assert_eq!(t.reserve(0, 50), 0); // [0,50) before it
        assert_eq!(t.reserve(0, 60), 150); // gap [50,100) too small
        assert_eq!(t.reserve(0, 50), 50); // fills the gap exactly, merges all
        assert_eq!(t.len(), 1);
        assert_eq!(t.free_at(), 210);
        t.prune(210);
        assert!(t.idle_at(210));
    }

    #[test]
    fn recorded_operations_keep_their_ends() {
        let mut t = Timeline::default();
        t.record_op(0, 100);
        t.record_op(100, 100); // back to back, not merged
        assert_eq!(t.len(), 2);
        assert_eq!(t.op_end_at(50), Some(100));
        assert_eq!(t.op_end_at(100), Some(200));
        assert_eq!(t.op_end_at(200), None);
        assert_eq!(t.free_at(), 200);
    }
}
