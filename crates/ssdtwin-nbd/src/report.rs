//! The statistics of a serving session: the same JSON and summary as
//! `ssdtwin run` (one phase named `serve`: per-direction latency
//! percentiles in simulated time, WAF, counters, power, health, the
//! per-second series), plus a `serve` section with the wall-clock side:
//! wall time, connections, requests, errors, the time spent in the twin.

use std::sync::atomic::Ordering;

use serde_json::{json, Value};
use ssdtwin::model::health::Health;
use ssdtwin::run::sim::PhaseResult;
use ssdtwin::study::report::RunReport;
use ssdtwin::DriveSpec;

use crate::server::ServeOutcome;

/// A finished session's results.
pub struct ServeReport {
    /// The run's phase (named `serve`).
    pub phase: PhaseResult,
    /// The drive's health log at the end.
    pub health: Health,
    /// The `serve` section (wall-clock side).
    pub serve: Value,
}

impl ServeReport {
    /// Close the twin's statistics window and gather the results.
    pub fn of(outcome: &mut ServeOutcome, time_scale: f64) -> ServeReport {
        let sessions = outcome.counters.sessions.load(Ordering::Relaxed);
        let phase = outcome.twin.finish(sessions.min(u32::MAX as u64) as u32);
        let health = Health::of(outcome.twin.device().drive());
        let c = &outcome.counters;
        let requests = c.requests.load(Ordering::Relaxed);
        let twin_ns = c.twin_ns.load(Ordering::Relaxed);
        let delays = c.transport_delays_ns.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let serve = json!({
            "time_scale": time_scale,
            "wall_s": outcome.wall.as_secs_f64(),
            "simulated_s": (phase.end_ns - phase.start_ns) as f64 / 1e9,
            "connections": c.connections.load(Ordering::Relaxed),
            "sessions": c.sessions.load(Ordering::Relaxed),
            "requests": requests,
            "errors": c.errors.load(Ordering::Relaxed),
            "protocol_violations": c.violations.load(Ordering::Relaxed),
            "flushes": outcome.twin.flushes,
            "power_cuts": c.power_cuts.load(Ordering::Relaxed),
            "pages_lost_to_power_cuts": c.lost_pages.load(Ordering::Relaxed),
            "most_pages_lost_by_one_cut": c.worst_cut_lost_pages.load(Ordering::Relaxed),
            "twin_wall_ns_total": twin_ns,
            "twin_wall_ns_per_request": if requests > 0 { twin_ns as f64 / requests as f64 } else { 0.0 },
            "tls_poll_wall_ns_total": c.tls_poll_ns.load(Ordering::Relaxed),
            "transport_delay_ns": delays,
            "stored_pages": outcome.twin.store().live_pages(),
            "store_pool_bytes": outcome.twin.store().pool_bytes(),
        });
        ServeReport { phase, health, serve }
    }

    fn run_report<'a>(&'a self, spec: &'a DriveSpec, state: &str, seed: u64) -> RunReport<'a> {
        RunReport {
            drive: spec,
            state: state.to_string(),
            seed,
            phases: std::slice::from_ref(&self.phase),
            health: &self.health,
        }
    }

    /// The JSON of `ssdtwin run` with a `serve` section added.
    pub fn to_json(&self, spec: &DriveSpec, state: &str, seed: u64) -> Value {
        let mut v = self.run_report(spec, state, seed).to_json();
        v["serve"] = self.serve.clone();
        v
    }

    /// The terminal summary of `ssdtwin run` plus one line of wall-clock
    /// figures.
    pub fn summary(&self, spec: &DriveSpec, state: &str, seed: u64) -> String {
        let mut s = self.run_report(spec, state, seed).summary();
        s.push_str(&format!(
            "serve: {:.1} s wall, {} requests over {} sessions ({} errors), {:.0} ns of twin time per request\n",
            self.serve["wall_s"].as_f64().unwrap_or(0.0),
            self.serve["requests"],
            self.serve["sessions"],
            self.serve["errors"],
            self.serve["twin_wall_ns_per_request"].as_f64().unwrap_or(0.0),
        ));
        let mut delays: Vec<f64> =
            self.serve["transport_delay_ns"].as_array().into_iter().flatten().filter_map(|d| d.as_f64()).collect();
        if !delays.is_empty() {
            delays.sort_by(f64::total_cmp);
            s.push_str(&format!(
                "serve: replies sent early by the transport's delay: {:.1} µs (median of {} sessions; {:.1}–{:.1} µs)\n",
                delays[delays.len() / 2] / 1e3,
                delays.len(),
                delays[0] / 1e3,
                delays[delays.len() - 1] / 1e3,
            ));
        }
        s
    }
}
