//! Heat: a lumped RC model of the drive's temperature, the composite
//! temperature NVMe reports, and thermal throttling as firmware does it.
//!
//! Models (docs/architecture.md, "Heat and thermal throttling"):
//! - **Two thermal nodes**: the *controller* (die and package: small heat
//!   capacity, fast) and the *NAND and board* (NAND packages, DRAM and the
//!   PCB they sit on: large capacity, slow). Each has a thermal resistance
//!   to ambient air, and they are joined by a resistance through the board.
//!   Airflow scales both conductances to ambient; a heatsink adds a
//!   parallel path to ambient (half its conductance on each node).
//! - **Heat in** is the power model's dissipated power
//!   ([`crate::model::power`]): the NAND array's read, program and erase
//!   power heats the NAND node; everything else (floor or resting power,
//!   controller activity, NAND bus and host-link energy) heats the
//!   controller node.
//! - **Closed form between events**: with power constant over an interval,
//!   the temperature rise `x` above ambient follows `dx/dt = A x + b`
//!   exactly, `x(t) = x∞ + e^{At} (x₀ − x∞)`, evaluated with the 2 × 2
//!   matrix exponential (two real time constants). The power over an
//!   interval is its energy (exact) divided by its length, so the model
//!   is updated only at the firmware's sensor polls, second boundaries of
//!   the statistics and when asked — intervals are cut at the sensor poll
//!   period, far below the time constants. Nothing is done per I/O but one
//!   comparison of the clock with the next poll.
//! - **Composite temperature** (NVMe SMART / health log): the hotter of
//!   the two nodes. The health log's *Warning Composite Temperature Time*
//!   counts time at or above the warning threshold and below the critical
//!   one, *Critical Composite Temperature Time* time at or above the
//!   critical one (NVMe counts minutes; kept here in ns).
//! - **Throttling** as firmware does it: every sensor poll compares the
//!   composite temperature with the thresholds (with hysteresis on the way
//!   down). Above the warning temperature the drive drops to a lower-power
//!   operational state (`warning_state`: its `max_w` caps the average
//!   power — commands and background work are held until the energy drawn
//!   since throttling began fits under the cap, with one poll period of
//!   burst) and/or inserts a delay before every command
//!   (`warning_delay_us`); above the critical temperature the same with the
//!   critical parameters (throttle hard).
//!
//! - **Host Controlled Thermal Management** (NVMe 1.3, §5.21.1.16, Set
//!   Features FID 10h): the host sets TMT1 and TMT2; at or above TMT1 the
//!   drive throttles lightly (the warning level's parameters), at or above
//!   TMT2 heavily (the critical level's), with the same hysteresis. The
//!   drive throttles at the stronger of its own level and the host's. The
//!   health log counts the transitions into each host level and the time
//!   spent in it (*Thermal Management Temperature 1/2 Transition Count*
//!   and *Total Time For Thermal Management Temperature 1/2*, seconds).
//!
//! Leaves out: the dependence of resistances on temperature, radiation,
//! heat from neighbouring parts (ambient is fixed per run), temperature's
//! effect on NAND timings or leakage power, the Identify range the host's
//! TMT values must lie in (MNTMT/MXTMT), and shutdown at the critical
//! temperature (the drive throttles hard instead). Energy is booked when work is scheduled
//! (see the power model), so within a poll period heat may arrive up to a
//! few milliseconds early.

use serde::{Deserialize, Serialize};

use crate::model::params::{PowerSpec, ThermalSpec};

