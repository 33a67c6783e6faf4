"""Drives, runs, suites and figures: the library's functions from Python."""

import json
import os
import pathlib
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ._lazy import pd

from . import _frames
from . import _ssdtwin as _native

SsdtwinError = _native.SsdtwinError

#: What may stand for a drive: a :class:`Drive`, a preset name, a drive file path.
DriveLike = Union["Drive", str, "os.PathLike[str]"]
#: What may stand for a job: fio options as a dict (one phase), a list of
#: such dicts (phases one after another), a fio job file path, job-file text,
#: or a block trace's path (replayed as ``ssdtwin run --trace`` does).
JobLike = Union[Mapping[str, Any], Sequence[Mapping[str, Any]], str, "os.PathLike[str]"]


def presets() -> List[str]:
    """Names of the drive presets shipped in the library."""
    return list(_native.presets())


def suites() -> List[str]:
    """Names of the built-in benchmark suites."""
    return list(_native.suites())


def _value_text(v: Any) -> str:
    """A Python value as ``--set`` and fio options write it."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _overrides(set: Union[None, Mapping[str, Any], Iterable[str]]) -> List[str]:
    """``{"ftl.gc_policy": "fifo"}`` or ``["ftl.gc_policy=fifo"]`` → ``["ftl.gc_policy=fifo"]``.
    A value of ``None`` removes the field (its default applies)."""
    if set is None:
        return []
    if isinstance(set, Mapping):
        return ["%s=%s" % (k, _value_text(v)) for k, v in set.items()]
    if isinstance(set, str):
        return [set]
    return [str(s) for s in set]


def _looks_like_toml(source: str) -> bool:
    return "\n" in source or ("=" in source and not os.path.exists(source))


class Drive:
    """A drive: a preset, a drive file or TOML text, with ``--set``-style
    overrides, loaded and validated at once (an invalid drive raises
    :class:`SsdtwinError` naming the field).

    >>> d = Drive("intel-660p-1tb", set={"ftl.gc_policy": "fifo"})
    >>> d.spec["ftl"]["gc_policy"]
    'fifo'

    ``Drive(toml_text)`` (anything with a newline or ``=``) reads the text as
    a drive file; ``Drive.from_toml(text)`` says so explicitly.
    """

    def __init__(
        self,
        source: Union[str, "os.PathLike[str]"] = "generic-tlc-nvme",
        set: Union[None, Mapping[str, Any], Iterable[str]] = None,
        *,
        toml: Optional[str] = None,
    ) -> None:
        if toml is not None:
            self.source, self.is_text = toml, True
        elif isinstance(source, os.PathLike):
            self.source, self.is_text = os.fspath(source), False
        else:
            self.source, self.is_text = str(source), _looks_like_toml(str(source))
        #: Overrides as ``path=value`` strings, in order.
        self.set: List[str] = _overrides(set)
        name, toml_text, spec = _native.resolve_drive(self.source, self.is_text, self.set)
        #: The drive's name (its ``name`` field).
        self.name: str = name
        #: The resolved drive file (overrides applied), as TOML.
        self.toml: str = toml_text
        self._spec_json = spec

    @classmethod
    def from_toml(cls, text: str, set: Union[None, Mapping[str, Any], Iterable[str]] = None) -> "Drive":
        """A drive from the text of a drive file."""
        return cls(set=set, toml=text)

    @property
    def spec(self) -> Dict[str, Any]:
        """The resolved drive as a dict (a fresh copy each time)."""
        return json.loads(self._spec_json)

    def with_set(self, set: Union[Mapping[str, Any], Iterable[str]]) -> "Drive":
        """The same drive with more overrides applied after its own."""
        more = self.set + _overrides(set)
        if self.is_text:
            return Drive(set=more, toml=self.source)
        return Drive(self.source, more)

    def _args(self):
        return self.source, self.is_text, self.set

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Drive) and self._args() == other._args()

    def __hash__(self) -> int:
        return hash((self.source, self.is_text, tuple(self.set)))

    def __repr__(self) -> str:
        src = "<toml>" if self.is_text else repr(self.source)
        extra = ", set=%r" % (self.set,) if self.set else ""
        return "Drive(%s%s)  # %s" % (src, extra, self.name)


def as_drive(d: DriveLike) -> Drive:
    """A :class:`Drive` from a drive, a preset name, a path or TOML text."""
    return d if isinstance(d, Drive) else Drive(d)


def _phase_pairs(opts: Mapping[str, Any]) -> List[tuple]:
    pairs = []
    for k, v in opts.items():
        if isinstance(v, bool):
            v = "1" if v else "0"
        pairs.append((str(k), _value_text(v)))
    return pairs


_SECTION = re.compile(r"^\s*\[[^\]]+\]\s*$", re.M)


def _job_file_text(path: str) -> Optional[str]:
    """The text of a fio job file, or ``None`` when ``path`` is something
    else (a block trace: binary, compressed, or text without a ``[section]``)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if _SECTION.search(text) else None


