"""JSON documents of the library → pandas DataFrames.

The one place on the Python side that knows the layout of the JSON that
``ssdtwin run --json`` (fio's JSON with an ``ssdtwin`` object per job, or
for a trace replay ssdtwin's run document) and ``ssdtwin suite`` write (the Rust side of the
binding returns exactly that text). If the layout changes, adapt here.
"""

from typing import Any, Dict, List, Optional

from ._lazy import pd

#: I/O directions of a phase, in the JSON's order.
DIRECTIONS = ("read", "write", "trim")

#: Percentiles shown in the summary: (column suffix, fio key).
SUMMARY_PERCENTILES = (
    ("p50", "50.000000"),
    ("p90", "90.000000"),
    ("p99", "99.000000"),
    ("p99.9", "99.900000"),
    ("p99.99", "99.990000"),
)

#: Columns of a summary, in order (also those of a failed sweep point).
SUMMARY_COLUMNS = [
    "phase_index",
    "phase",
    "type",
    "direction",
    "ios",
    "bytes",
    "iops",
    "mb_s",
    "lat_min_us",
    "lat_mean_us",
    *["lat_%s_us" % s for s, _ in SUMMARY_PERCENTILES],
    "lat_max_us",
    "lat_stddev_us",
    "measured_s",
    "elapsed_s",
    "waf",
    "energy_j",
    "power_w",
    "gc_slots_moved",
]


def _num(v: Any) -> float:
    """A JSON number or null as a float (null → NaN)."""
    return float("nan") if v is None else float(v)


def _extra(job: Dict[str, Any]) -> Dict[str, Any]:
    """ssdtwin's figures of a job: under ``ssdtwin`` in fio's JSON (what
    ``ssdtwin run --json`` writes for fio jobs), at the job's top level in
    the run document (trace replays)."""
    return job.get("ssdtwin") or job


def summary_records(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One record per phase × direction with I/O (a phase without I/O —
    idle, secure erase — gives one record with direction ``None``)."""
    rows = []
    for i, job in enumerate(doc.get("jobs", [])):
        x = _extra(job)
        base = {
            "phase_index": i,
            "phase": job.get("jobname"),
            "type": x.get("type"),
        }
        tail = {
            "measured_s": x.get("measured_ns", 0) / 1e9,
            "elapsed_s": x.get("elapsed_ns", 0) / 1e9,
            "waf": _num(x.get("waf")),
            "energy_j": _num(x.get("energy_j")),
            "power_w": _num(x.get("power_w")),
            "gc_slots_moved": (x.get("counters") or {}).get("gc_slots_moved"),
        }
        dirs = [d for d in DIRECTIONS if (job.get(d) or {}).get("total_ios", 0) > 0]
        if not dirs:
            row = dict(base, direction=None)
            row.update({c: float("nan") for c in SUMMARY_COLUMNS if c not in row and c not in tail})
            row.update(tail)
            rows.append(row)
            continue
        for d in dirs:
            s = job[d]
            clat = s.get("clat_ns", {})
            pct = clat.get("percentile", {})
            row = dict(base, direction=d)
            row.update(
                ios=s.get("total_ios"),
                bytes=s.get("io_bytes"),
                iops=float(s.get("iops")),
                mb_s=s.get("bw_bytes") / 1e6,
                lat_min_us=clat.get("min") / 1e3,
                lat_mean_us=clat.get("mean") / 1e3,
            )
            for suffix, key in SUMMARY_PERCENTILES:
                row["lat_%s_us" % suffix] = _num(pct.get(key)) / 1e3
            row["lat_max_us"] = clat.get("max") / 1e3
            row["lat_stddev_us"] = _num(clat.get("stddev")) / 1e3
            row.update(tail)
            rows.append(row)
    return [{c: r.get(c) for c in SUMMARY_COLUMNS} for r in rows]


def summary_frame(doc: Dict[str, Any]) -> "pd.DataFrame":
    """The summary DataFrame of a run document."""
    return typed_summary(pd.DataFrame(summary_records(doc), columns=SUMMARY_COLUMNS))


def typed_summary(df: "pd.DataFrame") -> "pd.DataFrame":
    """Give the summary columns stable dtypes (so that frames from
    different runs, or read back from a checkpoint, concatenate alike)."""
    ints = ["phase_index", "ios", "bytes", "gc_slots_moved"]
    strs = ["phase", "type", "direction"]
    for c in SUMMARY_COLUMNS:
        if c not in df.columns:
            continue
        if c in ints:
            df[c] = df[c].astype("Int64")
        elif c in strs:
            df[c] = df[c].astype("object").where(df[c].notna(), None)
        else:
            df[c] = df[c].astype("float64")
    return df


def series_frame(doc: Dict[str, Any]) -> "pd.DataFrame":
    """Per-second series of the whole run (every phase, on the run's clock
    ``run_t_s``), with MB/s columns added."""
    rows = (doc.get("overall") or {}).get("time_series") or []
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    front = [c for c in ("phase", "run_t_s", "t_s") if c in df.columns]
    df = df[front + [c for c in df.columns if c not in front]]
    for d in ("read", "write"):
        if d + "_bytes" in df.columns:
            df[d + "_mb_s"] = df[d + "_bytes"] / 1e6
    return df


def latency_frame(doc: Dict[str, Any]) -> "pd.DataFrame":
    """Completion-latency percentiles, long format: phase, direction,
    percentile, latency (ns and µs)."""
    rows = []
    for i, job in enumerate(doc.get("jobs", [])):
        for d in DIRECTIONS:
            s = job.get(d) or {}
            if s.get("total_ios", 0) == 0:
                continue
            for key, ns in (s.get("clat_ns", {}).get("percentile") or {}).items():
                rows.append(
                    {
                        "phase_index": i,
                        "phase": job.get("jobname"),
                        "direction": d,
                        "percentile": float(key),
                        "lat_ns": ns,
                        "lat_us": ns / 1e3,
                    }
                )
    return pd.DataFrame(rows, columns=["phase_index", "phase", "direction", "percentile", "lat_ns", "lat_us"])


def scores_frame(doc: Dict[str, Any]) -> "pd.DataFrame":
    """A suite document's scores: test, title, label, unit, drive, pass, value."""
    cols = ["test", "title", "label", "unit", "drive", "pass", "value"]
    df = pd.DataFrame(doc.get("scores") or [], columns=cols)
    df["value"] = df["value"].astype("float64")
    return df


def steps_frame(doc: Dict[str, Any]) -> "pd.DataFrame":
    """A suite document's steps, one row per drive × pass × test × step,
    with the step's metrics."""
    rows = []
    for run in doc.get("runs") or []:
        for t in run.get("tests") or []:
            for st in t.get("steps") or []:
                row = {"drive": run.get("drive"), "pass": run.get("pass"), "test": t.get("name"), "step": st.get("step")}
                for k, v in (st.get("sweep") or {}).items():
                    row["sweep." + k] = v
                for k, v in (st.get("metrics") or {}).items():
                    row[k] = _num(v) if k != "active_ns" else v
                rows.append(row)
    return pd.DataFrame(rows)


def figures_frame(verdicts: List[Dict[str, Any]]) -> "pd.DataFrame":
    """Published figures against their simulated measurement."""
    cols = ["drive", "figure", "metric", "published", "unit", "simulated", "error", "tolerance", "pass", "source"]
    return pd.DataFrame(verdicts, columns=cols)


def health_dict(doc: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The health log at the end of the run."""
    return doc.get("health")
