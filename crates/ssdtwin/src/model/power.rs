//! Power: NVMe power states, autonomous power state transitions (APST)
//! and the energy the drive draws.
//!
//! Models (docs/architecture.md, "Power"): the drive's power is the sum of
//! - a **floor** set by its power state: `active_idle_w` while it is
//!   operational (PS0 with no power saving: controller, DRAM and link
//!   awake), or the resting power of the non-operational state APST has
//!   put it in;
//! - the **controller's** extra power while it works
//!   (`controller_active_w`): from a command's arrival to its completion
//!   and during background GC or folding steps (the union of those
//!   intervals, so overlapping commands count once);
//! - each **die's** power while its array reads, programs or erases
//!   (`nand_read_w`, `nand_program_w`, `nand_erase_w` per busy die; program
//!   and erase cost the most energy because they last longest);
//! - **data movement**: `channel_pj_per_byte` for every byte over the NAND
//!   buses (data and spare area) and `link_pj_per_byte` over the host link.
//!
//! **APST** is a host setting (a job option, off unless asked for). When
//! it is on, a drive that has been idle — no command outstanding, no
//! background work, no NAND operation in flight — moves after a timeout to
//! a deeper non-operational state, and from there to the next. The table
//! follows the heuristic of Linux's NVMe driver (`nvme_configure_apst`,
//! 2017): each state leads to the next deeper non-operational state whose
//! exit latency is at most 100 ms (`ps_max_latency_us`), entered after
//! 50 × (its entry + exit latency) of idle in the state before. A command
//! that arrives while the drive rests waits for it to wake: the state's
//! `wake_latency_us` (measured wake-ups are often much longer than the
//! advertised exit latency, which is the default).
//!
//! Energy is counted when work is scheduled (NAND operations are booked
//! when their command is submitted), so it is exact over a phase and
//! approximate within a second of the per-second series.
//!
//! **Link power management** is a second host setting (`link_pm`): a
//! drive whose file lists link power states (`[[power.link_state]]`: PCIe
//! ASPM L1.2 on NVMe, SATA partial, slumber and DevSleep) puts its link
//! in each after its idle time (`enter_after_us`) and draws that state's
//! `idle_w` there; a command waits its `exit_latency_us`. With both
//! settings on, the drive rests at each moment as deep as the deeper of
//! the two (the lower power, the longer wake).
//!
//! Operational power-state limits (PS1/PS2) are applied by the thermal
//! throttle ([`crate::model::thermal`]).
//!
//! Leaves out: the energy of entering a state, L1.2's dependence on the
//! host's LTR values, and the PHY's own power states below the ones a
//! drive file lists.

use crate::model::params::PowerSpec;

/// Linux's default `ps_max_latency_us`: deeper states wake slower than this.
pub const APST_MAX_LATENCY_US: u64 = 100_000;
/// Linux's idle time before a transition, as a multiple of the target
/// state's entry + exit latency.
pub const APST_IDLE_FACTOR: u64 = 50;

/// One step of the APST chain: after `after_ns` of idle (from the moment
/// the drive became idle), the drive rests in state `state`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ApstStep {
    /// Idle time before the state is entered, ns (cumulative).
    pub after_ns: u64,
    /// Power state index (PSn).
    pub state: usize,
    /// Power while resting in it, W.
    pub rest_w: f64,
    /// Time a command waits for the drive to wake from it, ns.
    pub wake_ns: u64,
}

/// The validated power model of a drive.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PowerModel {
    /// PS0 floor with no power saving, W.
    pub active_idle_w: f64,
    /// Controller power while commands or background work are in progress, W.
    pub controller_active_w: f64,
    /// Die power during an array read, program, erase, W.
    pub nand_w: [f64; 3],
    /// Energy per byte on the NAND buses, J.
    pub channel_j_per_byte: f64,
    /// Energy per byte on the host link, J.
    pub link_j_per_byte: f64,
    /// Largest power the drive may draw in PS0, W.
    pub max_w: f64,
    /// The APST chain from PS0 (empty: no non-operational state usable).
    pub apst: Vec<ApstStep>,
    /// The link power states' chain (`state` 0: the drive stays in PS0).
    #[serde(default)]
    pub link: Vec<ApstStep>,
    /// Both at once: at each step the deeper of the two.
    #[serde(default)]
    pub both: Vec<ApstStep>,
}

