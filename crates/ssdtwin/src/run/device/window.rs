//! A device's statistics window: what [`Device::begin_window`] opens and
//! [`Device::end_window`] returns for a phase — latency per direction,
//! per-second series, counter increments, busy time, stalls, energy,
//! temperatures and placement counters over the window.
//!
//! The per-completion recording itself stays in the device's completion
//! path ([`super`]); this module holds the window's types and its opening
//! and closing. It leaves out anything across windows: a run's phases are
//! summed by the caller.

use crate::model::thermal::{Temperatures, ThermalCounters};
use crate::run::placement_stats::{PlacementSnapshot, PlacementWindow};
use crate::run::stats::{Counters, DirStats, Stalls, TimeSeries};

use super::Device;

/// The statistics of one measurement window (a phase), as
/// [`Device::end_window`] returns them.
#[derive(Debug, Clone)]
pub struct Window {
    /// Start of the window, ns.
    pub start_ns: u64,
    /// End of the window, ns.
    pub end_ns: u64,
    /// Time from which commands were recorded (after a ramp), ns.
    pub record_from_ns: u64,
    /// Read, write and trim statistics (index `IoKind as usize`) of the
    /// commands submitted at or after `record_from_ns`.
    pub dirs: [DirStats; 3],
    /// Per-second series from the window's start.
    pub series: TimeSeries,
    /// Counter increments over the window.
    pub counters: Counters,
    /// Time during which commands were outstanding, ns.
    pub busy_ns: u64,
    /// Intervals in which commands were outstanding and none completed
    /// (ended after `record_from_ns`).
    pub stalls: Stalls,
    /// Energy drawn over the window, J (`None`: no power model).
    pub energy_j: Option<f64>,
    /// Temperatures over the window (`None`: no thermal model).
    pub thermal: Option<ThermalWindow>,
    /// Zones and placement handles over the window (`None`: a drive
    /// without `[zns]` or `[fdp]`).
    pub placement: Option<PlacementWindow>,
}

/// What the thermal model saw over a window.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThermalWindow {
    /// At the window's start.
    pub start: Temperatures,
    /// At its end.
    pub end: Temperatures,
    /// Highest composite temperature in it (as the sensor polls saw it), °C.
    pub peak_c: f64,
    /// Time above the thresholds and throttled in it.
    pub counters: ThermalCounters,
}

#[derive(Debug, Clone)]
pub(super) struct Recording {
    pub(super) record_from_ns: u64,
    pub(super) dirs: [DirStats; 3],
    pub(super) series: TimeSeries,
    pub(super) counters_before: Counters,
    pub(super) energy_before: Option<f64>,
    pub(super) busy_before: u64,
    pub(super) stalls: Stalls,
    pub(super) thermal_before: Option<(Temperatures, ThermalCounters)>,
    pub(super) placement_before: Option<PlacementSnapshot>,
}

impl Device {
    /// Open a statistics window now: completions of commands submitted
    /// at or after `record_from_ns` are recorded until
    /// [`Device::end_window`].
    pub fn begin_window(&mut self, record_from_ns: u64) {
        let now = self.now();
        self.drive.thermal_advance(now);
        self.drive.reset_thermal_peak();
        let thermal_before = self.drive.thermal().map(|th| (th.temperatures(), th.counters));
        self.recording = Some(Recording {
            record_from_ns,
            dirs: Default::default(),
            series: TimeSeries::new(now),
            counters_before: Counters::of(&self.drive),
            energy_before: self.drive.energy_j(now),
            busy_before: self.busy_ns,
            stalls: Stalls::default(),
            thermal_before,
            placement_before: PlacementSnapshot::of(&self.drive),
        });
    }

    /// Make sure the window's second holding `rel_ns` (from the window's
    /// start) exists, sampling the drive's state if it opens now.
    pub fn touch_series(&mut self, rel_ns: u64) {
        if let Some(r) = &mut self.recording {
            r.series.touch(rel_ns, &self.drive);
        }
    }

    /// Close the window at `end_ns` and return its statistics.
    ///
    /// # Panics
    /// If no window is open.
    pub fn end_window(&mut self, end_ns: u64) -> Window {
        let mut r = self.recording.take().expect("a statistics window is open");
        self.drive.thermal_advance(end_ns);
        let thermal = match (r.thermal_before, &self.drive.thermal()) {
            (Some((start, before)), Some(th)) => Some(ThermalWindow {
                start,
                end: th.temperatures(),
                peak_c: th.peak_c,
                counters: th.counters.since(&before),
            }),
            _ => None,
        };
        r.series.finish(&self.drive, end_ns);
        let energy_j = match (r.energy_before, self.drive.energy_j(end_ns)) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        Window {
            start_ns: r.series.start_ns,
            end_ns,
            record_from_ns: r.record_from_ns,
            dirs: r.dirs,
            counters: Counters::of(&self.drive).since(&r.counters_before),
            busy_ns: self.busy_ns - r.busy_before,
            stalls: r.stalls,
            energy_j,
            series: r.series,
            thermal,
            placement: r.placement_before.map(|s| s.window(&self.drive)),
        }
    }
}
