"""Per-vdev I/O on the real pool of the OpenZFS lab guests (2.1 and 2.3, a full Debian kernel under qemu):
what `zpool iostat` said each vdev did, against what /proc/diskstats counted at the vdevs' disks.

The guest (lab/guest-init.sh, step "vdev iostat") made a dataset tank/vdevs with sync=always, captured
`zpool iostat -Hpvy`, `-HpvPy` and `-pvy tank 1 2` while fio wrote to it, then ran the real sampler
(probe/conditions.ConditionSampler over the devices and pools measure/telemetry.sampled_layers takes from the
discovered stack; it runs probe/vdev_iostat.py's `zpool iostat -HpvPy tank 1`) around a 4 s write of 16 KiB
blocks with 2 s idle before it and 3 s after it (a txg a second meanwhile), so that zpool's counters and the
kernel's both hold every byte of the write: the totals of everything sampled are compared, not a window
whose edges each counter cuts at its own seconds.

What the rows are (module/zfs/vdev.c, vdev_stat_update and vdev_get_stats_ex_impl, the same in 2.1 and 2.3):
only leaves count their I/O, and a vdev's row is its children's summed. So the data mirror's row is its two
legs together in each report, and each leg's bytes are what its disk's partition counted in /proc/diskstats:
checked where zpool keeps counts (OpenZFS 2.3's vdev properties, read before and after the sampler), not
from the reports' rates, whose intervals a reader can only time by when their lines arrive (a leg read 0.88x
of its partition in a boot on an overloaded host; the layer table takes a block-device leaf's figures from
/proc/diskstats for that reason: tests/stack/test_layers_guest.py). With sync=always every write is
committed to the ZFS intent log, on the log vdev, first. The same boot checks that no `zpool iostat` outlives
the sampler that started it, however the sampling process ends.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from lab_guest import GuestRun
from stackbench.audit.zfs_outputs import parse_vdev_properties
from stackbench.engine.fio_json import parse_fio_json
from stackbench.probe.vdev_iostat import FIELDS, parse_report
from stackbench.stack.layer import Stack, VdevPlace

pytestmark = [pytest.mark.zfsguest, pytest.mark.slow]
SECTOR = 512


def sampled(guest: GuestRun) -> dict[str, Any]:
    saved = json.loads((guest.out / "vdev" / "sampled.json").read_text())
    assert saved["exit"] == 0, saved["stderr"]
    assert saved["pools"] == ["tank"], saved["pools"]
    assert not (saved["conditions"]["vdevs"].get("unavailable")), saved["conditions"]["vdevs"]
    return saved


def vdev_totals(saved: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each row's operations and bytes over every report: its rates times the report's interval."""
    totals: dict[str, dict[str, float]] = {}
    for report in saved["conditions"]["vdevs"]["samples"]:
        for name, rates in report["vdevs"].items():
            row = totals.setdefault(name, dict.fromkeys(FIELDS, 0.0))
            for key, rate in zip(FIELDS, rates):
                row[key] += rate * report["dt"]
    return totals


def disk_written(saved: dict[str, Any], device: str) -> float:
    """The bytes /proc/diskstats counted written to `device` over every second sampled."""
    return sum(s["disks"][device]["write_sectors"] * SECTOR for s in saved["conditions"]["samples"]
               if device in s.get("disks", {}))


def leaf_device(stack: Stack, leaf: str) -> str:
    """The kernel name of the /proc/diskstats row of a leaf (`/dev/vdd1` -> vdd1)."""
    layer = next(layer for _, layer in stack.root.walk() if layer.zfs.get("vdev") == leaf and layer.devices)
    return layer.devices[0]


def test_the_sampler_names_the_vdevs_the_stack_names(guest: GuestRun) -> None:
    """Every report has the pool's rows in the stack's order. How far apart its lines arrived is not
    asserted: that is the guest's load (1.0-2.2 s in a boot on an overloaded host), and since the layer table
    takes a block-device leaf's figures from /proc/diskstats no figure of these rows depends on it."""
    saved = sampled(guest)
    names = Stack.from_json(saved["stack"]).counter_names()
    reports = saved["conditions"]["vdevs"]["samples"]
    assert len(reports) >= 7, len(reports)  # 2 + 4 + 3 s of 1 s reports, less zpool's start
    for report in reports:
        assert report["pool"] == "tank" and report["dt"] > 0, report
        assert list(report["vdevs"]) == ["tank", *(vdev for pool, vdev in names.vdevs if pool == "tank")], report


def legs_of(stack: Stack) -> list[VdevPlace]:
    places = stack.vdev_places()
    legs = [p for p in places if p.level == 2 and p.vdev_class == "normal"]
    assert [p.name for p in places if p.level == 1 and p.vdev_class == "normal"] == ["mirror-0"] and len(legs) == 2
    return legs


def test_zpool_s_mirror_row_is_its_legs_together(guest: GuestRun) -> None:
    """zpool's own rows: the mirror's is its legs' summed over the reports (each row's rate is over an interval
    of its own, the kernel reading each row at a moment apart: within 1 %; 0.991-1.002 in this session's boots,
    while the reports arrived 1.0-1.8 s apart)."""
    saved = sampled(guest)
    legs = [leg.name for leg in legs_of(Stack.from_json(saved["stack"]))]
    totals = vdev_totals(saved)
    mirror = totals["mirror-0"]["write_bytes"]
    assert mirror > 4 * 2**20, totals  # the 4 s write reached the data disks
    assert mirror == pytest.approx(sum(totals[leg]["write_bytes"] for leg in legs), rel=0.01)


