"""A pool's `zpool iostat -v` rows in the layer table (analysis/conditions._vdevs, analysis/layer_activity,
report/layer_table.py): zpool's reports summed over fio's window, shown under the zvol as `zpool iostat -v`
prints them (the pool, its mirror and legs, a header row per other class), with IOPS, MB/s and the
amplification against fio's bytes; on synthetic reports whose answers are computed by hand. Such a table has
every note the layer table can have, and they are read at 80 columns here."""

from __future__ import annotations

import sys
from typing import Sequence

import pytest

from analysis_layers import MB, disk, summary, with_conditions
from stackbench.analysis.conditions import summarize
from stackbench.analysis.layer_activity import BUSIEST_RULE, PRORATED, cell_layers
from stackbench.report.layer_table import VDEV_NOTE, ZPOOL_NOTE, layer_export_rows, layer_table
from stackbench.report.run_json import run_json
from stackbench.stack.layer import Layer, Stack
from synthetic import cell, run

WINDOW = (100.0, 104.0)  # fio's measured window, 4 s


def zvol_on_a_mirror_with_a_log() -> Stack:
    """tank/v (zd0) on tank: mirror-0 of vdd1 and vde1, a log vdev nvme0n1p1; each partition on its disk."""
    def leaf(part: str, disk_name: str) -> Layer:
        return Layer("partition", f"/dev/{part}", devices=[part], zfs={"pool": "tank", "vdev": f"/dev/{part}"},
                     children=[Layer("disk", f"/dev/{disk_name}", devices=[disk_name])])

    mirror = Layer("zfs-vdev", "mirror-0", {"type": "mirror", "class": "normal"}, zfs={"pool": "tank", "vdev": "mirror-0"},
                   children=[leaf("vdd1", "vdd"), leaf("vde1", "vde")])
    log = Layer("zfs-vdev", "/dev/nvme0n1p1", {"type": "disk", "class": "logs"},
                zfs={"pool": "tank", "vdev": "/dev/nvme0n1p1"}, children=[leaf("nvme0n1p1", "nvme0n1")])
    pool = Layer("zfs-pool", "tank", zfs={"pool": "tank"}, children=[log, mirror])  # zpool prints the log last
    return Stack("/dev/zd0", Layer("zvol", "tank/v", devices=["zd0"], zfs={"pool": "tank", "dataset": "tank/v"},
                                   children=[pool]))


def reports() -> dict:
    """zpool's reports as probe/vdev_iostat.VdevSampler keeps them: three wholly inside the window with
    the figures the tests expect, and one at each edge with ten times as much (they must not count)."""
    steady = {"tank": [0, 250, 0, 5 * MB], "mirror-0": [0, 200, 0, 4 * MB], "/dev/vdd1": [0, 100, 0, 2 * MB],
              "/dev/vde1": [0, 100, 0, 2 * MB], "/dev/nvme0n1p1": [0, 50, 0, 1 * MB]}
    edge = {name: [10 * value for value in rates] for name, rates in steady.items()}
    samples = [{"t": t, "dt": 1.0, "pool": "tank", "vdevs": edge if t in (100.5, 104.5) else steady}
               for t in (100.5, 101.5, 102.5, 103.5, 104.5)]
    return {"pools": ["tank"], "interval_s": 1.0, "samples": samples, "dropped": 0}


def sampled_cell(samples: dict | None = None, *, busy: str | None = None,  # noqa: ANN201 - a synthetic Cell
                 arc: dict | None = None):
    """A 4 s write of 8 MB: each mirror leg's disk and partition wrote 8 MB in 400 writes, the log's 4 MB in
    200 (the rates of the `reports()` zpool printed); with zpool's reports as the sampler kept them. The
    device named `busy` was 97 % utilised (saturated), the others 50 %; `arc` the ARC's counts, if any."""
    vdevs = summarize({"samples": [], "devices": [], "vdevs": samples or reports()}, WINDOW, fio_bytes=8 * MB)["vdevs"]
    disks = {name: disk(writes=400, write_bytes=8 * MB, seconds=4.0, util=97.0 if name == busy else 50.0)
             for name in ("zd0", "vdd1", "vdd", "vde1", "vde")}
    disks |= {name: disk(writes=200, write_bytes=4 * MB, seconds=4.0) for name in ("nvme0n1p1", "nvme0n1")}
    counted = summary(disks, fio_write=8 * MB, seconds=4.0) | {"vdevs": vdevs} | ({"arc": arc} if arc else {})
    return with_conditions(cell(runs=[1000.0]), [counted])


