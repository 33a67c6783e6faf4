//! NVMe submission-queue arbitration: which waiting command the
//! controller fetches next when a queue slot of the drive frees.
//!
//! The NVMe base specification (rev. 2.0, §3.4.4 "Command Arbitration")
//! defines two mechanisms every controller may use:
//!
//! - **round robin**: the submission queues take turns, each giving up to
//!   the *arbitration burst* of commands per turn;
//! - **weighted round robin with urgent priority class**: queues are
//!   created in one of four priority classes. Urgent queues are served
//!   strictly first; the high, medium and low classes then share the
//!   controller by weighted round robin, each getting up to its weight of
//!   commands per round (the Arbitration feature, Set Features FID 01h:
//!   HPW, MPW, LPW are 0's based, so a field of `w − 1` gives `w`
//!   commands), in turns of at most the arbitration burst (AB, 2^AB
//!   commands; 111b means no limit).
//!
//! The twin keeps one submission queue per priority class: every command
//! of a class waits in arrival order in its class's queue. Round robin is
//! the drive's default and is served in arrival order across all the
//! host's commands (what today's FIFO admission in
//! [`crate::model::host::HostInterface::admit`] gives; round robin over
//! per-job queues would interleave jobs' backlogs one command at a time,
//! which the twin does not model). Weighted round robin is what this
//! module computes; the host side (which command belongs to which class)
//! is [`QueueClass::of_ioprio`]. MQSim models the same four classes per
//! I/O flow (CMU-SAFARI/MQSim, `IO_Flow_Priority_Class`: URGENT, HIGH,
//! MEDIUM, LOW; one NVMe submission queue per flow).
//!
//! Left out: the Admin queue (the twin issues no admin commands during
//! I/O), round robin among several queues of one class, and vendor-
//! specific arbitration.

use std::collections::VecDeque;

use crate::model::params::{Arbitration, ArbitrationSpec};

/// NVMe queue priority classes (Create I/O Submission Queue, QPRIO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum QueueClass {
    /// Served before every other class.
    Urgent = 0,
    /// Weighted round robin, weight `weights[0]`.
    High = 1,
    /// Weighted round robin, weight `weights[1]` (commands without a
    /// priority).
    Medium = 2,
    /// Weighted round robin, weight `weights[2]`.
    Low = 3,
}

/// Linux's I/O priority classes (include/uapi/linux/ioprio.h): the class
/// is bits 13–15 of an ioprio value, the level bits 0–2.
pub mod ioprio {
    /// No class set (the kernel treats it as best effort, level 4).
    pub const CLASS_NONE: u16 = 0;
    /// Real time.
    pub const CLASS_RT: u16 = 1;
    /// Best effort.
    pub const CLASS_BE: u16 = 2;
    /// Idle.
    pub const CLASS_IDLE: u16 = 3;
    /// An ioprio value from class, level and hint (fio's `ioprio_value`:
    /// class << 13 | hint << 3 | level).
    pub const fn value(class: u16, level: u16, hint: u16) -> u16 {
        class << 13 | hint << 3 | level
    }
    /// The class of an ioprio value.
    pub const fn class(v: u16) -> u16 {
        v >> 13
    }
    /// The level of an ioprio value.
    pub const fn level(v: u16) -> u16 {
        v & 7
    }
}

impl QueueClass {
    /// The NVMe class a command with Linux ioprio value `v` waits in.
    ///
    /// Linux itself maps no ioprio to an NVMe queue class (its NVMe driver
    /// creates every queue at the same priority). The twin's mapping
    /// follows the kernel's mq-deadline scheduler, which serves the three
    /// ioprio classes as three priorities (RT before BE before IDLE,
    /// levels ignored: block/mq-deadline.c, `ioprio_class_to_prio`), and
    /// gives the fourth NVMe class, urgent, to the highest real-time
    /// level: RT level 0 → urgent, RT levels 1–7 → high, BE (and no
    /// class) → medium, IDLE → low.
    pub const fn of_ioprio(v: u16) -> QueueClass {
        match ioprio::class(v) {
            ioprio::CLASS_RT if ioprio::level(v) == 0 => QueueClass::Urgent,
            ioprio::CLASS_RT => QueueClass::High,
            ioprio::CLASS_IDLE => QueueClass::Low,
            _ => QueueClass::Medium,
        }
    }
}

/// Commands waiting in the host's submission queues under weighted round
/// robin, and the arbiter's place in its round.
#[derive(Debug, Clone)]
pub struct Arbiter<T> {
    queues: [VecDeque<T>; 4],
    /// Commands per round of the high, medium and low classes.
    weights: [u32; 3],
    /// Commands a class may give in one turn (`u32::MAX`: no limit).
    burst: u32,
    /// Commands each weighted class may still give this round.
    credits: [u32; 3],
    /// The weighted class whose turn it is (0 high, 1 medium, 2 low).
    turn: usize,
    /// Commands taken in the current turn.
    taken: u32,
    waiting: usize,
}

