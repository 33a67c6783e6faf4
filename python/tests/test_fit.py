"""ssdtwin.fit: the battery run on a small twin, fitted from the same
preset, gives a drive and a DataFrame of residuals."""

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
