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
//! use ssdtwin::workload::{IoSpec, Phase, RwPattern};
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

pub mod analytic;
pub mod bench;
pub mod controller;
pub mod drive;
pub mod engine;
pub mod error;
pub mod figures;
pub mod flash;
pub mod ftl;
pub mod health;
pub mod host;
pub mod mem;
pub mod nand;
pub mod power;
pub mod report;
pub mod sim;
pub mod spec;
pub mod state;
pub mod stats;
pub mod suite;
pub mod workload;

pub use drive::{Command, Drive, IoKind};
pub use error::{Error, JobError, SpecError};
pub use sim::{PhaseResult, Simulator};
pub use spec::{DriveModel, DriveSpec};
pub use state::DriveState;
