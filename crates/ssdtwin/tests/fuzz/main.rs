//! Fuzzing on stable Rust: a byte-mutation fuzzer (`engine.rs`) drives
//! each parser of untrusted input — the trace readers and the statistics
//! (`traces.rs`), fio job files (`jobs.rs`), drive files and suite files
//! (`files.rs`) — from a corpus of valid inputs, for a short bounded run
//! in the normal `cargo test` (`SSDTWIN_FUZZ_SECS`, default 2 s per
//! target; `SSDTWIN_FUZZ_SEED` picks the sequence).
//!
//! The invariant: no panic, no allocation over 256 MiB and under 1 GiB
//! live in all (this binary's global allocator refuses a larger
//! allocation, which aborts the run with the allocation's size), and
//! every refusal is an `Err` with a message. A failing input is saved
//! under `target/tmp/fuzz-failures/` and its path printed. How to run a
//! longer campaign: docs/testing.md. The NBD request parser's target is
//! `crates/ssdtwin-nbd/tests/fuzz.rs`.

mod engine;
mod files;
mod jobs;
mod traces;