/// The validated thermal network and throttle policy of a drive.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThermalModel {
    /// Ambient air temperature, °C.
    pub ambient_c: f64,
    /// Heat capacities of the controller and NAND nodes, J/K.
    pub capacity: [f64; 2],
    /// Conductance of each node to ambient (airflow and heatsink
    /// included), W/K.
    pub g_ambient: [f64; 2],
    /// Conductance between the nodes, W/K.
    pub g_between: f64,
    /// Warning composite temperature threshold (WCTEMP), °C.
    pub warning_c: f64,
    /// Critical composite temperature threshold (CCTEMP), °C.
    pub critical_c: f64,
    /// How far below a threshold the temperature must fall to leave its
    /// throttle level, K.
    pub hysteresis_c: f64,
    /// Firmware's sensor poll period, ns.
    pub poll_ns: u64,
    /// Average-power caps at the warning and critical levels, W (`None`:
    /// no cap).
    pub cap_w: [Option<f64>; 2],
    /// Delays inserted before every command at each level, ns.
    pub delay_ns: [u64; 2],
    /// The power states the caps come from.
    pub cap_state: [Option<usize>; 2],
    /// The host's HCTM thresholds TMT1 and TMT2, °C (`None`: HCTM off).
    #[serde(default)]
    pub host_tmt_c: Option<[f64; 2]>,
    /// System matrix `A` of `dx/dt = A x + b`.
    a: [[f64; 2]; 2],
    /// Its eigenvalues, 1/s (negative).
    lambda: [f64; 2],
}

impl ThermalModel {
    /// Derive the model from a validated spec (and the power states its
    /// throttle levels name).
    pub fn new(s: &ThermalSpec, power: &PowerSpec) -> ThermalModel {
        let hs = s.heatsink_k_per_w.map_or(0.0, |r| 0.5 / r);
        let g_ambient = [s.airflow / s.controller_ambient_k_per_w + hs, s.airflow / s.nand_ambient_k_per_w + hs];
        let g_between = 1.0 / s.controller_nand_k_per_w;
        let capacity = [s.controller_j_per_k, s.nand_j_per_k];
        let a = [
            [-(g_ambient[0] + g_between) / capacity[0], g_between / capacity[0]],
            [g_between / capacity[1], -(g_ambient[1] + g_between) / capacity[1]],
        ];
        let tr = a[0][0] + a[1][1];
        let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
        let disc = (tr * tr / 4.0 - det).max(0.0).sqrt();
        let lambda = [tr / 2.0 - disc, tr / 2.0 + disc];
        let cap = |st: Option<usize>| st.map(|i| power.states[i].max_w);
        ThermalModel {
            ambient_c: s.ambient_c,
            capacity,
            g_ambient,
            g_between,
            warning_c: s.warning_c,
            critical_c: s.critical_c,
            hysteresis_c: s.hysteresis_c,
            poll_ns: s.sensor_poll_ms * 1_000_000,
            cap_w: [cap(s.warning_state), cap(s.critical_state)],
            delay_ns: [s.warning_delay_us * 1_000, s.critical_delay_us * 1_000],
            cap_state: [s.warning_state, s.critical_state],
            host_tmt_c: s.host_tmt_c,
            a,
            lambda,
        }
    }

    /// The network's two time constants, s (fast, slow).
    pub fn time_constants_s(&self) -> [f64; 2] {
        [-1.0 / self.lambda[0], -1.0 / self.lambda[1]]
    }

    /// Steady-state rise above ambient of each node under constant power
    /// `p` (controller, NAND), K.
    pub fn steady_rise(&self, p: [f64; 2]) -> [f64; 2] {
        let (g0, g1, gb) = (self.g_ambient[0], self.g_ambient[1], self.g_between);
        let (a, b, d) = (g0 + gb, -gb, g1 + gb);
        let det = a * d - b * b;
        [(d * p[0] - b * p[1]) / det, (a * p[1] - b * p[0]) / det]
    }

    /// `e^{A·dt}` (Sylvester's formula for a 2 × 2 matrix).
    pub fn exp_a(&self, dt_s: f64) -> [[f64; 2]; 2] {
        let [l1, l2] = self.lambda;
        let a = self.a;
        if (l1 - l2).abs() < 1e-12 * l1.abs().max(1e-30) {
            // Repeated eigenvalue: e^{λt} (I + (A − λI) t).
            let e = (l1 * dt_s).exp();
            return [
                [e * (1.0 + (a[0][0] - l1) * dt_s), e * a[0][1] * dt_s],
                [e * a[1][0] * dt_s, e * (1.0 + (a[1][1] - l1) * dt_s)],
            ];
        }
        let (e1, e2) = ((l1 * dt_s).exp(), (l2 * dt_s).exp());
        let m = |i: usize, j: usize| {
            let id = if i == j { 1.0 } else { 0.0 };
            (e1 * (a[i][j] - l2 * id) - e2 * (a[i][j] - l1 * id)) / (l1 - l2)
        };
        [[m(0, 0), m(0, 1)], [m(1, 0), m(1, 1)]]
    }