def test_the_reports_wholly_inside_fio_s_window_are_summed_as_counts() -> None:
    summed = summarize({"samples": [], "devices": [], "vdevs": reports()}, WINDOW, fio_bytes=8 * MB)["vdevs"]["tank"]
    assert summed["seconds"] == 3.0
    assert summed["vdevs"]["mirror-0"] == {"reads": 0, "writes": 600, "read_bytes": 0, "write_bytes": 12 * MB}
    short = summarize({"samples": [], "devices": [], "vdevs": reports()}, (101.2, 101.6), fio_bytes=MB)["vdevs"]
    assert short["tank"]["seconds"] == 0.4 and short["tank"]["vdevs"]["/dev/vdd1"]["write_bytes"] == 0.8 * MB


def test_the_pool_s_rows_go_under_the_zvol_as_zpool_iostat_v_prints_them() -> None:
    measured = run([sampled_cell()], facts={"stack": zvol_on_a_mirror_with_a_log().to_json()})
    table = layer_table(measured)
    assert [row[1] for row in table.rows] == [
        "zd0 (zvol)", "  tank (pool, zpool iostat)", "    mirror-0 (mirror)", "      /dev/vdd1", "      /dev/vde1",
        "  logs", "    /dev/nvme0n1p1", "  nvme0n1p1 (partition)", "    nvme0n1 (disk)", "  vdd1 (partition)",
        "    vdd (disk)", "  vde1 (partition)", "    vde (disk)", "bottom layers, summed"]
    pool, mirror, leg, _, heading, log = table.rows[1:7]
    # the leaves' partitions over the devices' 4 s, against fio's 8 MB in them
    assert (pool[2], pool[3], pool[-1]) == ("250", "5.0", "2.50x")
    assert (mirror[-1], leg[-1], log[-1]) == ("2.00x", "1.00x", "0.50x")
    assert heading[2:] == [""] * 6 and mirror[5:7] == ["-", "-"]
    assert any("a vdev's figures are its leaves' summed" in note for note in table.notes)
    layers = run_json(measured)["cells"][0]["layers"]["vdevs"]
    assert [(v["name"], v["class"], v["level"], v["write_amplification"], v["source"]) for v in layers] == [
        ("tank", None, 0, 2.5, "diskstats"), ("mirror-0", "normal", 1, 2.0, "diskstats"),
        ("/dev/vdd1", "normal", 2, 1.0, "diskstats"), ("/dev/vde1", "normal", 2, 1.0, "diskstats"),
        ("/dev/nvme0n1p1", "logs", 1, 0.5, "diskstats")]
    exported = [row for row in layer_export_rows(measured) if row[2].startswith("zpool")]
    assert [(row[1], row[2], row[13]) for row in exported][:2] == [("tank", "zpool pool", 20 * MB),
                                                                  ("mirror-0", "zpool normal mirror", 16 * MB)]
    assert not any("zpool iostat's reports" in note for note in table.notes)


def late_reports() -> dict:
    """zpool's reports of the same write as the sampler timed them on an overloaded machine: zpool printed a
    report a second (its rates over its own 1 s), but the reader took the lines of the second one 2.2 s after
    the first and of the third 0.3 s after that (as a guest boot of OpenZFS 2.1 did: a report 2.2 s after
    the one before it, a mirror leg at 0.88x of its partition's bytes)."""
    timed = reports()
    arrived = ((100.5, 1.0), (101.5, 1.0), (103.7, 2.2), (104.0, 0.3), (104.5, 0.5))
    for sample, (t, dt) in zip(timed["samples"], arrived):
        sample.update(t=t, dt=dt)
    return timed