impl<T> Arbiter<T> {
    /// An arbiter for `spec` (weighted round robin; `None` for round
    /// robin, which needs none).
    pub fn new(spec: &ArbitrationSpec, capacity: usize) -> Option<Arbiter<T>> {
        if spec.mechanism != Arbitration::WeightedRoundRobin {
            return None;
        }
        let q = || VecDeque::with_capacity(capacity);
        Some(Arbiter {
            queues: [q(), q(), q(), q()],
            weights: spec.weights,
            burst: spec.burst_commands(),
            credits: spec.weights,
            turn: 0,
            taken: 0,
            waiting: 0,
        })
    }

    /// Commands waiting.
    #[inline]
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// A command arrives in `class`'s queue.
    #[inline]
    pub fn push(&mut self, class: QueueClass, item: T) {
        self.queues[class as usize].push_back(item);
        self.waiting += 1;
    }

    /// The command the controller fetches next, if any waits: urgent
    /// first, then the weighted classes in turns of at most the burst,
    /// each up to its weight per round; a round ends (every class's
    /// credit restored) when no class with commands waiting has credit
    /// left.
    pub fn pop(&mut self) -> Option<T> {
        if let Some(item) = self.queues[QueueClass::Urgent as usize].pop_front() {
            self.waiting -= 1;
            return Some(item);
        }
        if self.waiting == 0 {
            return None;
        }
        loop {
            // Up to three turns to find a class with commands and credit,
            // then a new round.
            for _ in 0..3 {
                let c = self.turn;
                if self.credits[c] > 0 && self.taken < self.burst {
                    if let Some(item) = self.queues[1 + c].pop_front() {
                        self.credits[c] -= 1;
                        self.taken += 1;
                        self.waiting -= 1;
                        return Some(item);
                    }
                }
                self.turn = (c + 1) % 3;
                self.taken = 0;
            }
            let stuck = (0..3).all(|c| self.credits[c] == 0 || self.queues[1 + c].is_empty());
            if stuck {
                self.credits = self.weights;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(weights: [u32; 3], burst: u32) -> ArbitrationSpec {
        ArbitrationSpec { mechanism: Arbitration::WeightedRoundRobin, burst: Some(burst), weights }
    }

    /// Saturated queues with weights 4:2:1 and an unlimited burst: each
    /// round of 7 commands is 4 high, 2 medium, 1 low, in that order;
    /// urgent commands go first whenever they wait.
    #[test]
    fn weighted_round_robin_serves_saturated_classes_by_weight() {
        let mut a = Arbiter::new(&spec([4, 2, 1], 128), 64).unwrap();
        for i in 0..70 {
            a.push(QueueClass::High, ('H', i));
            a.push(QueueClass::Medium, ('M', i));
            a.push(QueueClass::Low, ('L', i));
        }
        a.push(QueueClass::Urgent, ('U', 0));
        assert_eq!(a.pop(), Some(('U', 0)));
        let round: String = (0..7).map(|_| a.pop().unwrap().0).collect();
        assert_eq!(round, "HHHHMML");
        let mut n = [0; 3];
        for _ in 0..7 * 9 {
            match a.pop().unwrap().0 {
                'H' => n[0] += 1,
                'M' => n[1] += 1,
                _ => n[2] += 1,
            }
        }
        assert_eq!(n, [36, 18, 9]);
        a.push(QueueClass::Urgent, ('U', 1));
        assert_eq!(a.pop(), Some(('U', 1)));
    }

    /// A burst of 2 interleaves the turns: H H M M L H H ... with weights
    /// 4:2:1, the round still 4:2:1.
    #[test]
    fn the_burst_limits_a_turn() {
        let mut a = Arbiter::new(&spec([4, 2, 1], 2), 64).unwrap();
        for i in 0..20 {
            a.push(QueueClass::High, ('H', i));
            a.push(QueueClass::Medium, ('M', i));
            a.push(QueueClass::Low, ('L', i));
        }
        let s: String = (0..14).map(|_| a.pop().unwrap().0).collect();
        assert_eq!(s, "HHMMLHHHHMMLHH");
    }

    /// An empty class gives its share to the others: with only low
    /// commands waiting, each is served at once.
    #[test]
    fn an_idle_class_leaves_its_share() {
        let mut a = Arbiter::new(&spec([8, 4, 1], 1), 8).unwrap();
        for i in 0..5 {
            a.push(QueueClass::Low, i);
        }
        assert_eq!((0..5).map(|_| a.pop().unwrap()).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(a.pop(), None);
    }

    #[test]
    fn ioprio_classes_map_to_queue_classes() {
        use ioprio::*;
        assert_eq!(QueueClass::of_ioprio(value(CLASS_RT, 0, 0)), QueueClass::Urgent);
        assert_eq!(QueueClass::of_ioprio(value(CLASS_RT, 3, 0)), QueueClass::High);
        assert_eq!(QueueClass::of_ioprio(value(CLASS_BE, 0, 0)), QueueClass::Medium);
        assert_eq!(QueueClass::of_ioprio(0), QueueClass::Medium);
        assert_eq!(QueueClass::of_ioprio(value(CLASS_IDLE, 7, 0)), QueueClass::Low);
    }
}
