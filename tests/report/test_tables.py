"""Terminal tables: the practitioners' columns, statistics columns only when they mean something."""

from __future__ import annotations

from rich.console import Console

from stackbench.report.formats.table import hanging, renderable
from stackbench.report.run import cell_table
from synthetic import cell


def _render(cells) -> str:
    console = Console(width=200, record=True)
    console.print(renderable([cell_table(cells)]))
    return console.export_text()


def test_cells_with_one_run_or_only_seconds_get_the_plain_practitioners_table() -> None:
    text = _render([cell(samples=[1000.0 + i for i in range(12)]), cell(rw="randread", runs=[5.0])])
    assert "Pattern" in text and "IOPS" in text and "MB/s" in text and "p50 clat" in text and "p99 clat" in text
    assert "runs" not in text and "±" not in text
    assert "4K QD4 rnd write" in text


def test_cells_with_several_runs_show_the_geometric_mean_its_interval_runs_and_spread() -> None:
    text = _render([cell(runs=[1000.0, 1010.0, 990.0, 1005.0, 995.0])])
    assert "IOPS (± 95% CI of runs)" in text and "runs" in text and "spread" in text
    assert "1,000 ± 1.0%" in text and " 5 " in text


def _widest_run():
    """A run whose table is as wide as runs get: a long pattern with sync latency, a seven-digit IOPS with
    its interval, a cell too noisy to tell with its runs' range, latencies from µs to seconds, two goals."""
    from dataclasses import replace

    from stackbench.analysis.goals import evaluate, parse_goal
    from stackbench.model.fio_result import Latency
    from synthetic import run, spread

    synced = cell(rw="randwrite", bs=4096, qd=16, runs=spread(123456.7, 0.02, 5), p99_ns=12.345e6, sync=True)
    synced = replace(synced, result=replace(synced.result, sync_lat=Latency(mean_ns=5e6, p50_ns=4e6, p99_ns=12.5e6,
                                                                            p999_ns=2e7)))
    cells = [synced, cell(rw="randread", bs=65536, qd=128, runs=spread(1234567, 0.9, 5), p99_ns=123e3),
             cell(rw="randwrite", bs=131072, qd=256, runs=spread(2345678.9, 0.05, 5), p99_ns=1234e3),
             cell(rw="write", bs=1024**2, qd=4, runs=spread(1500, 0.4, 5), p99_ns=1.2e9)]
    made = run(cells, label="a-rather-long-label-for-this-run", facts={"fio_version": "fio-3.33"})
    return made, evaluate([parse_goal("4K QD16 rnd write >= 3000 IOPS"), parse_goal("seq write p99 <= 10 ms")], made)


def test_the_run_table_at_80_columns_shows_every_column_untruncated() -> None:
    """Issue 33: at 80 columns the table was cut to `IOPS (± 95% CI of ru…`, `MB…` and `123,…`. Now it takes
    short headers with their meaning in the notes, and every header, number and word is printed whole
    (wrapped between words where it must be), never cut to "…" nor folded mid-word."""
    from stackbench.report.document import Report
    from stackbench.report.formats import Screen, exporter
    from stackbench.report.run import run_display

    made, goals = _widest_run()
    tables = run_display(made, goals)
    text = exporter("table").render(Report(tables=tables), Screen(width=80))
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    printed = set(text.split())
    for table in tables:
        for row in table.rows:
            missing = [word for value in row for word in value.split() if word not in printed]
            assert missing == [], f"{missing} in {row}"
    assert "IOPS ± 95% CI of the runs" in " ".join(text.split())  # what the short IOPS header means


def test_a_table_that_fits_keeps_its_borders_and_full_headers() -> None:
    from stackbench.report.formats import Screen, exporter
    from stackbench.report.run import run_report

    made, goals = _widest_run()
    text = exporter("table").render(run_report(made, goals), Screen(width=160))
    assert "IOPS (± 95% CI of runs)" in text and "┏" in text and "2,345,679 ± 6.4%" in text


def test_counts_are_in_the_right_number() -> None:
    """Issue 33: "1 cells", "1 findings", "Deleted 1 run(s)": every count says its noun in the right number."""
    from dataclasses import replace

    from stackbench.audit.rules import REGISTRY
    from stackbench.report.audit import rules_table
    from stackbench.report.run import run_table
    from synthetic import run

    partial = replace(run([cell(runs=[1000.0, 1010.0])]), status="incomplete", planned_cells=1)
    assert "(1 of 1 cell)" in run_table(partial).notes[0]
    assert rules_table(REGISTRY[:1]).notes[0].startswith("1 rule;")


def test_a_wrapped_note_keeps_each_number_on_the_line_of_its_unit() -> None:
    note = "MB/s = 10^6 bytes/s; clat = completion latency; fio-3.33, fs ext4, file 256.0 MiB, 74 %, 63.0 µs."
    for width in range(20, 101):
        lines = hanging(note, width)
        assert all(len(line) <= width for line in lines), (width, lines)
        assert " ".join(line.strip() for line in lines) == note
        for unit in ("MiB,", "%,", "µs."):  # never the first word of a line
            assert not any(line.strip().startswith(unit) for line in lines[1:]), (width, lines)
    # the quickstart's note at 80 columns, which put "MiB" alone on the next line before
    assert hanging(note, 80)[1].strip().startswith("256.0 MiB")


def test_a_boxed_table_narrowed_to_the_width_cuts_no_word_to_an_ellipsis() -> None:
    """The compare table of a tune session at 160 columns printed arm B's label in its header as
    "tune-40066749-blockdev.read_ahead_kb…": the boxed table fitted (every word could be whole), but Rich
    narrowed the widest columns together, past that word. At every width from the narrowest boxed one to
    the natural one, every word of every header and cell is printed whole and no line is wider than the
    screen."""
    from rich.cells import cell_len

    from stackbench.report.formats import Screen, exporter
    from stackbench.report.document import Report
    from stackbench.report.tabular import Tabular

    a, b = "tune-40066749-blockdev.read_ahead_kb-a", "tune-40066749-blockdev.read_ahead_kb-b"
    table = Tabular(headers=["Pattern", f"A: {a} IOPS", f"B: {b} IOPS", "vs A", "weight", "verdict"],
                    rows=[["4K QD1 seq read", "22,167 -23%/+30%", "547,314 ± 4.8%",
                           "+2369.0% [+1811.8%, +3088.6%] (p<0.001 n=4+4)", "1", "keep"]],
                    right_aligned=frozenset({1, 2, 3, 4}))
    words = {word for text in [*table.headers, *table.rows[0]] for word in text.split()}
    boxed = sum(max(len(word) for word in ([h, c] if index == 0 else [*h.split(), *c.split()]))  # 0: no wrap
                for index, (h, c) in enumerate(zip(table.headers, table.rows[0]))) + 3 * 6 + 1
    natural = sum(max(len(h), len(c)) for h, c in zip(table.headers, table.rows[0])) + 3 * 6 + 1
    for width in range(boxed, natural + 2):
        text = exporter("table").render(Report(tables=[table]), Screen(width=width))
        assert "┏" in text, width  # still the boxed layout
        assert "…" not in text, (width, text)
        assert max(cell_len(line) for line in text.splitlines()) <= width, width
        assert words <= set(text.split()), (width, words - set(text.split()))
