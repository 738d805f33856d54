"""What a spreadsheet needs of `--format csv`, as a check the tests share (tests/report/test_csv_plain.py,
tests/cli/test_cli_sync_writes.py): every cell of a numeric column empty or one plain number, and no cell
anywhere a number formatted for reading."""

from __future__ import annotations

import csv
import io
import re

PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")
# What a table formatted for reading writes: a thousands separator, or a number with a unit, a percent
# sign, an "x" factor or a "±" in the same cell.
FORMATTED = re.compile(
    r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?\b|^[+-]?[\d.,]+\s*(%|x|±|[KMGT]i?B(/s)?|[nuµm]?s|IOPS)(\s|$)"
)


def tables(text: str) -> list[list[list[str]]]:
    """The CSV's tables (an empty line between two), each its header row then its rows."""
    found: list[list[list[str]]] = [[]]
    for row in csv.reader(io.StringIO(text)):
        if row:
            found[-1].append(row)
        elif found[-1]:
            found.append([])
    return [table for table in found if table]


def not_plain(text: str, text_columns: set[str] | None) -> list[str]:
    """Each cell that a spreadsheet would not read as it should, as `column: 'cell'`."""
    wrong = []
    for header, *rows in tables(text):
        for row in rows:
            assert len(row) == len(header), f"a row of {len(row)} cells under {len(header)} headers: {row}"
            for column, value in zip(header, row):
                numeric = text_columns is not None and column not in text_columns
                if numeric and value != "" and not (PLAIN_NUMBER.fullmatch(value) and _is_float(value)):
                    wrong.append(f"{column}: {value!r}")
                elif not numeric and FORMATTED.search(value):
                    wrong.append(f"{column}: {value!r} (a formatted number in a text column)")
    return wrong


def _is_float(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
