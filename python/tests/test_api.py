"""Drives, runs and their DataFrames, against the CLI's JSON."""

import json
import subprocess

import pandas as pd
import pytest

import ssdtwin
from conftest import READ_JOB, SMALL_SET, WRITE_JOB


def test_presets_and_suites():
    p = ssdtwin.presets()
    assert "intel-660p-1tb" in p and "generic-tlc-nvme" in p
    assert "client-2018" in ssdtwin.suites()
    assert "intel-660p-1tb" in ssdtwin.figure_presets()


def test_drive_spec_overrides_and_toml(tmp_path):
    d = ssdtwin.Drive("intel-660p-1tb", set={"ftl.gc_policy": "fifo"})
    assert d.name == "intel-660p-1tb"
    assert d.spec["ftl"]["gc_policy"] == "fifo"
    assert ssdtwin.Drive("intel-660p-1tb").spec["ftl"]["gc_policy"] == "greedy"
    # The resolved TOML reads back as the same drive, as text and as a file.
    assert ssdtwin.Drive.from_toml(d.toml).spec == d.spec
    f = tmp_path / "mine.toml"
    f.write_text(d.toml)
    assert ssdtwin.Drive(f).spec == d.spec
    assert ssdtwin.Drive(str(f)).spec == d.spec
    # A drive file may start from a preset.
    v = ssdtwin.Drive('base = "intel-660p-1tb"\nname = "mine"\n[ftl]\ngc_policy = "cost-benefit"\n')
    assert v.name == "mine" and v.spec["ftl"]["gc_policy"] == "cost-benefit"
    assert v.spec["geometry"] == d.spec["geometry"]
    # Overrides as strings, and with_set.
    assert ssdtwin.Drive("intel-660p-1tb", set=["ftl.gc_policy=fifo"]) == d
    assert ssdtwin.Drive("intel-660p-1tb").with_set({"ftl.gc_policy": "fifo"}).spec == d.spec


def test_drive_errors_name_the_problem():
    with pytest.raises(ssdtwin.SsdtwinError, match="no-such-drive.*intel-660p-1tb"):
        ssdtwin.Drive("no-such-drive")
    with pytest.raises(ssdtwin.SsdtwinError, match="gc_polcy"):
        ssdtwin.Drive("generic-tlc-nvme", set={"ftl.gc_polcy": "fifo"})
    with pytest.raises(ssdtwin.SsdtwinError, match="channels"):
        ssdtwin.Drive("generic-tlc-nvme", set={"geometry.channels": 0})
    assert issubclass(ssdtwin.SsdtwinError, ValueError)


def test_run_dict_job_frames_match_json(small):
    r = ssdtwin.run(small, READ_JOB, state="full", seed=3)
    doc = r.json
    assert doc["state"] == "full" and doc["seed"] == 3
    s = r.summary
    assert list(s.columns[:4]) == ["phase_index", "phase", "type", "direction"]
    for c in ["iops", "mb_s", "lat_mean_us", "lat_p99_us", "lat_p99.9_us", "waf", "energy_j", "power_w"]:
        assert c in s.columns and s[c].dtype == "float64", c
    assert len(s) == 1
    row = s.iloc[0]
    job = doc["jobs"][0]
    assert row["phase"] == "job" and row["direction"] == "read" and row["type"] == "io"
    assert row["ios"] == job["read"]["total_ios"] == 2048
    assert row["iops"] == job["read"]["iops"]
    assert row["mb_s"] == job["read"]["bw_bytes"] / 1e6
    assert row["lat_mean_us"] == job["read"]["clat_ns"]["mean"] / 1e3
    assert row["lat_p99_us"] == job["read"]["clat_ns"]["percentile"]["99.000000"] / 1e3
    assert row["energy_j"] == job["energy_j"]
    # Latency table: fio's 17 percentiles.
    lat = r.latency
    assert len(lat) == 17 and lat["percentile"].tolist()[6] == 50.0
    assert lat.loc[lat["percentile"] == 99.0, "lat_ns"].item() == job["read"]["clat_ns"]["percentile"]["99.000000"]
    # Per-second series covers the run.
    ser = r.series
    assert len(ser) == len(doc["overall"]["time_series"]) >= 1
    assert {"phase", "run_t_s", "read_ios", "read_mb_s", "waf"} <= set(ser.columns)
    assert ser["read_ios"].sum() == 2048
    h = r.health
    assert h["host_bytes_written"] == doc["health"]["host_bytes_written"] > 0
    assert "Result(" in repr(r)


