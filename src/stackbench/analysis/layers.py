"""Layer gaps: the same cells measured at each layer of a stack, and the factor lost between neighbours.

docs/method.md section 3 is the worked example: 10644 IOPS of 4K random writes on ZFS on the host against 124
inside the VM is an 85x gap, and it told the practitioner which layer to work on first.

A gap is a claim like compare's keep, and passes the same proof (docs/statistics.md, "layers"): each factor
is the ratio of the two layers' geometric means with the 95 % interval of `compare.test_cells` (Welch on
log IOPS of the separate runs, or paired by round for the two arms of one `ab` session), the p-values are
Holm-adjusted over every factor of the table, and a gap is *proven* only when its adjusted p is below alpha.
The biggest gap is named only among proven losses; otherwise the result says no gap is proven and how many
runs per layer would tell one the size of the largest factor seen from none (advice.runs_to_decide). Two
runs that `compare` calls `no evidence` (p = 0.34) can no longer be printed as a "2.9x biggest gap".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from stackbench.analysis.advice import RERUN_LAYERS, RERUN_PAIRED, more_runs, runs_to_decide
from stackbench.analysis.between_runs import Estimate, RatioTest, estimate, geomean_interval, holm
from stackbench.analysis.cells import RUNS, SEGMENTS, replicates_of
from stackbench.analysis.compare import ab_session, fleet_hosts, match_key, no_common_cells, test_cells
from stackbench.base.errors import StackbenchError
from stackbench.model.results import Cell, Run

METRICS = {"iops": "IOPS", "bw": "MB/s"}
ALPHA = 0.05
SMALLEST_GAP = 0.05  # what the runs-needed advice aims at when the factor seen is smaller (compare's --min-effect)


def per_run_values(cell: Cell, metric: str) -> list[float]:
    """The cell's separate fio runs in `metric` (IOPS, or MB/s from each run's bandwidth); [] for a cell
    without separate runs (an import, or one stored before runs were kept)."""
    if metric == "iops":
        replicates = replicates_of(cell)
        return list(replicates.values) if replicates.kind in (RUNS, SEGMENTS) else []
    stored = [r.get("bw_bytes") for r in (cell.measurement or {}).get("replicates") or ()]
    return [v / 1e6 for v in stored] if stored and all(v and v > 0 for v in stored) else []


def cell_value(cell: Cell, metric: str) -> float:
    """The geometric mean over the cell's separate fio runs (the unit of replication, as in `compare`);
    fio's overall number for cells without per-run results (imports, cells stored before runs existed)."""
    runs = per_run_values(cell, metric)
    if runs:
        return estimate(runs).centre
    return cell.result.iops if metric == "iops" else cell.result.bw_bytes / 1e6


@dataclass(frozen=True)
class LayerGap:
    """The factor lost from one layer to the next in one cell (lower / upper: above 1, lost going up),
    with the run-level test behind it."""

    factor: float
    test: RatioTest | None  # None: a side has no separate runs (an import), so nothing can be claimed
    p_holm: float | None
    proven: bool  # the Holm-adjusted p is below alpha: the interval excludes 1 after the correction
    runs_to_decide: int | None  # runs per layer that would tell a gap this size (at least 5 %) from none

    @property
    def low(self) -> float | None:
        return None if self.test is None else self.test.low

    @property
    def high(self) -> float | None:
        return None if self.test is None else self.test.high

    @property
    def too_noisy(self) -> bool:
        return self.test is None or self.test.too_noisy

    def to_json(self) -> dict[str, Any]:
        t = self.test
        return {
            "factor": self.factor,
            "ci": [t.low, t.high] if t is not None and t.testable else None,
            "p_value": t.p_value if t is not None else None,
            "p_holm": self.p_holm,
            "test": t.method if t is not None else None,
            "n": [t.n_other, t.n_base] if t is not None else None,
            "proven": self.proven,
            "too_noisy": self.too_noisy,
            "runs_to_decide": self.runs_to_decide,
        }


@dataclass(frozen=True)
class LayerRow:
    pattern: str
    values: tuple[float | None, ...]
    factors: tuple[float | None, ...]  # factors[i] = values[i] / values[i+1]: >1 means lost going up
    gaps: tuple[LayerGap | None, ...] = ()  # the same factors with their intervals and tests
    estimates: tuple[Estimate | None, ...] = ()  # each layer's value with its interval (None: no runs)
    runs_ranges: tuple[tuple[float, float] | None, ...] = ()  # each layer's lowest and highest run, in `metric`


