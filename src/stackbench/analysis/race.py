"""A race's look: which of several candidates measured in the same counterbalanced rounds (tune's races,
round_order.race_orders) are proven worse than the best arm left, and so dropped.

Why this rule (irace's F-race, with compare's own test): every arm is a run whose replicates are its rounds,
so any two arms are paired by round exactly as `ab`'s two arms are. At a look every pair of arms left (the
original included, which is never dropped) is compared once, and a candidate is dropped when compare proves
it worse than another arm: `revert` (or `keep` the other way round), significantly worse by at least
`--min-effect` on the weighted rows. The look's alpha is split evenly over its pairs (Bonferroni), as tune
splits alpha over its looks: the chance that an arm as good as every other is ever dropped stays below
alpha whatever the dependence between the comparisons and the looks. Comparing each candidate with the
best-looking arm only (F-race's shortcut) is not that test: the best-looking arm is selected for being
high on these very rounds, and with five equal arms it dropped one in 6.5 % of 200 null races at alpha 5 %
(tests/analysis/test_race.py).

The race only chooses. Its winner is selected on these runs, so their estimate of it leans high (the
winner's curse); tune proves the winner against the original with fresh rounds and only that verdict
decides what is kept.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from stackbench.analysis.compare import KEEP, REVERT, compare_runs
from stackbench.model.results import Run


@dataclass(frozen=True)
class Dropped:
    """A candidate a look proved worse than the best arm left."""

    arm: str
    round: int  # the rounds measured when it was dropped
    behind: str  # the best arm left at that look
    ratio: float | None  # its geometric-mean ratio to that arm
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.arm, "round": self.round, "behind": self.behind, "ratio": self.ratio,
                "why": self.reason}


@dataclass(frozen=True)
class Look:
    """What one look at a race decided: the best arm left, each arm's ratio to the original, the drops."""

    round: int
    best: str
    ratios: dict[str, float | None]
    dropped: tuple[Dropped, ...]
    alpha_each: float  # the alpha of each comparison at this look


def pair_view(run: Run, session: str, first_of_two: list[bool], letter: str) -> Run:
    """`run` as one arm of a two-arm paired session `session`, for compare: `first_of_two[r]` says whether
    this arm was measured before the other in round r (compare reads the rounds' orders from arm A)."""
    orders = ["AB" if (first if letter == "A" else not first) else "BA" for first in first_of_two]
    ab = {**((run.facts or {}).get("ab") or {}), "session": session, "arm": letter, "rounds": len(orders),
          "orders": orders}
    return dataclasses.replace(run, facts={**(run.facts or {}), "ab": ab})


def compare_arms(runs: dict[str, Run], orders: list[list[str]], base: str, other: str, *, alpha: float,
                 min_effect: float) -> Any:
    """Compare `other` against `base`, two arms of one race paired by round (`orders`: the arms' names in
    the order each round measured them)."""
    first = [order.index(base) < order.index(other) for order in orders if base in order and other in order]
    session = f"race:{base}:{other}"
    return compare_runs(pair_view(runs[base], session, first, "A"),
                        pair_view(runs[other], session, [not f for f in first], "B"),
                        alpha=alpha, min_effect=min_effect)


def race_look(runs: dict[str, Run], orders: list[list[str]], alive: list[str], original: str, *,
              alpha: float, min_effect: float) -> Look:
    """One look: every pair of `alive` arms (the original's name among them) compared once at `alpha` split
    evenly over the pairs; a candidate is dropped when it is proven worse than another arm (behind the best
    arm that beat it). `best` is the arm with the highest ratio to the original, for the report."""
    ratios: dict[str, float | None] = {original: 1.0}
    for arm in alive:
        if arm != original:
            ratios[arm] = compare_arms(runs, orders, original, arm, alpha=alpha, min_effect=min_effect).geomean_ratio
    best = max(alive, key=lambda arm: (_finite(ratios[arm]), arm == original))
    pairs = [(x, y) for i, x in enumerate(alive) for y in alive[i + 1:]]
    alpha_each = alpha / max(1, len(pairs))
    beaten: dict[str, list[tuple[str, Any]]] = {}
    for x, y in pairs:
        verdict = compare_arms(runs, orders, x, y, alpha=alpha_each, min_effect=min_effect)
        if verdict.verdict == REVERT and y != original:
            beaten.setdefault(y, []).append((x, verdict))
        elif verdict.verdict == KEEP and x != original:
            beaten.setdefault(x, []).append((y, compare_arms(runs, orders, y, x, alpha=alpha_each,
                                                             min_effect=min_effect)))
    dropped = []
    for arm in alive:
        if arm in beaten:
            winner, against = max(beaten[arm], key=lambda pair: _finite(ratios[pair[0]]))
            dropped.append(Dropped(arm, len(orders), winner, against.geomean_ratio,
                                   f"worse than {winner} at alpha {alpha_each:.4g}: {against.reason}"))
    return Look(len(orders), best, ratios, tuple(dropped), alpha_each)


def _finite(ratio: float | None) -> float:
    return -math.inf if ratio is None or not math.isfinite(ratio) else ratio