    /// The rise above ambient `dt_s` after it was `x0`, under constant
    /// power `p` (controller, NAND), W: the exact step response.
    pub fn step(&self, x0: [f64; 2], p: [f64; 2], dt_s: f64) -> [f64; 2] {
        let xs = self.steady_rise(p);
        let e = self.exp_a(dt_s);
        let d = [x0[0] - xs[0], x0[1] - xs[1]];
        [xs[0] + e[0][0] * d[0] + e[0][1] * d[1], xs[1] + e[1][0] * d[0] + e[1][1] * d[1]]
    }
}

/// What the thermal model counts (the health log's temperature fields
/// and the throttle's work), since the clock began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ThermalCounters {
    /// Time with the composite at or above the warning threshold and below
    /// the critical one, ns.
    pub warning_temp_ns: u64,
    /// Time with the composite at or above the critical threshold, ns.
    pub critical_temp_ns: u64,
    /// Time spent throttled at the warning level, ns.
    pub throttled_warning_ns: u64,
    /// Time spent throttled at the critical level, ns.
    pub throttled_critical_ns: u64,
    /// Times the firmware entered a throttle level (either).
    pub throttle_events: u64,
    /// Time commands and background work were held by the throttle, ns.
    pub throttle_delay_ns: u64,
    /// Transitions into the host's light throttle (composite at or above
    /// TMT1), HCTM.
    #[serde(default)]
    pub tmt1_transitions: u64,
    /// Transitions into the host's heavy throttle (at or above TMT2).
    #[serde(default)]
    pub tmt2_transitions: u64,
    /// Time throttled lightly for the host's TMT1, ns.
    #[serde(default)]
    pub tmt1_ns: u64,
    /// Time throttled heavily for the host's TMT2, ns.
    #[serde(default)]
    pub tmt2_ns: u64,
}

impl ThermalCounters {
    /// Counts since `earlier`.
    pub fn since(&self, e: &ThermalCounters) -> ThermalCounters {
        ThermalCounters {
            warning_temp_ns: self.warning_temp_ns - e.warning_temp_ns,
            critical_temp_ns: self.critical_temp_ns - e.critical_temp_ns,
            throttled_warning_ns: self.throttled_warning_ns - e.throttled_warning_ns,
            throttled_critical_ns: self.throttled_critical_ns - e.throttled_critical_ns,
            throttle_events: self.throttle_events - e.throttle_events,
            throttle_delay_ns: self.throttle_delay_ns - e.throttle_delay_ns,
            tmt1_transitions: self.tmt1_transitions - e.tmt1_transitions,
            tmt2_transitions: self.tmt2_transitions - e.tmt2_transitions,
            tmt1_ns: self.tmt1_ns - e.tmt1_ns,
            tmt2_ns: self.tmt2_ns - e.tmt2_ns,
        }
    }
}

/// Temperatures of a drive at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Temperatures {
    /// Composite temperature (the hotter node), °C.
    pub composite_c: f64,
    /// Controller node, °C.
    pub controller_c: f64,
    /// NAND and board node, °C.
    pub nand_c: f64,
    /// Throttle level: 0 none, 1 warning, 2 critical.
    pub throttle: u8,
}

/// The thermal state of one drive (see the module doc). The drive feeds
/// it its cumulative energy; it keeps temperatures, the throttle level
/// and the counters.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Thermal {
    /// The model.
    pub model: ThermalModel,
    /// Rise above ambient of the controller and NAND nodes at `t_ns`, K.
    rise: [f64; 2],
    /// Time the state describes, ns.
    t_ns: u64,
    /// Cumulative energy (total, NAND array) at `t_ns`, J.
    energy: [f64; 2],
    /// Throttle level: 0 none, 1 warning, 2 critical.
    pub level: u8,
    /// The host's HCTM level within it: 0 none, 1 TMT1, 2 TMT2.
    #[serde(default)]
    pub host_level: u8,
    /// When the firmware next reads its sensor, ns.
    pub next_poll_ns: u64,
    /// Start of the current throttle level and the energy drawn then.
    cap_since: (u64, f64),
    /// Highest composite temperature since [`Thermal::reset_peak`], °C.
    pub peak_c: f64,
    /// Counters since the clock began.
    pub counters: ThermalCounters,
}

