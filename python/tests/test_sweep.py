"""Sweeps: grid expansion, backends, failures, resume, Ray."""

import pandas as pd
import pytest

import ssdtwin
import ssdtwin._sweep as sw
from conftest import SMALL_SET, WRITE_JOB


def small_grid():
    """4 points: 2 GC policies × 2 seeds on the small drive, full state."""
    return {
        "drive": [ssdtwin.Drive("generic-tlc-nvme", set=SMALL_SET)],
        "ftl.gc_policy": ["greedy", "fifo"],
        "state": "full",
        "job": [WRITE_JOB],
        "seed": [1, 2],
    }


def test_expand_grid():
    pts = ssdtwin.expand_grid({"drive": ["a", "b"], "seed": [1, 2, 3], "job": {"rw": "read"}})
    assert len(pts) == 6
    assert pts[0] == {"drive": "a", "seed": 1, "job": {"rw": "read"}}
    assert pts[1]["seed"] == 2 and pts[3]["drive"] == "b"
    lst = [{"drive": "a", "job": {"rw": "read"}}, {"drive": "b", "job": {"rw": "write"}, "state": "full"}]
    assert ssdtwin.expand_grid(lst) == lst
    with pytest.raises(ValueError, match="colour"):
        ssdtwin.expand_grid({"drive": ["a"], "job": [{}], "colour": ["red"]})
    with pytest.raises(ValueError, match="job"):
        ssdtwin.expand_grid([{"drive": "a"}])


def test_local_two_workers_equals_a_loop():
    df = ssdtwin.sweep(small_grid(), backend="local", max_workers=2, progress=False)
    assert len(df) == 4 and df["error"].isna().all()
    assert df["point"].tolist() == [0, 1, 2, 3]
    assert list(df.columns[:6]) == ["point", "drive", "ftl.gc_policy", "state", "job", "seed"]
    assert df["ftl.gc_policy"].tolist() == ["greedy", "greedy", "fifo", "fifo"]
    assert df["job"][0] == "rw=randwrite bs=4k iodepth=8 io_size=16m"
    # The same points one by one with run().
    for i, p in enumerate(ssdtwin.expand_grid(small_grid())):
        d = p["drive"].with_set({"ftl.gc_policy": p["ftl.gc_policy"]})
        s = ssdtwin.run(d, p["job"], state=p["state"], seed=p["seed"]).summary
        got = df[df["point"] == i][s.columns].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, s, check_exact=True)
    # FIFO collects more than greedy on a full drive.
    waf = df.groupby("ftl.gc_policy")["waf"].mean()
    assert waf["fifo"] >= waf["greedy"]
    serial = ssdtwin.sweep(small_grid(), backend="serial", progress=False)
    pd.testing.assert_frame_equal(df, serial, check_exact=True)


def test_failing_point_keeps_the_others():
    grid = [
        {"drive": "generic-tlc-nvme", "set": SMALL_SET, "job": WRITE_JOB},
        {"drive": "generic-tlc-nvme", "set": dict(SMALL_SET, **{"ftl.gc_polcy": "fifo"}), "job": WRITE_JOB},
        {"drive": "no-such-drive", "job": WRITE_JOB},
        {"drive": "generic-tlc-nvme", "set": SMALL_SET, "job": dict(WRITE_JOB, bogus=1)},
        {"drive": "generic-tlc-nvme", "set": SMALL_SET, "job": dict(WRITE_JOB, rw="randread")},
    ]
    df = ssdtwin.sweep(grid, backend="local", max_workers=2, progress=False)
    assert df["point"].tolist() == [0, 1, 2, 3, 4]
    err = df["error"].tolist()
    assert err[0] is None and err[4] is None
    assert "gc_polcy" in err[1] and "no-such-drive" in err[2] and "bogus" in err[3]
    assert df["iops"].notna().tolist() == [True, False, False, False, True]


@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_resume_skips_completed_points(tmp_path, monkeypatch, ext):
    ck = tmp_path / ("sweep." + ext)
    grid = small_grid()
    first = dict(grid, seed=[1])  # points 0 and 2 of the full grid
    ssdtwin.sweep(first, backend="serial", resume=ck, progress=False)
    assert ck.exists()
    calls = []
    real = sw._run_point

    def counting(args):
        calls.append(args)
        return real(args)

    monkeypatch.setattr(sw, "_run_point", counting)
    resumed = ssdtwin.sweep(grid, backend="serial", resume=ck, progress=False)
    assert len(calls) == 2 and sorted(a[4] for a in calls) == [2, 2]
    monkeypatch.setattr(sw, "_run_point", real)
    fresh = ssdtwin.sweep(grid, backend="serial", progress=False)
    pd.testing.assert_frame_equal(resumed, fresh, check_exact=True, check_dtype=False)
    # Everything done: nothing runs again.
    monkeypatch.setattr(sw, "_run_point", counting)
    calls.clear()
    again = ssdtwin.sweep(grid, backend="serial", resume=ck, progress=False)
    assert calls == []
    pd.testing.assert_frame_equal(again, fresh, check_exact=True, check_dtype=False)


def test_ray_equals_local_bit_for_bit():
    try:
        import ray
    except ImportError:
        print("skipping the Ray test: ray is not importable (pip install ray)")
        pytest.skip("ray is not importable (pip install ray)")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = ssdtwin.sweep(small_grid(), backend="ray", progress=False)
    finally:
        ray.shutdown()
    local = ssdtwin.sweep(small_grid(), backend="local", max_workers=2, progress=False)
    pd.testing.assert_frame_equal(on_ray, local, check_exact=True)


def test_grid_file_command(tmp_path):
    """`python -m ssdtwin sweep GRID.toml` (what `ssdtwin sweep` runs)."""
    pytest.importorskip("tomllib" if __import__("sys").version_info >= (3, 11) else "tomli")
    grid = tmp_path / "grid.toml"
    lines = ['drive = "generic-tlc-nvme"', 'state = "full"', "seed = [1, 2]"]
    lines += ['"%s" = %d' % (k, v) for k, v in SMALL_SET.items()]
    lines += ["[[job]]", 'rw = "randwrite"', 'bs = "4k"', "iodepth = 8", 'io_size = "16m"']
    grid.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    assert sw._main([str(grid), "--backend", "serial", "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert len(df) == 2 and df["seed"].tolist() == [1, 2] and df["error"].isna().all()
