"""What one fio run measured, as plain values with units in their names.

A fio job reports up to three directions (read, write, trim); each active direction becomes one
`DirectionResult`, which is what the store keeps as a cell. Latencies are in nanoseconds as fio reports
them; presenters convert.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Latency:
    """A latency distribution summary (fio's clat_ns or sync lat_ns)."""

    mean_ns: float
    stddev_ns: float | None = None
    min_ns: float | None = None
    max_ns: float | None = None
    p50_ns: float | None = None
    p99_ns: float | None = None
    p999_ns: float | None = None
    samples: int | None = None


@dataclass(frozen=True)
class DirectionResult:
    """One direction (read/write/trim) of one fio job: the values of one cell."""

    job_name: str
    direction: str
    rw: str
    bs: int
    iodepth: int
    numjobs: int
    iops: float
    bw_bytes: float
    io_bytes: int
    total_ios: int
    runtime_ms: float
    usr_cpu: float | None
    sys_cpu: float | None
    clat: Latency | None
    sync_lat: Latency | None = None
    host: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class JobError:
    job_name: str
    code: int
    message: str


@dataclass(frozen=True)
class FioResult:
    """The parsed output of one fio invocation, with the raw text kept verbatim for recomputation."""

    fio_version: str
    timestamp: int | None
    directions: tuple[DirectionResult, ...]
    job_errors: tuple[JobError, ...]
    raw_text: str
    preamble: str = ""
    document: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
