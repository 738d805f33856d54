"""Workloads (one fio cell each), plans (ordered lists of them), and a plan made from a named preset.

A `Workload` is everything fio needs to reproduce one cell except the file name; it is stored with every
result so any number can be re-run. The presets themselves are records in `model/presets.py`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Iterable, Sequence

from stackbench.base.errors import UsageError
from stackbench.base.registry import unknown
from stackbench.base.units import format_size, parse_size
from stackbench.model.presets import DEFAULT_PRESET, PRESETS, Preset, product

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
# An import that does not say whether the job was random or sequential keeps the direction only.
_UNKNOWN_PATTERN_WORDS = {"read": "read (rnd/seq?)", "write": "write (rnd/seq?)", "rw": "rw (rnd/seq?)",
                          "randread": "read (rnd/seq?)", "randwrite": "write (rnd/seq?)", "randrw": "rw (rnd/seq?)"}


# Engines stackbench's numbers are meaningful for: each does real I/O on the target file. Engines that do
# none (null), run commands (exec, external) or talk to the network are not offered.
IOENGINES: tuple[str, ...] = (
    "libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "vsync", "posixaio", "mmap",
)


def check_ioengine(engine: str) -> str:
    if engine not in IOENGINES:
        raise UsageError(f"unknown or unsupported --ioengine {engine!r}", f"Use one of: {', '.join(IOENGINES)}")
    return engine


@dataclass(frozen=True)
class StoppingRule:
    """When a cell has enough separate fio runs (analysis/stopping.py applies it)."""

    ci_target: float = 0.05  # relative half-width of the geometric mean's interval across runs
    confidence: float = 0.95
    min_runs: int = 5
    max_runs: int = 10
    max_seconds: float | None = None  # cap on one cell's fio time (all its runs), None: runs cap only

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The accepted range of every number `run` (and every command that measures) writes into a job file:
# (field, option, lowest, highest, example). The highs are far above any useful benchmark and keep fio from
# being asked for nonsense (a 100000-deep queue, a week-long cell); bs is at least a sector. A plan is
# checked against them (`plan_workload`, `Plan`); a workload fio measured elsewhere (an import, a pushed
# run) is not a plan and only has to be one fio accepts (FIO_RANGES).
LIMITS: tuple[tuple[str, str, float, float, str], ...] = (
    ("bs", "--bs", 512, 256 * 1024**2, "4k"),
    ("iodepth", "--qd", 1, 4096, "16"),
    ("numjobs", "--jobs", 1, 256, "4"),
    ("size", "--size", 512, 1024**5, "1G"),
    ("runtime", "--runtime", 0.1, 86400, "30"),
    ("ramp_time", "--ramp", 0, 3600, "2"),
    ("rate_iops", "--rate-iops", 1, 10**8, "1000"),
)

U64 = 2**64 - 1
# What fio itself accepts for each field of a workload (fio 3.33, whose parser and limits these follow):
# (field, lowest, highest). Sizes are 64-bit (the block size is stored as a signed 64-bit integer), fio reads
# iodepth as a signed int (2147483648 is "out of range"), runs at most 4096 jobs ("maximum number of jobs
# reached"), keeps times in 64-bit microseconds and reads rate_iops as an unsigned int.
FIO_RANGES: tuple[tuple[str, float, float], ...] = (
    ("bs", 1, 2**63 - 1),
    ("iodepth", 1, 2**31 - 1),
    ("numjobs", 1, 4096),
    ("size", 1, U64),
    ("runtime", 1e-6, U64 / 1e6),
    ("ramp_time", 0, U64 / 1e6),
    ("rate_iops", 1, 2**32 - 1),
)


def out_of_fio_range(name: str, value: float, shown: str | None = None) -> str | None:
    """Why `value` of workload field `name` is not one fio accepts, or None when it is (NaN never is)."""
    for field, low, high in FIO_RANGES:
        if field == name and not low <= value <= high:
            shown = shown or (str(value) if isinstance(value, int) else f"{value:g}")
            return f"{name}={shown} is outside what fio accepts ({low:g} to {high:.0f})"
    return None


def check_plan_limits(fields: dict[str, Any]) -> None:
    """UsageError naming the option when a value of a cell to measure is outside `LIMITS`."""
    for name, option, low, high, example in LIMITS:
        value = fields.get(name)
        if value is not None and not low <= value <= high:
            shown = format_size(int(value)) if name in ("bs", "size") else f"{value:g}"
            bounds = (
                f"{format_size(low)} and {format_size(high)}" if name in ("bs", "size") else f"{low:g} and {high:g}"
            )
            raise UsageError(f"{option} must be between {bounds}, got {shown}", f"Use e.g. {option} {example}")


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
    rate_iops: int | None = None  # fio rate_iops cap: a known, real effect for power checks (bench/ab_truth.py)
    # False: fio writes the file once, start to end, and stops (runtime is then only a cap); the
    # cache-exhaustion preset needs every byte written exactly once, not a loop over a file for a time.
    time_based: bool = True
    # Fields an imported output does not say (`pattern`: random or sequential, `bs`, `iodepth`, `numjobs`): their
    # values are placeholders, shown as `?`, absent from JSON and never matched to another cell or a goal.
    unknown: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "unknown", tuple(self.unknown))  # JSON gives a list back
        if self.rw not in RW_MODES:
            raise UsageError(
                f"unknown I/O pattern {self.rw!r}", f"Use one of {', '.join(RW_MODES)}"
            )
        for name, _low, _high in FIO_RANGES:
            value = getattr(self, name)
            why = None if value is None else out_of_fio_range(name, value)
            if why is not None:
                raise UsageError(why, "Pass a workload fio can run")
        if self.bs > self.size:
            raise UsageError(
                f"block size {format_size(self.bs)} is larger than the test size {format_size(self.size)}",
                "Raise --size or lower --bs",
            )

    @property
    def name(self) -> str:
        """The practitioners' row title: `4K QD4 rnd write`, `1M QD1 T4 seq read sync`; what an imported output
        does not say is `?` (`512K QD? read (rnd/seq?)`)."""
        unknown = set(self.unknown)
        parts = ["?" if "bs" in unknown else format_size(self.bs), "QD?" if "iodepth" in unknown else f"QD{self.iodepth}"]
        if "numjobs" in unknown:
            parts.append("T?")
        elif self.numjobs > 1:
            parts.append(f"T{self.numjobs}")
        parts.append(_UNKNOWN_PATTERN_WORDS[self.rw] if "pattern" in unknown else _RW_WORDS[self.rw])
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
            + ("" if self.time_based else "/once")
            + (f"/unknown={','.join(self.unknown)}" if self.unknown else "")
        )

    def knows(self, name: str) -> bool:
        """Whether `name` (`pattern`, `bs`, `iodepth`, `numjobs`) is a fact here, not an import's placeholder."""
        return name not in self.unknown

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
    """An ordered list of workloads, each measured in several separate fio runs against one scratch file.

    The unit of replication is a separate fio run (analysis/between_runs.py says why). Runs are interleaved
    round-robin across cells (cell 1 run 1, cell 2 run 1, ..., cell 1 run 2) so that drift in the
    machine's load hits every cell alike. Fixed mode: `runs` runs per cell. Adaptive mode (`stopping`):
    at least `stopping.min_runs`, then more rounds for the cells whose between-run interval is still wider
    than the target, up to `stopping.max_runs`.
    """

    name: str
    workloads: tuple[Workload, ...]
    runs: int = 1
    stopping: StoppingRule | None = None
    direct_auto: bool = False  # O_DIRECT where the target honours it, buffered with a warning where not
    # The preset's size depends on the machine and the target (cache-exhaustion without --size): the workloads
    # hold a placeholder until `with_size` gives the size `auto_size` chose (measure/preparation.settle_size).
    size_from_target: bool = False
    # Each round is one fio process whose job file holds every cell still measured, one stonewalled job
    # each (synclat, slog): fio's start-up is paid once per round instead of once per cell.
    one_process: bool = False

    def __post_init__(self) -> None:
        if not self.workloads:
            raise UsageError("the plan has no cells", "Give at least one --bs, --qd and --rw value")
        for workload in self.workloads:
            check_plan_limits(workload.to_dict())
        if not 1 <= self.runs <= MAX_RUNS:
            raise UsageError(f"--runs must be between 1 and {MAX_RUNS}, got {self.runs}", "Use e.g. --runs 5")

    @property
    def size(self) -> int:
        return max(w.size for w in self.workloads)

    def with_size(self, size: int) -> "Plan":
        """This plan with every cell on a file of `size` bytes (the size chosen for a target)."""
        return replace(self, workloads=tuple(replace(w, size=size) for w in self.workloads), size_from_target=False)

    @property
    def least_runs(self) -> int:
        return self.stopping.min_runs if self.stopping else self.runs

    def run_seconds(self, workload: Workload) -> float:
        """Wall time of one fio run of this cell: ramp, measured time and fio's own start-up (with
        `one_process`, what fio spends between two stonewalled jobs; the time cap of the adaptive rule counts
        with it; analysis/estimate.py is the whole model)."""
        if self.one_process:
            return workload.runtime + workload.ramp_time + JOB_OVERHEAD_S
        return workload.runtime + workload.ramp_time + RUN_OVERHEAD_S


