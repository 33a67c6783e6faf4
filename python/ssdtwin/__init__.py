"""ssdtwin — a fast, deterministic digital twin of a flash SSD, from Python.

>>> import ssdtwin
>>> d = ssdtwin.Drive("generic-tlc-nvme")
>>> r = ssdtwin.run(d, {"rw": "randread", "bs": "4k", "iodepth": 32, "runtime": "1s"}, state="full")
>>> r.summary          # one row per phase × direction             # doctest: +SKIP
>>> ssdtwin.sweep({"drive": ["intel-660p-1tb"], "ftl.gc_policy": ["greedy", "fifo"],
...                "job": [{"rw": "randwrite", "bs": "4k", "runtime": "2s"}]})   # doctest: +SKIP

>>> dev = ssdtwin.Device("generic-tlc-nvme", state="full")   # step it yourself
>>> ids = dev.submit_many("read", [0, 4096, 8192], 4096)
>>> dev.run_until_idle().latency_ns                            # doctest: +SKIP

Runs, suites and figures call the Rust library (the same code as the
``ssdtwin`` command); :func:`sweep` spreads points over local processes or
a Ray cluster.
"""

from ._api import (
    Drive,
    Result,
    SsdtwinError,
    SuiteResult,
    figure_presets,
    fit,
    fit_battery,
    presets,
    review,
    run,
    suite,
    suites,
    validate,
)
from ._device import Completion, Completions, Device, Zone
from ._ssdtwin import __version__
from ._sweep import expand_grid, sweep

__all__ = [
    "Completion",
    "Completions",
    "Device",
    "Drive",
    "Result",
    "SsdtwinError",
    "SuiteResult",
    "Zone",
    "__version__",
    "expand_grid",
    "figure_presets",
    "fit",
    "fit_battery",
    "presets",
    "review",
    "run",
    "suite",
    "suites",
    "sweep",
    "validate",
]