impl Thermal {
    /// A drive at ambient temperature at time 0.
    pub fn new(model: ThermalModel) -> Thermal {
        Thermal {
            peak_c: model.ambient_c,
            model,
            rise: [0.0; 2],
            t_ns: 0,
            energy: [0.0; 2],
            level: 0,
            host_level: 0,
            next_poll_ns: 0,
            cap_since: (0, 0.0),
            counters: ThermalCounters::default(),
        }
    }

    /// The host sets (or, `None`, turns off) its HCTM thresholds
    /// `[TMT1, TMT2]`, °C; the next sensor poll applies them.
    pub fn set_hctm(&mut self, tmt_c: Option<[f64; 2]>) {
        self.model.host_tmt_c = tmt_c;
    }

    /// Restart the clock at 0, where the drive's cumulative energy
    /// counts read `total_j` and `nand_j` (NAND busy time is kept across
    /// resets); the drive keeps its temperature (no time passes).
    pub fn reset_time(&mut self, total_j: f64, nand_j: f64) {
        self.t_ns = 0;
        self.energy = [total_j, nand_j];
        self.next_poll_ns = 0;
        self.cap_since = (0, 0.0);
    }

    /// Set the drive to ambient temperature, not throttled.
    pub fn cool_down(&mut self) {
        self.rise = [0.0; 2];
        self.level = 0;
        self.host_level = 0;
        self.peak_c = self.model.ambient_c;
    }

    /// Time the state describes, ns.
    pub fn time_ns(&self) -> u64 {
        self.t_ns
    }

    /// Temperatures now (as of the last update).
    pub fn temperatures(&self) -> Temperatures {
        let a = self.model.ambient_c;
        let (c, n) = (a + self.rise[0], a + self.rise[1]);
        Temperatures { composite_c: c.max(n), controller_c: c, nand_c: n, throttle: self.level }
    }

    /// Composite temperature now, °C.
    pub fn composite_c(&self) -> f64 {
        self.model.ambient_c + self.rise[0].max(self.rise[1])
    }

    /// Start a new peak measurement at the current temperature.
    pub fn reset_peak(&mut self) {
        self.peak_c = self.composite_c();
    }

    /// Advance from the last update to `t` (at most one poll period; the
    /// caller cuts longer intervals), given the cumulative energy at `t`:
    /// `total_j` of the whole drive and `nand_j` of its NAND arrays.
    pub fn advance(&mut self, t: u64, total_j: f64, nand_j: f64) {
        if t <= self.t_ns {
            return;
        }
        let dt_ns = t - self.t_ns;
        let dt = dt_ns as f64 * 1e-9;
        let e_nand = (nand_j - self.energy[1]).max(0.0);
        let e_ctrl = (total_j - self.energy[0] - e_nand).max(0.0);
        let before = self.composite_c();
        self.rise = self.model.step(self.rise, [e_ctrl / dt, e_nand / dt], dt);
        let after = self.composite_c();
        // Time at or above each threshold, the composite taken as linear
        // within the interval.
        let (w, c) = (self.model.warning_c, self.model.critical_c);
        let above = |thr: f64| frac_above(before, after, thr);
        let crit = above(c);
        self.counters.critical_temp_ns += (crit * dt_ns as f64).round() as u64;
        self.counters.warning_temp_ns += ((above(w) - crit).max(0.0) * dt_ns as f64).round() as u64;
        match self.level {
            1 => self.counters.throttled_warning_ns += dt_ns,
            2 => self.counters.throttled_critical_ns += dt_ns,
            _ => {}
        }
        match self.host_level {
            1 => self.counters.tmt1_ns += dt_ns,
            2 => self.counters.tmt2_ns += dt_ns,
            _ => {}
        }
        self.peak_c = self.peak_c.max(after);
        self.t_ns = t;
        self.energy = [total_j, nand_j];
    }