@dataclass(frozen=True)
class LayerGaps:
    names: tuple[str, ...]
    run_ids: tuple[str, ...]
    metric: str
    rows: tuple[LayerRow, ...]
    alpha: float = ALPHA
    paired: tuple[bool, ...] = ()  # per layer pair: both runs are arms of one ab session

    @property
    def tested(self) -> int:
        """How many factors were tested (the Holm family)."""
        return sum(1 for row in self.rows for gap in row.gaps if gap is not None and gap.test is not None
                   and gap.test.testable)

    def pair_geomeans(self) -> list[float | None]:
        result = []
        for i in range(len(self.names) - 1):
            factors = [r.factors[i] for r in self.rows if r.factors[i] is not None and r.factors[i] > 0]
            result.append(math.exp(sum(math.log(f) for f in factors) / len(factors)) if factors else None)
        return result

    def pair_geomean_intervals(self) -> list[tuple[float, float] | None]:
        """Each pair's geometric-mean factor's 95 % interval (rows' log intervals combined as independent),
        None where a row of the pair has no tested factor."""
        result: list[tuple[float, float] | None] = []
        for i in range(len(self.names) - 1):
            tests = [r.gaps[i].test for r in self.rows if r.factors[i] is not None]  # type: ignore[union-attr]
            combined = geomean_interval(tests) if tests and None not in tests else None  # type: ignore[arg-type]
            result.append(None if combined is None else (combined[1], combined[2]))
        return result

    def biggest_gap(self) -> tuple[str, str, str, float] | None:
        """(pattern, lower layer, upper layer, factor) of the largest *proven* loss between neighbouring
        layers; None when no loss is proven (see `undecided`)."""
        best = self._largest(proven=True)
        return None if best is None else best[:4]  # type: ignore[return-value]

    def biggest_gap_detail(self) -> LayerGap | None:
        best = self._largest(proven=True)
        return None if best is None else best[4]

    def largest_unproven(self) -> tuple[str, str, str, LayerGap] | None:
        """The largest loss seen that the runs do not prove: what "no gap proven" talks about."""
        best = self._largest(proven=False)
        return None if best is None else (best[0], best[1], best[2], best[4])

    def undecided(self) -> str | None:
        """With no gap proven: what would decide it, worded for a rerun of the layers (advice.more_runs);
        None when a gap is proven or nothing was testable."""
        if self.biggest_gap() is not None:
            return None
        seen = self.largest_unproven()
        if seen is None or seen[3].runs_to_decide is None:
            return None
        index = self.names.index(seen[1])
        paired = bool(self.paired and self.paired[index])
        return more_runs(RERUN_PAIRED if paired else RERUN_LAYERS, seen[3].runs_to_decide)

    def _largest(self, proven: bool) -> tuple[str, str, str, float, LayerGap] | None:
        best: tuple[str, str, str, float, LayerGap] | None = None
        for row in self.rows:
            for i, gap in enumerate(row.gaps):
                if gap is None or gap.proven != proven or gap.factor <= 1:
                    continue
                if best is None or gap.factor > best[3]:
                    best = (row.pattern, self.names[i], self.names[i + 1], gap.factor, gap)
        return best

    def to_json(self) -> dict[str, Any]:
        gap = self.biggest_gap()
        detail = self.biggest_gap_detail()
        seen = self.largest_unproven()
        return {
            "layers": [{"name": n, "run_id": r} for n, r in zip(self.names, self.run_ids)],
            "metric": self.metric,
            "unit": METRICS[self.metric],
            "alpha": self.alpha,
            "multiple_comparisons": "holm",
            "rows": [
                {
                    "pattern": r.pattern,
                    "values": list(r.values),
                    "values_ci": [[e.low, e.high] if e is not None and e.low is not None else None
                                  for e in r.estimates],
                    "runs_ranges": [list(x) if x is not None else None for x in r.runs_ranges],
                    "factors_lost": list(r.factors),
                    "gaps": [g.to_json() if g is not None else None for g in r.gaps],
                }
                for r in self.rows
            ],
            "pair_geomean_factors": self.pair_geomeans(),
            "pair_geomean_factors_ci": [list(x) if x else None for x in self.pair_geomean_intervals()],
            "biggest_gap": None if gap is None or detail is None else {
                "pattern": gap[0], "from": gap[1], "to": gap[2], "factor": gap[3],
                "ci": [detail.low, detail.high], "p_holm": detail.p_holm,
            },
            "largest_unproven_gap": None if gap is not None or seen is None else {
                "pattern": seen[0], "from": seen[1], "to": seen[2], **seen[3].to_json(),
            },
            "advice": self.undecided(),
        }


