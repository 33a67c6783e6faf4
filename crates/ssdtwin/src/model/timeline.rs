//! A resource's busy time: the intervals in which a die, a channel bus or
//! a host link direction is occupied, with first-come-first-served
//! reservation and back-filling of gaps. The flash scheduler
//! ([`super::flash`]) and the host interface ([`super::host`]) time every
//! transfer and array operation on these.
//!
//! An [`OpLog`] is a plain record of operations booked on a timeline, one
//! interval each, so that the operation in progress at a time can be
//! found; the flash scheduler uses that to let host reads go ahead of
//! queued work.
//!
//! Left out: moving a reservation once made (an operation that another
//! goes ahead of keeps its times; the scheduler charges the delay to the
//! next reservation instead).

/// Gaps examined before a reservation gives up back-filling.
const MAX_GAP_SCAN: usize = 256;

/// Where a reservation would go: the index (in the live intervals) it
/// would take and its start ([`Timeline::find`]).
pub type Slot = (usize, u64);

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
        prune_ended(&mut self.busy, &mut self.head, now);
    }

    /// Forget every interval.
    pub fn clear(&mut self) {
        self.busy.clear();
        self.head = 0;
    }

    /// Reserve `dur` ns at the earliest time ≥ `earliest` at which the
    /// resource is free for that long; returns the start time.
    #[inline(always)]
    pub fn reserve(&mut self, earliest: u64, dur: u64) -> u64 {
        // Common cases: after everything booked, or from within the last
        // interval (nothing is free before its end then; the new interval
        // extends it).
        let live = self.head < self.busy.len();
        match self.busy.last_mut() {
            Some(last) if live && earliest <= last.1 => {
                if earliest >= last.0 && dur > 0 {
                    let t = last.1;
                    last.1 = t + dur;
                    t
                } else {
                    self.reserve_before_end(earliest, dur)
                }
            }
            _ => {
                self.busy.push((earliest, earliest + dur));
                earliest
            }
        }
    }

    /// [`Timeline::reserve`] of a time before the end of what is booked:
    /// the first gap that fits, merged with the intervals it touches.
    #[inline(never)]
    fn reserve_before_end(&mut self, earliest: u64, dur: u64) -> u64 {
        let slot = self.fit(earliest, dur);
        self.book(slot, dur)
    }

    /// Where [`Timeline::reserve`] would book `dur` ns at or after
    /// `earliest`: a [`Slot`] to [`Timeline::book`] once other resources
    /// agree, so that a reservation found need not be searched for again.
    #[inline(always)]
    pub fn find(&self, earliest: u64, dur: u64) -> Slot {
        if earliest >= self.free_at() {
            return (self.live().len(), earliest);
        }
        self.fit(earliest, dur)
    }

    /// Book `dur` ns at a slot [`Timeline::find`] returned for the same
    /// `dur`, with nothing booked on this timeline since: exactly what
    /// [`Timeline::reserve`] would have booked (intervals it touches are
    /// merged). Returns the start time.
    #[inline]
    pub fn book(&mut self, (i, t): Slot, dur: u64) -> u64 {
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
    ///
    /// Intervals that touch are merged when booked, so every interval
    /// after the first one met is a gap passed over: the search is a scan
    /// for the first gap of `dur` ns among at most [`MAX_GAP_SCAN`] of
    /// them. After that many gaps too small to use (a die or bus booked
    /// far ahead by GC) it goes to the end rather than search on, so that
    /// a reservation costs O(1) amortised, not O(bookings).
    #[inline(always)]
    fn fit(&self, earliest: u64, dur: u64) -> Slot {
        let live = self.live();
        let first = first_ending_after(live, earliest);
        let Some(&(s, e)) = live.get(first) else {
            return (first, earliest);
        };
        if s >= earliest + dur {
            return (first, earliest);
        }
        // The gaps after it, each between one interval's end and the
        // next one's start (the one before the first counts if any).
        let passed = usize::from(s > earliest);
        let last = live.len().min(first + 1 + MAX_GAP_SCAN - passed);
        let mut end = e;
        for (k, &(s, e)) in live[first + 1..last].iter().enumerate() {
            if s >= end + dur {
                return (first + 1 + k, end);
            }
            end = e;
        }
        (live.len(), self.free_at())
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
            // Only this timeline decides, and reserving from `earliest`
            // books the first fit at or after it: searching for that fit
            // first would search this timeline twice (with programs
            // queued on a die, a scan of its gaps each time).
            return self.reserve(earliest, dur);
        }
        let t = self.first_fit_clear_of(earliest, dur, other);
        self.reserve(t, dur)
    }

    /// Start of what [`Timeline::reserve_clear_of`] would reserve,
    /// reserving nothing.
    #[inline]
    pub fn first_fit_clear_of(&self, earliest: u64, dur: u64, other: &Timeline) -> u64 {
        if other.free_at() <= earliest {
            return self.first_fit(earliest, dur);
        }
        let mut t = earliest;
        loop {
            let here = self.first_fit(t, dur);
            t = other.first_fit(here, dur);
            if t == here {
                return t;
            }
        }
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

/// Index of the first interval of `live` (sorted, non-overlapping) that
/// ends after `t`. When a reservation must search at all, it is most
/// often for a time inside the last interval (a transfer after the array
/// read just booked: 42% of the searches of 4 KiB random reads, 65% of a
/// trace replay's), so that one is looked at before the binary search.
#[inline]
fn first_ending_after(live: &[(u64, u64)], t: u64) -> usize {
    match live.split_last() {
        None => 0,
        Some((&(_, end), _)) if end <= t => live.len(),
        Some((_, rest)) => {
            if rest.last().is_none_or(|&(_, end)| end <= t) {
                rest.len()
            } else {
                rest.partition_point(|&(_, end)| end <= t)
            }
        }
    }
}

/// Move `head` past the leading intervals of `v` that ended at or before
/// `now`, and drop them now and then (when they are at least half of it),
/// so that the live part `v[head..]` stays one slice.
#[inline]
fn prune_ended(v: &mut Vec<(u64, u64)>, head: &mut usize, now: u64) {
    while *head < v.len() && v[*head].1 <= now {
        *head += 1;
    }
    if *head >= 64 && *head * 2 >= v.len() {
        v.drain(..*head);
        *head = 0;
    }
}

/// Operations booked on a [`Timeline`], one interval each (touching
/// operations are not merged), to find the one in progress at a time
/// ([`OpLog::op_end_at`]).
///
/// Recording is a push: an operation that back-fills a gap arrives out
/// of order, and the live part is sorted again only when it is next
/// looked up, so a drive that never asks (no host reads behind queued
/// work) pays nothing for the order.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct OpLog {
    ops: Vec<(u64, u64)>,
    head: usize,
    /// Whether the live part is known to be in start order (not saved:
    /// a loaded log is sorted at its first lookup).
    #[serde(skip)]
    sorted: bool,
}

