"""The XLSX report's per-second samples of a run whose seconds have no bandwidth: fio's logs can hold an IOPS
window without its bandwidth one (engine/fio_logs.py then stores the second with `bw_bytes` None), and the
workbook shows that second with an empty MB/s rather than failing the whole report."""

from __future__ import annotations

import io
from dataclasses import replace

from openpyxl import load_workbook

from stackbench.model.fio_result import Sample
from stackbench.report.documents.contents import Contents, RunPart
from stackbench.report.documents.xlsx import render_xlsx
from synthetic import cell, run


def _rows(sheet) -> list[tuple]:  # noqa: ANN001 - an openpyxl worksheet
    rows = list(sheet.iter_rows(values_only=True))
    start = next(i for i, row in enumerate(rows) if row[0] == "Per-second samples")
    return [row for row in rows[start + 2:] if row[0] is not None]


def test_a_second_without_bandwidth_is_shown_with_an_empty_mb_s() -> None:
    measured = cell(rw="randread", bs=4096, qd=1, runs=[1000.0, 1010.0])
    seconds = (Sample(t_s=1.0, iops=1000.0, bw_bytes=None), Sample(t_s=2.0, iops=1010.0, bw_bytes=4_136_960.0),
               Sample(t_s=0.5, iops=990.0, bw_bytes=None, ramp=True))
    stored = run([replace(measured, samples=seconds)], label="nobw")
    book = load_workbook(io.BytesIO(render_xlsx(Contents(runs=(RunPart(stored),)))))
    rows = _rows(book[book.sheetnames[1]])
    assert [(r[4], r[5]) for r in rows] == [(1000.0, None), (1010.0, 4.13696), (990.0, None)]

