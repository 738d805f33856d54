"""Parsing and printing of quantities, so every number shown carries its unit.

Sizes follow fio's convention (k/m/g are powers of 1024: `4k` = 4096 bytes) because users copy them between
fio job files and stackbench. Throughput is printed in decimal MB/s (10^6 bytes/s) as the practitioners'
tables do, and the header says so.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from stackbench.base.errors import UsageError

if TYPE_CHECKING:
    from datetime import datetime

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_SIZE_FACTORS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}


def parse_size(text: str, *, option: str = "size") -> int:
    """`4k` -> 4096, `1G` -> 1073741824, `512` -> 512 (fio's binary k/m/g)."""
    match = _SIZE_RE.match(str(text))
    if not match:
        raise UsageError(
            f"cannot read {text!r} as a size for --{option}",
            "Write a number with an optional k, m, g or t suffix, e.g. 4k, 64k, 1m, 1G",
        )
    number, suffix, _ = match.groups()
    value = float(number) * _SIZE_FACTORS[suffix.lower()]
    if not math.isfinite(value):  # hundreds of digits: past what a float holds, never a real size
        raise UsageError(f"{str(text)[:40]!r}... is too large a size for --{option}", "Use a size such as 4k or 1G")
    if value < 1 or value != int(value):
        raise UsageError(
            f"{text!r} is not a whole number of bytes for --{option}",
            "Use a positive size such as 4k or 1G",
        )
    return int(value)


def format_size(nbytes: int) -> str:
    """4096 -> `4K`, 1048576 -> `1M`, 1536 -> `1536B`: the block-size names used in row titles."""
    for suffix, factor in (("T", 1024**4), ("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if nbytes >= factor and nbytes % factor == 0:
            return f"{nbytes // factor}{suffix}"
    return f"{nbytes}B"


def format_bytes(nbytes: float) -> str:
    """Binary-unit byte counts for capacities: `1.0 GiB`, `512 MiB`."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def mb_per_s(bytes_per_s: float) -> float:
    """Decimal megabytes per second (10^6 B/s)."""
    return bytes_per_s / 1e6


def format_mb_per_s(bytes_per_s: float | None) -> str:
    if bytes_per_s is None:
        return "-"
    value = mb_per_s(bytes_per_s)
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def format_iops(iops: float | None) -> str:
    if iops is None:
        return "-"
    return f"{iops:,.0f}" if iops >= 100 else f"{iops:,.1f}"


def format_latency_ns(ns: float | None) -> str:
    """Latency with the unit picked from its size: `85 µs`, `1.21 ms`, `12.0 s`."""
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    if ns < 1_000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        us = ns / 1_000
        return f"{us:.1f} µs" if us < 100 else f"{us:.0f} µs"
    if ns < 1_000_000_000:
        ms = ns / 1_000_000
        return f"{ms:.2f} ms" if ms < 100 else f"{ms:.0f} ms"
    return f"{ns / 1e9:.2f} s"


def count(number: float, noun: str, plural: str | None = None) -> str:
    """`1 cell`, `5 cells`, `0 cells`, `5.8 fio runs`: a count with its noun in the right number."""
    shown = f"{number:,.0f}" if float(number).is_integer() else f"{number:,.1f}"
    return f"{shown} {noun if shown == '1' else plural or noun + 's'}"


def format_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def format_utc(moment: "datetime") -> str:
    """A moment as errors and titles name it, to the second and in UTC whatever the machine's zone:
    `2026-11-28 10:41:07 UTC` (a stored audit's time, told against this machine's boot)."""
    from datetime import timezone

    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def parse_duration(text: str, *, option: str = "runtime") -> float:
    """`30`, `30s`, `2m`, `1h`, `500ms` -> seconds."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$", str(text), re.IGNORECASE)
    if not match:
        raise UsageError(
            f"cannot read {text!r} as a duration for --{option}",
            "Write seconds, optionally with a unit: 30, 30s, 2m, 500ms",
        )
    number, unit = match.groups()
    factor = {None: 1, "ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600}[unit.lower() if unit else None]
    value = float(number) * factor
    if value <= 0:
        raise UsageError(f"--{option} must be positive, got {text!r}", "Use e.g. --runtime 30")
    return value


def plural(count: int, word: str) -> str:
    """`1 cell`, `3 cells`: a count with its noun, never "1 cells"."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"
