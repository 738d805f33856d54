"""The XLSX report from real runs, re-read with openpyxl: the numbers are the store's (as `show --json`
gives them), every per-second sample is there, and the charts are native Excel charts."""

from __future__ import annotations

from typing import Any

import pytest
from openpyxl import load_workbook

from conftest import cli_here
from report.documents.shared import Measured

pytestmark = pytest.mark.slow  # real fio runs, once per session


def _block(sheet: Any, title: str) -> list[dict[str, Any]]:
    """The rows of the titled table on a sheet, as dicts by header."""
    rows = list(sheet.iter_rows(values_only=True))
    start = next(i for i, row in enumerate(rows) if row[0] == title)
    headers = [h for h in rows[start + 1] if h is not None]
    found = []
    for row in rows[start + 2:]:
        if row[0] is None:
            break
        found.append(dict(zip(headers, row)))
    return found


@pytest.fixture(scope="module")
def book(measured: Measured, tmp_path_factory: pytest.TempPathFactory) -> Any:
    refs = [measured.first["run_id"], measured.second["run_id"]]
    output = tmp_path_factory.mktemp("xlsx") / "report.xlsx"
    done = cli_here("report", *refs, "--compare", *refs, "--layers", ",".join(refs), "-o", str(output), "--db", measured.db)
    assert done.returncode == 0, done.stderr
    return load_workbook(output)


def test_a_sheet_per_run_and_for_compare_and_layers(book: Any) -> None:
    assert book.sheetnames == ["Report", "host-1 <script>alert(1)< script", "tuned host-1", "Compare", "Layers"]
    assert all(len(name) <= 31 for name in book.sheetnames)
    runs = _block(book["Report"], "Runs")
    assert [r["Sheet"] for r in runs] == book.sheetnames[1:3]


def test_the_cells_are_the_stores_numbers(book: Any, measured: Measured) -> None:
    for sheet, stored in ((book.sheetnames[1], measured.first), (book.sheetnames[2], measured.second)):
        cells = _block(book[sheet], "Cells")
        assert [c["Pattern"] for c in cells] == [c["pattern"] for c in stored["cells"]]
        for row, cell in zip(cells, stored["cells"]):
            # one IOPS per cell: the geometric mean of the runs is the cell's `iops` (docs/statistics.md)
            assert row["IOPS (geometric mean of runs)"] == pytest.approx(cell["runs"]["iops"], rel=1e-12)
            assert row["IOPS (geometric mean of runs)"] == pytest.approx(cell["iops"], rel=1e-12)
            if cell["runs"]["too_noisy"]:  # two runs on a busy machine: the bounds left out, the note says why
                assert row["IOPS 95% CI low"] is None and "too noisy to tell" in row["Note"]
            else:
                assert row["IOPS 95% CI low"] == pytest.approx(cell["runs"]["iops_ci_low"], rel=1e-12)
                assert row["Note"] is None
            assert row["MB/s (10^6 bytes/s)"] == pytest.approx(cell["mb_per_s"], rel=1e-12)
            assert row["p99 clat (µs)"] == pytest.approx(cell["clat_p99_us"], rel=1e-12)
            assert row["Block size (bytes)"] == cell["bs_bytes"] == 4096
            assert row["Separate fio runs"] == cell["runs"]["n"] == 2
        goals = _block(book[sheet], "Goals")
        assert [(g["Goal"], g["Result"], g["Unit"]) for g in goals] == [("4K QD1 rnd read >= 1 IOPS", "PASS", "IOPS")]
        facts = {r["Fact"]: r["Value"] for r in _block(book[sheet], "Facts")}
        assert facts["fio"] == stored["facts"]["fio_version"]
        assert facts["Machine"].startswith("host-1, ")


def test_every_per_second_sample_is_there(book: Any, measured: Measured) -> None:
    from stackbench.store import open_store

    stored = open_store(measured.db).get_run(measured.second["run_id"])
    samples = _block(book[book.sheetnames[2]], "Per-second samples")
    expected = [(c.pattern, s.iops) for c in stored.cells for s in c.samples]
    assert len(expected) >= 4  # 2 s runs: per-second samples exist
    assert sorted((r["Cell"], r["IOPS"]) for r in samples) == sorted(expected)


def test_the_charts_are_native(book: Any) -> None:
    kinds = {name: sorted(type(chart).__name__ for chart in book[name]._charts) for name in book.sheetnames}
    assert kinds[book.sheetnames[2]] == ["BarChart", "BarChart", "ScatterChart"]
    assert kinds["Compare"] == ["BarChart", "BarChart"] and kinds["Layers"] == ["BarChart"]
    compare = _block(book["Compare"], "Cells")
    assert {r["Verdict"] for r in compare} <= {"keep", "revert", "same", "no evidence"}
    assert all(isinstance(r["Change B vs A (%)"], float) for r in compare)
