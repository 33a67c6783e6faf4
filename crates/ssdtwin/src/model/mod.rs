//! The hardware: everything inside the drive, in the order a command meets
//! it.
//!
//! ```text
//! host ──► controller (cores, write buffer, ECC) ──► ftl (mapping, allocation,
//!          SLC cache, GC) ──► flash (scheduler) ──► channels and dies (nand)
//! ```
//!
//! [`drive`] assembles the parts and carries a command through them;
//! [`power`], [`thermal`] and [`health`] account for energy, heat and
//! wear; [`snapshot`] keeps a drive's state compactly; [`counters`] is
//! everything the drive counts; [`params`] holds the parameters the parts
//! are built from (the drive file's sections and what validation derives
//! from them: types only, read and checked by [`crate::spec`], so that the
//! model imports no other room). Nothing here owns
//! a clock: every call is told the virtual time, and the drive answers with
//! completion times (see [`crate::run`] for what drives it).

pub mod arbitration;
pub mod controller;
pub mod counters;
pub mod drive;
pub mod flash;
pub mod ftl;
pub mod health;
pub mod host;
pub mod media;
pub mod nand;
pub mod params;
pub mod power;
pub mod snapshot;
pub mod thermal;
pub mod timeline;
