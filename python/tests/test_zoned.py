"""ssdtwin.Device on zoned and FDP drives: Zone Append, Zone Management
Send and Receive, the NVMe statuses of the zone rules, writes with a
placement identifier, and the placement counts (docs/python.md)."""

import pytest

import ssdtwin
from conftest import SMALL_SET

PAGE = 4096
MIB = 1 << 20
#: 32 zones of 8 MiB, each holding 6 MiB (one erase block on each of the
#: small drive's 4 dies), at most 4 open and 4 active.
ZONE = 8 * MIB
ZCAP = 6 * MIB
ZONED_SET = {
    **SMALL_SET,
    "zns.zone_size_bytes": ZONE,
    "zns.zone_capacity_bytes": ZCAP,
    "zns.max_open_zones": 4,
    "zns.max_active_zones": 4,
}
FDP_SET = {**SMALL_SET, "fdp.reclaim_unit_handles": 2, "fdp.isolation": "initially"}


@pytest.fixture(scope="module")
def zoned():
    return ssdtwin.Device(ssdtwin.Drive("generic-tlc-nvme", set=ZONED_SET))


def one(d):
    c = d.next_completion()
    assert c is not None
    return c


def test_writes_follow_the_write_pointer_and_appends_return_the_lba(zoned):
    d = zoned.copy()
    zones = d.report_zones()
    assert len(zones) == 32 and isinstance(zones[0], ssdtwin.Zone)
    assert zones[1] == (ZONE, ZCAP, ZONE, "empty")
    # A write at the pointer opens the zone implicitly and moves it.
    d.submit("write", offset=ZONE, length=2 * PAGE)
    assert one(d).status == "ok"
    assert d.report_zones()[1] == (ZONE, ZCAP, ZONE + 2 * PAGE, "implicitly-opened")
    # Anywhere else: Zone Invalid Write, and nothing moves.
    d.submit("write", offset=ZONE + 8 * PAGE, length=PAGE)
    assert one(d).status == "zone_invalid_write"
    assert d.report_zones()[1].write_pointer == ZONE + 2 * PAGE
    # Zone Append names the zone; the completion says where it went.
    a = d.submit("append", offset=ZONE, length=3 * PAGE)
    b = d.submit("append", offset=ZONE, length=PAGE)
    done = {c.id: c for c in d.run_until_idle()}
    assert (done[a].op, done[a].offset, done[a].status) == ("append", ZONE + 2 * PAGE, "ok")
    assert (done[b].offset, done[b].length) == (ZONE + 5 * PAGE, PAGE)
    assert d.report_zones()[1].write_pointer == ZONE + 6 * PAGE
    # Reads of what was written succeed; a read across the zone's end does not.
    d.submit("read", offset=ZONE, length=6 * PAGE)
    assert one(d).status == "ok"
    d.submit("read", offset=2 * ZONE - PAGE, length=2 * PAGE)
    assert one(d).status == "zone_boundary_error"


def test_zone_management_moves_zones_through_their_states(zoned):
    d = zoned.copy()
    # Four explicit opens fit the limits; the fifth empty zone would need
    # a fifth active zone first (the limits are equal).
    ids = [d.zone_management("open", zone=z * ZONE) for z in range(5)]
    done = {c.id: c for c in d.run_until_idle()}
    assert [done[i].status for i in ids] == ["ok"] * 4 + ["too_many_active_zones"]
    assert done[ids[0]].op == "zone_open" and done[ids[0]].offset == 0 and done[ids[0]].length == 0
    assert [z.state for z in d.report_zones()[:5]] == ["explicitly-opened"] * 4 + ["empty"]
    # Close one with data in it, finish it, then reset it.
    d.submit("write", offset=ZONE, length=4 * PAGE)
    one(d)
    d.zone_management("close", zone=ZONE)
    assert one(d).status == "ok" and d.report_zones()[1].state == "closed"
    d.zone_management("finish", zone=ZONE)
    assert one(d).status == "ok"
    assert d.report_zones()[1] == (ZONE, ZCAP, None, "full")
    d.submit("write", offset=ZONE, length=PAGE)
    assert one(d).status == "zone_is_full"
    t0 = d.now_ns
    d.zone_management("reset", zone=ZONE)
    r = one(d)
    # A reset completes when the zone's blocks are erased (tBERS 5 ms).
    assert r.status == "ok" and r.complete_ns - t0 >= 5_000_000
    assert d.report_zones()[1] == (ZONE, ZCAP, ZONE, "empty")
    # Invalid transitions are refused with their status.
    d.zone_management("close", zone=ZONE)
    assert one(d).status == "invalid_zone_state_transition"
    # Select All: every open zone closed; the completion's offset is -1.
    d.zone_management("close")
    c = one(d)
    assert (c.op, c.offset, c.status) == ("zone_close", -1, "ok")
    assert [z.state for z in d.report_zones()[:5]] == ["empty"] * 5  # opened, nothing written: emptied
    counts = d.placement()
    assert counts["zone_states"]["empty"] == 32
    assert {z["zone"]: (z["resets"], z["finishes"]) for z in counts["zones"]}[1] == (1, 1)


