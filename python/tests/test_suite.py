"""Suites, reviews and published figures."""

import json
import os
import subprocess

import ssdtwin
from conftest import SMALL_SET

QUICK = dict(scale=0.001, only=["burst-random-read", "burst-seq-write"])


def test_suite_scores_match_cli(small, cli, tmp_path):
    r = ssdtwin.suite("client-2018", drives=[small], out=tmp_path / "py", **QUICK)
    assert r.report is not None and os.path.exists(r.report)
    s = r.scores
    assert list(s.columns) == ["test", "title", "label", "unit", "drive", "pass", "value"]
    assert set(s["test"]) == {"burst-random-read", "burst-seq-write"}
    assert set(s["pass"]) == {"standard", "full"} and s["value"].dtype == "float64"
    assert (s["value"] > 0).all()
    assert len(r.steps) >= 4 and "mbps" in r.steps.columns
    assert r.table().shape[1] == 2
    args = [cli, "suite", "client-2018", "--drive", "generic-tlc-nvme", "--quiet", "--out", str(tmp_path / "cli")]
    args += ["--scale", "0.001", "--only", "burst-random-read", "--only", "burst-seq-write"]
    for k, v in SMALL_SET.items():
        args += ["--set", "%s=%s" % (k, v)]
    subprocess.run(args, check=True)
    assert (tmp_path / "cli" / "client-2018.json").read_text() == r.json_text
    assert (tmp_path / "py" / "client-2018.json").read_text() == r.json_text


def test_repeat_reports_medians_over_seeds(small):
    one = dict(scale=0.001, only=["burst-random-read"])
    r = ssdtwin.suite("client-2018", drives=[small], repeat=3, seed=5, **one)
    rep = r.repeat
    assert len(rep) == len(r.scores) and all(len(v) == 3 for v in rep["values"])
    assert r.json["repeat"]["seeds"] == [5, 6, 7]
    # The reported score is the median of the seeds' values, each of which
    # a single run with that seed gives.
    singles = [ssdtwin.suite("client-2018", drives=[small], seed=s, **one).scores["value"].tolist() for s in (5, 6, 7)]
    for i, row in rep.iterrows():
        vals = sorted(x[i] for x in singles)
        assert row["values"] == [x[i] for x in singles]
        assert row["median"] == vals[1] == r.scores["value"][i]
    assert ssdtwin.suite("client-2018", drives=[small], **one).repeat.empty


def test_review_writes_the_report(small, tmp_path):
    r = ssdtwin.review([small], out=tmp_path, **QUICK)
    assert r.report == str(tmp_path / "report.html") and os.path.exists(r.report)
    assert json.loads((tmp_path / "client-2018.json").read_text())["suite"]["name"] == "client-2018"


def test_suite_errors():
    import pytest

    with pytest.raises(ssdtwin.SsdtwinError, match="no suite.*client-2018"):
        ssdtwin.suite("client-1999")
    with pytest.raises(ssdtwin.SsdtwinError, match="no-such-test"):
        ssdtwin.suite("client-2018", only=["no-such-test"], scale=0.001)


def test_validate_figures_frame():
    v = ssdtwin.validate("intel-x25m-80gb", quick=True)
    assert list(v.columns[:6]) == ["drive", "figure", "metric", "published", "unit", "simulated"]
    assert len(v) >= 3 and v["simulated"].dtype == "float64" and v["pass"].dtype == bool
    assert (v["drive"] == "intel-x25m-80gb").all()


def test_pcmark_vantage_is_a_test_like_any_other(small):
    # The synthetic PCMark Vantage HDD suite, reached by `only` as any test:
    # its overall score and the eight traces' MB/s.
    r = ssdtwin.suite("iometer-2008", drives=[small], only=["pcmark-vantage-hdd"], scale=0.001)
    s = r.scores
    assert set(s["test"]) == {"pcmark-vantage-hdd"}
    assert list(s["label"])[0] == "HDD score" and list(s["unit"])[0] == "points"
    assert (s["unit"] == "MB/s").sum() == 8 and (s["value"] > 0).all()


def test_pcmark10_data_drive_is_a_test_like_any_other(small):
    # The synthetic PCMark 10 Data Drive benchmark, reached by `only`: its
    # unscaled score, then bandwidth and access time overall and per trace.
    r = ssdtwin.suite("vendor-2018", drives=[small], only=["pcmark10-data-drive"], scale=0.001)
    s = r.scores
    assert set(s["test"]) == {"pcmark10-data-drive"}
    assert list(s["label"])[0] == "storage score (unscaled)"
    assert (s["unit"] == "MB/s").sum() == 4 and (s["unit"] == "µs").sum() == 4
    assert (s["value"] > 0).all()


def test_pcmark8_storage_is_a_test_like_any_other(small):
    # The synthetic PCMark 8 Storage benchmark, reached by `only`: its
    # score, its bandwidth and the ten traces' times.
    r = ssdtwin.suite("vendor-2018", drives=[small], only=["pcmark8-storage"], scale=0.001)
    s = r.scores
    assert set(s["test"]) == {"pcmark8-storage"}
    assert list(s["label"])[:2] == ["storage score", "bandwidth"]
    assert list(s["unit"])[:2] == ["points", "MB/s"]
    assert (s["unit"] == "s").sum() == 10 and (s["value"] > 0).all()