AUTO_FREE_SHARE = 0.9  # of the free space a file may take when its size is chosen for the target
PLACEHOLDER_SIZE = 1024**3  # the size a `size_from_target` plan's cells hold until the target is known
MIN_AUTO_SIZE = 16 * 1024**2  # the smallest size auto_size accepts: below it no drive cache fills


def auto_size(ram_bytes: int | None, room_bytes: int | None, *, device: bool = False) -> int:
    """The cache-exhaustion file size for a target: 2x RAM (past every drive's DRAM and SLC cache a desktop
    has RAM for, and past the page cache too), but no more than the room there: the whole device (a device
    given with --destroy-data) or 90 % of the free space of the file system (so it is not filled to the
    brim). Rounded down to whole MiB, the block size. `UsageError` when neither is known or there is no room."""
    limits = []
    if ram_bytes:
        limits.append(2 * ram_bytes)
    if room_bytes is not None:
        limits.append(room_bytes if device else int(room_bytes * AUTO_FREE_SHARE))
    if not limits:
        raise UsageError("cannot tell the RAM size or the room on the target to size the test file", "Give --size")
    size = min(limits) // 1024**2 * 1024**2
    if size < MIN_AUTO_SIZE:
        raise UsageError(
            f"the target has room for only {format_size(max(0, min(limits)))}, too little to fill any drive cache",
            "Free some space there, or use another --target",
        )
    return size