def zpool_counted(saved: dict[str, Any]) -> dict[str, dict[str, int]] | None:
    """What each vdev's own counters (`zpool get` of the vdev properties, OpenZFS 2.2+) grew by from just
    before the sampler started to just after it stopped; None where zpool has none (2.1)."""
    before, after = saved["vdev_counters"]
    if before is None or after is None:
        return None
    first, last = (parse_vdev_properties(f"## tank\n{text}")["tank"] for text in (before, after))
    return {vdev: {key: int(last[vdev][key]) - int(first[vdev][key]) for key in last[vdev]} for vdev in last}


def test_each_leg_s_own_counters_grew_by_what_its_partition_counted(guest: GuestRun) -> None:
    """Why a leaf's row is its block device's /proc/diskstats counts: zpool's own count of a leaf's bytes is
    what its disk counted. OpenZFS 2.3 keeps them as counters (vdev properties: counts, not rates, so nothing
    depends on when a report arrived), which grew by what the leg's partition counted over the sampled
    seconds (within 5 %; the first boot's zpool iostat reports read 1.00x); OpenZFS 2.1 has none (its reports'
    rates are all it says, over intervals a reader can only time by their arrival: 0.88x in a loaded boot)."""
    saved = sampled(guest)
    stack = Stack.from_json(saved["stack"])
    counted = zpool_counted(saved)
    if guest.series == "2.1":
        assert counted is None, counted
        return
    assert counted is not None, saved["vdev_counters"]
    for leg in legs_of(stack):
        device = leaf_device(stack, leg.name)
        # zpool get names a whole disk's leaf by the disk (vdd), a partition it was given by the partition
        own = next(counted[name] for name in (leg.name, device, device.rstrip("0123456789")) if name in counted)
        written = disk_written(saved, device)
        assert written > 2 * 2**20 and own["write_bytes"] == pytest.approx(written, rel=0.05), (leg, own, written)


def fio_written(saved: dict[str, Any]) -> float:
    return sum(d.io_bytes for d in parse_fio_json(saved["fio"], source="fio").directions if d.direction == "write")


def test_the_mirror_s_rows_hold_at_least_twice_fio_s_bytes(guest: GuestRun) -> None:
    """Every byte fio wrote reaches both legs of the data mirror (16 KiB writes into 128 KiB records: more):
    in zpool's reports and at the legs' partitions."""
    saved = sampled(guest)
    totals = vdev_totals(saved)
    at_disks = sum(disk_written(saved, leaf_device(Stack.from_json(saved["stack"]), leg.name))
                   for leg in legs_of(Stack.from_json(saved["stack"])))
    assert fio_written(saved) > 0 and totals["mirror-0"]["write_bytes"] >= 2 * fio_written(saved), totals
    assert at_disks >= 2 * fio_written(saved), (at_disks, fio_written(saved))


def test_no_zpool_iostat_outlives_its_sampler_at_the_cell_s_end_ctrl_c_or_kill_9(guest: GuestRun) -> None:
    """No `zpool iostat` was running in the guest after the layer telemetry step's samplers (one per stack)
    nor after this step's sampler stopped; and a process sampling the pool (a ConditionSampler in a `with`,
    as the runner holds it) that is ended by Ctrl-C (SIGINT to its process group, as a terminal sends it:
    zpool, in a session of its own, gets none) or by SIGKILL (no code of ours runs: the kernel's
    PR_SET_PDEATHSIG) leaves no zpool behind within 5 s, while the real zpool ran before."""
    saved = sampled(guest)
    assert saved["zpool_iostat_left"] == {"before": {}, "after_stop": {}}, saved["zpool_iostat_left"]
    assert set(saved["ends"]) == {"ctrl-c", "kill-9"}
    for how, end in saved["ends"].items():
        assert end.get("zpool_pid") is not None and end.get("running_before"), (how, end)
        assert end["alive_after"] is False, (how, end)
    assert saved["ends"]["kill-9"]["child_exit"] == -9 and saved["ends"]["ctrl-c"]["child_exit"] != 0, saved["ends"]


def test_the_log_vdev_gets_a_write_for_each_of_fio_s_under_sync_always(guest: GuestRun) -> None:
    """sync=always commits each write to the ZIL, on the log vdev, before it returns: a log write per fio
    write (a few may share one). What they hold differs: OpenZFS 2.1 copies the 16 KiB into the log record
    (1.23x of fio's bytes in the first boot), 2.3 wrote 0.25x of them there (about 4 KiB a record: with
    Direct I/O, new in 2.3, fio's O_DIRECT data goes to the mirror and the log says where)."""
    saved = sampled(guest)
    log = next(p.name for p in Stack.from_json(saved["stack"]).vdev_places() if p.vdev_class == "logs")
    writes = sum(d.total_ios for d in parse_fio_json(saved["fio"], source="fio").directions if d.direction == "write")
    logged = vdev_totals(saved)[log]
    assert writes > 0 and logged["writes"] >= 0.5 * writes, (logged, writes)
    if guest.series == "2.1":
        assert logged["write_bytes"] >= fio_written(saved), (logged, fio_written(saved))


@pytest.mark.parametrize("flags", ["Hpv", "HpvP"])
def test_the_parser_reads_every_row_of_the_real_text(guest: GuestRun, flags: str) -> None:
    """Both reports of `zpool iostat -{flags}y tank 1 2`: every row has its four figures, the pool's row
    begins each, and the empty lines (-H's class headers) make the special, log and cache sections."""
    text = (guest.out / "vdev" / f"zpool-iostat-{flags}-y.txt").read_text()
    reports = parse_report(text, ["tank"])
    assert [r.pool for r in reports] == ["tank", "tank"], text
    for report in reports:
        assert all(row.rates is not None for row in report.rows), report
        assert [row.section for row in report.rows] == [0, 0, 0, 0, 1, 2, 3], report
