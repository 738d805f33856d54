"""`layers RUN1 RUN2 ...`'s "Layers during each cell, every run" (report/layer_table.py `layers_runs_table`)
and `layers --json`'s `layer_activity`, on synthetic summaries (tests/analysis_layers.py): each run's devices
under its own name, a device's rows of several runs together, a run without layer data said in a note,
device names shown as data (terminal, JSON, web page, report document), readable at 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

from analysis_layers import MB, disk, loop_chain, mirror, summary, with_conditions
from conftest import cli_here
from stackbench.report.document import Report
from stackbench.report.formats import Screen, exporter
from stackbench.report.layer_table import layers_runs_table
from synthetic import cell, run


def three_layers(odd: str = "[bold]vda"):  # noqa: ANN201 - (runs, names)
    """host: ext4 on loop3 over `odd` (the host's disk, named to be markup if interpreted), a write cell
    sampled and a read cell; vm: ext4 on md0 over sda and sdb, the write cell only, each leg 10 MB for fio's
    10 MB; luks: the write cell unsampled (a run from before layer telemetry)."""
    chain = loop_chain()
    chain.root.children[0].children[0].children[0].children[0].devices[0] = odd
    host_write = summary({"loop3": disk(writes=2560, write_bytes=10 * MB), odd: disk(writes=2600, write_bytes=11 * MB)},
                         fio_write=10 * MB)
    host_read = summary({"loop3": disk(reads=2560, read_bytes=10 * MB), odd: disk(reads=2560, read_bytes=10 * MB)},
                        fio_read=10 * MB)
    host = run([with_conditions(cell(runs=[4000.0]), [host_write]),
                with_conditions(cell(rw="randread", runs=[5000.0]), [host_read])],
               label="host", run_id="a" * 32, facts={"fio_version": "fio-3.33", "stack": chain.to_json()})
    legs = {name: disk(writes=2560, write_bytes=10 * MB) for name in ("sda", "sdb")}
    vm_write = summary({"md0": disk(writes=2560, write_bytes=10 * MB), **legs}, fio_write=10 * MB)
    vm = run([with_conditions(cell(runs=[2000.0]), [vm_write])], label="vm", run_id="b" * 32,
             facts={"fio_version": "fio-3.33", "stack": mirror().to_json()})
    luks = run([cell(runs=[1000.0])], label="luks", run_id="c" * 32, facts={"fio_version": "fio-3.33"})
    return [host, vm, luks], ["host", "vm", "vm+luks"]


def test_each_runs_devices_under_its_name_with_names_as_data_at_80_columns() -> None:
    runs, names = three_layers()
    table = layers_runs_table(runs, names)
    assert [row[:3] for row in table.rows] == [
        ["4K QD4 rnd write", "loop3 (loop)", "host"], ["", "  [bold]vda (disk)", "host"],
        ["", "md0 (md)", "vm"], ["", "  sda (disk)", "vm"], ["", "  sdb (disk)", "vm"],
        ["", "bottom layers, summed", "vm"],
        ["4K QD4 rnd read", "loop3 (loop)", "host"], ["", "  [bold]vda (disk)", "host"]]
    assert table.rows[1][-1] == "1.10x" and table.rows[5][-1] == "2.00x"  # the host's disk; md's two legs
    assert "vm+luks recorded no layer activity in any cell (a run from before layer telemetry, or an import)" \
        in table.notes
    assert "4K QD4 rnd read: vm recorded no layer activity" not in table.notes  # vm has no read cell at all
    assert any("the gaps above are the verdicts" in note for note in table.notes)
    text = exporter("table").render(Report(tables=[table]), Screen(width=80))
    assert "[bold]vda (disk)" in text and "…" not in text and max(len(line) for line in text.splitlines()) <= 80


def test_no_run_with_layer_data_gives_no_table() -> None:
    plain = [run([cell(runs=[1000.0])], label=name, run_id=c * 32) for name, c in (("a", "a"), ("b", "b"))]
    assert layers_runs_table(plain, ["a", "b"]) is None


def test_layers_prints_the_activity_after_the_gaps_and_in_its_json(tmp_path: Path) -> None:
    from stackbench.store import open_store
    from stored_runs import store_run

    db = f"sqlite:///{tmp_path / 'r.db'}"
    store = open_store(db)
    runs, names = three_layers()
    for one in runs:
        store_run(store, one)
    shown = cli_here("layers", "host", "vm", "luks", "--names", ",".join(names), "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.index("host→vm") < shown.stdout.index("Layers during each cell, every run")
    assert "[bold]vda (disk)" in shown.stdout
    done = cli_here("layers", "host", "vm", "luks", "--names", ",".join(names), "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    activity = {row["pattern"]: row["runs"] for row in json.loads(done.stdout)["layer_activity"]}
    write = activity["4K QD4 rnd write"]
    assert [side["name"] for side in write] == names and write[2]["layers"] is None
    assert [layer["device"] for layer in write[0]["layers"]["layers"]] == ["loop3", "[bold]vda"]
    assert write[1]["layers"]["bottom_write_amplification"] == 2.0
    assert [side["layers"] for side in activity["4K QD4 rnd read"][1:]] == [None, None]
