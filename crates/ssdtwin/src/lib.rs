//! # ssdtwin — a digital twin of a flash SSD
//!
//! A fast, deterministic, discrete-event simulator of a whole drive: host
//! interface, controller, flash translation layer and NAND dies, in
//! integer-nanosecond virtual time. The layout follows the hardware:
//!
//! ```text
//! workload ──► host (link, queue) ──► controller (cores, write buffer, ECC)
//!          ──► ftl (mapping, allocation, GC) ──► flash (scheduler, channels, dies)
//! ```
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
pub mod mem;
pub mod model;
pub mod run;
pub mod spec;
pub mod study;

pub use error::{Error, JobError, SpecError};
pub use model::drive::{Command, Drive, IoKind};
pub use run::sim::{PhaseResult, Simulator};
pub use run::state::DriveState;
pub use spec::{DriveModel, DriveSpec};