impl PowerModel {
    /// Derive the model from a validated spec.
    pub fn new(s: &PowerSpec) -> PowerModel {
        let mut apst = Vec::new();
        let mut after_ns = 0u64;
        for (i, st) in s.states.iter().enumerate() {
            if !st.non_operational || st.exit_latency_us > APST_MAX_LATENCY_US {
                continue;
            }
            after_ns += APST_IDLE_FACTOR * (st.entry_latency_us + st.exit_latency_us) * 1_000;
            apst.push(ApstStep {
                after_ns,
                state: i,
                rest_w: st.idle_w.unwrap_or(st.max_w),
                wake_ns: st.wake_latency_us.unwrap_or(st.exit_latency_us) * 1_000,
            });
        }
        let link: Vec<ApstStep> = s
            .link_states
            .iter()
            .map(|l| ApstStep {
                after_ns: l.enter_after_us * 1_000,
                state: 0,
                rest_w: l.idle_w,
                wake_ns: l.exit_latency_us * 1_000,
            })
            .collect();
        let both = deeper_of(&apst, &link, s.active_idle_w);
        PowerModel {
            active_idle_w: s.active_idle_w,
            controller_active_w: s.controller_active_w,
            nand_w: [s.nand_read_w, s.nand_program_w, s.nand_erase_w],
            channel_j_per_byte: s.channel_pj_per_byte * 1e-12,
            link_j_per_byte: s.link_pj_per_byte * 1e-12,
            max_w: s.states.first().map_or(f64::INFINITY, |p| p.max_w),
            apst,
            link,
            both,
        }
    }

    /// The idle chain under the host's settings (empty: no power saving).
    pub fn chain(&self, apst: bool, link_pm: bool) -> &[ApstStep] {
        match (apst, link_pm) {
            (true, false) => &self.apst,
            (false, true) => &self.link,
            (true, true) => &self.both,
            (false, false) => &[],
        }
    }
}

/// The index of a chain's rest counters (`None`: no saving on).
fn chain_index(apst: bool, link_pm: bool) -> Option<usize> {
    ((apst as usize) | (link_pm as usize) << 1).checked_sub(1)
}

/// The APST and link chains together: a step wherever either steps, each
/// resting at the lower of the two powers and waking after the longer of
/// the two latencies.
fn deeper_of(apst: &[ApstStep], link: &[ApstStep], active_idle_w: f64) -> Vec<ApstStep> {
    let mut times: Vec<u64> = apst.iter().chain(link).map(|s| s.after_ns).collect();
    times.sort_unstable();
    times.dedup();
    let at = |chain: &[ApstStep], t: u64| chain.iter().rfind(|s| s.after_ns <= t).copied();
    times
        .into_iter()
        .map(|t| {
            let (a, l) = (at(apst, t), at(link, t));
            ApstStep {
                after_ns: t,
                state: a.map_or(0, |a| a.state),
                rest_w: a.map_or(active_idle_w, |a| a.rest_w).min(l.map_or(active_idle_w, |l| l.rest_w)),
                wake_ns: a.map_or(0, |a| a.wake_ns).max(l.map_or(0, |l| l.wake_ns)),
            }
        })
        .collect()
}

/// For each step of `chain`, the time spent in it within `[from, to)` of
/// an idle period that began at `idle_from`.
fn rest_in(chain: &[ApstStep], idle_from: u64, from: u64, to: u64, mut add: impl FnMut(usize, u64)) {
    for (k, step) in chain.iter().enumerate() {
        let start = idle_from + step.after_ns;
        let end = chain.get(k + 1).map_or(u64::MAX, |n| idle_from + n.after_ns);
        let (a, b) = (start.max(from), end.min(to));
        if b > a {
            add(k, b - a);
        }
    }
}