def test_a_leaf_on_a_block_device_counts_what_its_disk_counted_however_late_zpool_s_reports_arrived() -> None:
    """The rows of a pool whose leaves are block devices are their partitions' /proc/diskstats counts, read
    at the sampler's own instants, and the vdevs' their leaves' summed: zpool's late reports (which, timed by
    their arrival, hold 2.2 + 0.3 + 1 s of its 1 s rates: 7 MB a leg inside the window) change nothing."""
    late = summarize({"samples": [], "devices": [], "vdevs": late_reports()}, WINDOW, fio_bytes=8 * MB)["vdevs"]
    assert late["tank"]["vdevs"]["/dev/vdd1"]["write_bytes"] != 8 * MB  # what the reports alone would say
    measured = run([sampled_cell(late_reports())], facts={"stack": zvol_on_a_mirror_with_a_log().to_json()})
    found = cell_layers(measured.cells[0], zvol_on_a_mirror_with_a_log().counted_layers(),
                        zvol_on_a_mirror_with_a_log().vdev_places())
    rows = {v.name: v for v in found.vdevs}
    assert {name: (v.write_bytes, v.seconds) for name, v in rows.items()} == {
        "tank": (20 * MB, 4.0), "mirror-0": (16 * MB, 4.0), "/dev/vdd1": (8 * MB, 4.0), "/dev/vde1": (8 * MB, 4.0),
        "/dev/nvme0n1p1": (4 * MB, 4.0)}
    assert (rows["tank"].iops, rows["mirror-0"].iops, rows["/dev/vdd1"].iops) == (250.0, 200.0, 100.0)
    assert {v.source for v in found.vdevs} == {"diskstats"}


def a_file_leg() -> tuple[Stack, dict]:
    """The zvol's stack and zpool's reports with the mirror's second leg a file, /srv/leg.img."""
    stack = zvol_on_a_mirror_with_a_log()
    mirror = next(layer for _, layer in stack.root.walk() if layer.name == "mirror-0")
    mirror.children[1] = Layer("file", "/srv/leg.img", zfs={"pool": "tank", "vdev": "/srv/leg.img"})
    samples = reports()
    for sample in samples["samples"]:
        sample["vdevs"] = {("/srv/leg.img" if name == "/dev/vde1" else name): rates
                           for name, rates in sample["vdevs"].items()}
    return stack, samples


def test_a_pool_with_a_file_vdev_keeps_zpool_s_reports_and_says_how_they_were_timed() -> None:
    """A file vdev has no /proc/diskstats row: its pool's rows are all zpool's reports (so that a vdev's row
    stays its leaves' sum over the same intervals), and the table's note says how those were timed."""
    stack, samples = a_file_leg()
    measured = run([sampled_cell(samples)], facts={"stack": stack.to_json()})
    found = cell_layers(measured.cells[0], stack.counted_layers(), stack.vdev_places())
    rows = {v.name: v for v in found.vdevs}
    assert list(rows) == ["tank", "mirror-0", "/dev/vdd1", "/srv/leg.img", "/dev/nvme0n1p1"]
    assert {v.source for v in found.vdevs} == {"zpool iostat"}
    leg = rows["/dev/vdd1"]
    assert (rows["mirror-0"].write_bytes, leg.write_bytes, leg.seconds) == (12 * MB, 6 * MB, 3.0)
    assert any("zpool iostat's reports" in note and "arrived" in note for note in layer_table(measured).notes)


def test_without_a_saved_stack_the_pool_s_rows_come_first_in_zpool_s_order() -> None:
    found = cell_layers(sampled_cell(), None)
    assert [(v.name, v.level, v.depth, v.at) for v in found.vdevs][:3] == [("tank", 0, 0, 7), ("mirror-0", 1, 1, 7),
                                                                           ("/dev/vdd1", 1, 1, 7)]