# fio's start-up, file open, exit and JSON, and storing the run, beyond ramp + runtime: 0.40-0.55 s per run
# on the 2-core CI machine (bench/estimate_bench.py); an estimate uses an earlier run's where it has one.
RUN_OVERHEAD_S = 0.45
# Each stonewalled job of one fio process: fio's main loop (3.33, backend.c run_threads) sleeps 100 ms while
# the job's thread initialises, notices the job's end at its next 100 ms tick and sleeps another 100 ms
# before it forks the next one: 0.31 s per job measured with strace on tmpfs, about what a fio process of
# its own costs (0.32-0.37 s). One process per round saves the processes, not the seconds.
JOB_OVERHEAD_S = 0.3
MAX_RUNS = 100




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
    ramp: float | None = None,
    numjobs: int = 1,
    ioengine: str | None = None,
    runs: int | None = None,
    until_stable: bool | None = None,
    ci_target: float = 0.05,
    max_runs: int | None = None,
    max_time: float | None = None,
    rate_iops: int | None = None,
) -> Plan:
    """Turn a preset plus command-line overrides into a plan.

    Giving any of --bs/--qd/--rw replaces the preset's cells with the full product of the given lists; a
    dimension not given takes the preset's distinct values, so `--preset blog --qd 4` is the blog matrix at
    QD4 only (the practitioners' reduction after finding that queue depth hardly mattered).

    Measurement: `--runs N` measures each cell in N separate fio runs (fixed). Presets with a run cap
    (`max_runs`) are adaptive unless --runs is given: at least their run count, then more runs
    for cells whose interval is wider than `ci_target`, up to `max_runs` (or `max_time` of fio per cell).
    """
    name = preset or DEFAULT_PRESET
    if name not in PRESETS:
        raise unknown("preset", name, PRESETS)
    base = PRESETS[name]
    cells = base.cells
    runtimes: tuple[float, ...] | None = base.runtimes
    if bs or qd or rw:
        # numeric order, whatever the order given or the preset's (whose depths are 1, 16, 4)
        cells = product(
            sorted(bs or _unique(c[1] for c in base.cells), key=lambda b: parse_size(b, option="bs")),
            sorted(int(d) for d in (qd or _unique(c[2] for c in base.cells))),
            rw or _unique(c[0] for c in base.cells),
        )
        runtimes = None
        name = f"{name}+custom"
    for mode in rw or ():
        if mode not in RW_MODES:
            raise UsageError(f"unknown --rw value {mode!r}", f"Use one of {', '.join(RW_MODES)}")
    engine = check_ioengine(ioengine or base.ioengine or "libaio")
    size_from_target = size is None and base.size is None
    size_bytes = PLACEHOLDER_SIZE if size_from_target else parse_size(size or str(base.size), option="size")
    chosen_direct = base.direct if direct is None else direct
    workloads = []
    for index, (mode, block, depth) in enumerate(cells):
        cell_runtime = runtime if runtime is not None else (runtimes[index] if runtimes else base.runtime)
        workloads.append(
            plan_workload(
                rw=mode,
                bs=parse_size(block, option="bs"),
                iodepth=int(depth),
                numjobs=numjobs,
                sync=base.sync if sync is None else sync,
                direct=bool(chosen_direct),
                size=size_bytes,
                runtime=float(cell_runtime),
                ramp_time=float(base.ramp if ramp is None else ramp),
                ioengine=engine,
                rate_iops=rate_iops,
                time_based=base.time_based,
            )
        )
    stopping, fixed_runs = _stopping(base, runs, until_stable, ci_target, max_runs, max_time)
    return Plan(
        name=name, workloads=tuple(workloads), runs=fixed_runs, stopping=stopping,
        direct_auto=direct is None and base.direct is None, size_from_target=size_from_target,
    )


