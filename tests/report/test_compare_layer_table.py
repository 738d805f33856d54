"""`compare A B`'s "Layers during each cell, A and B" (report/layer_table.py) and `compare --json`'s
`layers`, on synthetic summaries (tests/analysis_layers.py): both sides' rows of one layer together,
device names shown as data, a side without layer data said in a note, readable at 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

from analysis_layers import MB, disk, loop_chain, odd_mirror_run, summary, with_conditions
from conftest import cli_here
from stackbench.analysis.compare import compare_runs
from stackbench.report.document import Report
from stackbench.report.formats import Screen, exporter
from stackbench.report.layer_table import comparison_layer_table
from synthetic import cell, run


def test_both_sides_rows_of_a_layer_are_together_with_names_as_data_at_80_columns() -> None:
    a = odd_mirror_run("before", "a" * 32, 10 * MB)
    b = odd_mirror_run("after", "b" * 32, 20 * MB)
    table = comparison_layer_table(compare_runs(a, b))
    assert [row[:3] for row in table.rows] == [
        ["4K QD4 rnd write", "md0 (md)", "A"], ["", "", "B"], ["", "  sda (disk)", "A"], ["", "", "B"],
        ["", "  sdb (disk)", "A"], ["", "", "B"], ["", "  [bold]x (disk)", "A"], ["", "", "B"],
        ["", "bottom layers, summed", "A"], ["", "bottom layers, summed", "B"]]
    assert table.rows[2][3:] == ["256", "1.0", "500 µs", "50 %", "1.00x"]
    assert table.rows[3][3:] == ["256", "2.0", "500 µs", "50 %", "2.00x"]
    assert [row[-1] for row in table.rows[-2:]] == ["3.00x", "6.00x"]
    assert any("no interval and no test" in note for note in table.notes)
    assert not any("recorded no layer activity" in note for note in table.notes)  # the read cell: neither side
    text = exporter("table").render(Report(tables=[table]), Screen(width=80))
    assert "[bold]x (disk)" in text and "…" not in text and max(len(line) for line in text.splitlines()) <= 80


def test_a_side_without_layer_data_is_said_in_a_note_and_neither_gives_no_table() -> None:
    counted = summary({"loop3": disk(writes=100, write_bytes=409_600), "vda": disk(writes=90, write_bytes=409_600)},
                      fio_write=409_600)
    sampled = run([with_conditions(cell(runs=[1000.0]), [counted]), cell(rw="randread", runs=[900.0])],
                  label="new", run_id="a" * 32, facts={"stack": loop_chain().to_json()})
    plain = run([cell(runs=[1100.0]), cell(rw="randread", runs=[900.0])], label="old", run_id="b" * 32)
    table = comparison_layer_table(compare_runs(plain, sampled))
    assert [row[:3] for row in table.rows] == [["4K QD4 rnd write", "loop3 (loop)", "B"],
                                               ["", "  vda (disk)", "B"]]
    assert "A (old) recorded no layer activity in any cell (a run from before layer telemetry, or an import)" \
        in table.notes
    both = run([with_conditions(cell(runs=[1000.0]), [counted]), with_conditions(cell(rw="randread", runs=[900.0]),
                                                                                  [counted])],
               label="newer", run_id="c" * 32, facts={"stack": loop_chain().to_json()})
    assert "4K QD4 rnd read: B recorded no layer activity" in comparison_layer_table(compare_runs(both, sampled)).notes
    assert comparison_layer_table(compare_runs(plain, plain)) is None


def test_compare_prints_the_layers_after_its_table_and_in_its_json(tmp_path: Path) -> None:
    from stackbench.store import open_store
    from stored_runs import store_run

    db = f"sqlite:///{tmp_path / 'r.db'}"
    store = open_store(db)
    store_run(store, odd_mirror_run("before", "a" * 32, 10 * MB))
    store_run(store, run([cell(runs=[1100.0]), cell(rw="randread", runs=[900.0])], label="after", run_id="b" * 32))
    shown = cli_here("compare", "before", "after", "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.index("Verdict:") < shown.stdout.index("Layers during each cell, A and B")
    assert "B (after) recorded no layer activity in any cell" in shown.stdout
    done = cli_here("compare", "before", "after", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    layers = {row["pattern"]: row for row in json.loads(done.stdout)["layers"]}
    write = layers["4K QD4 rnd write"]
    assert write["b"] is None and write["a"]["bottom_write_amplification"] == 3.0
    assert [layer["device"] for layer in write["a"]["layers"]] == ["md0", "sda", "sdb", "[bold]x"]
    assert layers["4K QD4 rnd read"]["a"] is None and layers["4K QD4 rnd read"]["b"] is None


def test_a_report_document_of_a_comparison_has_the_layers_of_both_runs() -> None:
    from stackbench.report.documents.contents import Contents, RunPart
    from stackbench.report.documents.html import render_html
    from stackbench.report.documents.markdown import render as render_markdown

    a = odd_mirror_run("before", "a" * 32, 10 * MB)
    b = odd_mirror_run("after", "b" * 32, 20 * MB)
    contents = Contents(runs=(RunPart(a, ()), RunPart(b, ())), comparison=compare_runs(a, b))
    html = render_html(contents).decode()
    assert html.index("Verdict:") < html.index("Layers during each cell, A and B")
    markdown, _ = render_markdown(contents, "report")
    assert "Layers during each cell, A and B" in markdown.decode() and "\\[bold\\]x (disk)" in markdown.decode()