/// Energy bookkeeping of one drive (see the module doc).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PowerMeter {
    /// The model (`None`: the drive file has no `[power]`).
    pub model: Option<PowerModel>,
    /// Whether the host has enabled APST.
    pub apst: bool,
    /// Whether the host has enabled link power management.
    #[serde(default)]
    pub link_pm: bool,
    /// Controller-active time counted so far (union of intervals), ns.
    busy_ns: u64,
    /// Start of the last controller-active interval.
    busy_start: u64,
    /// End of the last controller-active interval.
    busy_end: u64,
    /// Time rested in each step of the APST, link and combined chains
    /// (closed idle periods), ns.
    rest_ns: [Vec<u64>; 3],
    /// Idle time before this instant is already in `rest_ns`.
    rest_counted_to: u64,
    /// When the host last enabled a power saving or the drive last powered
    /// up (idle timers start no earlier).
    apst_since: u64,
    /// Time spent powered off, ns (no energy drawn).
    off_ns: u64,
    /// The last power-off period.
    last_off: (u64, u64),
    /// Wake-ups from a non-operational state.
    pub wakes: u64,
    /// Time commands waited for wake-ups, ns.
    pub wake_wait_ns: u64,
}

impl PowerMeter {
    /// A meter for a drive with this model.
    pub fn new(model: Option<PowerModel>) -> PowerMeter {
        let len = |f: fn(&PowerModel) -> usize| vec![0; model.as_ref().map_or(0, f)];
        let rest_ns = [len(|m| m.apst.len()), len(|m| m.link.len()), len(|m| m.both.len())];
        PowerMeter { model, rest_ns, ..PowerMeter::default() }
    }

    /// Forget all timing (the clock restarts at 0); keeps the model and
    /// the host's settings.
    pub fn reset_time(&mut self) {
        *self = PowerMeter { apst: self.apst, link_pm: self.link_pm, ..PowerMeter::new(self.model.take()) };
    }

    /// Whether the host has any power saving on (APST or link power
    /// management).
    #[inline]
    pub fn saving(&self) -> bool {
        self.apst || self.link_pm
    }

    /// Count the rest of the idle period since `idle_from` up to `to` in
    /// the current chain.
    fn count_rest(&mut self, idle_from: u64, to: u64) {
        if let (Some(m), Some(c)) = (&self.model, chain_index(self.apst, self.link_pm)) {
            let idle_from = idle_from.max(self.apst_since);
            let rest = &mut self.rest_ns[c];
            rest_in(m.chain(self.apst, self.link_pm), idle_from, idle_from.max(self.rest_counted_to), to, |k, ns| {
                rest[k] += ns
            });
        }
    }

    /// End of the last controller-active interval.
    #[inline]
    pub fn busy_end(&self) -> u64 {
        self.busy_end
    }

    /// The controller works in `[start, end)` (starts are non-decreasing).
    #[inline]
    pub fn busy(&mut self, start: u64, end: u64) {
        if start >= self.busy_end {
            self.busy_start = start;
            self.busy_ns += end.saturating_sub(start);
            self.busy_end = end.max(start);
        } else if end > self.busy_end {
            self.busy_ns += end - self.busy_end;
            self.busy_end = end;
        }
    }

    /// From when the power drawn stays constant if nothing new is
    /// booked, for a drive idle since `idle_from` (its NAND work done): the
    /// later of that and, with APST on, the entry into its last
    /// non-operational state.
    pub fn constant_from(&self, idle_from: u64) -> u64 {
        let idle_from = idle_from.max(self.busy_end);
        match &self.model {
            Some(m) => m
                .chain(self.apst, self.link_pm)
                .last()
                .map_or(idle_from, |s| idle_from.max(self.apst_since) + s.after_ns),
            None => idle_from,
        }
    }

    /// The drive is powered off from `off` to `on` (idle since `idle_from`,
    /// nothing booked after `off`): no energy is drawn in between, and it
    /// powers up in its operational idle state (APST's timers restart).
    pub fn power_off(&mut self, idle_from: u64, off: u64, on: u64) {
        self.count_rest(idle_from, off.max(idle_from.max(self.apst_since)));
        self.rest_counted_to = on;
        self.apst_since = on;
        self.off_ns += on - off;
        self.last_off = (off, on);
    }

