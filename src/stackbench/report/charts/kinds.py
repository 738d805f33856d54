"""The kinds `stackbench chart --kind` draws, one `ChartKind` record each, and the one cell a kind of one
cell draws.

A record says what its kind draws, how many runs (or stored scans) it takes and in what order, which of
the kind-specific options it takes and which it needs, how it picks its cell, and whether it needs the
cell's json+ buckets from the store; `chart`'s help, its errors, dispatch and docs/charts.md's table of
kinds are made from the records. The drawing is `draw(request)` in the kind's own module here (matplotlib
is imported only then). A new kind is that module and one `ChartKind(...)` in `KINDS`
(docs/architecture.md, "Where a new thing goes").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from stackbench.base.errors import StackbenchError, UsageError
from stackbench.base.registry import by_name, one_of, unknown

if TYPE_CHECKING:
    from stackbench.model.results import Cell, Run
    from stackbench.report.charts.figure import Figure

# The options only some kinds take; a kind given one it does not take is refused, naming those that do.
KIND_OPTIONS = ("--metric", "--cell", "--names", "--x", "--y", "--series", "--where", "--min-effect", "--alpha")


@dataclass(frozen=True)
class ChartRequest:
    """What a kind draws from: the runs (copies, redacted) or a stored scan, the one cell a kind of one cell
    picked with its json+ buckets when the kind needs them, and the options as given."""

    runs: Sequence[Run] = ()
    cell: Cell | None = None
    bins: Counter[int] | None = None
    scan: tuple[Any, Any, str] | None = None  # a smallblocks scan: its histogram, recommendation, what was scanned
    metric: str = "iops"
    names: Sequence[str] | None = None
    x: str | None = None
    y: str = "iops"
    series: str | None = None
    where: Sequence[str] = ()
    min_effect: float = 5.0
    alpha: float = 0.05
    force: bool = False


@dataclass(frozen=True)
class ChartKind:
    name: str
    module: str  # report/charts/<module>.py, whose `draw(request) -> Figure` draws it
    summary: str  # what it draws, in one line: help and docs
    example: str  # one command that draws it: help, docs and the fix of a wrong number of runs
    runs: tuple[int, int | None] = (1, 1)  # how many runs (or scans) it draws: least, most (None: no limit)
    order: str = ""  # how several are given, when it matters: "A then B"
    options: tuple[str, ...] = ()  # the KIND_OPTIONS it takes
    needs: Mapping[str, str] = field(default_factory=dict)  # of those, the ones it cannot draw without: a hint
    cell: Callable[[Run, str | None], Cell | None] | None = None  # how it picks its one cell (--cell, or its default)
    bins: bool = False  # the cell's json+ latency buckets, which the store holds, are passed in
    scan: bool = False  # it draws a stored smallblocks scan, not runs

    def __post_init__(self) -> None:
        if not set(self.options) <= set(KIND_OPTIONS) or not set(self.needs) <= set(self.options):
            raise ValueError(f"chart kind {self.name}: its options must be among {', '.join(KIND_OPTIONS)}")

    @property
    def draws(self) -> str:
        """`one run`, `two runs, A then B`, `at least two runs`: what RUN... must be."""
        least, most = self.runs
        noun = "scan" if self.scan else "run"
        words = {1: "one", 2: "two"}
        amount = f"{words.get(least, str(least))} {noun}{'s' if least > 1 else ''}"
        count = amount if least == most else f"one or more {noun}s" if least == 1 else f"at least {amount}"
        return f"{count}, {self.order}" if self.order else count

    def check(self, count: int, given: Sequence[str]) -> None:
        """UsageError for a number of runs it does not draw, an option of another kind, or one it needs."""
        least, most = self.runs
        if count < least or (most is not None and count > most):
            raise UsageError(f"{self.name} draws {self.draws}; got {count}", f"e.g. {self.example}")
        for option in given:
            if option not in self.options:
                raise UsageError(f"{option} is for {one_of(takers(option))}, not {self.name}", f"Leave out {option}")
        for option, hint in self.needs.items():
            if option not in given:
                raise UsageError(f"--kind {self.name} needs {option}", f"Add {hint}")

    def draw(self, request: ChartRequest) -> Figure:
        return import_module(f"stackbench.report.charts.{self.module}").draw(request)  # type: ignore[no-any-return]


def takers(option: str) -> list[str]:
    """The kinds that take `option`, for its help and its error."""
    return [kind.name for kind in KINDS.values() if option in kind.options]


def chart_kind(name: str | None, custom_axes: bool = False) -> ChartKind:
    """The kind `--kind` names; without one, the kind that takes --x when axes are given, else the first."""
    if name is None:
        return next((kind for kind in KINDS.values() if custom_axes and "--x" in kind.options),
                    next(iter(KINDS.values())))
    if name not in KINDS:
        raise unknown("chart kind", name, KINDS)
    return KINDS[name]


def representative_cell(run: Run) -> Cell | None:
    """The cell run_figures draws over time and as a histogram: the first with per-second samples (the
    first cell of the plan, usually the one a reader looks for first), else the first cell."""
    with_samples = [c for c in run.cells if c.samples]
    if with_samples:
        return with_samples[0]
    return run.cells[0] if run.cells else None


def pick_cell(run: Run, key: str | None, *, need_samples: bool) -> Cell:
    """The cell named `key` (as `show` prints it, case and spaces ignored), or the default cell."""
    if not run.cells:
        raise StackbenchError(f"run {run.id[:12]} has no cells", "Chart a run with finished cells (`stackbench runs`)")
    if key is None:
        found = representative_cell(run)
        assert found is not None
    else:
        wanted = " ".join(key.lower().split())
        matches = [c for c in run.cells if " ".join(c.pattern.lower().split()) == wanted]
        if not matches:
            raise UsageError(f"run {run.id[:12]} has no cell {key!r}",
                             "Use one of: " + "; ".join(c.pattern for c in run.cells))
        found = matches[0]
    if need_samples and not found.samples:
        with_samples = [c.pattern for c in run.cells if c.samples]
        why, fix = _why_no_samples(run, found)
        raise StackbenchError(
            f"cell {found.pattern} of run {run.id[:12]} has no per-second samples ({why})",
            ("Choose a cell that has: " + "; ".join(with_samples)) if with_samples else fix,
        )
    return found


def with_samples(run: Run, key: str | None) -> Cell:
    return pick_cell(run, key, need_samples=True)


def any_cell(run: Run, key: str | None) -> Cell:
    return pick_cell(run, key, need_samples=False)


def _why_no_samples(run: Run, cell: Cell) -> tuple[str, str]:
    """Why a cell has no per-second samples, and the fix that gets them."""
    if run.source != "measured":
        return "an imported run has none", "Measure with `stackbench run`, which stores per-second samples"
    if not cell.workload.time_based:
        return ("its file was written in less than fio's one-second sample window, and it was stored before "
                "such a write was kept as one sample"), "Measure again, with a larger --size for a sample per second"
    return ("its fio runs were shorter than fio's one-second sample window",
            "Measure again with --runtime 2 or more")


def named_cell(run: Run, key: str | None) -> Cell | None:
    """The cell --cell names, or None: a kind that draws every cell without it."""
    return pick_cell(run, key, need_samples=False) if key is not None else None


def write_cell(run: Run, key: str | None) -> Cell:
    """The write cell the cache chart draws: `key`, or the first sequential write with samples."""
    if key is None:
        writes = [c for c in run.cells if c.result.direction == "write" and c.samples]
        writes.sort(key=lambda c: c.workload.rw != "write")  # sequential first, as a cache test writes
        if not writes:
            unsampled = [c for c in run.cells if c.result.direction == "write"]
            if unsampled and run.source == "measured":
                why, fix = _why_no_samples(run, unsampled[0])
                raise StackbenchError(f"run {run.id[:12]} has no write cell with per-second samples ({why})", fix)
            raise StackbenchError(
                f"run {run.id[:12]} has no write cell with per-second samples",
                "Measure a sequential write with `stackbench run --rw write --bs 1m --runtime 10m`",
            )
        return writes[0]
    chosen = pick_cell(run, key, need_samples=True)
    if chosen.result.direction != "write":
        raise UsageError(f"cell {chosen.pattern} is not a write: a write cache fills only with writes",
                         "Choose a write cell with --cell")
    return chosen


CUSTOM_AXES = ("--x", "--y", "--series", "--where")

# The first is the default.
KINDS: dict[str, ChartKind] = by_name(
    ChartKind("matrix", "matrix", "IOPS or MB/s per block size and queue depth, a panel per pattern",
              "stackbench chart baseline -k matrix -o matrix.svg", options=("--metric",)),
    ChartKind("percentiles", "percentiles", "p50/p99/p99.9 completion latency per cell",
              "stackbench chart baseline -k percentiles -o percentiles.png"),
    ChartKind("histogram", "histogram", "one cell's latency histogram from fio's json+ buckets",
              'stackbench chart baseline -k histogram --cell "4K QD1 rnd read" -o histogram.png',
              options=("--cell",), cell=any_cell, bins=True),
    ChartKind("timeline", "timeline", "one cell's per-second samples, ramps shaded, the median and its interval",
              'stackbench chart baseline -k timeline --cell "4K QD1 rnd read" -o timeline.png',
              options=("--metric", "--cell"), cell=with_samples),
    ChartKind("compare", "compare", "the change per cell from A to B with its interval, coloured by verdict "
              "(--min-effect, --alpha, --force as in `stackbench compare`)",
              "stackbench chart baseline lz4-off -k compare -o compare.png", runs=(2, 2), order="A then B",
              options=("--min-effect", "--alpha")),
    ChartKind("layers", "layers", "each layer's value per cell and the factor lost between neighbours, the biggest "
              "gap outlined", "stackbench chart host vm vm-luks -k layers --names host,vm,vm+luks -o layers.svg",
              runs=(2, None), order="bottom layer first", options=("--metric", "--names")),
    ChartKind("synclat", "synclat", "time per sync write against write size, several runs overlaid",
              "stackbench chart optane sata-ssd -k synclat -o synclat.png", runs=(1, None)),
    ChartKind("cache", "cache", "MB/s against GB written for a sequential write, and where throughput falls and "
              "by how much", "stackbench chart newssd-fill -k cache -o cache.png", options=("--cell",),
              cell=write_cell),
    ChartKind("custom", "custom", "any --x/--y/--series, filtered by --where",
              "stackbench chart host vm --x bs --y mb_s --series label --where rw=write -o custom.svg",
              runs=(1, None), options=CUSTOM_AXES,
              needs={"--x": "e.g. --x bs --y iops (fields: bs, iodepth, numjobs, rw, label)"}),
    ChartKind("hosts", "hosts", "a fleet run (`run --hosts`): per cell, a bar per host with the slowest host and "
              "the spread named, and the fleet's total", "stackbench chart rack4 -k hosts -o hosts.svg",
              options=("--metric",)),
    ChartKind("stack", "stack", "what every layer under the target did per cell, fio down to the disks: IOPS or "
              "MB/s, amplification against fio's bytes, the busiest layer", 'stackbench chart baseline -k stack -o '
              'stack.png', options=("--metric", "--cell"), cell=named_cell),
    ChartKind("special", "special", "a stored `smallblocks --db` scan: files and bytes per size bin, cumulative "
              "bytes, the recommended special_small_blocks and the special device's capacity",
              "stackbench chart tank-scan -k special -o special.png", scan=True),
)
