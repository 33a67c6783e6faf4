//! Studies built on runs: the reviewers' and vendors' suites, the presets'
//! published figures (`validate`), the simulator's own speed (`bench`),
//! run reports and analytic models to test against, and fits of a twin
//! to a real drive's measurements (`fit`).

pub mod analytic;
pub mod bench;
pub mod figures;
pub mod fio_out;
pub mod fio_terse;
pub mod fit;
pub mod json_doc;
pub mod metric;
pub mod record;
pub mod report;
pub mod suite;