impl OpLog {
    /// Record an operation of `dur` ns starting at `start` (reserved on
    /// a timeline by the caller, so it overlaps no other).
    #[inline]
    pub fn record(&mut self, start: u64, dur: u64) {
        if self.ops.last().is_some_and(|&(s, _)| s > start) {
            self.sorted = false;
        }
        self.ops.push((start, start + dur));
    }

    /// End of the operation in progress at `t` (`None`: none is).
    #[inline]
    pub fn op_end_at(&mut self, t: u64) -> Option<u64> {
        if !self.sorted {
            // Stable: operations recorded with one start keep their order.
            self.ops[self.head..].sort_by_key(|&(s, _)| s);
            self.sorted = true;
        }
        let live = &self.ops[self.head..];
        let i = live.partition_point(|&(_, end)| end <= t);
        (i < live.len() && live[i].0 <= t).then(|| live[i].1)
    }

    /// Forget operations that ended at or before `now` (those recorded
    /// out of order may stay until the ones before them end; a lookup
    /// skips them).
    #[inline]
    pub fn prune(&mut self, now: u64) {
        prune_ended(&mut self.ops, &mut self.head, now);
    }

    /// Forget every operation.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.head = 0;
        self.sorted = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

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

    /// First fit by walking the intervals one at a time, counting the
    /// gaps passed over (the search as first written).
    fn fit_walking(t: &Timeline, earliest: u64, dur: u64) -> (usize, u64) {
        let live = t.live();
        let mut at = earliest;
        let mut i = live.partition_point(|&(_, end)| end <= at);
        let mut scanned = 0;
        while i < live.len() {
            let (s, e) = live[i];
            if s >= at + dur {
                break;
            }
            if s > at {
                scanned += 1;
            }
            at = at.max(e);
            i += 1;
            if scanned == MAX_GAP_SCAN {
                return (live.len(), at.max(t.free_at()));
            }
        }
        (i, at)
    }