def test_the_vdev_rows_take_fio_s_bytes_in_their_reports_intervals_from_its_logs() -> None:
    """fio wrote nothing in its window's first and last second and 4 MB in each of the two between (as its
    per-second logs place them: measure/telemetry.fio_timeline): the three reports wholly inside the window
    (100.5-103.5) hold 8 MB of fio's, not the 6 MB its mean rate gives them, so the mirror's 12 MB are 1.5x
    of them, not 2x. A summary without fio's seconds takes its mean rate and says so (`PRORATED`)."""
    timeline = {"write": [(100.0, 101.0, 0.0), (101.0, 102.0, 4.0 * MB), (102.0, 103.0, 4.0 * MB),
                          (103.0, 104.0, 0.0)]}
    vdevs = summarize({"samples": [], "devices": [], "vdevs": reports()}, WINDOW, fio_bytes=8 * MB,
                      timeline=timeline)["vdevs"]
    assert vdevs["tank"]["fio_bytes"] == {"write": 8 * MB}
    timed = cell_layers(with_conditions(cell(runs=[1000.0]), [{"seconds": 4.0, "fio_bytes": {"write": 8 * MB},
                                                                "vdevs": vdevs}]), None)
    rows = {v.name: v.amplification for v in timed.vdevs}
    assert (rows["mirror-0"], rows["/dev/nvme0n1p1"]) == ({"write": 1.5}, {"write": 0.375})
    assert PRORATED not in timed.not_recorded
    prorated = cell_layers(sampled_cell(), None)  # its disks have fio's seconds, its vdevs not
    assert {v.name: v.amplification for v in prorated.vdevs}["mirror-0"] == {"write": 2.0}
    assert PRORATED in prorated.not_recorded


def test_every_note_wraps_within_80_columns_on_a_terminal_and_in_a_pipe_each_note_s_lines_indented(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The notes under the layer table are prose: on a terminal 80 columns wide, and in a pipe (whose table is
    laid out in 160 columns so that its rows stay whole: cli/app._width), every note is wrapped between words
    within 80 columns, its later lines indented by two spaces, none of its words lost. In a pipe the notes
    ran to 160 columns, and on a terminal each wrapped line started at the margin, one note running into
    the next."""
    from stackbench.cli.app import UserTextConsole, _width
    from stackbench.cli.common import emit_report
    from stackbench.report.document import Report
    from stackbench.report.formats import Screen, exporter

    stack, samples = a_file_leg()
    measured = run([sampled_cell(samples, busy="zd0", arc={"hits": 3, "misses": 1})], facts={"stack": stack.to_json()})
    table = layer_table(measured)
    kinds = ["MB/s = 10^6 bytes/s;", BUSIEST_RULE, "4K QD4 rnd write: busiest layer zd0 (utilisation 97 %)",
             "4K QD4 rnd write: ARC hit ratio 75.0 %", VDEV_NOTE, ZPOOL_NOTE, "fio's bytes at its mean rate",
             "not recorded for some runs"]
    assert [next(kind for kind in kinds if kind in note) for note in table.notes] == kinds  # each kind, once
    terminal = exporter("table").render(Report(tables=[table]), Screen(width=80))
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("stackbench.cli.common.out", UserTextConsole(width=_width(sys.stdout)))  # as for a pipe
    emit_report("table", Report(tables=[table]))
    piped = capsys.readouterr().out
    assert max(len(line) for line in terminal.splitlines()) <= 80
    assert max(len(line) for line in piped.splitlines()) > 80  # the table's rows, kept whole in a pipe
    for text in (terminal, piped):
        lines = _note_lines(text, table.notes)
        assert max(len(line) for line in lines) <= 80, text
        assert _read_back(lines) == [" ".join(note.split()) for note in table.notes], text


def _note_lines(text: str, notes: Sequence[str]) -> list[str]:
    """The lines the notes were printed in: from the one that starts the first note to the end."""
    lines = text.rstrip("\n").splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith(notes[0][:30])):]


def _read_back(lines: Sequence[str]) -> list[str]:
    """The notes as printed: each a line at the margin and the lines under it indented by exactly two
    spaces, its words joined by one space."""
    notes: list[list[str]] = []
    for line in lines:
        if notes and line.startswith("  ") and not line.startswith("   "):
            notes[-1].append(line)
        else:
            notes.append([line])
    return [" ".join(" ".join(note).split()) for note in notes]