def _stopping(base: Preset, runs: int | None, until_stable: bool | None, ci_target: float, max_runs: int | None,
              max_time: float | None) -> tuple[StoppingRule | None, int]:
    """The adaptive rule when the plan is adaptive (asked for, or the preset's way without --runs), and the
    runs every cell gets (the least, when adaptive)."""
    if runs is not None and until_stable:
        if max_runs is None or max_runs < runs:
            max_runs = max(runs, max_runs or 2 * runs)
    adaptive = until_stable if until_stable is not None else (runs is None and base.max_runs is not None)
    if adaptive:
        least = runs if runs is not None else base.runs
        most = max_runs if max_runs is not None else (base.max_runs or 2 * least)
        if not 0 < ci_target < 1:
            raise UsageError(f"--ci-target must be between 0 and 100 %, got {ci_target:.0%}", "Use e.g. --ci-target 5")
        if least < 2:
            raise UsageError("adaptive mode needs at least 2 runs per cell", "Use --runs 2 or more with --until-stable")
        if most < least:
            raise UsageError(
                f"--max-runs {most} is below the {least} runs every cell gets", f"Use --max-runs {least} or more"
            )
        stopping = StoppingRule(ci_target=ci_target, min_runs=least, max_runs=most, max_seconds=max_time)
        return stopping, least
    return None, runs if runs is not None else base.runs


def plan_workload(**fields: Any) -> Workload:
    """A cell of a plan to measure: its values checked against `LIMITS` (naming the option) first."""
    check_plan_limits(fields)
    return Workload(**fields)


def slog_plan(*, sizes: Sequence[int] = (4096,), runtime: float | None = None, ramp: float | None = None,
              runs: int | None = None, size: str = "1G") -> Plan:
    """`stackbench slog`'s plan: the slog preset's two depths (QD1 for 5 s, QD16 for 10 s, 1 s ramp) at each
    write size, in a fixed number of separate runs (the preset's 5 unless `runs`), a round of a candidate
    being one fio process. `runtime` sets both depths' measured seconds, `ramp` the ramp: the way to make
    the shoot-out shorter (`--runtime 2 --runs 3`), at the price of a wider interval."""
    base = build_plan("slog", size=size, ramp=ramp, runs=runs, until_stable=False)
    workloads = tuple(
        replace(w, bs=bs, runtime=float(runtime) if runtime is not None else w.runtime)
        for bs in sorted(set(sizes)) for w in base.workloads
    )
    return replace(base, workloads=workloads, one_process=True)


def _unique(values: Iterable[Any]) -> list[Any]:
    seen: list[Any] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen
