"""Reading stored runs with only the samples their replicates need (`read_runs` with
`samples_for=samples_needed`, what the server's pages load): the same tables and verdict as with every
sample, in fewer statements, and `with_samples` gives the rest back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sqlalchemy import event, select

from stackbench.analysis.cells import samples_needed
from stackbench.analysis.compare import compare_runs
from stackbench.model.fio_result import Sample
from stackbench.report.compare import comparison_table
from stackbench.report.run import run_display
from stackbench.store import Store, schema
from stackbench.store.reads import read_runs
from stored_runs import store_run
from synthetic import cell, run


def _mixed_run(run_id: str, scale: float) -> object:
    """Three kinds of cell: separate runs with their per-second samples (measured now), an old `--repeat 3`
    cell whose replicates are its samples' segments, and an imported summary without samples."""
    measured = cell("randread", 4096, 1, samples=[900 * scale, 1000 * scale, 1100 * scale],
                    runs=[1000 * scale, 1040 * scale, 980 * scale])
    legacy = cell("randwrite", 4096, 4)
    legacy = replace(legacy, measurement={"mode": "fixed"}, samples=tuple(
        Sample(t_s=float(t), iops=(500 + 10 * t + 40 * segment) * scale, segment=segment)
        for segment in range(3) for t in range(1, 5)))
    imported = cell("read", 1024**2, 8, iops=300 * scale)
    return run([measured, legacy, imported], label=f"mixed {scale}", run_id=run_id)


def test_a_run_is_read_with_the_samples_its_replicates_need(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    ids = ["a" * 32, "b" * 32]
    for run_id, scale in zip(ids, (1.0, 1.3)):
        store_run(store, _mixed_run(run_id, scale))
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    with store.reader.connect() as connection:
        found = read_runs(connection, select(schema.runs).where(schema.runs.c.id.in_(ids)), samples_for=samples_needed)
    assert len(statements) == 3  # the runs, their cells, the samples of the legacy cells: for both runs
    partial = {r.id: r for _, r in found}
    whole = {run_id: store.run_by_id(run_id) for run_id in ids}
    for run_id in ids:
        kept = {c.workload.rw: c.samples for c in partial[run_id].cells}
        every = {c.workload.rw: c.samples for c in whole[run_id].cells}
        assert kept["randread"] == () and every["randread"]  # its replicates are stored: samples not read
        assert kept["randwrite"] == every["randwrite"] and len(kept["randwrite"]) == 12  # its replicates
        assert kept["read"] == every["read"] == ()
        assert run_display(partial[run_id], []) == run_display(whole[run_id], [])
    a, b = ids
    assert comparison_table(compare_runs(partial[a], partial[b])) == comparison_table(compare_runs(whole[a], whole[b]))
    assert store.with_samples([partial[a], partial[b]]) == [whole[a], whole[b]]


def test_no_samples_are_read_when_no_cell_needs_them(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    mixed = _mixed_run("c" * 32, 1.0)
    store_run(store, replace(mixed, cells=(mixed.cells[0], mixed.cells[2])))  # replicates, and an import
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    with store.reader.connect() as connection:
        [(_, read)] = read_runs(connection, select(schema.runs).where(schema.runs.c.id == mixed.id),
                                samples_for=samples_needed)
    assert len(statements) == 2 and not any(s.startswith("SELECT samples") for s in statements)
    assert [c.samples for c in read.cells] == [(), ()]
