"""Stepping the device from Python: a host-side policy submits commands and
moves the twin's virtual clock itself (see docs/python.md, "Stepping the device")."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Iterator, Mapping, NamedTuple, Optional, Sequence, Union

from . import _ssdtwin as _native
from ._api import Drive, SsdtwinError
from ._lazy import _Lazy

#: numpy, loaded when first used (``import ssdtwin`` stays light for sweep workers).
np: Any = _Lazy("numpy")

#: Op names, in the order of their codes (``Completions.op_code``).
OPS = tuple(_native.OPS)
#: Completion statuses, in the order of their codes (``Completions.status_code``):
#: ``ok``, ``media_error`` (an uncorrectable read), ``read_only`` (a write or
#: trim refused by a drive whose spare is exhausted), then the NVMe statuses a
#: zoned drive's rules return (``zone_invalid_write``, ``zone_is_full``,
#: ``too_many_open_zones``, ...: ``invalid_opcode`` to
#: ``invalid_zone_state_transition``).
STATUSES = tuple(_native.STATUSES)
_OP_CODE = {name: code for code, name in enumerate(OPS)}

#: Zone Management Send's actions (``Device.zone_management``).
ZONE_ACTIONS = ("open", "close", "finish", "reset", "offline")


class Zone(NamedTuple):
    """One zone of a zoned drive, as Report Zones describes it (bytes)."""

    #: First byte of the zone (its ZSLBA × 4096).
    start: int
    #: Bytes it can hold (ZCAP).
    capacity: int
    #: Next byte a write must start at; ``None`` where NVMe leaves it
    #: undefined (full, read-only, offline and conventional zones).
    write_pointer: Optional[int]
    #: ``"empty"``, ``"implicitly-opened"``, ``"explicitly-opened"``,
    #: ``"closed"``, ``"full"``, ``"read-only"``, ``"offline"`` or
    #: ``"not-write-pointer"`` (a conventional zone).
    state: str


#: Something numpy turns into a 1-D array of integers (a list, a range, an array).
IntSeq = Union[Sequence[int], "np.ndarray"]


class Completion(NamedTuple):
    """One completed command."""

    #: Command id (as :meth:`Device.submit` returned it).
    id: int
    #: ``"read"``, ``"write"``, ``"trim"``, ``"flush"``, ``"append"`` or a
    #: zone management action (``"zone_open"``, ``"zone_reset"``, ...).
    op: str
    #: Byte offset (0 for a flush; for a Zone Append, where the drive wrote
    #: it; for zone management, the zone's first byte, -1 for every zone).
    offset: int
    #: Bytes (0 for a flush).
    length: int
    #: Virtual time of the submission, ns.
    submit_ns: int
    #: Virtual time of the completion, ns.
    complete_ns: int
    #: ``complete_ns - submit_ns``, ns.
    latency_ns: int
    #: ``"ok"`` or the error's name (``"media_error"``, ``"read_only"``).
    status: str


class Completions:
    """Completions in completion order, as columns of numpy arrays (one
    element per command): ``id``, ``offset``, ``length``, ``submit_ns``,
    ``complete_ns``, ``latency_ns`` (``int64``), ``op`` and ``status``
    (strings; ``op_code`` and ``status_code`` are the ``uint8`` codes,
    indices in :data:`OPS` and :data:`STATUSES`).

    ``len(c)``; ``c[i]`` and iteration give :class:`Completion` tuples;
    ``c[mask]`` or ``c[a:b]`` select (another :class:`Completions`);
    ``c.to_pandas()`` is a DataFrame with the same columns.

    >>> done = d.run_until_idle()                                  # doctest: +SKIP
    >>> done.latency_ns[done.op == "read"].mean()                  # doctest: +SKIP
    """

    __slots__ = ("id", "op_code", "offset", "length", "submit_ns", "complete_ns", "status_code")

    def __init__(self, id, op_code, offset, length, submit_ns, complete_ns, status_code) -> None:
        self.id: np.ndarray = id
        self.op_code: np.ndarray = op_code
        self.offset: np.ndarray = offset
        self.length: np.ndarray = length
        self.submit_ns: np.ndarray = submit_ns
        self.complete_ns: np.ndarray = complete_ns
        self.status_code: np.ndarray = status_code

    @classmethod
    def _from_native(cls, cols) -> "Completions":
        i, op, off, ln, sub, done, st = cols
        return cls(
            np.frombuffer(i, dtype="<i8"),
            np.frombuffer(op, dtype=np.uint8),
            np.frombuffer(off, dtype="<i8"),
            np.frombuffer(ln, dtype="<i8"),
            np.frombuffer(sub, dtype="<i8"),
            np.frombuffer(done, dtype="<i8"),
            np.frombuffer(st, dtype=np.uint8),
        )

    @property
    def latency_ns(self) -> np.ndarray:
        """``complete_ns - submit_ns``, ns."""
        return self.complete_ns - self.submit_ns

    @property
    def op(self) -> np.ndarray:
        """Op names (a numpy array of strings)."""
        return np.asarray(OPS)[self.op_code]

    @property
    def status(self) -> np.ndarray:
        """``"ok"`` or the error's name, per command."""
        return np.asarray(STATUSES)[self.status_code]

    @property
    def ok(self) -> np.ndarray:
        """Boolean mask of the commands that succeeded."""
        return self.status_code == 0

    def __len__(self) -> int:
        return len(self.id)

    def _row(self, i: int) -> Completion:
        sub, done = int(self.submit_ns[i]), int(self.complete_ns[i])
        return Completion(
            int(self.id[i]),
            OPS[self.op_code[i]],
            int(self.offset[i]),
            int(self.length[i]),
            sub,
            done,
            done - sub,
            STATUSES[self.status_code[i]],
        )

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self._row(range(len(self))[key])
        return Completions(*(getattr(self, f)[key] for f in self.__slots__))

    def __iter__(self) -> Iterator[Completion]:
        cols = (
            self.id.tolist(),
            self.op_code.tolist(),
            self.offset.tolist(),
            self.length.tolist(),
            self.submit_ns.tolist(),
            self.complete_ns.tolist(),
            self.status_code.tolist(),
        )
        for i, op, off, ln, sub, done, st in zip(*cols):
            yield Completion(i, OPS[op], off, ln, sub, done, done - sub, STATUSES[st])

    def to_pandas(self):
        """A DataFrame: one row per completion, the columns of :class:`Completion`."""
        from ._lazy import pd

        return pd.DataFrame({f: getattr(self, f) for f in Completion._fields})

    def __repr__(self) -> str:
        head = ", ".join(repr(c) for c in list(self[:3]))
        more = ", ..." if len(self) > 3 else ""
        return "Completions(%d: [%s%s])" % (len(self), head, more)