def _io_totals(doc):
    """I/O counts and bytes per direction summed over a document's jobs
    (the CLI writes fio's JSON, the binding ssdtwin's run document; both
    use fio's field names for the directions)."""
    out = {}
    for j in doc["jobs"]:
        for d in ("read", "write", "trim"):
            x = j.get(d) or {}
            ios, b = out.get(d, (0, 0))
            out[d] = (ios + x.get("total_ios", 0), b + x.get("io_bytes", 0))
    return out


def test_run_equals_cli_json(small, cli, tmp_path):
    """The same inputs give the CLI's results: the same I/O, direction by
    direction (the CLI writes fio's JSON layout; `run` returns ssdtwin's run
    document and runs a file's sections in order)."""
    r = ssdtwin.run(small, dict(WRITE_JOB, rw="randrw", rwmixread=30), state="filled:50", seed=7)
    args = [cli, "run", "--drive", "generic-tlc-nvme", "--state", "filled:50", "--seed", "7", "--quiet", "--json", "-"]
    for k, v in SMALL_SET.items():
        args += ["--set", "%s=%s" % (k, v)]
    args += ["--rw", "randrw", "--rwmixread", "30", "--bs", "4k", "--iodepth", "8", "--io_size", "16m"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    assert _io_totals(json.loads(out)) == _io_totals(r.json)
    s = r.summary
    assert s["direction"].tolist() == ["read", "write"]

    # A job file, given as a path and as text.
    jf = tmp_path / "two.fio"
    jf.write_text("[global]\nbs=4k\niodepth=4\n\n[w]\nrw=randwrite\nio_size=8m\n\n[rest]\nidle=200ms\n\n[r]\nrw=randread\nio_size=4m\n")
    by_path = ssdtwin.run(small, jf, state="full")
    by_text = ssdtwin.run(small, jf.read_text(), state="full")
    assert by_path.json_text == by_text.json_text
    args = [cli, "run", "--drive", "generic-tlc-nvme", "--state", "full", "--quiet", "--json", "-", "--job-file", str(jf)]
    for k, v in SMALL_SET.items():
        args += ["--set", "%s=%s" % (k, v)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    assert _io_totals(json.loads(out)) == _io_totals(by_path.json)
    s = by_path.summary
    assert s["phase"].tolist() == ["w", "rest", "r"]
    assert s["direction"].tolist() == ["write", None, "read"]
    assert s["type"].tolist() == ["io", "idle", "io"]


def test_phases_as_list_of_dicts(small):
    r = ssdtwin.run(small, [dict(WRITE_JOB, name="fill"), {"idle": "100ms"}, READ_JOB], state="fresh")
    assert r.summary["phase"].tolist() == ["fill", "job2", "job3"]


def test_same_seed_same_result(small):
    a = ssdtwin.run(small, WRITE_JOB, state="full", seed=5)
    b = ssdtwin.run(small, WRITE_JOB, state="full", seed=5)
    assert a.json_text == b.json_text
    pd.testing.assert_frame_equal(a.summary, b.summary, check_exact=True)
    c = ssdtwin.run(small, WRITE_JOB, state="full", seed=6)
    assert c.json_text != a.json_text


def test_bad_job_and_state_raise_with_the_message(small):
    with pytest.raises(ssdtwin.SsdtwinError, match="bogus"):
        ssdtwin.run(small, dict(READ_JOB, bogus=1))
    with pytest.raises(ssdtwin.SsdtwinError, match="bs"):
        ssdtwin.run(small, dict(READ_JOB, bs="4q"))
    with pytest.raises(ssdtwin.SsdtwinError, match="sideways"):
        ssdtwin.run(small, READ_JOB, state="sideways")
    with pytest.raises(ssdtwin.SsdtwinError, match="rw"):
        ssdtwin.run(small, {"bs": "4k"})
    with pytest.raises(ssdtwin.SsdtwinError, match=r"<job text>:2.*bogus"):
        ssdtwin.run(small, "[a]\nbogus=1\nrw=read\n")
