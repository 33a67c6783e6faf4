"""Parameter sweeps: a grid of drives × overrides × states × jobs × seeds,
run on every local core or on a Ray cluster, as one tidy DataFrame.

A grid is a list of points (dicts), or a dict of lists expanded as their
product (the last key varies fastest). A point's keys:

``drive``
    a :class:`~ssdtwin.Drive`, a preset name, a drive file path or TOML text
    (required);
``job``
    fio options as a dict, a job file path or job-file text (required; in a
    dict-of-lists grid a list of jobs means alternatives: wrap a multi-phase
    list of dicts in another list);
``state``
    ``fresh`` (default), ``full``, ``filled:N``, ``steady``, ``steady-exact``;
``seed``
    default 1;
``set``
    drive overrides as a dict (``{"ftl.gc_policy": "fifo"}``);
``"a.b"`` (any key with a dot)
    one drive override, e.g. ``"ftl.gc_policy": ["greedy", "fifo"]``;
``"job.OPTION"``
    one fio option set on the point's job, e.g. ``"job.iodepth": [1, 4, 32]``.

The result has one row per point × phase × direction: ``point`` (the
point's index in the expanded grid), one column per grid key (drives by
name, dicts and jobs as short labels), the summary columns of
:attr:`ssdtwin.Result.summary`, ``error`` (``None``, or the message of a
point that failed: its other columns are empty) and ``point_key`` (a hash
of the point's inputs, which ``resume`` matches on).

Every point is simulated by the same function whatever the backend, and the
simulator is deterministic, so ``local``, ``ray`` and ``serial`` give
identical frames, bit for bit.
"""

import concurrent.futures as cf
import hashlib
import itertools
import json
import multiprocessing
import os
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._lazy import pd

from . import _frames
from ._api import Drive, SsdtwinError, _job_args, _overrides, _value_text

#: Keys of a grid point besides dotted overrides and ``job.OPTION``.
GRID_KEYS = ("drive", "set", "state", "job", "seed")

Grid = Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]


