//! One module per command: its options (a clap `Args` struct) and its
//! `run` function.

pub mod bench;
pub mod fio_flags;
pub mod fio_options;
pub mod fit;
pub mod report;
pub mod run;
pub mod serve;
pub mod show;
pub mod suite;
pub mod sweep;
pub mod trace;
pub mod validate;
