#!/usr/bin/env bash
# Every test: the Rust workspace, then the Python package (README's test
# command; CI runs it after fmt and clippy).
set -euo pipefail
cd "$(dirname "$0")/.."
# No test reads the terminal; keep stray stdin away from cargo and rustc.
exec </dev/null
cargo test --workspace
bash scripts/test-python.sh