def _ints(x: Any, n: Optional[int], what: str) -> np.ndarray:
    """``x`` as a contiguous int64 array (of length ``n``, a scalar repeated)."""
    a = np.asarray(x)
    if a.ndim == 0 and n is not None:
        a = a.reshape(1).repeat(n)
    if a.ndim != 1:
        raise SsdtwinError("%s must be a one-dimensional sequence (or one value)" % what)
    if n is not None and len(a) != n:
        raise SsdtwinError("%s: %d values for %d commands" % (what, len(a), n))
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if a.dtype.kind == "u" and a.max() >= 2**63:
        raise SsdtwinError("%s: %d is out of range" % (what, a.max()))
    if a.dtype.kind == "O":
        try:
            a = np.array(a.tolist(), dtype=np.int64)
        except (OverflowError, TypeError, ValueError):
            bad = next((v for v in a.tolist() if not isinstance(v, int) or not -(2**63) <= v < 2**63), None)
            raise SsdtwinError("%s: %r is not a 64-bit integer" % (what, bad)) from None
    if a.dtype.kind not in "iu":
        raise SsdtwinError("%s must be integers, got %s values" % (what, a.dtype))
    return np.ascontiguousarray(a, dtype=np.int64)


def _op_codes(ops: Any, n: int) -> np.ndarray:
    if isinstance(ops, str):
        return np.full(n, _op_code(ops), dtype=np.uint8)
    a = np.asarray(ops)
    if a.ndim != 1 or len(a) != n:
        raise SsdtwinError("ops: %s values for %d commands" % (a.shape, n))
    if n == 0:
        return np.zeros(0, dtype=np.uint8)
    if a.dtype.kind not in "UO":
        raise SsdtwinError("ops must be op names (%s), got %s" % (", ".join(OPS), a.dtype))
    codes = np.full(n, 255, dtype=np.uint8)
    for name, code in _OP_CODE.items():
        codes[a == name] = code
    bad = np.flatnonzero(codes == 255)
    if len(bad):
        raise SsdtwinError("command %d: unknown op %r (one of %s)" % (bad[0], a[bad[0]].item(), ", ".join(OPS)))
    return codes