    #[test]
    fn first_fit_agrees_with_walking_the_intervals() {
        // Timelines with many small gaps (so that the gap limit is met),
        // booked and pruned at random; every search, from inside an
        // interval (the last one included), inside a gap and before
        // everything, must agree, and so must every reservation.
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut next = |n: u64| rng.random_range(0..n);
        // The draws of the extra bookings, apart from the others.
        let mut extra = Pcg64Mcg::seed_from_u64(8);
        let mut gave_up = 0;
        let mut in_last = 0;
        for round in 0..40 {
            let mut t = Timeline::default();
            let mut now = 0;
            let mut booked_end = 0;
            // Short bookings scattered over a window: hundreds of
            // intervals with gaps of a few tens of ns.
            let window = 20_000 + round * 5_000;
            for _ in 0..3000 {
                // Now and then from within the last interval, as a
                // transfer booked after the operation before it.
                let earliest = match t.live().last() {
                    Some(&(s, e)) if extra.random_range(0..16u32) == 0 => s + extra.random_range(0..e - s),
                    _ => now + next(window),
                };
                let dur = 1 + next(8);
                for q in 0..4 {
                    let (e, d) = if q == 0 { (earliest, dur) } else { (now + next(window), 1 + next(80)) };
                    let walked = fit_walking(&t, e, d);
                    assert_eq!(t.fit(e, d), walked, "round {round}, fit({e}, {d})");
                    let first = t.live().partition_point(|&(_, end)| end <= e);
                    gave_up += usize::from(walked.0 == t.len() && t.len() > first + MAX_GAP_SCAN);
                }
                // The reservation starts where the search says, and the
                // intervals stay sorted, apart and non-empty.
                let want = fit_walking(&t, earliest, dur).1;
                in_last += usize::from(t.live().last().is_some_and(|&(s, e)| s <= earliest && earliest < e));
                assert_eq!(t.reserve(earliest, dur), want, "round {round}, reserve({earliest}, {dur})");
                booked_end = booked_end.max(want + dur);
                assert_eq!(t.free_at(), booked_end, "round {round}: the booked end");
                let live = t.live();
                assert!(live.iter().all(|&(s, e)| s < e) && live.windows(2).all(|w| w[0].1 < w[1].0));
                if next(100) == 0 {
                    now += next(window / 20);
                    t.prune(now);
                }
            }
        }
        // The gap limit was met (and agreed on) many times, and so was a
        // reservation from within the last interval.
        assert!(gave_up > 1000, "{gave_up}");
        assert!(in_last > 1000, "{in_last}");
    }

    #[test]
    fn a_slot_found_and_booked_is_the_reservation_reserve_makes() {
        // Two copies of one timeline, one booked with `reserve`, the other
        // with `find` then `book`: every start and every interval (merges
        // included) must agree, through pruning to empty, bookings after
        // the end, touching it, inside the last interval and in gaps.
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        for round in 0..20 {
            let (mut a, mut b) = (Timeline::default(), Timeline::default());
            let mut now = 0u64;
            for step in 0..5000 {
                let earliest = match rng.random_range(0..4u32) {
                    0 => a.free_at(),
                    1 => a.live().last().map_or(now, |&(s, e)| s + rng.random_range(0..e - s)),
                    _ => now + rng.random_range(0..2_000),
                };
                let dur = rng.random_range(1..60);
                let slot = b.find(earliest, dur);
                assert_eq!(slot.1, a.first_fit(earliest, dur), "round {round} step {step}");
                assert_eq!(b.book(slot, dur), a.reserve(earliest, dur), "round {round} step {step}");
                assert_eq!(a.live(), b.live(), "round {round} step {step}");
                if rng.random_range(0..50u32) == 0 {
                    now += rng.random_range(0..3_000);
                    a.prune(now);
                    b.prune(now);
                }
            }
        }
    }

    #[test]
    fn reserving_clear_of_another_timeline_is_searching_then_reserving() {
        // `reserve_clear_of` reserves from `earliest` directly when the
        // other timeline is free by then, without the search it used to
        // make first: a copy booked the old way (`first_fit_clear_of`,
        // then `reserve` at the time found) must agree on every start and
        // interval, with the other timeline free, busy past `earliest`,
        // and queued work booked far ahead of it (programs queued on a
        // die, which the skipped search scanned).
        let mut rng = Pcg64Mcg::seed_from_u64(12);
        for round in 0..20 {
            let (mut a, mut b, mut other) = (Timeline::default(), Timeline::default(), Timeline::default());
            let mut now = 0u64;
            for step in 0..5000 {
                if rng.random_range(0..8u32) == 0 {
                    // The other queue books now and then, sometimes ahead.
                    let at = now + rng.random_range(0..3_000);
                    other.reserve(at, rng.random_range(1..80));
                }
                let earliest = match rng.random_range(0..4u32) {
                    0 => a.free_at(),
                    1 => a.live().last().map_or(now, |&(s, e)| s + rng.random_range(0..e - s)),
                    _ => now + rng.random_range(0..2_000),
                };
                let dur = rng.random_range(1..60);
                let old = {
                    let t = b.first_fit_clear_of(earliest, dur, &other);
                    b.reserve(t, dur)
                };
                assert_eq!(a.reserve_clear_of(earliest, dur, &other), old, "round {round} step {step}");
                assert_eq!(a.live(), b.live(), "round {round} step {step}");
                if rng.random_range(0..50u32) == 0 {
                    now += rng.random_range(0..3_000);
                    a.prune(now);
                    b.prune(now);
                    other.prune(now);
                }
            }
        }
    }

    #[test]
    fn recorded_operations_keep_their_ends() {
        let mut t = OpLog::default();
        t.record(100, 100);
        t.record(0, 100); // back-filled before it, and touching: not merged
        t.record(300, 50);
        assert_eq!(t.op_end_at(50), Some(100));
        assert_eq!(t.op_end_at(100), Some(200));
        assert_eq!(t.op_end_at(200), None);
        assert_eq!(t.op_end_at(320), Some(350));
        // Pruning forgets what ended; a later back-fill is found too.
        t.prune(200);
        t.record(220, 30);
        assert_eq!(t.op_end_at(210), None);
        assert_eq!(t.op_end_at(230), Some(250));
        assert_eq!(t.op_end_at(310), Some(350));
    }
}