    /// Advance to `t` in one closed-form step over a stretch of constant
    /// power (an idle drive), given the cumulative energy at `t`, when no
    /// sensor poll in it could change anything: the drive is not
    /// throttled and stays below the warning threshold throughout.
    /// Returns false (and changes nothing) otherwise.
    ///
    /// The bound: with `y = x − x∞`, `dy/dt = A·y` where `A` has
    /// non-negative off-diagonal terms and row sums `−g_ambient/C ≤ 0`, so
    /// `max(0, maxᵢ yᵢ)` never grows and no node rises above
    /// `x∞ᵢ + max(0, maxⱼ y₀ⱼ)`. Sensor polls in the stretch would have
    /// seen nothing above the warning threshold, and time above the
    /// thresholds stays zero; the peak is taken at the stretch's ends.
    pub fn advance_steady(&mut self, t: u64, total_j: f64, nand_j: f64) -> bool {
        if t <= self.t_ns || self.level != 0 {
            return false;
        }
        let dt = (t - self.t_ns) as f64 * 1e-9;
        let e_nand = (nand_j - self.energy[1]).max(0.0);
        let e_ctrl = (total_j - self.energy[0] - e_nand).max(0.0);
        let p = [e_ctrl / dt, e_nand / dt];
        let m = &self.model;
        let xs = m.steady_rise(p);
        let over = (self.rise[0] - xs[0]).max(self.rise[1] - xs[1]).max(0.0);
        let bound = m.ambient_c + xs[0].max(xs[1]) + over;
        let host = m.host_tmt_c.map_or(f64::INFINITY, |t| t[0]);
        if bound >= m.warning_c.min(m.critical_c).min(host) {
            return false;
        }
        self.rise = m.step(self.rise, p, dt);
        self.peak_c = self.peak_c.max(self.composite_c());
        self.t_ns = t;
        self.energy = [total_j, nand_j];
        self.next_poll_ns = (t / m.poll_ns + 1) * m.poll_ns;
        true
    }

    /// The drive was powered off until `t` (cumulative energy `total_j`,
    /// `nand_j` unchanged since the last update): it cooled towards
    /// ambient with no heat, and powers up unthrottled.
    pub fn unpowered(&mut self, t: u64, total_j: f64, nand_j: f64) {
        if t > self.t_ns {
            self.rise = self.model.step(self.rise, [0.0, 0.0], (t - self.t_ns) as f64 * 1e-9);
            self.t_ns = t;
        }
        self.energy = [total_j, nand_j];
        self.level = 0;
        self.host_level = 0;
        self.cap_since = (t, total_j);
        self.next_poll_ns = (t / self.model.poll_ns + 1) * self.model.poll_ns;
    }

    /// The firmware reads its sensor at `t` (the state is up to date at
    /// `t`) with `total_j` drawn so far: set the throttle level and the
    /// next poll.
    pub fn poll(&mut self, t: u64, total_j: f64) {
        let temp = self.composite_c();
        let m = &self.model;
        // A level is entered at its threshold and left once the composite
        // falls the hysteresis below it.
        let level_of = |thr: [f64; 2], now: u8| {
            if temp >= thr[1] || (now == 2 && temp > thr[1] - m.hysteresis_c) {
                2
            } else if temp >= thr[0] || (now >= 1 && temp > thr[0] - m.hysteresis_c) {
                1
            } else {
                0
            }
        };
        let own = level_of([m.warning_c, m.critical_c], self.level);
        let host = m.host_tmt_c.map_or(0, |tmt| level_of(tmt, self.host_level));
        if host > self.host_level {
            // NVMe counts each transition into a host level (into TMT2
            // directly counts for TMT2 only).
            match host {
                1 => self.counters.tmt1_transitions += 1,
                _ => self.counters.tmt2_transitions += 1,
            }
        }
        self.host_level = host;
        let level = own.max(host);
        if level != self.level {
            if level > self.level {
                self.counters.throttle_events += 1;
            }
            self.level = level;
            self.cap_since = (t, total_j);
        }
        self.next_poll_ns = (t / m.poll_ns + 1) * m.poll_ns;
    }