def _op_code(op: str) -> int:
    try:
        return _OP_CODE[op]
    except (KeyError, TypeError):
        raise SsdtwinError("unknown op %r (one of %s)" % (op, ", ".join(OPS))) from None


def _nonneg(v: Any, what: str) -> int:
    if type(v) is int and 0 <= v < 2**64:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise SsdtwinError("%s must be an integer, got %r" % (what, v))
    v = int(v)
    if v < 0 or v >= 2**64:
        raise SsdtwinError("%s %d is out of range" % (what, v))
    return v


class Device:
    """A drive's device core that Python steps: a host-side program (an I/O
    scheduler, a cache, a learned prefetcher) submits commands and moves
    the virtual clock, as the library's own drivers do.

    ``drive``: a :class:`Drive`, a preset name, a drive file path or TOML
    text; ``set``: overrides (``{"ftl.gc_policy": "fifo"}`` or
    ``["ftl.gc_policy=fifo"]``); ``state``: as ``ssdtwin run --state``
    (``fresh``, ``full``, ``filled:N``, ``steady``, ``steady-exact``);
    ``seed`` seeds the state. The clock starts at 0.

    >>> d = Device("generic-tlc-nvme", state="full", seed=1)
    >>> cid = d.submit("read", offset=0, length=4096)
    >>> c = d.next_completion()
    >>> c.id == cid and c.latency_ns > 0
    True
    >>> ids = d.submit_many("read", np.arange(100) * 4096, 4096)
    >>> done = d.run_until_idle()
    >>> len(done), d.outstanding
    (100, 0)

    Commands go to the drive at the current virtual time (or at ``at_ns``,
    later); offsets and lengths are multiples of 4096 within
    :attr:`capacity_bytes`; anything invalid raises :class:`SsdtwinError`
    (a ``ValueError``) and submits nothing. Completions come back from
    :meth:`run_until`, :meth:`run_until_idle` (columns:
    :class:`Completions`) and :meth:`next_completion` (one
    :class:`Completion`), in completion order. The simulation runs without
    the GIL. A device is used by one thread at a time.
    """

    #: Op names.
    OPS = OPS
    #: Status names.
    STATUSES = STATUSES

    def __init__(
        self,
        drive: Union[Drive, str, "os.PathLike[str]"] = "generic-tlc-nvme",
        state: str = "fresh",
        set: Union[None, Mapping[str, Any], Iterable[str]] = None,
        seed: int = 1,
    ) -> None:
        global np
        if isinstance(np, _Lazy):
            import numpy as np  # the module itself from now on (no lazy look-ups per call)
        d = drive if isinstance(drive, Drive) else Drive(drive)
        if set is not None:
            d = d.with_set(set)
        #: The drive (with its overrides).
        self.drive: Drive = d
        #: The starting state.
        self.state: str = str(state)
        #: The state's seed.
        self.seed: int = int(seed)
        self._d = _native.Stepper(d.source, d.is_text, d.set, self.state, self.seed)

    @property
    def now_ns(self) -> int:
        """Virtual time, ns."""
        return self._d.now_ns

    @property
    def outstanding(self) -> int:
        """Commands submitted whose completions have not been returned yet."""
        return self._d.outstanding

    @property
    def capacity_bytes(self) -> int:
        """Bytes the host may address (offsets + lengths up to it)."""
        return self._d.capacity_bytes

    def submit(
        self,
        op: str,
        offset: int = 0,
        length: int = 4096,
        at_ns: Optional[int] = None,
        placement: Optional[int] = None,
    ) -> int:
        """Submit one command now (or at ``at_ns``, not before now: the
        clock moves there first and completions on the way are returned by
        the next :meth:`run_until`/:meth:`run_until_idle`/:meth:`next_completion`).
        ``op``: ``"read"``, ``"write"``, ``"trim"``, ``"flush"`` (its offset
        and length are ignored) or ``"append"`` (Zone Append, drives with
        ``[zns]``: ``offset`` is the zone's first byte, and the completion's
        ``offset`` is where the drive wrote the data). A write may carry a
        ``placement`` identifier (drives with ``[fdp]``: reclaim group ×
        handles + handle; one the drive does not have goes to the default
        handle). Returns the command's id (0, 1, 2, ... in submission
        order)."""
        code = _op_code(op)
        at = None if at_ns is None else _nonneg(at_ns, "at_ns")
        pid = None if placement is None else _nonneg(placement, "placement")
        if code == 3:
            return self._d.submit(code, 0, 0, at, pid)
        return self._d.submit(code, _nonneg(offset, "offset"), _nonneg(length, "length"), at, pid)

    def zone_management(self, action: str, zone: Optional[int] = None, at_ns: Optional[int] = None) -> int:
        """Zone Management Send (drives with ``[zns]``): ``action`` one of
        ``"open"``, ``"close"``, ``"finish"``, ``"reset"``, ``"offline"``
        on the zone whose first byte is ``zone`` (``None``: every zone the
        action applies to, NVMe's Select All), now or at ``at_ns``. It
        completes like any command (op ``"zone_<action>"``, length 0): a
        reset when the zone's blocks are erased, a finish when its padding
        is programmed; a refused one completes with its NVMe status
        (``"invalid_zone_state_transition"``, ``"too_many_open_zones"``,
        ...; ``"invalid_opcode"`` on a conventional drive). Returns its id."""
        name = action[5:] if action.startswith("zone_") else action
        if name not in ZONE_ACTIONS:
            raise SsdtwinError("unknown zone action %r (one of %s)" % (action, ", ".join(ZONE_ACTIONS)))
        at = None if at_ns is None else _nonneg(at_ns, "at_ns")
        zslba = None if zone is None else _nonneg(zone, "zone")
        return self._d.zone_management(_OP_CODE["zone_" + name], zslba, at)

    def ruh_update(self, placements: "Sequence[int]", at_ns: Optional[int] = None) -> int:
        """Reclaim Unit Handle Update (NVMe I/O Management Send, drives
        with ``[fdp]``): each placement identifier's handle (reclaim group
        × handles + handle) leaves its reclaim unit, now or at ``at_ns``;
        a unit written in part is padded to its program unit, sealed, and
        records a "Reclaim Unit Not Fully Written" event (see
        ``placement()``). It completes like any command (op
        ``"ruh_update"``, length 0) when the padding is programmed; a
        refused one completes with its NVMe status (``"invalid_field"``
        for a placement the drive does not have, ``"invalid_opcode"``
        without ``[fdp]``). Returns its id."""
        pids = [_nonneg(p, "placement") for p in placements]
        if not pids:
            raise SsdtwinError("ruh_update needs at least one placement identifier")
        at = None if at_ns is None else _nonneg(at_ns, "at_ns")
        return self._d.ruh_update(pids, at)

    def report_zones(self) -> "list[Zone]":
        """Zone Management Receive (Report Zones): every zone's start,
        capacity, write pointer and state, in bytes (an empty list on a
        conventional drive). Reading the zone table takes no virtual time
        here."""
        return [Zone(*z) for z in self._d.report_zones()]

    def placement(self) -> Optional[Dict[str, Any]]:
        """What the data-placement interfaces did since the drive was made
        (``None`` for a conventional drive): ``zone_states`` (zones by
        state), ``zones`` (each zone that took writes, resets or finishes),
        ``handles`` (per reclaim unit handle: host and media bytes, bytes GC
        moved, reclaim units started, ``waf``) and, on FDP drives,
        ``fdp_events`` (events by type: ``type``, ``code``, ``count``) and
        ``fdp_log``, the FDP log pages: ``configuration``,
        ``handle_usage``, ``statistics`` (host bytes, media bytes written
        and erased) and ``host_events`` / ``controller_events``."""
        return json.loads(self._d.placement())

    def submit_many(
        self,
        ops: Union[str, Sequence[str], "np.ndarray"],
        offsets: IntSeq,
        lengths: Union[int, IntSeq] = 4096,
        at_ns: Optional[IntSeq] = None,
    ) -> "np.ndarray":
        """Submit a batch in order: sequences (lists or numpy arrays) of
        equal length; ``ops`` and ``lengths`` may be one value for all.
        With ``at_ns`` (non-decreasing, not before now) each command goes
        at its time (an open-loop arrival schedule); otherwise all go now.
        Every command is checked first: if one is invalid, none is
        submitted. Returns the ids (an ``int64`` array)."""
        off = _ints(offsets, None, "offsets")
        n = len(off)
        lens = _ints(lengths, n, "lengths")
        codes = _op_codes(ops, n)
        flush = codes == 3
        if flush.any():
            off = np.where(flush, 0, off)
            lens = np.where(flush, 0, lens)
        at = None if at_ns is None else _ints(at_ns, n, "at_ns").tobytes()
        first = self._d.submit_many(codes.tobytes(), off.tobytes(), lens.tobytes(), at)
        return np.arange(first, first + n, dtype=np.int64)

    def run_until(self, t_ns: int) -> Completions:
        """Advance virtual time to ``t_ns`` (not before :attr:`now_ns`:
        that raises), the drive doing background work (GC, folding) when
        it has been idle long enough; returns the completions up to then."""
        return Completions._from_native(self._d.run_until(_nonneg(t_ns, "t_ns")))

    def run_until_idle(self) -> Completions:
        """Run until no command is outstanding; the clock stops at the last
        completion (nothing outstanding: returns at once, empty)."""
        return Completions._from_native(self._d.run_until_idle())

    def next_completion(self, until_ns: Optional[int] = None) -> Optional[Completion]:
        """Advance to the next completion and return it; ``None`` when
        nothing is outstanding (the clock unchanged). With ``until_ns``
        (not before now), only a completion at or before it: otherwise
        ``None`` with the clock at ``until_ns``, so an event loop can
        interleave completions with its own arrivals::

            while (c := d.next_completion(until_ns=t_next)) is not None:
                react(c)             # may submit more, at c.complete_ns
            # now == t_next
        """
        until = None if until_ns is None else _nonneg(until_ns, "until_ns")
        r = self._d.next_completion(until)
        if r is None:
            return None
        i, op, off, ln, sub, done, st = r
        return Completion(i, OPS[op], off, ln, sub, done, done - sub, STATUSES[st])

    def counters(self) -> Dict[str, Any]:
        """The drive's counters since its life began (preconditioning
        included): host and NAND reads, programs, erases, GC and folding,
        map cache, ECC; plus ``waf`` and ``energy_j`` (None without a
        power model). Differences of two snapshots measure an interval."""
        return json.loads(self._d.counters_and_health()[0])

    def health(self) -> Dict[str, Any]:
        """The drive's health log (what ``ssdtwin run`` prints on its health
        line and puts in its JSON): data units, P/E cycles, percentage used,
        temperature (as of the thermal model's last update), spare, errors."""
        return json.loads(self._d.counters_and_health()[1])

    def copy(self) -> "Device":
        """An independent copy: same drive state, clock and outstanding
        commands (try two policies from one point)."""
        new = Device.__new__(Device)
        new.drive, new.state, new.seed = self.drive, self.state, self.seed
        new._d = self._d.copy()
        return new

    def __repr__(self) -> str:
        return "Device(%r, state=%r, seed=%r)  # now %d ns, %d outstanding" % (
            self.drive.name,
            self.state,
            self.seed,
            self.now_ns,
            self.outstanding,
        )
