"""`show`'s "Layers during each cell" (report/layer_table.py) and each cell's `layers` in --json, on
synthetic summaries (tests/analysis_layers.py): the rows top down, device names shown as data, readable at
80 columns, between the cells' table and the goals."""

from __future__ import annotations

import pytest

from analysis_layers import MB, disk, loop_chain, mirror, summary, with_conditions
from stackbench.report.layer_table import layer_table
from stackbench.report.run_json import run_json
from stackbench.stack.layer import Layer
from synthetic import cell, run


def test_the_table_and_json_show_each_cell_s_layers_with_names_as_data() -> None:
    stack = mirror()
    odd = Layer("disk", "/dev/[bold]x", devices=["[bold]x"])  # a name that would be markup if interpreted
    stack.root.children[0].children.append(odd)
    legs = {"sda": disk(writes=2560, write_bytes=10 * MB), "sdb": disk(writes=2560, write_bytes=10 * MB),
            "[bold]x": disk(writes=2560, write_bytes=10 * MB, util=96.0)}
    counted = summary({"md0": disk(writes=2560, write_bytes=10 * MB), **legs}, fio_write=10 * MB)
    counted["arc"] = {"hits": 3, "misses": 1}
    cells = [with_conditions(cell(rw="randwrite", runs=[1000.0]), [counted]), cell(rw="randread", runs=[1000.0])]
    made = run(cells, facts={"fio_version": "fio-3.33", "stack": stack.to_json()})
    table = layer_table(made)
    assert [row[:2] for row in table.rows] == [["4K QD4 rnd write", "md0 (md)"], ["", "  sda (disk)"],
                                               ["", "  sdb (disk)"], ["", "  [bold]x (disk)"],
                                               ["", "bottom layers, summed"]]
    assert table.rows[1][2:] == ["256", "1.0", "3.8 KiB", "500 µs", "50 %", "1.00x"]
    assert table.rows[-1][-1] == "3.00x"
    assert "4K QD4 rnd write: busiest layer [bold]x (utilisation 96 %)" in table.notes
    assert "4K QD4 rnd write: ARC hit ratio 75.0 %" in table.notes
    data = run_json(made)["cells"]
    assert data[1]["layers"] is None
    layers = data[0]["layers"]
    assert layers["bottom_write_amplification"] == 3.0 and layers["busiest"] == "[bold]x"
    assert layers["layers"][1] == {
        "device": "sda", "kind": "disk", "depth": 1, "bottom": True, "seconds": 10.0, "iops": 256.0,
        "mb_per_s": 1.0, "avg_request_bytes": 3906, "await_ms": 0.5, "util_pct": 50.0, "queue_depth": 0.5,
        "read_bytes": 0.0, "write_bytes": 10_000_000.0, "read_amplification": None, "write_amplification": 1.0,
        "queue_growing": None, "saturated": False, "throttle": None}
    from stackbench.report.document import Report
    from stackbench.report.formats import Screen, exporter

    text = exporter("table").render(Report(tables=[table]), Screen(width=80))
    assert "[bold]x (disk)" in text and "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    assert layer_table(run([cell(runs=[1000.0])])) is None


@pytest.mark.parametrize("width", [80, 120])
def test_the_show_report_puts_the_layers_between_the_cells_and_the_goals(width: int) -> None:
    from stackbench.analysis.goals import evaluate, parse_goal
    from stackbench.report.formats import Screen, exporter
    from stackbench.report.run import run_report

    counted = summary({"loop3": disk(writes=100, write_bytes=409_600), "vda": disk(writes=90, write_bytes=409_600)},
                       fio_write=409_600)
    made = run([with_conditions(cell(runs=[1000.0]), [counted])], facts={"stack": loop_chain().to_json()})
    text = exporter("table").render(run_report(made, evaluate([parse_goal("rnd write >= 10 IOPS")], made)),
                                    Screen(width=width))
    assert text.index("Pattern") < text.index("Layers during each cell") < text.index("Goal")
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= width


def test_a_queue_trend_missing_for_short_runs_is_not_blamed_on_an_old_stackbench() -> None:
    """The quick preset's 2 s runs have too few seconds for the in-flight trend: the note said "not recorded
    by the stackbench that measured some runs" of a run made a minute before by this one."""
    counted = summary({"vda": disk(writes=100, write_bytes=409_600)}, fio_write=409_600)
    table = layer_table(run([with_conditions(cell(runs=[1000.0]), [counted])]))
    [note] = [n for n in table.notes if n.startswith("not recorded")]
    assert "queue trend" in note and "runs of 3 s or more" in note


def test_amplification_at_fio_s_mean_rate_is_said_with_its_cause() -> None:
    """A run whose summary has no fio bytes per second (measured before they were kept, or a cell of a fio
    process that ran several) took fio's bytes at its mean rate: the note says so and why it can be off,
    not that the run predates the figure, and "not recorded" does not list it."""
    prorated = summary({"vda": disk(writes=100, write_bytes=409_600, in_flight={"mean": 1.0, "rise": 0.0})},
                       fio_write=409_600, timed=False)
    table = layer_table(run([with_conditions(cell(runs=[1000.0]), [prorated])]))
    [note] = [n for n in table.notes if "mean rate" in n]
    assert "fio's bytes per second" in note and "one fio process" in note
    assert not [n for n in table.notes if n.startswith("not recorded")]
    timed = summary({"vda": disk(writes=100, write_bytes=409_600, in_flight={"mean": 1.0, "rise": 0.0})},
                    fio_write=409_600)
    assert not [n for n in layer_table(run([with_conditions(cell(runs=[1000.0]), [timed])])).notes if "mean rate" in n]


def test_the_rule_that_names_the_busiest_layer_is_said_where_one_is_named() -> None:
    """The layer named need not be saturated itself (a throttled device's counters show it idle), so the
    table says what "busiest layer" means, in the stack chart's words, where a cell names one, and not
    elsewhere."""
    busy = summary({"vda": disk(writes=100, write_bytes=409_600, util=97.0)}, fio_write=409_600)
    table = layer_table(run([with_conditions(cell(runs=[1000.0]), [busy])]))
    assert table.notes[1] == ("busiest layer = where the saturated layers' time is spent: the lowest of the "
                              "saturated layers (util >= 90 % or queue growing) under the topmost one, or the "
                              "cgroup-throttled device under it")
    assert "4K QD4 rnd write: busiest layer vda (utilisation 97 %)" in table.notes
    idle = summary({"vda": disk(writes=100, write_bytes=409_600, util=40.0)}, fio_write=409_600)
    assert not [n for n in layer_table(run([with_conditions(cell(runs=[1000.0]), [idle])])).notes
                if "busiest" in n]
