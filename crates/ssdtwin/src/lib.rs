//! # ssdtwin — a digital twin of a flash SSD
//!
//! A fast, deterministic, discrete-event simulator of a whole drive: host
//! interface, controller, flash translation layer and NAND dies, in
//! integer-nanosecond virtual time. The modules follow the architecture:
//!
//! ```text
//! spec/   drive files ──► DriveModel (validated)
//! model/  the hardware: host (link, queue) ──► controller (cores, write buffer, ECC)
//!         ──► ftl (mapping, allocation, SLC cache, GC) ──► flash (scheduler) ──► nand
//!         plus power and health
//! run/    device (the device core: clock, idle policy, statistics) fed by drivers:
//!         sim (closed-loop fio-style jobs), trace (block-trace replay);
//!         states (fresh, full, steady); workloads
//! study/  suites and reviews, figures (validate), bench, reports, analytic models
//! ```
//!
//! `docs/architecture.md` in the repository follows one command through
//! these layers. Any workload source drives a [`run::device::Device`]: it
//! submits commands at the current virtual time and advances the clock to
//! completions (or to its next arrival); the drive does background work
//! when the host is idle:
//!
//! ```
//! use ssdtwin::run::device::{Device, Event};
//! use ssdtwin::{Command, Drive, DriveSpec, IoKind};
//!
//! let spec = DriveSpec::load("generic-tlc-nvme", &["geometry.blocks_per_plane=64".into(),
//!     "ftl.user_capacity_bytes=999_997_440".into()]).unwrap();
//! let mut device = Device::new(Drive::new(spec.build("example").unwrap()));
//! device.begin_window(0);
//! // Open loop: a 4 KiB write every 10 µs.
//! for i in 0..100u64 {
//!     while let Some(Event::Completion(c)) = device.advance_until(i * 10_000) {
//!         assert!(c.latency_ns() > 0);
//!     }
//!     device.submit(Command { kind: IoKind::Write, offset: i * 4096, len: 4096 }, i as u32);
//! }
//! while device.next_event().is_some() {}
//! let end = device.now();
//! let window = device.end_window(end);
//! assert_eq!(window.dirs[IoKind::Write as usize].ios, 100);
//! ```
//!
//! The closed-loop driver runs fio-style jobs:
//!
//! ```
//! use ssdtwin::{DriveSpec, Drive, Simulator, DriveState};
//! use ssdtwin::run::workload::{IoSpec, Phase, RwPattern};
//!
//! let spec = DriveSpec::load("generic-tlc-nvme", &["geometry.blocks_per_plane=64".into(),
//!     "ftl.user_capacity_bytes=999_997_440".into()]).unwrap();
//! let mut drive = Drive::new(spec.build("example").unwrap());
//! DriveState::Filled(50.0).apply_fast(&mut drive, 1);
//! let mut sim = Simulator::new(drive);
//! let mut job = IoSpec::new("randread", RwPattern::RandRead);
//! job.iodepth = 32;
//! job.size = Some(400_000_000);
//! job.io_size = Some(40_000_000);
//! let r = sim.run_phase(&Phase::Io(job), 0, 1);
//! assert!(r.iops(ssdtwin::IoKind::Read) > 100_000.0);
//! ```

#![deny(missing_docs)]

pub mod error;
pub mod fsio;
pub mod mem;
pub mod model;
mod perm;
pub mod run;
pub mod spec;
pub mod study;
pub mod units;

pub use error::{Error, JobError, SpecError, SuiteError, TraceError};
pub use model::drive::{Command, Drive, IoKind};
pub use run::sim::{PhaseResult, Simulator};
pub use run::state::DriveState;
pub use spec::{DriveModel, DriveSpec};