def expand_grid(grid: Grid) -> List[Dict[str, Any]]:
    """The points of a grid: a list of dicts as is, a dict of lists as the
    product of its values (a scalar, a dict or a Drive counts as a list of
    one; so does a dict for ``set`` and ``job``)."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        axes = []
        for k in keys:
            v = grid[k]
            if isinstance(v, (list, tuple)):
                axes.append(list(v))
            else:
                axes.append([v])
        points = [dict(zip(keys, combo)) for combo in itertools.product(*axes)]
    elif isinstance(grid, Sequence) and not isinstance(grid, str):
        points = [dict(p) for p in grid]
        for p in points:
            if not isinstance(p, Mapping):
                raise TypeError("a grid given as a list holds dicts, got %r" % (p,))
    else:
        raise TypeError("grid must be a dict of lists or a list of dicts")
    for p in points:
        for k in p:
            if k not in GRID_KEYS and "." not in k:
                raise ValueError(
                    "grid key %r: use drive, job, state, seed, set, a drive field with dots "
                    "(e.g. 'ftl.gc_policy') or 'job.OPTION' (e.g. 'job.iodepth')" % k
                )
        for k in ("drive", "job"):
            if k not in p:
                raise ValueError("grid point %r has no %r" % (p, k))
    return points


def _label(v: Any) -> Any:
    """A grid value as a DataFrame cell: scalars as they are, the rest as text."""
    if isinstance(v, Drive):
        return v.name
    if isinstance(v, Mapping):
        return " ".join("%s=%s" % (k, _value_text(x)) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return " | ".join(str(_label(x)) for x in v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, str) and "\n" in v:
        sections = [ln.strip() for ln in v.splitlines() if ln.strip().startswith("[")]
        return "".join(s for s in sections if s != "[global]") or "<text>"
    return v


def _native_args(p: Mapping[str, Any]) -> Tuple:
    """The arguments of one point's native run: (source, is_text, set,
    state, seed, job keyword arguments). Job files are read here, so that
    workers elsewhere need only the package."""
    d = p["drive"]
    if isinstance(d, Drive):
        source, is_text, set_ = d.source, d.is_text, list(d.set)
    else:
        source = os.fspath(d)
        is_text = "\n" in source or ("=" in source and not os.path.exists(source))
        set_ = []
    set_ += _overrides(p.get("set"))
    set_ += ["%s=%s" % (k, _value_text(v)) for k, v in p.items() if "." in k and not k.startswith("job.")]
    job = p["job"]
    job_opts = {k[4:]: v for k, v in p.items() if k.startswith("job.")}
    if job_opts:
        if not isinstance(job, Mapping):
            raise ValueError("'job.OPTION' keys need a job given as a dict of fio options")
        job = dict(job, **job_opts)
    if isinstance(job, list) and len(job) == 1 and isinstance(job[0], list):
        job = job[0]
    return (source, is_text, set_, str(p.get("state", "fresh")), int(p.get("seed", 1)), _job_args(job))


def _point_key(args: Tuple) -> str:
    text = json.dumps(args, sort_keys=True, default=str)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _run_point(args: Tuple) -> Tuple[Optional[List[Dict[str, Any]]], Optional[str]]:
    """Simulate one point: (summary records, None), or (None, error message).
    Runs in a worker process or a Ray task."""
    from . import _ssdtwin as native

    source, is_text, set_, state, seed, job = args
    try:
        text = native.run(source, is_text, set_, state, seed, **job)
        return _frames.summary_records(json.loads(text)), None
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # a Rust panic arrives as a BaseException
        return None, "%s: %s" % (type(e).__name__, e)


class _Point:
    __slots__ = ("index", "labels", "args", "key", "error")

    def __init__(self, index: int, point: Mapping[str, Any]) -> None:
        self.index = index
        self.labels = {k: _label(v) for k, v in point.items()}
        try:
            self.args = _native_args(point)
            self.key = _point_key(self.args)
            self.error = None
        except (SsdtwinError, ValueError, OSError, TypeError) as e:
            self.args = None
            self.key = _point_key((index, repr(sorted(self.labels.items(), key=lambda kv: kv[0]))))
            self.error = "%s: %s" % (type(e).__name__, e)


def _rows(p: _Point, records: Optional[List[Dict[str, Any]]], error: Optional[str]) -> List[Dict[str, Any]]:
    base = {"point": p.index}
    base.update(p.labels)
    if error is not None or not records:
        row = dict(base)
        row.update({c: None for c in _frames.SUMMARY_COLUMNS})
        row.update(error=error or "no results", point_key=p.key)
        return [row]
    out = []
    for r in records:
        row = dict(base)
        row.update(r)
        row.update(error=None, point_key=p.key)
        out.append(row)
    return out


def _frame(rows: List[Dict[str, Any]], label_cols: List[str]) -> "pd.DataFrame":
    cols = ["point"] + label_cols + _frames.SUMMARY_COLUMNS + ["error", "point_key"]
    df = pd.DataFrame(rows, columns=cols)
    df = _frames.typed_summary(df)
    df["point"] = df["point"].astype("int64")
    df["error"] = df["error"].astype("object").where(df["error"].notna(), None)
    df = df.sort_values(["point", "phase_index"], kind="stable", na_position="first").reset_index(drop=True)
    return df


def _read_checkpoint(path: str) -> Optional["pd.DataFrame"]:
    if not os.path.exists(path):
        return None
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    if int(pd.__version__.split(".")[0]) >= 3:
        return pd.read_csv(path)  # round-trip precision is the default
    return pd.read_csv(path, float_precision="round_trip")


def _write_checkpoint(df: "pd.DataFrame", path: str) -> None:
    # A device or FIFO is written in place: renaming over it would replace
    # it with a regular file (as the Rust side's ssdtwin::fsio does).
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        if path.endswith(".parquet"):
            df.to_parquet(path, index=False)
        else:
            df.to_csv(path, index=False)
        return
    tmp = "%s.tmp%d%s" % (path, os.getpid(), os.path.splitext(path)[1])
    if path.endswith(".parquet"):
        df.to_parquet(tmp, index=False)
    else:
        df.to_csv(tmp, index=False)
    os.replace(tmp, path)


def _iter_local(todo: List[_Point], max_workers: int):
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=max_workers, mp_context=ctx) as ex:
        futures = {ex.submit(_run_point, p.args): p for p in todo}
        try:
            for f in cf.as_completed(futures):
                p = futures[f]
                try:
                    records, error = f.result()
                except Exception as e:  # the worker died
                    records, error = None, "%s: %s" % (type(e).__name__, e)
                yield p, records, error
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def _iter_serial(todo: List[_Point]):
    for p in todo:
        records, error = _run_point(p.args)
        yield p, records, error


def _iter_ray(todo: List[_Point], address: Optional[str], max_workers: Optional[int]):
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("backend='ray' needs Ray: pip install 'ssdtwin[ray]' (or pip install ray)") from e
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    task = ray.remote(num_cpus=1, max_retries=0)(_run_point)
    limit = max_workers or len(todo) or 1
    queue = list(todo)
    running: Dict[Any, _Point] = {}
    try:
        while queue or running:
            while queue and len(running) < limit:
                p = queue.pop(0)
                running[task.remote(p.args)] = p
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                p = running.pop(ref)
                try:
                    records, error = ray.get(ref)
                except Exception as e:  # the task or its worker died
                    records, error = None, "%s: %s" % (type(e).__name__, e)
                yield p, records, error
    except BaseException:
        for ref in running:
            ray.cancel(ref, force=True)
        raise


def _fit_replay(task: str) -> str:
    """One replay of a fit (a task ``ssdtwin.fit`` hands its backend: JSON
    text) and its answer. Runs in a worker process or a Ray task."""
    from . import _ssdtwin as native

    return native.fit_replay(task)


class ReplayExecutor:
    """``ssdtwin.fit``'s replays on one of the sweep's backends: called with a
    batch of replay tasks (JSON text; each a candidate drive and the jobs
    to replay on it), returns their answers in order. ``serial`` runs them
    in this process (the same path as a worker's: for checking),
    ``local`` in processes on this machine (``max_workers``, default every
    core; spawned), ``ray`` as one Ray task each on
    ``ray.init(address=address)`` (a local Ray when ``address`` is None;
    an already initialised Ray is used as it is; ``max_workers`` caps the
    tasks in flight). The simulator is deterministic, so every backend
    gives the fit of the default backend (Rust threads), bit for bit."""

    def __init__(self, backend: str, address: Optional[str] = None, max_workers: Optional[int] = None):
        if backend not in ("serial", "local", "ray"):
            raise ValueError("backend must be 'native', 'serial', 'local' or 'ray', not %r" % (backend,))
        self.backend = backend
        self.max_workers = max_workers
        self._pool = None
        self._task = None
        if backend == "local":
            ctx = multiprocessing.get_context("spawn")
            self._pool = cf.ProcessPoolExecutor(max_workers=max_workers or os.cpu_count() or 1, mp_context=ctx)
        elif backend == "ray":
            try:
                import ray
            except ImportError as e:  # pragma: no cover - depends on the environment
                raise ImportError("backend='ray' needs Ray: pip install 'ssdtwin[ray]' (or pip install ray)") from e
            if not ray.is_initialized():
                ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
            self._task = ray.remote(num_cpus=1, max_retries=0)(_fit_replay)

    def __call__(self, tasks: List[str]) -> List[str]:
        if self.backend == "serial":
            return [_fit_replay(t) for t in tasks]
        if self.backend == "local":
            return list(self._pool.map(_fit_replay, tasks))
        import ray

        out: List[str] = []
        step = self.max_workers or len(tasks) or 1
        for i in range(0, len(tasks), step):
            out.extend(ray.get([self._task.remote(t) for t in tasks[i : i + step]]))
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def sweep(
    grid: Grid,
    backend: str = "local",
    address: Optional[str] = None,
    max_workers: Optional[int] = None,
    resume: Union[None, str, "os.PathLike[str]"] = None,
    progress: bool = True,
    checkpoint_every_s: float = 5.0,
) -> "pd.DataFrame":
    """Run every point of ``grid`` (see the module's docs) and return one
    tidy DataFrame: a row per point × phase × direction.

    ``backend``: ``"local"`` — processes on this machine (``max_workers``,
    default every core; spawned, so safe from notebooks and threads);
    ``"ray"`` — one Ray task per point on ``ray.init(address=address)``
    (a local Ray when ``address`` is None; an already initialised Ray is
    used as it is; ``max_workers`` caps tasks in flight); ``"serial"`` — one
    after another in this process. A point that fails has one row with its
    message in ``error``; the others go on. ``resume``: a ``.parquet`` or
    ``.csv`` checkpoint, rewritten as points complete (at most every
    ``checkpoint_every_s`` seconds, and at the end or on interruption);
    points it already holds without error are not run again.
    """
    points = [_Point(i, p) for i, p in enumerate(expand_grid(grid))]
    label_cols: List[str] = []
    for p in points:
        for k in p.labels:
            if k not in label_cols:
                label_cols.append(k)

    rows: List[Dict[str, Any]] = []
    done_keys = set()
    path = None if resume is None else os.fspath(resume)
    if path is not None:
        old = _read_checkpoint(path)
        if old is not None and "point_key" in old.columns:
            ok = old[old["error"].isna()]
            by_key = {k: g for k, g in ok.groupby("point_key", sort=False)}
            for p in points:
                g = by_key.get(p.key)
                if g is None:
                    continue
                done_keys.add(p.key)
                for rec in g.to_dict("records"):
                    rec["point"] = p.index
                    rec.update(p.labels)
                    rows.append(rec)

    todo = []
    for p in points:
        if p.key in done_keys:
            continue
        if p.error is not None:
            rows.extend(_rows(p, None, p.error))
        else:
            todo.append(p)

    if backend == "local":
        workers = max_workers or os.cpu_count() or 1
        results = _iter_local(todo, min(workers, max(len(todo), 1))) if todo else iter(())
    elif backend == "ray":
        results = _iter_ray(todo, address, max_workers) if todo else iter(())
    elif backend == "serial":
        results = _iter_serial(todo)
    else:
        raise ValueError("backend must be 'local', 'ray' or 'serial', not %r" % (backend,))

    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="sweep (%s)" % backend, unit="point")
    last_write = time.monotonic()
    try:
        for p, records, error in results:
            rows.extend(_rows(p, records, error))
            if bar is not None:
                bar.update(1)
            if path is not None and time.monotonic() - last_write >= checkpoint_every_s:
                _write_checkpoint(_frame(rows, label_cols), path)
                last_write = time.monotonic()
    finally:
        if bar is not None:
            bar.close()
        if path is not None and rows:
            _write_checkpoint(_frame(rows, label_cols), path)
    return _frame(rows, label_cols)


def _main(argv: Optional[Iterable[str]] = None) -> int:
    """``python -m ssdtwin sweep GRID.toml|GRID.json [--backend ray] [--address A] [--out FILE]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m ssdtwin sweep", description="Run a parameter sweep of ssdtwin.")
    ap.add_argument("grid", help="grid file: JSON, or TOML (Python 3.11+); a list of points or a table of lists")
    ap.add_argument("--backend", default="local", choices=["local", "ray", "serial"])
    ap.add_argument("--address", default=None, help="Ray cluster address (default: a local Ray)")
    ap.add_argument("--max-workers", type=int, default=None)
    ap.add_argument("--out", default="sweep.parquet", help="results (.parquet or .csv), also the resume checkpoint")
    a = ap.parse_args(None if argv is None else list(argv))
    with open(a.grid, "rb") as f:
        raw = f.read()
    if a.grid.endswith(".toml"):
        try:
            import tomllib  # Python 3.11+
        except ImportError:  # pragma: no cover
            import tomli as tomllib  # pip install tomli

        doc = tomllib.loads(raw.decode("utf-8"))
        grid = doc.get("point", doc)
    else:
        grid = json.loads(raw)
    df = sweep(grid, backend=a.backend, address=a.address, max_workers=a.max_workers, resume=a.out)
    failed = int(df["error"].notna().sum())
    print("%d rows, %d points, %d failed → %s" % (len(df), df["point"].nunique(), failed, a.out))
    return 1 if failed else 0
