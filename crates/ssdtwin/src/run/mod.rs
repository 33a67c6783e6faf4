//! Running workloads on a drive in virtual time.
//!
//! - [`entry`]: the one way into a run ([`execute`]): a job file on a
//!   drive, by the runner it needs (concurrent jobs or sequential phases);
//! - [`engine`]: the event queue and the integer-nanosecond clock;
//! - [`device`]: the device core — one drive, its clock, its idle policy
//!   and its statistics, fed one command at a time by any workload source;
//! - [`sim`]: runs a job's phases one after the other over the device core;
//! - [`source`]: one fio-style job's bookkeeping (generator, limits, rate
//!   schedule, its own statistics);
//! - [`driver`]: the one event loop on the device (a `Workload` is handed
//!   the device's events) and the closed-loop fio jobs it runs;
//! - [`control`]: fio's latency-target depth search and steady-state
//!   detection inside a job;
//! - [`logs`]: fio's log files (bandwidth, IOPS, latency, histograms);
//! - [`io_errors`]: the error numbers of the drive's statuses and fio's
//!   `continue_on_error`;
//! - [`iolog`]: fio's `write_iolog`, the commands a job issued;
//! - [`jobs`]: concurrent fio jobs (sources interleaving on one device) in
//!   fio's order (`stonewall`, `wait_for`, `startdelay`);
//! - [`workload`]: fio job files and the command generators;
//! - [`state`]: the states a drive starts a run in (fresh, full, steady);
//! - [`stats`]: latency histograms, counters and per-second series;
//! - [`trace`]: block-trace formats and their replay on the device core;
//! - [`zbd`]: fio's `zonemode=zbd`, where a job's commands go on a zoned
//!   drive.

pub mod control;
pub mod device;
pub mod driver;
pub mod engine;
pub mod entry;
pub mod fdp_log;
pub mod io_errors;
pub mod iolog;
pub mod jobs;
pub mod lifetime;
pub mod logs;
pub mod placement_stats;
pub(crate) mod plids;
pub mod sim;
pub mod source;
pub mod state;
pub mod stats;
pub mod trace;
pub mod workload;
pub mod zbd;

pub use entry::{execute, mode, Mode, RunOptions, RunOutcome, RunResults};
