"""Cells for a spreadsheet: one plain number each, with the unit in the column's header.

A CSV cell holds what LibreOffice, Excel or pandas read as a number in any locale: '.' as the decimal
point, no thousands separator, no unit, no sign or bracket around it, and an empty cell where there is no
value (never "-" or "N/A"). The decimals keep what the data holds: IOPS to 0.1, MB/s and microseconds to
0.001, as `show --format csv` has always written them.
"""

from __future__ import annotations

import math


def number(value: float | None, decimals: int) -> str:
    """`value` with `decimals` digits after the point; empty for None or a value that is not finite."""
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:.{decimals}f}"


def count(value: int | None) -> str:
    """A whole number (files, writes, bytes, runs) without separators; empty for None."""
    return "" if value is None else str(int(value))


def iops(value: float | None) -> str:
    return number(value, 1)


def mb_per_s(bytes_per_s: float | None) -> str:
    """Decimal MB/s (10^6 bytes/s) from bytes per second."""
    return number(None if bytes_per_s is None else bytes_per_s / 1e6, 3)


def microseconds(ns: float | None) -> str:
    """Microseconds from nanoseconds, the unit of fio's latencies."""
    return number(None if ns is None else ns / 1000, 3)


def percent(fraction: float | None, decimals: int = 2) -> str:
    """A fraction as percent for a "... %" column: 0.199 -> 19.90 (never "+19.9%")."""
    return number(None if fraction is None else fraction * 100, decimals)
