"""Workloads (one fio cell each), plans (ordered lists of them) and the named presets.

A `Workload` is everything fio needs to reproduce one cell except the file name; it is stored with every
result so any number can be re-run. Presets encode the matrices practitioners actually use (METHOD.md
section 2, CrystalDiskMark's default profile, the SLOG test of section 4).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from stackbench.analysis.stopping import StoppingRule
from stackbench.errors import StackbenchError
from stackbench.units import format_size, parse_size

RW_MODES = ("randread", "randwrite", "read", "write", "randrw", "rw")
_RW_WORDS = {
    "randread": "rnd read",
    "randwrite": "rnd write",
    "read": "seq read",
    "write": "seq write",
    "randrw": "rnd rw",
    "rw": "seq rw",
}
READ_MODES = frozenset({"randread", "read", "randrw", "rw"})


@dataclass(frozen=True)
class Workload:
    """One fio cell: pattern, block size, queue depth, jobs, sync/direct, size and runtime."""

    rw: str
    bs: int
    iodepth: int
    numjobs: int = 1
    sync: bool = False
    direct: bool = False
    size: int = 1024**3
    runtime: float = 30.0
    ramp_time: float = 0.0
    ioengine: str = "libaio"
    dsync: bool = False  # O_DSYNC (fio sync=dsync) instead of O_SYNC: what diskinfo -wS style tests need

    def __post_init__(self) -> None:
        if self.rw not in RW_MODES:
            raise StackbenchError(
                f"unknown I/O pattern {self.rw!r}", f"Use one of {', '.join(RW_MODES)}"
            )
        for name in ("bs", "iodepth", "numjobs", "size"):
            if int(getattr(self, name)) < 1:
                raise StackbenchError(f"{name} must be at least 1, got {getattr(self, name)}", "Fix the value")
        if self.runtime <= 0:
            raise StackbenchError(f"runtime must be positive, got {self.runtime}", "Use e.g. --runtime 30")
        if self.bs > self.size:
            raise StackbenchError(
                f"block size {format_size(self.bs)} is larger than the test size {format_size(self.size)}",
                "Raise --size or lower --bs",
            )

    @property
    def name(self) -> str:
        """The practitioners' row title: `4K QD4 rnd write`, `1M QD1 T4 seq read sync`."""
        parts = [format_size(self.bs), f"QD{self.iodepth}"]
        if self.numjobs > 1:
            parts.append(f"T{self.numjobs}")
        parts.append(_RW_WORDS[self.rw])
        if self.dsync:
            parts.append("dsync")
        elif self.sync:
            parts.append("sync")
        return " ".join(parts)

    @property
    def key(self) -> str:
        """A stable identity for matching cells across runs (`rw=randwrite/bs=4k/qd=4/jobs=1/sync=0`)."""
        return (
            f"rw={self.rw}/bs={format_size(self.bs).lower()}/qd={self.iodepth}/jobs={self.numjobs}"
            f"/sync={'dsync' if self.dsync else int(self.sync)}/direct={int(self.direct)}"
        )

    @property
    def reads(self) -> bool:
        return self.rw in READ_MODES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Workload":
        fields = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in fields})


@dataclass(frozen=True)
class Plan:
    """An ordered list of workloads run one after another against one scratch file.

    Each cell is measured either `repeat` times for its runtime (fixed), or, with a `stopping` rule, in
    chunks until its IOPS estimate is stable or the rule's time cap is reached (adaptive).
    """

    name: str
    workloads: tuple[Workload, ...]
    repeat: int = 1
    stopping: StoppingRule | None = None

    def __post_init__(self) -> None:
        if not self.workloads:
            raise StackbenchError("the plan has no cells", "Give at least one --bs, --qd and --rw value")
        if self.repeat < 1:
            raise StackbenchError(f"--repeat must be at least 1, got {self.repeat}", "Use e.g. --repeat 5")

    @property
    def size(self) -> int:
        return max(w.size for w in self.workloads)

    def cell_budget(self, workload: Workload) -> float:
        """The most wall time one cell can take (adaptive: its cap); the ETA counts down from these."""
        if self.stopping is not None:
            return self.stopping.max_seconds + CELL_OVERHEAD_S * 3
        return self.repeat * (workload.runtime + workload.ramp_time + CELL_OVERHEAD_S)

    def estimated_seconds(self) -> float:
        """Wall time fio will need at most, without layout; used for the ETA and the plan summary."""
        return sum(self.cell_budget(w) for w in self.workloads)


# fio start-up, file open and JSON writing per fio run; bench/overhead_bench.py measured 0.65 s of wall
# time per stackbench cell beyond fio's runtime on the CI machine, of which fio itself takes about 0.4 s.
CELL_OVERHEAD_S = 0.4


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    cells: tuple[tuple[str, str, int], ...]  # (rw, bs, iodepth)
    size: str
    runtime: float
    sync: bool = False
    direct: bool = False
    runtimes: tuple[float, ...] | None = None  # per-cell runtime where it must differ (slog)


