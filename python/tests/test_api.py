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
    assert row["energy_j"] == job["ssdtwin"]["energy_j"]
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


def _cli_json(cli, extra, state, seed=1):
    # `ssdtwin.run`'s seed defaults to 1 (the state's seed and every job's
    # default randseed); the CLI without --seed leaves randseed at fio's
    # 0x89, so the same inputs give it --seed 1.
    args = [cli, "run", "--drive", "generic-tlc-nvme", "--state", state, "--quiet", "--json", "-"]
    args += ["--seed", str(seed)]
    for k, v in SMALL_SET.items():
        args += ["--set", "%s=%s" % (k, v)]
    return subprocess.run(args + extra, check=True, capture_output=True, text=True).stdout


def test_run_equals_cli_json(small, cli, tmp_path):
    """The same inputs give the CLI's JSON, byte for byte: `run` takes the
    CLI's code path (fio's semantics and JSON)."""
    r = ssdtwin.run(small, dict(WRITE_JOB, rw="randrw", rwmixread=30), state="filled:50", seed=7)
    out = _cli_json(
        cli,
        ["--rw", "randrw", "--rwmixread", "30", "--bs", "4k", "--iodepth", "8", "--io_size", "16m"],
        "filled:50",
        seed=7,
    )
    assert out == r.json_text
    s = r.summary
    assert s["direction"].tolist() == ["read", "write"]
    job = r.json["jobs"][0]
    assert s["ios"].tolist() == [job["read"]["total_ios"], job["write"]["total_ios"]]
    assert s["waf"].iloc[0] == job["ssdtwin"]["waf"]

    # A job file, given as a path and as text: its jobs run concurrently,
    # as fio (and the CLI) run them.
    jf = tmp_path / "two.fio"
    jf.write_text(
        "[global]\nbs=4k\niodepth=4\n\n[w]\nrw=randwrite\nio_size=8m\n\n"
        "[rest]\nstonewall\nidle=200ms\n\n[r]\nrw=randread\nio_size=4m\n"
    )
    by_path = ssdtwin.run(small, jf, state="full")
    by_text = ssdtwin.run(small, jf.read_text(), state="full")
    assert by_path.json_text == by_text.json_text
    assert _cli_json(cli, ["--job-file", str(jf)], "full") == by_path.json_text
    s = by_path.summary
    assert s["phase"].tolist() == ["w", "rest", "r"]
    assert s["direction"].tolist() == ["write", None, "read"]
    assert s["type"].tolist() == ["io", "idle", "io"]
    # `rest` waits for `w` (its stonewall), as in fio.
    x = {j["jobname"]: j["ssdtwin"] for j in by_path.json["jobs"]}
    assert x["rest"]["start_ns"] >= x["w"]["start_ns"] + x["w"]["elapsed_ns"]

    # A list of dicts: jobs one after another, as `--name a ... --name b --stonewall ...`.
    seq = ssdtwin.run(small, [dict(WRITE_JOB, name="fill"), dict(READ_JOB, name="check")], state="fresh")
    args = ["--name", "fill"] + sum((["--" + k, str(v)] for k, v in WRITE_JOB.items()), [])
    args += ["--name", "check", "--stonewall"] + sum((["--" + k, str(v)] for k, v in READ_JOB.items()), [])
    assert _cli_json(cli, args, "fresh") == seq.json_text


def _iolog(path, n=3000):
    """A fio v3 iolog: `n` 4 KiB writes 50 µs apart over the first 8 MiB,
    then reads of the same."""
    lines = ["fio version 3 iolog", "0 /dev/x add", "0 /dev/x open"]
    t = 0
    for i in range(n):
        t += 50_000
        lines.append("%d /dev/x write %d 4096" % (t, (i * 7919 % 2048) * 4096))
    for i in range(n // 2):
        t += 50_000
        lines.append("%d /dev/x read %d 4096" % (t, (i * 104729 % 2048) * 4096))
    lines.append("%d /dev/x close" % t)
    path.write_text("\n".join(lines) + "\n")


def test_trace_as_job_equals_cli_and_shows_progress(small, cli, tmp_path, capsys):
    trace = tmp_path / "app.iolog"
    _iolog(trace)
    r = ssdtwin.run(small, trace, state="full", progress=True)
    assert _cli_json(cli, ["--trace", str(trace)], "full") == r.json_text
    s = r.summary
    assert s["type"].tolist() == ["trace", "trace"] and s["direction"].tolist() == ["read", "write"]
    assert s["ios"].tolist() == [1500, 3000]
    assert "ssdtwin run" in capsys.readouterr().err  # the tqdm bar


def test_run_releases_the_gil(small):
    """Two runs on two Python threads overlap (each releases the GIL)."""
    import threading
    import time

    job = dict(WRITE_JOB, io_size="1g")
    t0 = time.perf_counter()
    ssdtwin.run(small, job)
    one = time.perf_counter() - t0
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    th = threading.Thread(target=count)
    th.start()
    ssdtwin.run(small, job)
    stop.set()
    th.join()
    # The counting thread ran during the simulation: held, the GIL would
    # have let it tick a handful of times at most.
    assert len(ticks) > 0.2 * one / 0.001, (len(ticks), one)


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
