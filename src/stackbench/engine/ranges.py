"""The one range check of every number read from fio's output, in any format, or from a pushed run.

A latency of 1.7e308 is a finite number, but the statistics of it are not: `report` and two chart kinds
failed with exit 70 and `show --json` printed `Infinity`, which is not JSON. Every parser's result passes
through `check_result` (the JSON parser's own, and `importer.parse_text` for every import format, so a new
format is checked without anyone remembering to), and a pushed cell through `check_direction`. fio's
counters are 64-bit, so every measured value is finite and from 0 to 2^64; a block size, iodepth and
numjobs must be ones fio accepts (`plan.FIO_RANGES`). The parsers check the fields they read themselves
too, naming them as the file does; this is the net under them.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from stackbench.model.fio_result import DirectionResult, FioResult, Latency
from stackbench.base.errors import FioOutputError
from stackbench.model.plan import U64, out_of_fio_range


_FIX = "Pass fio's own output, unedited: no fio reports such a value"
_WORKLOAD_FIELDS = ("bs", "iodepth", "numjobs")
_COUNTS = ("io_bytes", "total_ios")


def check_result(result: FioResult, source: str) -> FioResult:
    """`result`, once every number in it is one fio can report; FioOutputError naming the file, the job and
    the field otherwise."""
    for direction in result.directions:
        check_direction(direction, f"{source}: job {direction.job_name!r} {direction.direction}")
    return result


def check_direction(direction: DirectionResult, where: str) -> None:
    """The checks of `check_result` for one direction (a pushed cell is checked alone)."""
    for name in _WORKLOAD_FIELDS:
        value = getattr(direction, name)
        why = out_of_fio_range(name, value) if isinstance(value, int) else f"{name}={value!r} is not a whole number"
        if why is not None:
            raise FioOutputError(f"{where}: {why}", _FIX)
    for name in _COUNTS:
        value = getattr(direction, name)
        if not isinstance(value, int) or not 0 <= value <= U64:
            raise FioOutputError(f"{where}: {name}={_shown(value)} is not a count from 0 to 2^64-1", _FIX)
    for name in ("iops", "bw_bytes", "runtime_ms", "usr_cpu", "sys_cpu"):
        check_measure(getattr(direction, name), f"{where}: {name}")
    for name in ("clat", "sync_lat"):
        latency = getattr(direction, name)
        if latency is not None:
            for item in fields(Latency):
                check_measure(getattr(latency, item.name), f"{where}: {name} {item.name}")


def check_measure(value: float | None, where: str) -> None:
    """FioOutputError unless `value` is None or a number fio's 64-bit counters can hold (finite, 0 to 2^64)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) or not 0 <= value <= U64 + 1:
        raise FioOutputError(f"{where}={_shown(value)} is not a number from 0 to 2^64 (fio's counters are 64-bit)",
                             _FIX)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."
