#!/usr/bin/env bash
# The Python package's tests on a fresh machine: a virtual environment with
# maturin, pytest, pandas, pyarrow, tqdm, nbclient, ipykernel, matplotlib
# (and Ray when it installs), the
# extension built in release mode into it, the `ssdtwin` binary for the
# tests that compare with the CLI's JSON, then pytest.
#
# Environment: PYTHON (default python3), SSDTWIN_VENV (default
# $CARGO_TARGET_DIR/py-venv or target/py-venv), SSDTWIN_SKIP_RAY=1 to leave
# Ray out.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="${SSDTWIN_VENV:-$target/py-venv}"
py="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"
python --version
python -m pip install -q --disable-pip-version-check maturin pytest pandas pyarrow tqdm \
    nbclient nbformat ipykernel matplotlib
if [ "${SSDTWIN_SKIP_RAY:-0}" != 1 ] && ! python -c 'import ray' 2>/dev/null; then
    python -m pip install -q --disable-pip-version-check ray \
        || echo "note: ray did not install; the Ray test will be skipped"
fi

# The extension (abi3, release) into the venv.
maturin develop --release --quiet
# The CLI, for the tests that compare with its JSON: the binary that
# `cargo test --workspace` builds for its own CLI tests (up to date after
# it, so nothing is rebuilt; its numbers are the release build's).
cargo test --quiet -p ssdtwin-cli --no-run
export SSDTWIN_CLI="$target/debug/ssdtwin"

# pytest's exit status 5 ("no tests collected") is a failure here too.
status=0
python -m pytest python/tests -q -rs || status=$?
if [ "$status" = 5 ]; then
    echo "pytest collected no tests" >&2
fi
exit "$status"