    /// Time powered on from 0 to `now`, ns (`now` after the last
    /// power-off, or before it).
    fn on_ns(&self, now: u64) -> u64 {
        let (off, on) = self.last_off;
        if now >= on {
            now - self.off_ns
        } else {
            now.min(off) - (self.off_ns - (on - off))
        }
    }

    /// Controller-active time up to `now`, ns.
    fn busy_until(&self, now: u64) -> u64 {
        let ahead = self.busy_end.saturating_sub(now.max(self.busy_start));
        self.busy_ns - ahead.min(self.busy_end - self.busy_start)
    }

    /// A command arrives at `t` on a drive idle since `idle_from` (a
    /// power saving on): count the rest and return when the drive is awake
    /// to take it.
    pub fn wake(&mut self, idle_from: u64, t: u64) -> u64 {
        if self.model.is_none() {
            return t;
        }
        self.count_rest(idle_from, t);
        self.rest_counted_to = t;
        let Some(m) = &self.model else { return t };
        let idle_from = idle_from.max(self.apst_since);
        let chain = m.chain(self.apst, self.link_pm);
        match chain.iter().rposition(|step| idle_from + step.after_ns < t) {
            Some(k) => {
                let w = chain[k].wake_ns;
                self.wakes += 1;
                self.wake_wait_ns += w;
                t + w
            }
            None => t,
        }
    }

    /// Turn APST on or off at `now` on a drive idle since `idle_from`
    /// (rest so far is counted first; idle timers start when it is
    /// turned on).
    pub fn set_apst(&mut self, on: bool, idle_from: u64, now: u64) {
        self.set_saving(on, self.link_pm, idle_from, now);
    }

    /// Turn link power management on or off at `now` (as
    /// [`PowerMeter::set_apst`]).
    pub fn set_link_pm(&mut self, on: bool, idle_from: u64, now: u64) {
        self.set_saving(self.apst, on, idle_from, now);
    }

    /// The host's settings change at `now`: the rest so far is counted in
    /// the chain that applied, and the idle timers restart when a saving
    /// is turned on.
    fn set_saving(&mut self, apst: bool, link_pm: bool, idle_from: u64, now: u64) {
        if (apst, link_pm) == (self.apst, self.link_pm) {
            return;
        }
        if self.saving() {
            self.count_rest(idle_from, now);
            self.rest_counted_to = now;
        }
        if (apst && !self.apst) || (link_pm && !self.link_pm) {
            self.apst_since = now;
        }
        self.apst = apst;
        self.link_pm = link_pm;
    }

    /// Energy drawn from time 0 to `now`, J, given the drive's NAND array
    /// busy time (`array_ns`: read, program, erase, summed over dies), the
    /// bytes moved over the NAND buses and the host link, and when the
    /// drive became idle (`idle_from`). `None` without a power model.
    pub fn energy_j(
        &self,
        now: u64,
        idle_from: u64,
        array_ns: [u64; 3],
        channel_bytes: u64,
        link_bytes: u64,
    ) -> Option<f64> {
        let m = self.model.as_ref()?;
        let mut floor = m.active_idle_w * self.on_ns(now) as f64;
        for (c, chain) in [&m.apst, &m.link, &m.both].into_iter().enumerate() {
            for (k, &ns) in self.rest_ns[c].iter().enumerate() {
                floor += (chain[k].rest_w - m.active_idle_w) * ns as f64;
            }
        }
        let idle_from = idle_from.max(self.apst_since);
        if self.saving() && now > idle_from {
            let chain = m.chain(self.apst, self.link_pm);
            rest_in(chain, idle_from, idle_from.max(self.rest_counted_to), now, |k, ns| {
                floor += (chain[k].rest_w - m.active_idle_w) * ns as f64
            });
        }
        let nand: f64 = (0..3).map(|i| m.nand_w[i] * array_ns[i] as f64).sum();
        let controller = m.controller_active_w * self.busy_until(now) as f64;
        Some(
            (floor + nand + controller) * 1e-9
                + m.channel_j_per_byte * channel_bytes as f64
                + m.link_j_per_byte * link_bytes as f64,
        )
    }
}

