#!/usr/bin/env bash
# Every test, on a fresh machine too (the README's test command; CI runs it
# after fmt and clippy): first scripts/test-setup.sh installs what the tests
# drive (Debian's fio, Chromium, NBD clients, e2fsprogs when missing; a
# venv with the Python packages fio's helper scripts import), then the Rust
# workspace's tests with that venv first on PATH (and the NBD server's
# optional `tls-psk` feature's lints and tests), then the Python package's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/test-setup.sh
target="${CARGO_TARGET_DIR:-$PWD/target}"
export SSDTWIN_VENV="${SSDTWIN_VENV:-$target/py-venv}"
# fio's helper scripts run `env python3`: the venv's, with six/numpy/pandas.
export PATH="$SSDTWIN_VENV/bin:$PATH:/usr/sbin:/sbin"
cargo test --workspace
# The NBD server as users run it: optimised as `cargo build --release`
# (a fault once showed only at opt-level 3; crates/ssdtwin-nbd/src/twin.rs).
cargo test --release -p ssdtwin-nbd
# TLS with pre-shared keys: an optional feature built against OpenSSL
# (libssl-dev, installed by the setup above, which .ci/run's clippy step
# runs before), so its lints and tests run here.
cargo clippy -p ssdtwin-nbd --features tls-psk --all-targets -- -D warnings
cargo clippy -p ssdtwin-cli --features tls-psk -- -D warnings
cargo test -p ssdtwin-nbd --features tls-psk --lib --test tls_psk
bash scripts/test-python.sh
