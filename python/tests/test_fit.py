"""ssdtwin.fit: the battery run on a small twin, fitted from the same
preset, gives a drive and a DataFrame of residuals."""

import pandas as pd
import pytest

import ssdtwin

SET = {"geometry.blocks_per_plane": 32, "ftl.user_capacity_bytes": 499998720}


def test_fit_returns_a_drive_and_residuals(tmp_path):
    text = ssdtwin.fit_battery(0.01)
    assert "filename=${DEV}" in text and "[fill]" in text
    # Logs beside the JSON, as real fio leaves them in its directory.
    text = text.replace("write_bw_log=", "write_bw_log=%s/" % tmp_path)
    drive = ssdtwin.Drive("generic-tlc-nvme", set=SET)
    result = ssdtwin.run(drive, text)
    result.save(tmp_path / "battery.json")
    fitted, residuals = ssdtwin.fit(tmp_path / "battery.json", base=drive)
    assert isinstance(fitted, ssdtwin.Drive)
    assert fitted.spec["ftl"]["user_capacity_bytes"] == 499998720
    assert list(residuals.columns) == ["job", "measurement", "unit", "measured", "twin", "error"]
    assert "randread-qd1" in set(residuals["job"])
    # Fitted to its own twin's battery: every number within 10%.
    assert residuals["error"].abs().max() < 0.10, residuals.attrs["report"]
    params = residuals.attrs["params"]
    assert "controller.cmd_overhead_ns" in set(params["parameter"])
    assert residuals.attrs["evaluations"] > 0


def test_fit_names_bad_results(tmp_path):
    bad = tmp_path / "cut.json"
    bad.write_text('{"jobs": [')
    with pytest.raises(ssdtwin.SsdtwinError, match="ends early"):
        ssdtwin.fit(bad, base="generic-tlc-nvme")
    with pytest.raises(ValueError):
        ssdtwin.fit_battery(0)


SWEEP = "[global]\nrw=randread\nbs=4k\nruntime=40ms\nstonewall\n[qd1]\niodepth=1\n[qd8]\niodepth=8\n[qd32]\niodepth=32\n"


def _sweep_fit(tmp_path, **backend):
    """A short queue-depth sweep measured on a small drive, fitted (its
    refinement stage only) on the given backend."""
    truth = ssdtwin.Drive("generic-tlc-nvme", set=dict(SET, **{"nand.native.tr_ns": [62500, 77500, 93750]}))
    path = tmp_path / "sweep.json"
    if not path.exists():
        ssdtwin.run(truth, SWEEP, state="full").save(path)
    base = ssdtwin.Drive("generic-tlc-nvme", set=SET)
    return ssdtwin.fit(path, base=base, state="full", refine_iterations=6, **backend)


def _same_fit(a, b):
    assert a[0].toml == b[0].toml
    pd.testing.assert_frame_equal(a[1], b[1], check_exact=True)
    assert a[1].attrs["evaluations"] == b[1].attrs["evaluations"] > 0


def test_fit_replays_on_the_sweep_backends_as_natively(tmp_path):
    native = _sweep_fit(tmp_path)
    _same_fit(_sweep_fit(tmp_path, backend="serial"), native)
    _same_fit(_sweep_fit(tmp_path, backend="local", max_workers=2), native)
    with pytest.raises(ValueError, match="backend must be"):
        _sweep_fit(tmp_path, backend="cluster")


def test_fit_on_ray_equals_native_bit_for_bit(tmp_path):
    try:
        import ray
    except ImportError:
        print("skipping the Ray test: ray is not importable (pip install ray)")
        pytest.skip("ray is not importable (pip install ray)")
    native = _sweep_fit(tmp_path)
    # A local Ray: no cluster, the workers on this machine.
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = _sweep_fit(tmp_path, backend="ray")
    finally:
        ray.shutdown()
    _same_fit(on_ray, native)


def test_an_executor_that_raises_ends_the_fit_with_its_exception(tmp_path, monkeypatch):
    from ssdtwin import _sweep

    def broken(self, tasks):
        raise ConnectionError("the cluster went away")

    monkeypatch.setattr(_sweep.ReplayExecutor, "__call__", broken)
    with pytest.raises(ConnectionError, match="went away"):
        _sweep_fit(tmp_path, backend="serial")