    /// When work that wants to start at `t` may start under the current
    /// throttle level; `energy_at(t)` is the drive's cumulative energy
    /// (work already scheduled included) at a time.
    pub fn gate(&mut self, t: u64, energy_at: impl Fn(u64) -> f64) -> u64 {
        if self.level == 0 {
            return t;
        }
        let k = self.level as usize - 1;
        let mut start = t + self.model.delay_ns[k];
        if let Some(cap) = self.model.cap_w[k] {
            let (since, e0) = self.cap_since;
            let burst = cap * self.model.poll_ns as f64 * 1e-9;
            // Hold until the energy drawn since the level began fits under
            // the cap (a contraction: resting power is below the cap).
            for _ in 0..4 {
                let over = energy_at(start) - e0 - burst;
                let may = since + (over.max(0.0) / cap * 1e9) as u64;
                if may <= start {
                    break;
                }
                start = may;
            }
        }
        self.counters.throttle_delay_ns += start - t;
        start
    }
}

/// Fraction of an interval in which a quantity going linearly from `a` to
/// `b` is at or above `thr`.
fn frac_above(a: f64, b: f64, thr: f64) -> f64 {
    match (a >= thr, b >= thr) {
        (true, true) => 1.0,
        (false, false) => 0.0,
        (true, false) => (a - thr) / (a - b),
        (false, true) => (b - thr) / (b - a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> ThermalModel {
        let s = ThermalSpec {
            ambient_c: 25.0,
            controller_j_per_k: 1.0,
            nand_j_per_k: 10.0,
            controller_ambient_k_per_w: 40.0,
            nand_ambient_k_per_w: 15.0,
            controller_nand_k_per_w: 5.0,
            ..ThermalSpec::default()
        };
        ThermalModel::new(&s, &PowerSpec::default())
    }

    #[test]
    fn step_response_solves_the_network() {
        let m = model();
        let p = [2.0, 1.0];
        // Long after: the steady state, which balances the heat flows.
        let x = m.step([0.0; 2], p, 1e5);
        let xs = m.steady_rise(p);
        assert!((x[0] - xs[0]).abs() < 1e-9 && (x[1] - xs[1]).abs() < 1e-9);
        let flow_c = xs[0] * m.g_ambient[0] + (xs[0] - xs[1]) * m.g_between;
        let flow_n = xs[1] * m.g_ambient[1] - (xs[0] - xs[1]) * m.g_between;
        assert!((flow_c - 2.0).abs() < 1e-9 && (flow_n - 1.0).abs() < 1e-9);
        // Steps compose: two half steps are one step.
        let one = m.step([3.0, 1.0], p, 20.0);
        let two = m.step(m.step([3.0, 1.0], p, 10.0), p, 10.0);
        assert!((one[0] - two[0]).abs() < 1e-9 && (one[1] - two[1]).abs() < 1e-9);
        // And match a fine Euler integration of dx/dt = A x + b.
        let mut x = [3.0, 1.0];
        let h = 1e-4;
        for _ in 0..200_000 {
            let d0 = (p[0] - x[0] * m.g_ambient[0] - (x[0] - x[1]) * m.g_between) / m.capacity[0];
            let d1 = (p[1] - x[1] * m.g_ambient[1] + (x[0] - x[1]) * m.g_between) / m.capacity[1];
            x = [x[0] + h * d0, x[1] + h * d1];
        }
        assert!((x[0] - one[0]).abs() < 1e-3 && (x[1] - one[1]).abs() < 1e-3, "{x:?} vs {one:?}");
    }

    #[test]
    fn time_is_counted_above_thresholds_and_throttle_has_hysteresis() {
        let mut m = model();
        m.warning_c = 77.0;
        m.critical_c = 80.0;
        m.hysteresis_c = 2.0;
        m.poll_ns = 100_000_000;
        let mut th = Thermal::new(m);
        th.rise = [53.0, 40.0]; // 78 °C
        th.poll(0, 0.0);
        assert_eq!(th.level, 1);
        th.rise = [51.5, 40.0]; // 76.5 °C: within the hysteresis
        th.poll(1, 0.0);
        assert_eq!(th.level, 1);
        th.rise = [49.0, 40.0];
        th.poll(2, 0.0);
        assert_eq!(th.level, 0);
        assert_eq!(frac_above(70.0, 80.0, 77.0), 0.3);
    }
}
