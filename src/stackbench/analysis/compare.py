"""A/B comparison of two runs: per matching cell, is B better, worse, the same, or not distinguishable?

The verdict follows docs/method.md's rule "change one thing, keep it only if it helps". The unit of replication
is a separate fio run (analysis/between_runs.py says why): each row compares the per-run IOPS of A and B
with Welch's t-test on log values (paired by round when both runs come from one `stackbench ab` session).
A row says `keep` only when the Holm-adjusted p-value is below alpha AND B is better by at least
--min-effect, `revert` when significantly worse by at least that much, `same` when the whole (1 - 2 alpha)
interval of the ratio lies within +-min-effect (two one-sided tests: "this tuning changed nothing" is a
result), and `no evidence` otherwise (benchstat prints `~`). Holm over the rows keeps the chance of any
false keep/revert among them at alpha, which is what makes the overall verdict trustworthy. The overall
verdict weighs the rows the user marks as important.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from stackbench.analysis.advice import RERUN, RERUN_PAIRED, more_runs, runs_to_decide
from stackbench.analysis.between_runs import (
    Estimate, RatioTest, estimate, geomean_interval, holm, paired_ratio, welch_ratio,
)
from stackbench.analysis.cells import NONE, WEAK_KINDS, Replicates, replicates_of, runs_range
from stackbench.analysis.drift import CONFIRM, design, drift_warnings
from stackbench.analysis.order_effect import OrderEffect, session_order_effect, session_orders
from stackbench.analysis.tradeoff import SafetyTradeoff, safety_tradeoff
from stackbench.base.errors import StackbenchError
from stackbench.model.results import TOTAL_HOST, Cell, Run
from stackbench.model.warning import Warning, WarningCode

KEEP, REVERT, SAME, NO_EVIDENCE = "keep", "revert", "same", "no evidence"


def match_key(cell: Cell) -> str:
    """Cells are matched on what was asked of the device: pattern, block size, depth, jobs, direction, host.

    Flags that change the workload itself (sync, direct, engine, file size) are facts checked separately,
    so a difference there is reported instead of silently producing no matches. A cell whose imported output
    does not say part of its workload (`Workload.unknown`) matches no other cell: its key is its own.
    """
    w = cell.workload
    key = f"rw={w.rw}/bs={w.bs}/qd={w.iodepth}/jobs={w.numjobs}/dir={cell.result.direction}/host={cell.result.host or ''}"
    return f"{key}/unknown={','.join(w.unknown)}/cell={cell.id}" if w.unknown else key


@dataclass(frozen=True)
class RowComparison:
    key: str
    pattern: str
    base: Cell
    other: Cell
    weight: float
    base_estimate: Estimate | None
    other_estimate: Estimate | None
    test: RatioTest | None
    p_holm: float
    verdict: str
    replicate_kinds: tuple[str, str] = ("runs", "runs")
    warnings: tuple[Warning, ...] = ()
    _alpha: float = 0.05
    # Runs per side (rounds, paired) that would find a change of --min-effect with 80 % power, from the
    # spread this row's runs showed (advice.runs_to_decide); None when the row could not be tested.
    runs_to_decide: int | None = None

    @property
    def ratio(self) -> float:
        if self.test is not None:
            return self.test.ratio
        return self.other.result.iops / self.base.result.iops if self.base.result.iops else math.inf

    @property
    def significant(self) -> bool:
        return self.test is not None and self.test.testable and self.p_holm < self._alpha

    @property
    def too_noisy(self) -> bool:
        """Untested, or its ratio interval too wide to read (between_runs.too_noisy)."""
        return self.test is None or self.test.too_noisy

    @property
    def weak(self) -> bool:
        return any(kind in WEAK_KINDS for kind in self.replicate_kinds)

    def to_json(self) -> dict[str, Any]:
        t, eb, eo = self.test, self.base_estimate, self.other_estimate
        delta_ci = [_pct(t.low), _pct(t.high)] if t is not None and t.testable else None
        return {
            "pattern": self.pattern,
            "key": self.key,
            "weight": self.weight,
            "metric": "iops",
            "base_iops": eb.centre if eb else self.base.result.iops,
            "other_iops": eo.centre if eo else self.other.result.iops,
            # kept for scripts written against format 1: the same numbers as base_iops/other_iops
            "base_median": eb.centre if eb else self.base.result.iops,
            "other_median": eo.centre if eo else self.other.result.iops,
            "base_ci": [eb.low, eb.high] if eb and eb.low is not None else None,
            "other_ci": [eo.low, eo.high] if eo and eo.low is not None else None,
            "ratio": self.ratio if math.isfinite(self.ratio) else None,
            "delta_pct": (self.ratio - 1) * 100 if math.isfinite(self.ratio) else None,
            "delta_ci_pct": delta_ci,
            "p_value": t.p_value if t else None,
            "p_holm": self.p_holm if t else None,
            "test": t.method if t else None,
            "n": [t.n_base, t.n_other] if t else [0, 0],
            "replicates": list(self.replicate_kinds),
            "weak": self.weak,
            "significant": self.significant,
            "verdict": self.verdict,
            "too_noisy": self.too_noisy,
            "base_runs_range": _listed(runs_range(self.base)),
            "other_runs_range": _listed(runs_range(self.other)),
            "runs_to_decide": self.runs_to_decide,
            "warnings": [w.to_json() for w in self.warnings],
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
    paired: bool = False
    # What would decide a `no evidence` (advice.more_runs, in the words of a rerun); None otherwise.
    advice: str | None = None
    order_effect: OrderEffect | None = None  # the two arms of one ab session: second vs first in a round
    safety: SafetyTradeoff = SafetyTradeoff()  # where one side is less safe (unsafe_settings.py)
    # What differed between two separate sessions (analysis/drift.py): never set for one ab session.
    drift: tuple[Warning, ...] = ()

    @property
    def design(self) -> str:
        """How the two sides were measured, which says what the verdict can control (analysis/drift.py)."""
        return design(self.paired)

    @property
    def warnings(self) -> tuple[Warning, ...]:
        """The comparison's own warnings (a row's are on the row): a side less safe, an order effect, what
        differed between separate sessions."""
        found = (self.safety.warning(self.verdict), self.order_effect.warning() if self.order_effect else None)
        return tuple(w for w in found if w is not None) + self.drift

    @property
    def geomean_ratio(self) -> float | None:
        ratios = [r.ratio for r in self.rows if r.ratio > 0 and math.isfinite(r.ratio)]
        if not ratios:
            return None
        return math.exp(sum(math.log(x) for x in ratios) / len(ratios))

    def geomean_ratio_ci(self) -> tuple[float, float] | None:
        """95 % interval of the geometric-mean ratio, combining each row's log-ratio interval (rows treated
        as independent). None when a row has no interval."""
        tests = [row.test for row in self.rows]
        if any(t is None for t in tests):
            return None
        combined = geomean_interval(tests)  # type: ignore[arg-type]
        return None if combined is None else (combined[1], combined[2])

    @property
    def weak(self) -> bool:
        """A row without separate runs, or separate sessions that differed in what the verdict cannot see."""
        return any(row.weak for row in self.rows) or bool(self.drift)

    def to_json(self) -> dict[str, Any]:
        interval = self.geomean_ratio_ci()
        return {
            "base": {"run_id": self.base.id, "label": self.base.label},
            "other": {"run_id": self.other.id, "label": self.other.label},
            "alpha": self.alpha,
            "min_effect_pct": self.min_effect * 100,
            "verdict": self.verdict,
            "reason": self.reason,
            "weak": self.weak,
            "paired": self.paired,
            "design": self.design,
            "multiple_comparisons": "holm",
            "geomean_ratio": self.geomean_ratio,
            "geomean_ratio_ci": list(interval) if interval else None,
            "advice": self.advice,
            "fact_differences": list(self.fact_differences),
            "only_in_base": list(self.only_in_base),
            "only_in_other": list(self.only_in_other),
            "rows": [row.to_json() for row in self.rows],
            "order_effect": self.order_effect.to_json() if self.order_effect else None,
            "safety": self.safety.to_json(self.verdict),
            "warnings": [w.to_json() for w in self.warnings],
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
        # a fleet's total depends on which hosts it sums; None for a run on one machine
        "hosts": fleet_hosts(run) or None,
    }


def fleet_hosts(run: Run) -> list[str]:
    """The hosts of a fleet run (run --hosts), sorted; [] for a run on one machine."""
    return sorted({c.result.host for c in run.cells if c.result.host and c.result.host != TOTAL_HOST})


def no_common_cells(runs: list[Run]) -> StackbenchError:
    """Why runs share no cell: cells are matched per host, so a fleet run and a one-machine run never match."""
    hosts = [fleet_hosts(run) for run in runs]
    if any(hosts) and any(h != hosts[0] for h in hosts):
        shown = "; ".join(f"{run.id[:12]}: {', '.join(h) if h else 'one machine'}" for run, h in zip(runs, hosts))
        return StackbenchError(
            f"the runs were measured on different hosts ({shown}) and cells are matched per host, never mixed",
            "Compare fleet runs of the same hosts (their totals are the rows ending in @(total)), or runs of one "
            "machine with each other",
        )
    unsaid = [run.id[:12] for run in runs if any(cell.workload.unknown for cell in run.cells)]
    if unsaid:
        return StackbenchError(
            f"runs {', '.join(run.id[:12] for run in runs)} have no cells in common: the imported output of "
            f"{', '.join(unsaid)} does not say its cells' workload (random or sequential, iodepth...), and such a "
            "cell is never matched (warning IMPORT_UNKNOWN)",
            "Import fio's JSON output of fio 3.x, which lists each job's options, or compare with a run of your own",
        )
    return StackbenchError(
        f"runs {', '.join(run.id[:12] for run in runs)} have no cells in common",
        "Compare runs made with the same --bs/--qd/--rw cells",
    )


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
        raise no_common_cells([base, other])
    weights = weights or {}
    unknown = set(weights) - {a[k].pattern.lower() for k in common}
    if unknown:
        raise StackbenchError(
            f"--weight names rows that are not in both runs: {', '.join(sorted(unknown))}",
            "Use the row names as printed, e.g. \"4K QD4 rnd write\"",
        )
    paired = ab_session(base) is not None and ab_session(base) == ab_session(other)
    orders = session_orders(base) if paired else None
    how = RERUN_PAIRED if paired else RERUN
    tested = [test_cells(a[key], b[key], paired=paired, how=how) for key in common]
    testable = [i for i, (test, _, _) in enumerate(tested) if test is not None and test.testable]
    adjusted = dict(zip(testable, holm([tested[i][0].p_value for i in testable])))  # type: ignore[union-attr]
    rows = []
    for index, key in enumerate(common):
        base_cell, other_cell = a[key], b[key]
        test, kinds, notes = tested[index]
        weight = weights.get(base_cell.pattern.lower(), 0.0 if weights else 1.0)
        p_holm = adjusted.get(index, 1.0)
        verdict = row_verdict(test, p_holm, alpha, min_effect)
        needed = _runs_to_decide(test, min_effect, alpha / max(1, len(testable)))
        row = RowComparison(
            key, base_cell.pattern, base_cell, other_cell, weight,
            _estimate(base_cell), _estimate(other_cell), test, p_holm, verdict, kinds, notes, alpha, needed,
        )
        rows.append(row)
    verdict, reason = _overall(rows, min_effect)
    if verdict in (KEEP, REVERT, SAME) and any(r.weak for r in rows if r.weight > 0):
        reason += "; WEAK: some rows were measured before stackbench counted separate runs (see warnings)"
    drift = tuple(drift_warnings(base, other, paired=paired))
    if verdict in (KEEP, REVERT, SAME) and drift:
        reason += (f"; WEAK: the separate sessions differed ({', '.join(w.code.value for w in drift)}, see "
                   f"warnings): {CONFIRM}")
    advice = None
    undecided = [r.runs_to_decide for r in rows if r.weight > 0 and r.verdict == NO_EVIDENCE and r.runs_to_decide]
    if verdict == NO_EVIDENCE and undecided:
        advice = more_runs(how, max(undecided))
        reason += f"; to tell a {min_effect:.0%} change from none: {advice}"
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
        paired=paired,
        order_effect=session_order_effect(orders, [(a[k], b[k]) for k in common], alpha) if orders else None,
        safety=safety_tradeoff(base, other, one_session=paired),
        advice=advice,
        drift=drift,
    )


def ab_session(run: Run) -> str | None:
    """The `stackbench ab` session a run belongs to, if any: its runs are paired by round."""
    ab = (run.facts or {}).get("ab")
    return ab.get("session") if isinstance(ab, dict) else None


def _estimate(cell: Cell) -> Estimate | None:
    replicates = replicates_of(cell)
    if not replicates.values:
        return None
    return estimate(replicates.values[:1] if replicates.kind == NONE else replicates.values)


def test_cells(
    base: Cell, other: Cell, *, paired: bool, how: str = RERUN
) -> tuple[RatioTest | None, tuple[str, str], tuple[Warning, ...]]:
    """The run-level test of other against base (ratio other / base), the kinds of replicates on each side,
    and the warnings it earns, their fixes worded for `how` (advice.more_runs).

    The one test behind every claim that one cell beats another: `compare`'s rows and `layers`' factors.
    Runs of one ab session (`paired`) are paired by round; otherwise Welch on log IOPS.
    """
    ra, rb = replicates_of(base), replicates_of(other)
    kinds = (ra.kind, rb.kind)
    row = base.pattern
    notes: list[Warning] = []
    if NONE in kinds or not ra.values or not rb.values:
        notes.append(Warning(
            WarningCode.NO_SAMPLES, row, "one side has a single summary and no runs or samples (an import?): "
            "nothing to test",
        ))
        return None, kinds, tuple(notes)
    for kind in dict.fromkeys(k for k in kinds if k in WEAK_KINDS):
        notes.append(Warning(WarningCode.WEAK_REPLICATES, row, *WEAK_KINDS[kind]))
    test = ratio_test(ra, rb, paired)
    if test.method == "paired-log":
        return test, kinds, tuple(notes)
    if len(ra.values) < 2 or len(rb.values) < 2:
        notes.append(Warning(
            WarningCode.TOO_FEW_RUNS, row,
            f"{min(len(ra.values), len(rb.values))} run on one side: a verdict needs at least 2 separate runs "
            "per side (5 recommended)",
            more_runs(how, 5),
        ))
    elif min(len(ra.values), len(rb.values)) < 3:
        notes.append(Warning(
            WarningCode.FEW_RUNS_LOW_POWER, row, "fewer than 3 runs on one side: only large changes can be found",
            more_runs(how, 5),
        ))
    return test, kinds, tuple(notes)


def ratio_test(base: Replicates, other: Replicates, paired: bool) -> RatioTest:
    """other / base over their separate runs: the paired test on per-round log ratios when the runs were
    interleaved by round (`paired`, both sides real runs, at least two rounds in common), else Welch's test
    on log values. The one test of every claim that one run is better than another: compare's rows and
    slog's ranking alike."""
    if paired and base.kind == other.kind == "runs":
        pairs = _pairs(base, other)
        if len(pairs) >= 2:
            return paired_ratio(pairs)
    return welch_ratio(base.values, other.values)


