"""What one fio run measured, as plain values with units in their names.

A fio job reports up to three directions (read, write, trim); each active direction becomes one
`DirectionResult`, which is what the store keeps as a cell. Latencies are in nanoseconds as fio reports
them; presenters convert. A `Sample` is one second of fio's per-second logs (engine/fio_logs.py reads them).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator, Mapping
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
    # What the output does not say about the job (its bs, iodepth, numjobs, `pattern` random or sequential):
    # the values above are then placeholders, never facts (`Workload.unknown`), and an import says so.
    unknown: tuple[str, ...] = ()
    # What was computed from the numbers the output prints rather than read from it (bs = bytes / I/Os,
    # the direction from which side moved data, io_bytes from fio 2.x's KiB): exact, and said on import.
    derived: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("unknown", "derived"):  # the store's JSON gives lists back
            object.__setattr__(self, name, tuple(getattr(self, name)))

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


class LatencyBuckets(Mapping[str, int]):
    """fio's json+ latency histogram (`bins`: bucket value in ns -> I/O count), held compactly.

    A json+ output is mostly these buckets: as a dict, each costs a slot, an int and its key, about five times
    the bytes of its text, so a 330 MB output took 3.2 GB to import. Here a bucket is a reference to its key
    (the JSON decoder makes one string per distinct key for the whole document, and fio's buckets are a
    fixed set of values) and a 64-bit count: 16 bytes. A bucket that is not a whole number of ns with a whole
    count, both within fio's 64-bit counters, never gets in (the parser refuses the output). Read-only, with
    the str keys of the JSON object it replaces, for any reader of the document.
    """

    __slots__ = ("_keys", "_counts")

    def __init__(self, keys: tuple[str, ...], counts: array) -> None:
        self._keys, self._counts = keys, counts

    def counter(self) -> Counter[int]:
        """The histogram as `engine.merge` adds it up (a bucket listed twice counts once, as in a dict)."""
        return Counter(dict(zip(map(int, self._keys), self._counts)))

    def __getitem__(self, key: str) -> int:
        for index in range(len(self._keys) - 1, -1, -1):  # the last of equal keys, as a dict keeps it
            if self._keys[index] == key:
                return self._counts[index]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(self._keys))

    def __len__(self) -> int:
        return len(set(self._keys))


@dataclass(frozen=True)
class Sample:
    """One second of one direction: the unit of the statistics."""

    t_s: float  # end of the window, seconds since the segment started
    iops: float
    bw_bytes: float | None = None
    clat_mean_ns: float | None = None
    segment: int = 0  # which fio run of the cell (repeat or adaptive chunk)
    ramp: bool = False  # inside the discarded ramp: stored, never used in statistics
