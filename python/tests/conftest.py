"""Shared fixtures: a small drive (seconds per run) and the CLI binary."""

import os
import pathlib
import shutil

import pytest

import ssdtwin

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: The small TLC drive of the Rust tests (crates/ssdtwin/tests/common.rs):
#: 2 channels × 2 dies × 2 planes × 64 blocks × 48 pages × 16 KiB, 256 MiB user.
SMALL_SET = {
    "geometry.channels": 2,
    "geometry.dies_per_channel": 2,
    "geometry.blocks_per_plane": 64,
    "geometry.pages_per_block": 48,
    "ftl.user_capacity_bytes": 256 << 20,
}

#: A short random-write job on the small drive.
WRITE_JOB = {"rw": "randwrite", "bs": "4k", "iodepth": 8, "io_size": "16m"}
#: A short random-read job.
READ_JOB = {"rw": "randread", "bs": "4k", "iodepth": 8, "io_size": "8m"}


@pytest.fixture
def small():
    """The small drive."""
    return ssdtwin.Drive("generic-tlc-nvme", set=SMALL_SET)


def _cli():
    env = os.environ.get("SSDTWIN_CLI")
    if env:
        return env
    for target in (os.environ.get("CARGO_TARGET_DIR"), ROOT / "target"):
        if target:
            for profile in ("release", "debug"):
                p = pathlib.Path(target) / profile / "ssdtwin"
                if p.exists():
                    return str(p)
    return shutil.which("ssdtwin")


@pytest.fixture
def cli():
    """Path of the `ssdtwin` binary; skipped when none is built (CI sets
    SSDTWIN_CLI, so there it always runs)."""
    path = _cli()
    if not path:
        pytest.skip("no ssdtwin binary: build it with `cargo build --release -p ssdtwin-cli` or set SSDTWIN_CLI")
    return path
