"""The named plans `run --preset` offers, one `Preset` record each: the matrices practitioners use (docs/method.md
section 2, CrystalDiskMark's default profile, the SLOG test of section 4, a drive's write cache filling).

A record holds everything the help, the errors and docs/run.md's preset table say of it (they are made from
it, never written again by hand); `model/plan.build_plan` turns one into a plan. A new preset is one more
`Preset(...)` in `PRESETS` (docs/architecture.md, "Where a new thing goes").
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable

from stackbench.base.registry import by_name

# cache-exhaustion: the fio time cap of its one write (--runtime changes it); the write normally ends first,
# when the file has been written once. Six hours is 2x 512 GiB of RAM at 50 MB/s.
CACHE_EXHAUSTION_CAP_S = 6 * 3600.0


@dataclass(frozen=True)
class Preset:
    name: str
    description: str  # what it is for, in one line: `--preset`'s help and the docs' table
    cells: tuple[tuple[str, str, int], ...]  # (rw, bs, iodepth)
    size: str | None  # None: chosen for the target (`auto_size`)
    runtime: float  # measured seconds of one fio run, after the ramp
    ramp: float  # seconds fio runs before it measures (fio ramp_time)
    runs: int  # separate fio runs per cell (fixed), or the minimum (adaptive)
    max_runs: int | None = None  # adaptive when set: add runs until the interval is tight, up to this
    sync: bool = False
    direct: bool | None = False  # None: O_DIRECT where the file system honours it
    runtimes: tuple[float, ...] | None = None  # per-cell runtime where it must differ (slog)
    ioengine: str | None = None
    time_based: bool = True  # False: write the file once; `runtime` is only a cap


def product(bss: Iterable[str], qds: Iterable[int], rws: Iterable[str]) -> tuple[tuple[str, str, int], ...]:
    """Every block size at every depth in every pattern: a matrix's cells."""
    return tuple((rw, bs, qd) for bs, qd, rw in itertools.product(bss, qds, rws))


# The first is the default.
PRESETS: dict[str, Preset] = by_name(
    Preset(
        "quick",
        "a first look in under a minute",
        (
            ("randread", "4k", 1),
            ("randwrite", "4k", 1),
            ("randwrite", "4k", 16),
            ("read", "1m", 4),
            ("write", "1m", 4),
        ),
        size="256M",
        runtime=2,
        ramp=0.5,
        runs=3,
        direct=None,
    ),
    Preset(
        "blog",
        "the practitioners' matrix (docs/method.md section 2)",
        product(("4k", "64k", "1m"), (1, 4, 8, 16), ("randread", "randwrite", "read", "write")),
        size="10G",
        runtime=8,
        ramp=2,
        runs=5,
        max_runs=10,
        direct=None,
    ),
    Preset(
        "crystal",
        "CrystalDiskMark's default profile",
        (
            ("read", "1m", 8),
            ("write", "1m", 8),
            ("read", "1m", 1),
            ("write", "1m", 1),
            ("randread", "4k", 32),
            ("randwrite", "4k", 32),
            ("randread", "4k", 1),
            ("randwrite", "4k", 1),
        ),
        size="1G",
        runtime=5,
        ramp=1,
        runs=5,
        max_runs=10,
        direct=True,
    ),
    Preset(
        "slog",
        "sync writes short enough to see a log device, not the txg flush",
        (("randwrite", "4k", 1), ("randwrite", "4k", 16)),
        size="1G",
        runtime=10,
        ramp=1,
        runs=5,
        max_runs=10,
        sync=True,
        runtimes=(5, 10),
        ioengine="posixaio",
    ),
    Preset(
        "cache-exhaustion",
        "when the drive's write cache runs out, and what comes after",
        (("write", "1m", 8),),
        size=None,
        runtime=CACHE_EXHAUSTION_CAP_S,
        ramp=0,
        runs=1,
        direct=True,
        time_based=False,
    ),
)
DEFAULT_PRESET = next(iter(PRESETS))
