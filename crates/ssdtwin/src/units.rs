//! Numbers in human units, shared by the run's own summaries (trace
//! statistics) and the study's reports. Only formatting: no parsing of
//! sizes or times (that is each input's own syntax, in `run/workload/`
//! and `study/suite/`).

/// Human units for a latency in ns.
pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}