def layer_gaps(runs: list[Run], names: list[str] | None = None, metric: str = "iops",
               alpha: float = ALPHA) -> LayerGaps:
    if len(runs) < 2:
        raise StackbenchError("layers needs at least two runs, bottom layer first", "e.g. stackbench layers host vm")
    if metric not in METRICS:
        raise StackbenchError(f"unknown --metric {metric!r}", f"Use one of: {', '.join(METRICS)}")
    names = names or [run.label or run.id[:12] for run in runs]
    if len(names) != len(runs):
        raise StackbenchError(
            f"--names gives {len(names)} names for {len(runs)} runs", "Give one name per run, comma-separated"
        )
    paired = tuple(ab_session(lower) is not None and ab_session(lower) == ab_session(upper)
                   for lower, upper in zip(runs, runs[1:]))
    by_run = [{match_key(c): c for c in run.cells} for run in runs]
    grid = []
    # every cell any layer measured, in the order they first appear: a bottom layer that could only be read
    # (layers --auto on a disk that holds data) must not drop the write cells the layers above it measured
    for key in dict.fromkeys(key for found in by_run for key in found):
        cells = [found.get(key) for found in by_run]
        cell = next(c for c in cells if c is not None)
        values = tuple(cell_value(c, metric) if c is not None else None for c in cells)
        factors = tuple(
            values[i] / values[i + 1] if values[i] and values[i + 1] else None for i in range(len(values) - 1)
        )
        # upper as the base, lower as the other: the test's ratio is lower / upper, the factor lost
        tests = tuple(
            test_cells(cells[i + 1], cells[i], paired=paired[i], how=RERUN_PAIRED if paired[i] else RERUN_LAYERS)[0]
            if factors[i] is not None else None
            for i in range(len(factors))
        )
        grid.append((cell, cells, values, factors, tests))
    if not any(any(f is not None for f in factors) for _, _, _, factors, _ in grid):
        if any(fleet_hosts(run) for run in runs):
            raise no_common_cells(runs)
        raise StackbenchError("the runs have no cells in common", "Measure the same --bs/--qd/--rw cells at every layer")
    family = [(r, i) for r, (_, _, _, _, tests) in enumerate(grid) for i, t in enumerate(tests)
              if t is not None and t.testable]
    adjusted = dict(zip(family, holm([grid[r][4][i].p_value for r, i in family])))  # type: ignore[union-attr]
    level = alpha / max(1, len(family))
    rows = []
    for r, (first, cells, values, factors, tests) in enumerate(grid):
        gaps = []
        for i, factor in enumerate(factors):
            test = tests[i]
            if factor is None:
                gaps.append(None)
                continue
            p_holm = adjusted.get((r, i))
            needed = None
            if test is not None and test.log_sd is not None:
                effect = max(abs(math.log(factor)), math.log1p(SMALLEST_GAP))
                needed = runs_to_decide(test.log_sd, math.expm1(effect), paired=test.method == "paired-log",
                                        alpha=level)
            gaps.append(LayerGap(factor, test, p_holm, p_holm is not None and p_holm < alpha, needed))
        estimates = tuple(_estimate(c, metric) for c in cells)
        ranges = tuple(_runs_range(c, metric) for c in cells)
        rows.append(LayerRow(first.pattern, values, factors, tuple(gaps), estimates, ranges))
    return LayerGaps(tuple(names), tuple(run.id for run in runs), metric, tuple(rows), alpha, paired)


def _estimate(cell: Cell | None, metric: str) -> Estimate | None:
    runs = per_run_values(cell, metric) if cell is not None else []
    return estimate(runs) if runs else None


def _runs_range(cell: Cell | None, metric: str) -> tuple[float, float] | None:
    """The lowest and highest separate run of the cell in `metric` (None without separate runs)."""
    runs = per_run_values(cell, metric) if cell is not None else []
    return (min(runs), max(runs)) if runs else None
