"""A race's look: which of several candidates measured in the same counterbalanced rounds (tune's races,
round_order.race_orders) are proven worse than another arm left, and so dropped; and whether every arm left
is the same as every other, so that no candidate can be proven better and the race can stop.

Why this rule (irace's F-race, with compare's own test): every arm is a run whose replicates are its rounds,
so any two arms are paired by round exactly as `ab`'s two arms are. At a look every pair of arms left (the
original included, which is never dropped) is compared, and a candidate is dropped when compare proves it
worse than another arm: `revert` (or `keep` the other way round), significantly worse by at least
`--min-effect` on the weighted rows. Alpha is spent over the race's looks as over a knob's
(analysis/alpha_spending.py: O'Brien-Fleming-type, little early, most at the last look), and within a look
Holm's step-down spends the look's share over its pairs: every pair open is tested at share / (pairs open);
the pairs proven different leave, and the rest are tested again at the share over the fewer left, until a
step proves nothing more. Holm's first step is the even (Bonferroni) split, so it drops at least what the
split drops; by Holm (1979) the chance of any false drop at a look stays at most its share whatever the
dependence between the pairs, and the shares sum to alpha over the looks (docs/statistics.md, "Races:
Holm within a look, O'Brien-Fleming across looks"). Comparing each candidate with the best-looking arm only
(F-race's shortcut) is not that test: the best-looking arm is selected for being high on these very rounds,
and with five equal arms it dropped one in 6.5 % of 200 null races at alpha 5 % (tests/analysis/test_race.py).

The race only chooses. Its winner is selected on these runs, so their estimate of it leans high (the
winner's curse); tune proves the winner against the original with fresh rounds and only that verdict
decides what is kept.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from stackbench.analysis.compare import KEEP, REVERT, SAME, RunComparison, compare_runs
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
    """What one look at a race decided: the best arm left, each arm's ratio to the original, the drops, and
    whether every pair of the arms left is `same` (then no candidate can be proven better)."""

    round: int
    best: str
    ratios: dict[str, float | None]
    dropped: tuple[Dropped, ...]
    alpha: float  # this look's share of the race's alpha, spent over its pairs by Holm's step-down
    all_same: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "best": self.best, "ratios": self.ratios, "alpha": self.alpha,
                "dropped": [d.arm for d in self.dropped], "all_same": self.all_same}


def pair_view(run: Run, session: str, first_of_two: list[bool], letter: str) -> Run:
    """`run` as one arm of a two-arm paired session `session`, for compare: `first_of_two[r]` says whether
    this arm was measured before the other in round r (compare reads the rounds' orders from arm A)."""
    orders = ["AB" if (first if letter == "A" else not first) else "BA" for first in first_of_two]
    ab = {**((run.facts or {}).get("ab") or {}), "session": session, "arm": letter, "rounds": len(orders),
          "orders": orders}
    return dataclasses.replace(run, facts={**(run.facts or {}), "ab": ab})


def compare_arms(runs: dict[str, Run], orders: list[list[str]], base: str, other: str, *, alpha: float,
                 min_effect: float) -> RunComparison:
    """Compare `other` against `base`, two arms of one race paired by round (`orders`: the arms' names in
    the order each round measured them)."""
    first = [order.index(base) < order.index(other) for order in orders if base in order and other in order]
    session = f"race:{base}:{other}"
    return compare_runs(pair_view(runs[base], session, first, "A"),
                        pair_view(runs[other], session, [not f for f in first], "B"),
                        alpha=alpha, min_effect=min_effect)


def holm_pairs(runs: dict[str, Run], orders: list[list[str]], pairs: list[tuple[str, str]], *, alpha: float,
               min_effect: float) -> dict[tuple[str, str], tuple[RunComparison, float]]:
    """Holm's step-down over `pairs` at `alpha`, with compare's verdict as each pair's test: every pair open
    is compared at alpha / (pairs open); those proven different (`keep` or `revert`) are closed with that
    comparison, and the others compared again at alpha over the fewer left, until a step closes none.
    Returns each pair's last comparison and the alpha it was made at.

    This is Holm's sequentially rejective form (Holm 1979), which needs no single p-value per pair: its bound
    (docs/statistics.md) needs only that a pair of equal arms is proven different at a level of at most c
    with a chance of at most c, which compare's Holm over its rows gives (a proof needs a row whose adjusted
    p-value is below the level)."""
    verdicts: dict[tuple[str, str], tuple[RunComparison, float]] = {}
    open_pairs = list(pairs)
    while open_pairs:
        level = alpha / len(open_pairs)
        for x, y in open_pairs:
            verdicts[(x, y)] = (compare_arms(runs, orders, x, y, alpha=level, min_effect=min_effect), level)
        proven = {pair for pair in open_pairs if verdicts[pair][0].verdict in (KEEP, REVERT)}
        if not proven:
            break
        open_pairs = [pair for pair in open_pairs if pair not in proven]
    return verdicts


def race_look(runs: dict[str, Run], orders: list[list[str]], alive: list[str], original: str, *,
              alpha: float, min_effect: float) -> Look:
    """One look at its share `alpha` of the race's alpha: every pair of `alive` arms (the original's name
    among them) compared by Holm's step-down (`holm_pairs`); a candidate is dropped when it is proven worse
    than another arm (behind the best arm that beat it). `best` is the arm with the highest ratio to the
    original, for the report; `all_same` says that every pair of the arms left after the drops is `same`
    (its interval within +-min_effect): no candidate left can be proven better than the original."""
    ratios: dict[str, float | None] = {original: 1.0}
    for arm in alive:
        if arm != original:
            ratios[arm] = compare_arms(runs, orders, original, arm, alpha=alpha, min_effect=min_effect).geomean_ratio
    best = max(alive, key=lambda arm: (_finite(ratios[arm]), arm == original))
    pairs = [(x, y) for i, x in enumerate(alive) for y in alive[i + 1:]]
    verdicts = holm_pairs(runs, orders, pairs, alpha=alpha, min_effect=min_effect)
    beaten: dict[str, list[tuple[str, RunComparison, float]]] = {}
    for (x, y), (verdict, level) in verdicts.items():
        if verdict.verdict == REVERT and y != original:
            beaten.setdefault(y, []).append((x, verdict, level))
        elif verdict.verdict == KEEP and x != original:
            beaten.setdefault(x, []).append((y, compare_arms(runs, orders, y, x, alpha=level,
                                                             min_effect=min_effect), level))
    dropped = []
    for arm in alive:
        if arm in beaten:
            winner, against, level = max(beaten[arm], key=lambda found: _finite(ratios[found[0]]))
            dropped.append(Dropped(arm, len(orders), winner, against.geomean_ratio,
                                   f"worse than {winner} at alpha {level:.4g} (Holm over the look's "
                                   f"{alpha:.4g}): {against.reason}"))
    left = [arm for arm in alive if arm not in beaten]
    left_pairs = [(x, y) for (x, y) in pairs if x in left and y in left]
    all_same = bool(left_pairs) and all(verdicts[pair][0].verdict == SAME for pair in left_pairs)
    return Look(len(orders), best, ratios, tuple(dropped), alpha, all_same)


def _finite(ratio: float | None) -> float:
    return -math.inf if ratio is None or not math.isfinite(ratio) else ratio
