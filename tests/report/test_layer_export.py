"""The layer rows a spreadsheet gets (report/layer_table.layer_export_rows): `show --format csv` writes them
after the cells as a second table of plain numbers with the units in the headers, and the workbook of
`stackbench report` as a block of its run's sheet, numbers as numbers; both the figures `show` prints.
Drawn from a synthetic run stored in a real SQLite store (tests/analysis_layers.mirror_run: figures chosen
to be computed by hand) through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis_layers import mirror_run
from conftest import cli_here
from plain_csv import not_plain, tables
from stackbench.store import Store
from stored_runs import store_run

WORDS = {"Cell", "Layer", "kind", "saturated", "busiest"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('export') / 'results.db'}"
    store = Store(url)
    store_run(store, mirror_run())
    store.dispose()
    return url


def test_show_csv_has_the_layer_rows_after_the_cells_as_plain_numbers(db: str) -> None:
    done = cli_here("show", "mirror", "--format", "csv", "--db", db)
    assert done.returncode == 0, done.stderr
    cells, layers = tables(done.stdout)
    assert [row[0] for row in cells[1:]] == ["4K QD4 rnd write", "4K QD4 rnd read", "1M QD4 seq write"]
    header, *rows = layers
    assert header[:8] == ["Cell", "Layer", "kind", "depth", "runs", "seconds (s)", "IOPS", "MB/s (10^6 bytes/s)"]
    found = [dict(zip(header, row)) for row in rows]
    assert [(r["Cell"], r["Layer"]) for r in found] == [
        ("4K QD4 rnd write", "md0"), ("4K QD4 rnd write", "sda"), ("4K QD4 rnd write", "sdb"),
        ("4K QD4 rnd write", "bottom layers, summed"),
        ("4K QD4 rnd read", "md0"), ("4K QD4 rnd read", "sda"), ("4K QD4 rnd read", "sdb"),
        ("4K QD4 rnd read", "sdc"), ("4K QD4 rnd read", "bottom layers, summed")]
    sdb = found[2]
    assert (sdb["IOPS"], sdb["MB/s (10^6 bytes/s)"], sdb["write ampl. (layer / fio bytes)"], sdb["util (%)"]) == \
        ("256.0", "1.000", "1.000", "96.0")
    assert (sdb["saturated"], sdb["busiest"], sdb["read ampl. (layer / fio bytes)"]) == ("yes", "yes", "")
    assert found[3]["write ampl. (layer / fio bytes)"] == "2.000" and found[3]["IOPS"] == ""
    assert found[6]["read ampl. (layer / fio bytes)"] == "0.500" and found[6]["ARC hit ratio (%)"] == "75.0"
    assert not_plain(done.stdout.split("\n\n")[1], WORDS) == []


def test_the_workbook_has_the_layer_rows_in_the_run_s_sheet(db: str, tmp_path: Path) -> None:
    from openpyxl import load_workbook

    from report.documents.test_xlsx import _block

    out = tmp_path / "r.xlsx"
    done = cli_here("report", "mirror", "-o", str(out), "--db", db, "--keep-identifiers")
    assert done.returncode == 0, done.stderr
    book = load_workbook(out)
    rows = _block(book[book.sheetnames[1]], "Layers during each cell")
    assert [(r["Cell"], r["Layer"]) for r in rows][:3] == [("4K QD4 rnd write", "md0"), ("4K QD4 rnd write", "sda"),
                                                          ("4K QD4 rnd write", "sdb")]
    sdb = rows[2]
    assert sdb["IOPS"] == 256.0 and sdb["write ampl. (layer / fio bytes)"] == 1.0 and sdb["busiest"] == "yes"
    assert sdb["written (bytes)"] == 10_000_000 and sdb["read ampl. (layer / fio bytes)"] is None
    assert rows[3]["write ampl. (layer / fio bytes)"] == 2.0 and rows[-1]["read ampl. (layer / fio bytes)"] == 1.0
    assert rows[4]["ARC hit ratio (%)"] == 75.0