def _job_args(job: JobLike) -> Dict[str, Any]:
    """Keyword arguments of the native ``run`` for a job."""
    if isinstance(job, Mapping):
        return {"phases": [_phase_pairs(job)]}
    if isinstance(job, os.PathLike) or (isinstance(job, str) and "\n" not in job and os.path.exists(job)):
        path = os.fspath(job)
        text = _job_file_text(path)
        if text is None:
            # A block trace: one section that replays it (as `--trace FILE`).
            return {"job_text": "[trace]\ntrace=%s\n" % os.path.abspath(path), "job_origin": path}
        return {"job_text": text, "job_origin": path}
    if isinstance(job, str):
        if "[" not in job:
            raise SsdtwinError(
                "job %r: not a file, and not job-file text (no [section]); give fio options as a dict, "
                "a job file path or job-file text" % job
            )
        return {"job_text": job, "job_origin": "<job text>"}
    if isinstance(job, Sequence) and all(isinstance(p, Mapping) for p in job):
        return {"phases": [_phase_pairs(p) for p in job]}
    raise TypeError("job must be a dict of fio options, a list of them, a job file path or job-file text")


class Result:
    """The result of :func:`run`: the document ``ssdtwin run --json`` writes
    and DataFrames built from it."""

    def __init__(self, json_text: str, drive: Optional[Drive] = None) -> None:
        #: The JSON text, byte for byte what ``ssdtwin run --json`` writes.
        self.json_text: str = json_text
        #: The JSON document.
        self.json: Dict[str, Any] = json.loads(json_text)
        #: The drive that was run.
        self.drive = drive
        self._summary: Optional["pd.DataFrame"] = None

    @property
    def summary(self) -> "pd.DataFrame":
        """One row per phase × direction: IOPS, MB/s, latency (µs: min,
        mean, p50–p99.99, max), WAF, energy, power."""
        if self._summary is None:
            self._summary = _frames.summary_frame(self.json)
        return self._summary.copy()

    @property
    def series(self) -> "pd.DataFrame":
        """One row per simulated second of the whole run."""
        return _frames.series_frame(self.json)

    @property
    def latency(self) -> "pd.DataFrame":
        """Completion-latency percentiles per phase and direction (long format)."""
        return _frames.latency_frame(self.json)

    @property
    def health(self) -> Dict[str, Any]:
        """The drive's health log (SMART) at the end of the run."""
        return _frames.health_dict(self.json)

    @property
    def state(self) -> str:
        """The starting state."""
        return self.json.get("state")

    @property
    def seed(self) -> int:
        """The seed."""
        return self.json.get("seed")

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the JSON, as ``ssdtwin run --json FILE`` does."""
        pathlib.Path(path).write_text(self.json_text, encoding="utf-8")

    def __repr__(self) -> str:
        name = self.json.get("drive", {}).get("name")
        with pd.option_context("display.width", 160, "display.max_columns", 12):
            cols = ["phase", "direction", "iops", "mb_s", "lat_mean_us", "lat_p99_us", "waf"]
            return "Result(drive=%r, state=%r, seed=%r)\n%s" % (
                name,
                self.state,
                self.seed,
                self.summary[cols].to_string(index=False),
            )


def run(drive: DriveLike, job: JobLike, state: str = "fresh", seed: int = 1, progress: bool = False) -> Result:
    """Run a workload on a drive from a state, by the same code path as
    ``ssdtwin run`` for the same inputs: identical numbers, and ``.json``
    is the text ``ssdtwin run --json`` writes (fio's JSON, jobs of a file
    running concurrently with fio's semantics; a trace replay gives
    ssdtwin's run document, as the CLI does).

    ``job``: fio options as a dict (one job, like ``ssdtwin run --rw ...``;
    values may be numbers or strings with fio's suffixes), a list of dicts
    (jobs one after another: each after the first is a ``stonewall``), a
    fio job file path, job-file text, or a block trace's path (replayed
    with its own timing, as ``ssdtwin run --trace FILE``).
    ``state``: ``fresh``, ``full``, ``filled:N``, ``steady``, ``steady-exact``.
    ``seed`` seeds the state and is every job's default ``randseed``.
    The simulation runs without the GIL (other Python threads go on);
    ``progress=True`` shows a tqdm bar during a trace replay.

    >>> r = run("generic-tlc-nvme", {"rw": "randread", "bs": "4k", "iodepth": 32, "runtime": "1s"}, state="full")
    >>> r.summary[["direction", "iops", "lat_p99_us"]]  # doctest: +SKIP
    """
    d = as_drive(drive)
    args = _job_args(job)
    if not progress:
        text = _native.run(d.source, d.is_text, d.set, str(state), int(seed), **args)
        return Result(text, d)
    from tqdm.auto import tqdm

    with tqdm(total=1000, desc="ssdtwin run", unit="‰") as bar:

        def advance(fraction: float) -> None:
            bar.update(max(0, int(fraction * 1000) - bar.n))

        text = _native.run(d.source, d.is_text, d.set, str(state), int(seed), progress=advance, **args)
        bar.update(1000 - bar.n)
    return Result(text, d)


class SuiteResult:
    """The result of :func:`suite` or :func:`review`."""

    def __init__(self, json_text: str, report: Optional[str]) -> None:
        #: The JSON text, as ``ssdtwin suite`` writes it.
        self.json_text = json_text
        #: The JSON document.
        self.json: Dict[str, Any] = json.loads(json_text)
        #: Path of the HTML report (``None`` when no ``out`` directory was given).
        self.report: Optional[str] = report

    @property
    def scores(self) -> "pd.DataFrame":
        """One row per score: test, title, label, unit, drive, pass, value."""
        return _frames.scores_frame(self.json)

    @property
    def steps(self) -> "pd.DataFrame":
        """One row per drive × pass × test × step with the step's metrics."""
        return _frames.steps_frame(self.json)

    @property
    def repeat(self) -> "pd.DataFrame":
        """With ``repeat=N``: one row per score with every seed's value
        (``values``), the ``median`` (the reported score), ``min`` and
        ``max``; empty for a single run."""
        import pandas as pd

        rows = (self.json.get("repeat") or {}).get("scores", [])
        cols = ["test", "label", "unit", "drive", "pass", "values", "median", "min", "max"]
        return pd.DataFrame([{k: r[k] for k in cols} for r in rows], columns=cols)

    def table(self) -> "pd.DataFrame":
        """The scores as the CLI prints them: a row per score, a column per drive and pass."""
        s = self.scores
        return s.pivot_table(index=["test", "label", "unit"], columns=["drive", "pass"], values="value", sort=False)

    def __repr__(self) -> str:
        return "SuiteResult(suite=%r, report=%r)\n%s" % (
            self.json["suite"]["name"],
            self.report,
            self.table().to_string(),
        )


def suite(
    name: str,
    drives: Union[DriveLike, Sequence[DriveLike]] = ("generic-tlc-nvme",),
    *,
    set: Union[None, Mapping[str, Any], Iterable[str]] = None,
    state: Optional[str] = None,
    seed: int = 1,
    scale: float = 1.0,
    time_scale: Optional[float] = None,
    only: Optional[Sequence[str]] = None,
    out: Union[None, str, "os.PathLike[str]"] = None,
    threads: Optional[int] = None,
    repeat: int = 1,
) -> SuiteResult:
    """Run a benchmark suite (built-in name or suite file) on drives, as
    ``ssdtwin suite`` does. ``set`` applies to every drive after its own
    overrides; ``scale`` multiplies sizes (``time_scale`` times, default
    ``scale``); ``only`` selects tests; with ``out`` the JSON and the HTML
    report are written there (``.report`` is the page's path). Runs (drive
    × pass) go on ``threads`` threads (default: every CPU). ``repeat=N``
    runs the suite with the seeds ``seed`` … ``seed + N - 1``: the scores
    are their medians, and ``.repeat`` has every seed's value, the median,
    min and max (``--repeat``)."""
    if isinstance(drives, (str, Drive, os.PathLike)):
        drives = [drives]
    extra = _overrides(set)
    ds = [as_drive(d) for d in drives]
    args = [(d.source, d.is_text, d.set + extra) for d in ds]
    text, page = _native.run_suite(
        str(name),
        args,
        state=state,
        seed=int(seed),
        scale=float(scale),
        time_scale=None if time_scale is None else float(time_scale),
        only=list(only or []),
        threads=int(threads or os.cpu_count() or 1),
        out=None if out is None else os.fspath(out),
        repeat=int(repeat),
    )
    return SuiteResult(text, page)


def review(
    drives: Union[DriveLike, Sequence[DriveLike]] = ("intel-660p-1tb",),
    *,
    out: Union[None, str, "os.PathLike[str]"] = "ssdtwin-review",
    **kwargs: Any,
) -> SuiteResult:
    """The 2018 client review (``client-2018``) on the standard and the full
    drive, as ``ssdtwin review`` does: JSON and HTML report in ``out``
    (default ``ssdtwin-review/``). Other arguments as :func:`suite`."""
    return suite("client-2018", drives, out=out, **kwargs)


def figure_presets() -> List[str]:
    """Presets that have published figures to validate against."""
    return list(_native.figure_presets())


def validate(drive: str, quick: bool = False) -> "pd.DataFrame":
    """Measure a preset's published figures, as ``ssdtwin validate`` does:
    one row per figure with the published and simulated values, the error,
    the tolerance and whether it passes. ``quick`` caps timed jobs at 5
    simulated seconds."""
    name = drive.name if isinstance(drive, Drive) else str(drive)
    return _frames.figures_frame(json.loads(_native.validate(name, bool(quick))))


def fit(
    results: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    base: DriveLike,
    replay_time: str = "2s",
    read_iterations: int = 60,
    state: str = "fresh",
    set: Sequence[str] = (),
    refine_iterations: int = 40,
    backend: str = "native",
    address: Optional[str] = None,
    max_workers: Optional[int] = None,
):
    """A twin of a real drive, as ``ssdtwin fit`` makes it: fio's JSON
    result(s) of the battery (``ssdtwin fit --jobs DIR`` writes it; the
    bandwidth logs are read from beside the JSON), of any other jobs the
    twin can replay (a queue-depth sweep, say), or both, fitted from the
    drive ``base``. ``state`` is the state the drive was in when the jobs
    outside the battery ran (``fresh``, ``full``, ``filled:N``, ``steady``:
    ``ssdtwin fit --state``); ``set`` gives known facts fio's JSON does not
    record (``["ftl.user_capacity_bytes=512110190592"]``: ``--set``). Returns ``(drive, residuals)``: the fitted :class:`Drive` and a
    DataFrame with one row per measurement (``job``, ``measurement``,
    ``unit``, ``measured``, ``twin``, ``error``); ``residuals.attrs`` holds
    ``params`` (a DataFrame: base and fitted value, relative uncertainty
    ``sigma``, the measurement that constrains it most), ``notes`` (what
    the results left undetermined), ``report`` (the text ``ssdtwin fit``
    prints), ``evaluations`` and ``wall_s``.

    ``backend``: where the candidates are replayed (every evaluation of the
    fit): ``"native"`` (default) on every core of this machine, in the
    library's threads; or one of :func:`sweep`'s backends, each replay a
    task handed to it (``"ray"``: one Ray task per replay on
    ``ray.init(address=address)``, a local Ray when ``address`` is None;
    ``"local"``: processes here; ``"serial"``: this process), with
    ``max_workers`` as there. Every backend gives the same fit, bit for bit.
    """
    if isinstance(results, (str, os.PathLike)):
        results = [results]
    b = as_drive(base)
    executor = None
    if backend != "native":
        from ._sweep import ReplayExecutor

        executor = ReplayExecutor(backend, address, max_workers)
    try:
        doc = json.loads(
            _native.fit(
                b.source,
                b.is_text,
                list(b.set) + [str(x) for x in set],
                [os.fspath(r) for r in results],
                str(replay_time),
                int(read_iterations),
                str(state),
                int(refine_iterations),
                executor,
            )
        )
    finally:
        if executor is not None:
            executor.close()
    drive = Drive.from_toml(doc["toml"])
    rows = pd.DataFrame(doc["rows"], columns=["job", "measurement", "unit", "measured", "twin", "error"])
    rows.attrs["params"] = pd.DataFrame(
        doc["params"], columns=["parameter", "unit", "base", "fitted", "sigma", "constrained_by", "sensitivity"]
    )
    rows.attrs["notes"] = list(doc["notes"])
    rows.attrs["report"] = doc["report"]
    rows.attrs["evaluations"] = doc["evaluations"]
    rows.attrs["wall_s"] = doc["wall_s"]
    return drive, rows


def fit_battery(time_scale: float = 1.0) -> str:
    """The characterization battery (what ``ssdtwin fit --jobs`` writes): one
    fio job file to run on the real drive (``DEV=/dev/... fio
    --output-format=json+ --output=battery.json battery.fio``) and give to
    :func:`fit`. ``time_scale`` multiplies its runtimes, idle pauses and log
    windows (below 1 only to try it on a small twin)."""
    return _native.fit_battery(float(time_scale))