def _product(bss: Iterable[str], qds: Iterable[int], rws: Iterable[str]) -> tuple[tuple[str, str, int], ...]:
    return tuple((rw, bs, qd) for bs, qd, rw in itertools.product(bss, qds, rws))


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "blog",
            "4K/64K/1M x QD1/4/8/16 x random/sequential read/write: the 48-cell matrix of METHOD.md section 2",
            _product(("4k", "64k", "1m"), (1, 4, 8, 16), ("randread", "randwrite", "read", "write")),
            size="10G",
            runtime=60,
        ),
        Preset(
            "quick",
            "five cells of 3 s each on a 256 MiB file: a first look in well under a minute",
            (
                ("randread", "4k", 1),
                ("randwrite", "4k", 1),
                ("randwrite", "4k", 16),
                ("read", "1m", 4),
                ("write", "1m", 4),
            ),
            size="256M",
            runtime=3,
        ),
        Preset(
            "crystal",
            "CrystalDiskMark's default profile: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read and write",
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
            direct=True,
        ),
        Preset(
            "slog",
            "4K random sync writes at QD1 (5 s) and QD16 (10 s): short enough to see a log device, not the txg flush",
            (("randwrite", "4k", 1), ("randwrite", "4k", 16)),
            size="1G",
            runtime=10,
            sync=True,
            runtimes=(5, 10),
        ),
    )
}

DEFAULT_PRESET = "quick"


def build_plan(
    preset: str | None = None,
    *,
    bs: list[str] | None = None,
    qd: list[int] | None = None,
    rw: list[str] | None = None,
    sync: bool | None = None,
    direct: bool | None = None,
    size: str | None = None,
    runtime: float | None = None,
    numjobs: int = 1,
    ioengine: str = "libaio",
    repeat: int | None = None,
    until_stable: bool | None = None,
    ci_target: float = 0.05,
    max_time: float | None = None,
) -> Plan:
    """Turn a preset plus command-line overrides into a plan.

    Giving any of --bs/--qd/--rw replaces the preset's cells with the full product of the given lists; a
    dimension not given takes the preset's distinct values, so `--preset blog --qd 4` is the blog matrix at
    QD4 only (the practitioners' reduction after finding that queue depth hardly mattered).

    Measurement: `--repeat N` runs each cell N times for its runtime. Otherwise presets other than `quick`
    measure adaptively (`until_stable`): chunks until the IOPS median's CI is within `ci_target`, capped at
    `max_time` (default: the preset's runtime, at least 15 s).
    """
    name = preset or DEFAULT_PRESET
    if name not in PRESETS:
        raise StackbenchError(f"unknown preset {name!r}", f"Use one of: {', '.join(PRESETS)}")
    base = PRESETS[name]
    cells = base.cells
    runtimes: tuple[float, ...] | None = base.runtimes
    if bs or qd or rw:
        cells = _product(
            bs or _unique(c[1] for c in base.cells),
            qd or _unique(c[2] for c in base.cells),
            rw or _unique(c[0] for c in base.cells),
        )
        runtimes = None
        name = f"{name}+custom"
    for mode in rw or ():
        if mode not in RW_MODES:
            raise StackbenchError(f"unknown --rw value {mode!r}", f"Use one of {', '.join(RW_MODES)}")
    size_bytes = parse_size(size or base.size, option="size")
    workloads = []
    for index, (mode, block, depth) in enumerate(cells):
        cell_runtime = runtime if runtime is not None else (runtimes[index] if runtimes else base.runtime)
        workloads.append(
            Workload(
                rw=mode,
                bs=parse_size(block, option="bs"),
                iodepth=int(depth),
                numjobs=numjobs,
                sync=base.sync if sync is None else sync,
                direct=base.direct if direct is None else direct,
                size=size_bytes,
                runtime=float(cell_runtime),
                ioengine=ioengine,
            )
        )
    if repeat is not None and until_stable:
        raise StackbenchError("--repeat and --until-stable exclude each other", "Choose one of them")
    if until_stable is None:
        until_stable = repeat is None and name.split("+")[0] != "quick" and runtime is None
    stopping = None
    if until_stable:
        cap = max_time if max_time is not None else max(15.0, runtime if runtime is not None else base.runtime)
        if not 0 < ci_target < 1:
            raise StackbenchError(f"--ci-target must be between 0 and 100 %, got {ci_target:.0%}", "Use e.g. --ci-target 5")
        stopping = StoppingRule(ci_target=ci_target, max_seconds=cap)
        if cap < stopping.first_chunk():
            raise StackbenchError(
                f"--max-time {cap:g} s is too short to collect {stopping.min_samples} samples after a "
                f"{stopping.ramp_seconds:g} s ramp",
                f"Use --max-time {stopping.first_chunk():g} or more",
            )
    return Plan(name=name, workloads=tuple(workloads), repeat=repeat or 1, stopping=stopping)


def _unique(values: Iterable[Any]) -> list[Any]:
    seen: list[Any] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen
