//! A resource's busy time: the intervals in which a die, a channel bus or
//! a host link direction is occupied, with first-come-first-served
//! reservation and back-filling of gaps. The flash scheduler
//! ([`super::flash`]) and the host interface ([`super::host`]) time every
//! transfer and array operation on these.
//!
//! Left out: priorities between reservations (an earlier reservation is
//! never moved by a later one).

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
            t = t.max(e);
            i += 1;
            scanned += 1;
            if scanned == MAX_GAP_SCAN {
                // A long run of gaps too small to use (a die or bus booked
                // far ahead by GC): go to the end rather than search on, so
                // that a reservation costs O(1) amortised, not O(bookings).
                i = live.len();
                t = t.max(self.free_at());
                break;
            }
        }
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
}
