"""A/B comparison of two runs: per matching cell, is B better, worse, or not distinguishable from A?

The verdict follows METHOD.md's rule "change one thing, keep it only if it helps": a row says `keep` only
when the difference is statistically significant (Mann-Whitney U on the per-second samples, p < alpha)
AND at least the minimum effect (default 5 %), `revert` when it is significantly worse by at least that
much, `no evidence` otherwise (benchstat prints `~` for not significant). Significant is not the same as
large, hence both conditions. The overall verdict weighs the rows the user marks as important.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from stackbench.analysis.stats import Comparison, compare_samples
from stackbench.errors import StackbenchError
from stackbench.results import Cell, Run

KEEP, REVERT, NO_EVIDENCE = "keep", "revert", "no evidence"


def match_key(cell: Cell) -> str:
    """Cells are matched on what was asked of the device: pattern, block size, depth, jobs, direction, host.

    Flags that change the workload itself (sync, direct, engine, file size) are facts checked separately,
    so a difference there is reported instead of silently producing no matches.
    """
    w = cell.workload
    return f"rw={w.rw}/bs={w.bs}/qd={w.iodepth}/jobs={w.numjobs}/dir={cell.result.direction}/host={cell.result.host or ''}"


@dataclass(frozen=True)
class RowComparison:
    key: str
    pattern: str
    base: Cell
    other: Cell
    weight: float
    comparison: Comparison | None
    verdict: str
    warnings: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        if self.comparison is not None:
            return self.comparison.ratio
        return self.other.result.iops / self.base.result.iops if self.base.result.iops else math.inf

    def to_json(self) -> dict[str, Any]:
        c = self.comparison
        return {
            "pattern": self.pattern,
            "key": self.key,
            "weight": self.weight,
            "metric": "iops",
            "base_median": c.base.median if c else self.base.result.iops,
            "other_median": c.other.median if c else self.other.result.iops,
            "base_ci": [_finite(c.base.ci_low), _finite(c.base.ci_high)] if c else None,
            "other_ci": [_finite(c.other.ci_low), _finite(c.other.ci_high)] if c else None,
            "delta_pct": c.delta_pct if c else (self.ratio - 1) * 100,
            "delta_ci_pct": [_finite(c.delta_ci_low_pct), _finite(c.delta_ci_high_pct)] if c else None,
            "p_value": c.p_value if c else None,
            "n": [c.base.n, c.other.n] if c else [0, 0],
            "significant": bool(c and c.significant),
            "verdict": self.verdict,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class RunComparison:
    base: Run
    other: Run
    rows: tuple[RowComparison, ...]
    verdict: str
    reason: str
    alpha: float
    min_effect: float
    only_in_base: tuple[str, ...] = ()
    only_in_other: tuple[str, ...] = ()
    fact_differences: tuple[str, ...] = field(default=())

    @property
    def geomean_ratio(self) -> float | None:
        ratios = [r.ratio for r in self.rows if r.ratio > 0 and math.isfinite(r.ratio)]
        if not ratios:
            return None
        return math.exp(sum(math.log(x) for x in ratios) / len(ratios))

    def geomean_ratio_ci(self) -> tuple[float, float] | None:
        """95 % interval of the geometric-mean ratio, propagating each row's shift interval on a log scale
        (rows treated as independent). None when a row has no finite interval."""
        halves, logs = [], []
        for row in self.rows:
            c = row.comparison
            if c is None or not (math.isfinite(c.delta_ci_low_pct) and math.isfinite(c.delta_ci_high_pct)):
                return None
            low, high = 1 + c.delta_ci_low_pct / 100, 1 + c.delta_ci_high_pct / 100
            if low <= 0 or row.ratio <= 0:
                return None
            halves.append((math.log(high) - math.log(low)) / 2)
            logs.append(math.log(row.ratio))
        if not logs:
            return None
        centre = sum(logs) / len(logs)
        half = math.sqrt(sum(h * h for h in halves)) / len(logs)
        return math.exp(centre - half), math.exp(centre + half)

    def to_json(self) -> dict[str, Any]:
        interval = self.geomean_ratio_ci()
        return {
            "base": {"run_id": self.base.id, "label": self.base.label},
            "other": {"run_id": self.other.id, "label": self.other.label},
            "alpha": self.alpha,
            "min_effect_pct": self.min_effect * 100,
            "verdict": self.verdict,
            "reason": self.reason,
            "geomean_ratio": self.geomean_ratio,
            "geomean_ratio_ci": list(interval) if interval else None,
            "fact_differences": list(self.fact_differences),
            "only_in_base": list(self.only_in_base),
            "only_in_other": list(self.only_in_other),
            "rows": [row.to_json() for row in self.rows],
        }


def key_facts(run: Run) -> dict[str, Any]:
    """The facts that must agree before two runs' numbers may be compared (pyperf's checked metadata)."""
    facts = run.facts or {}
    target = facts.get("target") or {}
    devices = target.get("block_devices") or []
    workloads = [c.workload for c in run.cells]
    return {
        "fio version": facts.get("fio_version"),
        "test file size": sorted({w.size for w in workloads}) if run.source == "measured" else None,
        "device": [
            f"{d.get('name')} {d.get('model') or ''}".strip() for d in devices if d.get("role") == "disk"
        ] if target else None,
        "file system": target.get("fs_type") if target else None,
        "sync": sorted({w.sync for w in workloads}),
        "direct": sorted({w.direct for w in workloads}),
        "ioengine": sorted({w.ioengine for w in workloads}) if run.source == "measured" else None,
    }


def fact_differences(base: Run, other: Run) -> list[str]:
    a, b = key_facts(base), key_facts(other)
    return [
        f"{name}: {a[name]} vs {b[name]}"
        for name in a
        if a[name] is not None and b[name] is not None and a[name] != b[name]
    ]


def parse_weights(specs: list[str]) -> dict[str, float]:
    """`--weight "4K QD4 rnd write=3"`: a row pattern (as printed) and its weight."""
    weights: dict[str, float] = {}
    for spec in specs:
        pattern, sep, value = spec.rpartition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = -1
        if not sep or not pattern.strip() or weight < 0:
            raise StackbenchError(
                f"cannot read --weight {spec!r}", 'Write PATTERN=WEIGHT, e.g. --weight "4K QD4 rnd write=3"'
            )
        weights[pattern.strip().lower()] = weight
    return weights


def compare_runs(
    base: Run,
    other: Run,
    *,
    alpha: float = 0.05,
    min_effect: float = 0.05,
    weights: dict[str, float] | None = None,
    force: bool = False,
) -> RunComparison:
    differences = fact_differences(base, other)
    if differences and not force:
        raise StackbenchError(
            f"runs {base.id[:12]} and {other.id[:12]} differ in key facts ({'; '.join(differences)})",
            "Compare runs of the same set-up, or pass --force if that difference is the change under test",
        )
    a = {match_key(c): c for c in base.cells}
    b = {match_key(c): c for c in other.cells}
    common = [k for k in a if k in b]
    if not common:
        raise StackbenchError(
            f"runs {base.id[:12]} and {other.id[:12]} have no cells in common",
            "Compare runs made with the same --bs/--qd/--rw cells",
        )
    weights = weights or {}
    unknown = set(weights) - {a[k].pattern.lower() for k in common}
    if unknown:
        raise StackbenchError(
            f"--weight names rows that are not in both runs: {', '.join(sorted(unknown))}",
            "Use the row names as printed, e.g. \"4K QD4 rnd write\"",
        )
    rows = []
    for key in common:
        base_cell, other_cell = a[key], b[key]
        weight = weights.get(base_cell.pattern.lower(), 0.0 if weights else 1.0)
        rows.append(_row(key, base_cell, other_cell, weight, alpha, min_effect))
    verdict, reason = _overall(rows, min_effect)
    return RunComparison(
        base=base,
        other=other,
        rows=tuple(rows),
        verdict=verdict,
        reason=reason,
        alpha=alpha,
        min_effect=min_effect,
        only_in_base=tuple(a[k].pattern for k in a if k not in b),
        only_in_other=tuple(b[k].pattern for k in b if k not in a),
        fact_differences=tuple(differences),
    )


def _row(key: str, base: Cell, other: Cell, weight: float, alpha: float, min_effect: float) -> RowComparison:
    xs = [s.iops for s in base.measured_samples]
    ys = [s.iops for s in other.measured_samples]
    if not xs or not ys:
        return RowComparison(
            key, base.pattern, base, other, weight, None, NO_EVIDENCE,
            ("no per-second samples on one side (an imported run?): cannot test significance",),
        )
    comparison = compare_samples(xs, ys, alpha=alpha)
    delta = comparison.delta_pct / 100
    if comparison.significant and delta >= min_effect:
        verdict = KEEP
    elif comparison.significant and delta <= -min_effect:
        verdict = REVERT
    else:
        verdict = NO_EVIDENCE
    return RowComparison(key, base.pattern, base, other, weight, comparison, verdict, comparison.warnings)


def _overall(rows: list[RowComparison], min_effect: float) -> tuple[str, str]:
    important = [r for r in rows if r.weight > 0]
    total = sum(r.weight for r in important)
    keep = sum(r.weight for r in important if r.verdict == KEEP)
    revert = sum(r.weight for r in important if r.verdict == REVERT)
    if not important:
        return NO_EVIDENCE, "no row has a weight above 0"
    if revert > keep:
        worse = ", ".join(r.pattern for r in important if r.verdict == REVERT)
        return REVERT, f"significantly worse by at least {min_effect:.0%} on {worse} ({revert / total:.0%} of the weight)"
    if keep > revert and keep >= total / 2:
        better = ", ".join(r.pattern for r in important if r.verdict == KEEP)
        return KEEP, f"significantly better by at least {min_effect:.0%} on {better} ({keep / total:.0%} of the weight)"
    return NO_EVIDENCE, (
        f"better on {keep / total:.0%} and worse on {revert / total:.0%} of the weight; "
        f"a keep needs a significant gain of at least {min_effect:.0%} on half of it"
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
