#!/usr/bin/env bash
# Every test: the Rust workspace, then the Python package (README's test
# command; CI runs it after fmt and clippy).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
# The NBD server as users run it: optimised as `cargo build --release`
# (a fault once showed only at opt-level 3; crates/ssdtwin-nbd/src/twin.rs).
cargo test --release -p ssdtwin-nbd
bash scripts/test-python.sh
