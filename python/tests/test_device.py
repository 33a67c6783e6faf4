"""ssdtwin.Device: Python steps the device core (docs/python.md, "Stepping the device")."""

import contextlib
import io
import pathlib
import re
import threading
import time

import numpy as np
import pytest

import ssdtwin
from conftest import ROOT, SMALL_SET

PAGE = 4096


@pytest.fixture(scope="module")
def small_drive():
    return ssdtwin.Drive("generic-tlc-nvme", set=SMALL_SET)


@pytest.fixture(scope="module")
def full(small_drive):
    """The small drive, full (copy it: a test must not change it)."""
    return ssdtwin.Device(small_drive, state="full", seed=1)


def random_pages(dev, n, seed=7):
    return np.random.default_rng(seed).integers(0, dev.capacity_bytes // PAGE, n) * PAGE


def test_completion_follows_submission_with_its_latency(full):
    d = full.copy()
    assert d.now_ns == 0 and d.outstanding == 0
    cid = d.submit("read", offset=0, length=PAGE)
    assert cid == 0 and d.outstanding == 1
    c = d.next_completion()
    assert isinstance(c, ssdtwin.Completion)
    assert (c.id, c.op, c.offset, c.length, c.status) == (0, "read", 0, PAGE, "ok")
    assert c.submit_ns == 0 < c.complete_ns == d.now_ns
    assert c.latency_ns == c.complete_ns - c.submit_ns
    assert d.next_completion() is None and d.outstanding == 0

    t0 = d.now_ns
    ids = d.submit_many(["read", "write", "read", "trim"], [0, 8 * PAGE, 16 * PAGE, 32 * PAGE], [PAGE, 2 * PAGE, PAGE, PAGE])
    assert ids.tolist() == [1, 2, 3, 4] and d.outstanding == 4
    done = d.run_until_idle()
    assert isinstance(done, ssdtwin.Completions) and len(done) == 4 and d.outstanding == 0
    assert sorted(done.id.tolist()) == [1, 2, 3, 4]
    assert (done.submit_ns == t0).all() and (done.complete_ns > done.submit_ns).all()
    assert (np.diff(done.complete_ns) >= 0).all()  # completion order
    assert (done.latency_ns == done.complete_ns - done.submit_ns).all()
    assert d.now_ns == done.complete_ns.max()  # stops at the last completion
    by_id = {c.id: c for c in done}
    assert by_id[2] == (2, "write", 8 * PAGE, 2 * PAGE, t0, by_id[2].complete_ns, by_id[2].latency_ns, "ok")
    assert by_id[4].op == "trim"
    # The columns and the tuples agree.
    assert [c.op for c in done] == done.op.tolist() and done[0] == next(iter(done))
    assert done[done.op == "read"].id.tolist() == sorted(i for i in (1, 3))
    df = done.to_pandas()
    assert list(df.columns) == list(ssdtwin.Completion._fields) and df["latency_ns"].tolist() == done.latency_ns.tolist()
    assert d.run_until_idle().id.size == 0  # nothing outstanding: empty, clock unchanged
    assert d.now_ns == done.complete_ns.max()


def test_run_until_delivers_what_is_due_and_stops_there(full):
    d = full.copy()
    d.submit_many("read", random_pages(d, 64), PAGE)
    last = d.copy().run_until_idle().complete_ns
    mid = int(np.median(last))
    a = d.run_until(mid)
    assert d.now_ns == mid and (a.complete_ns <= mid).all()
    b = d.run_until(int(last.max()) + 10**6)
    assert len(a) + len(b) == 64 and (b.complete_ns > mid).all()
    assert d.outstanding == 0 and d.now_ns == int(last.max()) + 10**6
    assert len(d.run_until(d.now_ns)) == 0  # the same time is allowed


def test_read_after_write_reads_the_written_data(small_drive):
    d = ssdtwin.Device(small_drive, state="fresh")
    base = d.counters()
    d.submit("read", 40 * PAGE, PAGE)
    assert d.next_completion().status == "ok"
    c1 = d.counters()
    assert c1["unmapped_reads"] == base["unmapped_reads"] + 1  # never written: no flash read
    w = d.submit("write", 40 * PAGE, PAGE)
    assert d.next_completion().id == w
    c2 = d.counters()
    assert c2["host_slots_written"] == c1["host_slots_written"] + 1
    r = d.submit("read", 40 * PAGE, PAGE)
    c = d.next_completion()
    assert c.id == r and c.status == "ok" and c.complete_ns > c.submit_ns
    c3 = d.counters()
    # Mapped now: served from the write buffer or the flash, not as unmapped.
    assert c3["unmapped_reads"] == c2["unmapped_reads"]
    assert c3["buffer_read_hits"] + c3["nand_slots_read"] > c2["buffer_read_hits"] + c2["nand_slots_read"]
    # A flush completes once the write is on flash: later than a plain command.
    f = d.submit("flush")
    fc = d.next_completion()
    assert (fc.id, fc.op, fc.offset, fc.length, fc.status) == (f, "flush", 0, 0, "ok")
    assert fc.latency_ns > c.latency_ns
    assert d.counters()["nand_programs_native"] + d.counters()["nand_programs_slc"] > 0
    h = d.health()
    assert h["host_bytes_written"] == PAGE and "percentage_used" in h and "composite_temp_c" in h


def test_same_submissions_same_completions(small_drive):
    def session():
        d = ssdtwin.Device(small_drive, state="full", seed=3)
        rng = np.random.default_rng(11)
        out = []
        for _ in range(5):
            n = 8000
            ops = rng.choice(["read", "write", "trim"], n, p=[0.3, 0.65, 0.05])
            at = d.now_ns + np.cumsum(rng.integers(0, 20_000, n))
            d.submit_many(ops, random_pages(d, n, seed=int(rng.integers(1 << 30))), PAGE, at_ns=at)
            d.submit("flush")
            out.append(d.run_until(int(at[-1]) + 5_000_000))
        out.append(d.run_until_idle())
        return out, d.counters(), d.now_ns

    a, ca, ta = session()
    b, cb, tb = session()
    assert ta == tb and ca == cb
    assert sum(len(x) for x in a) == 5 * 8001
    for x, y in zip(a, b):
        for f in ssdtwin.Completions.__slots__:
            assert np.array_equal(getattr(x, f), getattr(y, f)), f
    assert ca["gc_blocks"] > 0  # the writes made the full drive collect garbage


def test_open_loop_times(full):
    d = full.copy()
    at = np.arange(100) * 50_000 + 1_000
    ids = d.submit_many("read", random_pages(d, 100), PAGE, at_ns=at)
    assert d.now_ns == at[-1]
    done = d.run_until_idle()  # the completions passed on the way come first
    assert len(done) == 100 and sorted(done.id.tolist()) == ids.tolist()
    order = np.argsort(done.id)
    assert (done.submit_ns[order] == at).all()
    cid = d.submit("write", 0, PAGE, at_ns=d.now_ns + 7)
    assert d.next_completion().submit_ns == done.complete_ns.max() + 7 and cid == 100


def _trace(path, ops, offsets):
    """A fio iolog v2 of the commands (replayed closed-loop by `run`)."""
    with open(path, "w") as f:
        f.write("fio version 2 iolog\n/dev/x add\n/dev/x open\n")
        for op, off in zip(ops, offsets):
            f.write("/dev/x %s %d %d\n" % (op, off, PAGE))
        f.write("/dev/x close\n")


def test_agrees_with_run_for_the_same_commands(small_drive, tmp_path):
    """QD1 random reads: the twin stepped from Python and `ssdtwin.run`
    replaying the same commands (a fio iolog, closed loop at depth 1: each
    command submitted when the previous completes) give the same latencies
    exactly — the same device core, the same drive state, the same commands
    at the same times. Then a mixed read/write workload at depth 8."""
    d = ssdtwin.Device(small_drive, state="full", seed=1)
    offsets = random_pages(d, 500).tolist()
    _trace(tmp_path / "qd1.log", ["read"] * 500, offsets)
    job = ssdtwin.run(small_drive, tmp_path / "qd1.log", state="full", seed=1).json["jobs"][0]
    lat = []
    for off in offsets:
        d.submit("read", off, PAGE)
        lat.append(d.next_completion().latency_ns)
    assert job["read"]["total_ios"] == len(lat) == 500
    assert job["read"]["clat_ns"]["mean"] == pytest.approx(np.mean(lat), rel=1e-12)
    assert (job["read"]["clat_ns"]["min"], job["read"]["clat_ns"]["max"]) == (min(lat), max(lat))
    assert job["elapsed_ns"] == d.now_ns == sum(lat)

    # Depth 8, reads and writes: each completion lets the next command in.
    rng = np.random.default_rng(5)
    ops = rng.choice(["read", "write"], 2000).tolist()
    offsets = random_pages(d, 2000, seed=9).tolist()
    _trace(tmp_path / "qd8.log", ops, offsets)
    text = "[trace]\ntrace=%s\nreplay=closed:8\n" % (tmp_path / "qd8.log")
    job = ssdtwin.run(small_drive, text, state="full", seed=1).json["jobs"][0]
    d = ssdtwin.Device(small_drive, state="full", seed=1)
    todo = iter(zip(ops, offsets))
    for op, off in [next(todo) for _ in range(8)]:
        d.submit(op, off, PAGE)
    lat = {"read": [], "write": []}
    while (c := d.next_completion()) is not None:
        lat[c.op].append(c.latency_ns)
        nxt = next(todo, None)
        if nxt:
            d.submit(nxt[0], nxt[1], PAGE)
    for k in ("read", "write"):
        assert job[k]["total_ios"] == len(lat[k])
        assert job[k]["clat_ns"]["mean"] == pytest.approx(np.mean(lat[k]), rel=1e-12), k
    assert job["elapsed_ns"] == d.now_ns


def test_bad_inputs_raise_value_error(small_drive, full):
    d = full.copy()
    cap = d.capacity_bytes
    bad = [
        (lambda: d.submit("erase", 0, PAGE), "unknown op 'erase'"),
        (lambda: d.submit("read", 100, PAGE), "offset 100 is not a multiple of 4096"),
        (lambda: d.submit("read", 0, 512), "length 512 is not a positive multiple"),
        (lambda: d.submit("write", 0, 0), "length 0"),
        (lambda: d.submit("read", cap, PAGE), "beyond the drive"),
        (lambda: d.submit("read", cap - PAGE, 2 * PAGE), "beyond the drive"),
        (lambda: d.submit("read", -PAGE, PAGE), "offset -4096 is out of range"),
        (lambda: d.submit("read", 2**70, PAGE), "out of range"),
        (lambda: d.submit("read", 0.5, PAGE), "must be an integer"),
        (lambda: d.submit_many(["read", "write"], [0], PAGE), "ops"),
        (lambda: d.submit_many("read", [0, 4096], [PAGE]), "lengths: 1 values for 2 commands"),
        (lambda: d.submit_many(["read", "wrte"], [0, 0], PAGE), "command 1: unknown op 'wrte'"),
        (lambda: d.submit_many("read", [0, 4097], PAGE), "command 1: read: offset 4097"),
        (lambda: d.submit_many("read", [0, -4096], PAGE), "command 1: offset -4096 is negative"),
        (lambda: d.submit_many("read", [0.5], PAGE), "must be integers"),
        (lambda: d.submit_many("read", [0, cap], PAGE), "command 1: .*beyond the drive"),
        (lambda: d.submit_many("read", [0, 0], PAGE, at_ns=[10, 5]), "command 1: time would go backwards"),
        (lambda: ssdtwin.Device("no-such-drive"), "no-such-drive"),
        (lambda: ssdtwin.Device(small_drive, state="sideways"), "sideways"),
        (lambda: ssdtwin.Device(small_drive, state="filled:150"), "150"),
        (lambda: ssdtwin.Device(small_drive, set={"ftl.gc_polcy": "fifo"}), "gc_polcy"),
    ]
    for call, msg in bad:
        with pytest.raises(ValueError, match=msg):
            call()
    # Nothing was submitted by the failed calls: ids and the clock are untouched.
    assert d.outstanding == 0 and d.now_ns == 0
    assert d.submit("read", 0, PAGE) == 0


def test_time_cannot_go_back(full):
    d = full.copy()
    d.run_until(1_000_000)
    for call in (
        lambda: d.run_until(999_999),
        lambda: d.submit("read", 0, PAGE, at_ns=10),
        lambda: d.submit_many("read", [0], PAGE, at_ns=[10]),
        lambda: d.next_completion(until_ns=5),
    ):
        with pytest.raises(ssdtwin.SsdtwinError, match="time would go backwards"):
            call()
    assert d.now_ns == 1_000_000 and d.outstanding == 0


def test_next_completion_until(full):
    d = full.copy()
    d.submit("read", 0, PAGE)
    assert d.next_completion(until_ns=1_000) is None and d.now_ns == 1_000
    c = d.next_completion(until_ns=10**9)
    assert c is not None and c.complete_ns == d.now_ns < 10**9
    assert d.next_completion(until_ns=10**9) is None and d.now_ns == 10**9


def test_copy_is_independent(full):
    a = full.copy()
    a.submit_many("write", random_pages(a, 200), PAGE)
    b = a.copy()
    da, db = a.run_until_idle(), b.run_until_idle()
    assert np.array_equal(da.complete_ns, db.complete_ns) and a.counters() == b.counters()
    b.submit_many("write", random_pages(b, 50), PAGE)
    b.run_until_idle()
    assert a.counters() != b.counters() and full.now_ns == 0


def test_simulation_releases_the_gil(small_drive):
    """A Python thread runs while run_until_idle simulates a large batch."""
    d = ssdtwin.Device(small_drive, state="full", seed=1)
    offsets = random_pages(d, 400_000)
    d.submit_many("read", offsets, PAGE)
    t0 = time.perf_counter()
    d.run_until_idle()
    one = time.perf_counter() - t0
    assert one > 0.02, one  # long enough to tell
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    th = threading.Thread(target=count)
    th.start()
    time.sleep(0.005)  # the thread is running
    # How often the thread ticks on this machine, now, while the main
    # thread merely waits (a loaded machine stretches 1 ms sleeps to 5+).
    n0 = len(ticks)
    time.sleep(one)
    idle_ticks = len(ticks) - n0
    d.submit_many("read", offsets, PAGE)
    n0 = len(ticks)
    t0 = time.perf_counter()
    d.run_until_idle()
    two = time.perf_counter() - t0
    n1 = len(ticks)
    stop.set()
    th.join()
    # Held, the GIL would let the thread tick about once during the
    # simulation (Python's switch interval does not preempt native code);
    # released, it ticks about as often as while the main thread waits.
    expected = idle_ticks * two / one
    assert n1 - n0 > max(5, 0.2 * expected), (n1 - n0, idle_ticks, one, two)


def test_docs_example_runs_and_prints_what_the_docs_say():
    """The host-side policy of docs/python.md, "Stepping the device", runs
    and prints the output shown there."""
    doc = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    section = doc.split("## Stepping the device", 1)[1].split("\n## ", 1)[0]
    m = re.search(r"<!-- example: read cache -->\n```python\n(.*?)```\n\n```text\n(.*?)```", section, re.S)
    assert m, "the example and its output"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(m.group(1), "docs/python.md", "exec"), {"__name__": "docs_example"})
    assert out.getvalue() == m.group(2)


def test_exported():
    assert {"Device", "Completion", "Completions"} <= set(ssdtwin.__all__)
    assert ssdtwin.Device.OPS[:5] == ("read", "write", "trim", "flush", "append")
    assert ssdtwin.Device.OPS[5:] == ("zone_open", "zone_close", "zone_finish", "zone_reset", "zone_offline", "ruh_update")
    assert ssdtwin.Device.STATUSES[0] == "ok"
    assert pathlib.Path(ssdtwin.__file__).parent.name == "ssdtwin"