def _runs_to_decide(test: RatioTest | None, min_effect: float, alpha: float) -> int | None:
    if test is None or test.log_sd is None or min_effect <= 0:
        return None
    return runs_to_decide(test.log_sd, min_effect, paired=test.method == "paired-log", alpha=alpha)


def _pairs(a: Replicates, b: Replicates) -> list[tuple[float, float]]:
    by_round = dict(zip(a.rounds, a.values))
    return [(by_round[r], v) for r, v in zip(b.rounds, b.values) if r in by_round]


def row_verdict(test: RatioTest | None, p_holm: float, alpha: float, min_effect: float) -> str:
    """`keep` (other significantly higher by at least `min_effect`), `revert` (lower), `same` (equivalent
    within ±`min_effect`) or `no evidence`, from a ratio test and its Holm-adjusted p-value."""
    if test is None or not test.testable:
        return NO_EVIDENCE
    if _equivalent(test, alpha, min_effect):
        return SAME
    if p_holm < alpha and test.ratio >= 1 + min_effect:
        return KEEP
    if p_holm < alpha and test.ratio <= 1 - min_effect:
        return REVERT
    return NO_EVIDENCE


def _equivalent(test: RatioTest, alpha: float, min_effect: float) -> bool:
    """Two one-sided tests: the (1 - 2 alpha) interval of the ratio lies inside [1 - m, 1 + m]."""
    if min_effect <= 0:
        return False
    interval = test.interval_at(1 - 2 * alpha)
    return interval is not None and interval[0] >= 1 - min_effect and interval[1] <= 1 + min_effect


def _overall(rows: list[RowComparison], min_effect: float) -> tuple[str, str]:
    important = [r for r in rows if r.weight > 0]
    if not important:
        return NO_EVIDENCE, "no row has a weight above 0"
    total = sum(r.weight for r in important)
    keep = sum(r.weight for r in important if r.verdict == KEEP)
    revert = sum(r.weight for r in important if r.verdict == REVERT)
    if all(r.verdict == SAME for r in important):
        return SAME, f"every row changed by less than {min_effect:.0%} (the whole interval is inside ±{min_effect:.0%})"
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


def _listed(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else list(pair)


def _pct(ratio: float | None) -> float | None:
    return None if ratio is None else (ratio - 1) * 100