def test_zone_commands_are_checked():
    conventional = ssdtwin.Device(ssdtwin.Drive("generic-tlc-nvme", set=SMALL_SET))
    conventional.zone_management("reset", zone=0)
    assert one(conventional).status == "invalid_opcode"
    assert conventional.report_zones() == [] and conventional.placement() is None
    with pytest.raises(ssdtwin.SsdtwinError, match="zone management"):
        conventional.submit("zone_reset", offset=0, length=PAGE)
    with pytest.raises(ssdtwin.SsdtwinError, match="unknown zone action"):
        conventional.zone_management("rewind")
    with pytest.raises(ssdtwin.SsdtwinError, match="placement"):
        conventional.submit("read", offset=0, length=PAGE, placement=1)


def test_writes_carry_placement_identifiers():
    d = ssdtwin.Device(ssdtwin.Drive("generic-tlc-nvme", set=FDP_SET))
    d.submit("write", offset=0, length=16 * PAGE, placement=1)
    d.submit("write", offset=64 * PAGE, length=4 * PAGE)  # the default handle, 0
    d.submit("write", offset=128 * PAGE, length=PAGE, placement=7)  # no such handle: the default
    d.submit("flush")
    assert [c.status for c in d.run_until_idle()] == ["ok"] * 4
    p = d.placement()
    host = {(h["group"], h["handle"]): h["host_bytes"] for h in p["handles"]}
    assert host == {(0, 0): 5 * PAGE, (0, 1): 16 * PAGE}
    assert p["fdp_events"] == [{"type": "invalid_placement_identifier", "code": 3, "count": 1}]
    (event,) = p["fdp_log"]["host_events"]
    assert (event["placement"], event["group"], event["handle"]) == (7, 0, 0)
    assert p["fdp_log"]["statistics"]["host_bytes"] == 21 * PAGE
    assert p["fdp_log"]["configuration"]["reclaim_unit_handles"] == 2
    assert "zone_states" not in p


def test_a_reclaim_unit_handle_update_leaves_the_unit_written_in_part():
    d = ssdtwin.Device(ssdtwin.Drive("generic-tlc-nvme", set=FDP_SET))
    d.submit("write", offset=0, length=30 * PAGE, placement=1)
    d.run_until_idle()
    bad = d.ruh_update([1, 5])  # no placement 5: refused whole
    ok = d.ruh_update([1])
    again = d.ruh_update([1, 0])  # nothing left to leave
    done = {c.id: (c.op, c.status, c.length) for c in d.run_until_idle()}
    assert done == {bad: ("ruh_update", "invalid_field", 0), ok: ("ruh_update", "ok", 0), again: ("ruh_update", "ok", 0)}
    p = d.placement()
    counts = {e["type"]: e["count"] for e in p["fdp_events"]}
    assert counts == {"reclaim_unit_not_fully_written": 1}
    (event,) = p["fdp_log"]["host_events"]
    assert (event["type"], event["placement"], event["handle"]) == ("reclaim_unit_not_fully_written", 1, 1)
    with pytest.raises(ssdtwin.SsdtwinError, match="at least one"):
        d.ruh_update([])
    conventional = ssdtwin.Device(ssdtwin.Drive("generic-tlc-nvme", set=SMALL_SET))
    conventional.ruh_update([0])
    assert [c.status for c in conventional.run_until_idle()] == ["invalid_opcode"]
