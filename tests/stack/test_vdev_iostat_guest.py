"""Per-vdev I/O on the real pool of the OpenZFS lab guests (2.1 and 2.3, a full Debian kernel under qemu):
what `zpool iostat` said each vdev did, against what /proc/diskstats counted at the vdevs' disks.

The guest (lab/guest-init.sh, step "vdev iostat") made a dataset tank/vdevs with sync=always, captured
`zpool iostat -Hpvy`, `-HpvPy` and `-pvy tank 1 2` while fio wrote to it, then ran the real sampler
(probe/conditions.ConditionSampler over the devices and pools measure/telemetry.sampled_layers takes from the
discovered stack; it runs probe/vdev_iostat.py's `zpool iostat -HpvPy tank 1`) around a 4 s write of 16 KiB
blocks with 2 s idle before it and 3 s after it (a txg a second meanwhile), so that zpool's reports and the
kernel's counters both hold every byte of the write: the totals of everything sampled are compared, not a
window whose edges each counter cuts at its own seconds.

What the rows are (module/zfs/vdev.c, vdev_stat_update and vdev_get_stats_ex_impl, the same in 2.1 and 2.3):
only leaves count their I/O, and a vdev's row is its children's summed. So the data mirror's row is its two
legs together, each leg's is what its disk's partition counted in /proc/diskstats (within 10 %: the leaf's
bytes are counted before the disk queue merges them, the kernel's after, and the aggregation may fill
small gaps; the first boots read 1.01x under 2.1 and 1.00x under 2.3), and the mirror's row is both disks'
together. With sync=always every write is committed to the ZFS intent log, on the log vdev, first. The same
boot checks that no `zpool iostat` outlives the sampler that started it, however the sampling process ends.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from lab_guest import GuestRun
from stackbench.engine.fio_json import parse_fio_json
from stackbench.probe.vdev_iostat import FIELDS, parse_report
from stackbench.stack.layer import Stack

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
    saved = sampled(guest)
    names = Stack.from_json(saved["stack"]).counter_names()
    reports = saved["conditions"]["vdevs"]["samples"]
    assert len(reports) >= 7, len(reports)  # 2 + 4 + 3 s of 1 s reports, less zpool's start
    for report in reports:
        assert report["pool"] == "tank" and 0.5 < report["dt"] < 2.0, report
        assert list(report["vdevs"]) == ["tank", *(vdev for pool, vdev in names.vdevs if pool == "tank")], report


def test_the_mirror_s_row_is_its_legs_together_and_each_leg_is_what_its_disk_counted(guest: GuestRun) -> None:
    saved = sampled(guest)
    stack = Stack.from_json(saved["stack"])
    places = stack.vdev_places()
    legs = [p.name for p in places if p.level == 2 and p.vdev_class == "normal"]
    assert [p.name for p in places if p.level == 1 and p.vdev_class == "normal"] == ["mirror-0"] and len(legs) == 2
    totals = vdev_totals(saved)
    mirror = totals["mirror-0"]["write_bytes"]
    assert mirror > 4 * 2**20, totals  # the 4 s write reached the data disks
    assert mirror == pytest.approx(sum(totals[leg]["write_bytes"] for leg in legs), rel=0.01)
    counted = {leg: disk_written(saved, leaf_device(stack, leg)) for leg in legs}
    for leg in legs:
        assert totals[leg]["write_bytes"] == pytest.approx(counted[leg], rel=0.10), (leg, totals[leg], counted)
    assert mirror == pytest.approx(sum(counted.values()), rel=0.10), (mirror, counted)


def fio_written(saved: dict[str, Any]) -> float:
    return sum(d.io_bytes for d in parse_fio_json(saved["fio"], source="fio").directions if d.direction == "write")


def test_the_mirror_s_rows_hold_at_least_twice_fio_s_bytes(guest: GuestRun) -> None:
    """Every byte fio wrote reaches both legs of the data mirror (16 KiB writes into 128 KiB records: more)."""
    saved = sampled(guest)
    totals = vdev_totals(saved)
    assert fio_written(saved) > 0 and totals["mirror-0"]["write_bytes"] >= 2 * fio_written(saved), totals


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