impl PowerMeter {
    /// Energy of the NAND arrays' reads, programs and erases given their
    /// busy time, J (`None` without a power model): the heat of the NAND
    /// node in the thermal model.
    pub fn nand_j(&self, array_ns: [u64; 3]) -> Option<f64> {
        let m = self.model.as_ref()?;
        Some((0..3).map(|i| m.nand_w[i] * array_ns[i] as f64).sum::<f64>() * 1e-9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PowerStateSpec;

    fn spec() -> PowerSpec {
        let op = |w: f64| PowerStateSpec { max_w: w, ..PowerStateSpec::default() };
        let idle = |w: f64, en: u64, ex: u64, rest: Option<f64>, wake: Option<u64>| PowerStateSpec {
            max_w: w,
            non_operational: true,
            entry_latency_us: en,
            exit_latency_us: ex,
            idle_w: rest,
            wake_latency_us: wake,
        };
        PowerSpec {
            active_idle_w: 1.0,
            controller_active_w: 2.0,
            nand_read_w: 0.1,
            nand_program_w: 0.2,
            nand_erase_w: 0.3,
            channel_pj_per_byte: 10.0,
            link_pj_per_byte: 20.0,
            states: vec![
                op(4.0),
                op(3.0),
                idle(0.03, 5_000, 5_000, None, None),
                idle(0.004, 5_000, 9_000, Some(0.01), Some(55_000)),
            ],
            link_states: Vec::new(),
        }
    }

    #[test]
    fn apst_chain_follows_linux_heuristic() {
        let m = PowerModel::new(&spec());
        // PS2: 50 × 10 ms = 500 ms; PS3: 50 × 14 ms = 700 ms more.
        assert_eq!(m.apst.len(), 2);
        assert_eq!((m.apst[0].state, m.apst[0].after_ns), (2, 500_000_000));
        assert_eq!((m.apst[1].state, m.apst[1].after_ns), (3, 1_200_000_000));
        assert_eq!(m.apst[1].rest_w, 0.01);
        assert_eq!(m.apst[1].wake_ns, 55_000_000);
        assert_eq!(m.apst[0].wake_ns, 5_000_000);
    }

    #[test]
    fn idle_energy_steps_down_through_the_states() {
        let mut p = PowerMeter::new(Some(PowerModel::new(&spec())));
        let e = |p: &PowerMeter, now: u64| p.energy_j(now, 0, [0; 3], 0, 0).unwrap();
        // Without APST: 1 W for 10 s.
        assert!((e(&p, 10_000_000_000) - 10.0).abs() < 1e-9);
        p.set_apst(true, 0, 0);
        // 0.5 s at 1 W, 0.7 s at 30 mW, 8.8 s at 10 mW.
        let want = 0.5 + 0.7 * 0.03 + 8.8 * 0.01;
        assert!((e(&p, 10_000_000_000) - want).abs() < 1e-9, "{}", e(&p, 10_000_000_000));
        // A command at 10 s waits 55 ms; the rest is then counted as closed.
        assert_eq!(p.wake(0, 10_000_000_000), 10_055_000_000);
        assert_eq!(p.wakes, 1);
        assert!((e(&p, 10_000_000_000) - want).abs() < 1e-9);
        // Before the first timeout nothing is entered and nothing is waited.
        p.busy(10_000_000_000, 10_100_000_000);
        assert_eq!(p.wake(10_100_000_000, 10_400_000_000), 10_400_000_000);
    }

    #[test]
    fn controller_time_is_a_union_and_counts_only_the_past() {
        let mut p = PowerMeter::new(Some(PowerModel::new(&spec())));
        p.busy(0, 100);
        p.busy(50, 150); // overlaps: +50
        p.busy(200, 300);
        assert_eq!(p.busy_until(1_000), 250);
        assert_eq!(p.busy_until(250), 200); // 50 of the last interval still ahead
        let e = p.energy_j(1_000, 1_000, [100, 200, 300], 1_000, 2_000).unwrap();
        let want = (1.0 * 1_000.0 + 2.0 * 250.0 + 0.1 * 100.0 + 0.2 * 200.0 + 0.3 * 300.0) * 1e-9
            + 10e-12 * 1_000.0
            + 20e-12 * 2_000.0;
        assert!((e - want).abs() < 1e-15);
    }
}
