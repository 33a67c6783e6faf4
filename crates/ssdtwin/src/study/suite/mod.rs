//! Benchmark suites: the reviewers' and the vendor's test procedures
//! (described in `docs/suites.md`) as data.
//!
//! A suite is a TOML file (the shipped ones are under
//! `crates/ssdtwin/suites/` and compiled in; `ssdtwin suite --list` names
//! them) that lists tests. A test says which drive state to prepare
//! (fresh, holding its test data, fragmented, full, ...), how much extra
//! over-provisioning to leave, a sequence of steps in fio's vocabulary
//! (with sweeps such as `iodepth = [1, 2, 4, 8, 16, 32]` expanded into one
//! step per value), the idle after each step, and how to score it. A suite
//! may run every test in several passes (client-2018: on the standard
//! drive and on a full drive).
//!
//! Reading a suite has two stages, like drive files: [`def`] reads exactly
//! what was written (`deny_unknown_fields`), [`plan`] validates and expands
//! it; [`run`] makes it concrete for a drive and simulates it; [`score`]
//! computes what the reviews report; [`json`] writes one reproducible
//! document and the score table.
//!
//! ```
//! use ssdtwin::study::suite::{self, DriveUnderTest, SuiteOptions};
//!
//! let s = suite::load("iometer-2008").unwrap();
//! let drive = DriveUnderTest::load("generic-tlc-nvme", &[
//!     "geometry.blocks_per_plane=64".into(),
//!     "ftl.user_capacity_bytes=999_997_440".into(),
//! ]).unwrap();
//! let opts = SuiteOptions { scale: 0.01, time_scale: 0.001, only: vec!["random-write".into()],
//!     ..SuiteOptions::default() };
//! let r = suite::run_suite(&s, &[drive], &opts, None).unwrap();
//! assert!(r.runs[0].tests[0].scores[0].value.unwrap() > 1000.0);
//! ```
//!
//! Trace-based tests replay synthetic equivalents of traces that are not
//! public (the Storage Bench's Light, Heavy and Destroyer; PCMark 8's and
//! PCMark Vantage's traces), built from their published statistics;
//! [`pcmark`] scores the PCMark tests by the benchmarks' own rules.
//!
//! Leaves out: the original traces. Power figures (MB/s per W, idle power) need a drive with a
//! power model; for others they are `None`.

pub mod def;
pub mod json;
pub mod pcmark;
pub mod plan;
pub mod repeat;
pub mod run;
pub mod score;

pub use plan::Suite;
pub use repeat::run_repeated;
pub use run::{run_suite, DriveUnderTest, SuiteOptions, SuiteProgress, SuiteProgressFn, SuiteResult};

pub use crate::error::SuiteError;

/// Built-in suites: (name, TOML source).
pub const BUILTIN: &[(&str, &str)] = &[
    ("client-2018", include_str!("../../../suites/client-2018.toml")),
    ("client-2015", include_str!("../../../suites/client-2015.toml")),
    ("iometer-2008", include_str!("../../../suites/iometer-2008.toml")),
    ("vendor-2018", include_str!("../../../suites/vendor-2018.toml")),
];

/// Names of the built-in suites.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// TOML source of a built-in suite.
pub fn builtin_source(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// Parse and validate suite TOML; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Suite, SuiteError> {
    let def: def::SuiteFile = toml::from_str(text)
        .map_err(|e| SuiteError::Parse { origin: origin.to_string(), message: e.to_string().trim_end().to_string() })?;
    plan::build(def, text.to_string(), origin.to_string())
}

/// Load a built-in suite by name, or a suite file by path.
pub fn load(name_or_path: &str) -> Result<Suite, SuiteError> {
    if let Some(src) = builtin_source(name_or_path) {
        return parse(src, name_or_path);
    }
    let path = std::path::Path::new(name_or_path);
    if path.exists() || name_or_path.ends_with(".toml") {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SuiteError::Io { origin: name_or_path.to_string(), message: e.to_string() })?;
        return parse(&text, name_or_path);
    }
    Err(SuiteError::UnknownSuite { name: name_or_path.to_string(), known: builtin_names().join(", ") })
}
