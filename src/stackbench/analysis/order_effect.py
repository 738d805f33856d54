"""The order effect of an `ab` session: does the arm measured second in a round do better (or worse) than
the first, whichever arm it is?

Why it can be told apart from the change: the rounds are counterbalanced (round_order.py), so each round's
log(B/A) is the change plus the order effect with a sign, + in AB rounds (B second) and - in BA rounds (A
second): d_r = delta + p * s_r + noise. A least-squares fit of that line over the rounds gives p, the mean
second-minus-first log ratio, with a t-interval on n - 2 degrees of freedom; with as many AB rounds as BA
rounds, p is exactly the mean of s_r * d_r and the change delta the plain mean of d_r, unmoved by p. The
rows (cells) are averaged per round first: a round is the unit, its cells share the machine's state.

Sessions stored before the rounds were counterbalanced ran A first in every round: there p and delta are
the same number and no diagnostic can be made; the result says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from stackbench.analysis import student_t
from stackbench.analysis.cells import RUNS, replicates_of
from stackbench.analysis.stats import format_p
from stackbench.model.results import Cell, Run
from stackbench.model.round_order import AB, BA, second_arm_sign
from stackbench.model.warning import Warning, WarningCode


@dataclass(frozen=True)
class OrderEffect:
    """second / first across the paired rounds: its estimate, 95 % interval and p-value, or why there is none."""

    orders: tuple[str, ...]  # every round of the session as run, "AB" or "BA"
    rounds: int  # rounds with a pair in every compared row: the ones used
    ratio: float | None  # exp(mean second-minus-first log ratio)
    low: float | None
    high: float | None
    p_value: float | None
    alpha: float = 0.05
    reason: str = ""  # why there is no estimate or no interval

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.low is not None and self.p_value < self.alpha

    @property
    def a_first(self) -> int:
        return sum(order == AB for order in self.orders[: self.rounds])

    @property
    def b_first(self) -> int:
        return sum(order == BA for order in self.orders[: self.rounds])

    def summary(self) -> str:
        """The note under a paired compare: the rounds' order, then the order effect or why there is none."""
        shown = " ".join(self.orders)
        head = f"Round order: {shown}"
        if self.ratio is None:
            return f"{head}; order effect: {self.reason}"
        effect = f"{_pct(self.ratio)}"
        if self.low is not None and self.high is not None and self.p_value is not None:
            effect += f" [{_pct(self.low)}, {_pct(self.high)}] ({format_p(self.p_value)})"
        else:
            effect += f" ({self.reason})"
        verdict = "significant, see the warning" if self.significant else "not significant"
        return f"{head}; order effect (second vs first in a round): {effect}, {verdict}"

    def warning(self) -> Warning | None:
        """ORDER_EFFECT when the order effect is significant: what it means and what to do about it."""
        if not self.significant:
            return None
        assert self.ratio is not None and self.low is not None and self.high is not None
        better = "faster" if self.ratio > 1 else "slower"
        text = (
            f"the arm measured second in a round was {better} than the first by {_pct(self.ratio)} "
            f"[{_pct(self.low)}, {_pct(self.high)}] ({format_p(self.p_value)}), whichever arm it was: something carries "
            "over from one measurement to the next (a cache the previous run warmed, dirty data still being "
            "written back, the scratch file's layout)"
        )
        if self.a_first == self.b_first:
            text += "; the rounds are counterbalanced, so the change B vs A is not biased by it, but its interval is wider"
        else:
            shift = self.ratio ** ((self.a_first - self.b_first) / self.rounds)
            text += (
                f"; A went first in {self.a_first} rounds and B in {self.b_first}, so the change B vs A carries "
                f"about {_pct(shift)} of it"
            )
        return Warning(
            WarningCode.ORDER_EFFECT, "", text,
            'reset that state before every measurement with --prepare (e.g. "sync; echo 3 > '
            '/proc/sys/vm/drop_caches"), or a longer --ramp',
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "orders": list(self.orders), "rounds_used": self.rounds, "a_first": self.a_first, "b_first": self.b_first,
            "ratio": self.ratio, "delta_pct": (self.ratio - 1) * 100 if self.ratio is not None else None,
            "delta_ci_pct": [(self.low - 1) * 100, (self.high - 1) * 100]
            if self.low is not None and self.high is not None else None,
            "p_value": self.p_value, "significant": self.significant, "reason": self.reason or None,
        }


def session_orders(base: Run) -> tuple[str, ...] | None:
    """The order of every round of the `ab` session `base` belongs to, seen with `base` as A (a compare of the
    arms the other way round, `compare S-b S-a`, reads every round's order mirrored); None for a run of no
    session. Sessions stored before rounds were counterbalanced have no `orders`: A went first in every round.
    """
    ab = (base.facts or {}).get("ab")
    if not isinstance(ab, dict):
        return None
    orders = ab.get("orders")
    rounds = ab.get("rounds")
    if isinstance(orders, list) and all(o in (AB, BA) for o in orders):
        stored = tuple(orders)
    else:
        stored = (AB,) * rounds if isinstance(rounds, int) and rounds > 0 else ()
    return tuple(o[::-1] for o in stored) if ab.get("arm") == "B" else stored


def session_order_effect(
    orders: Sequence[str], cells: Sequence[tuple[Cell, Cell]], alpha: float = 0.05
) -> OrderEffect:
    """The order effect over the compared rows (A's cell, B's cell) of one session whose rounds ran `orders`."""
    by_row = []
    for base, other in cells:
        ra, rb = replicates_of(base), replicates_of(other)
        if ra.kind == rb.kind == RUNS:
            a = dict(zip(ra.rounds, ra.values))
            by_row.append({r: (a[r], v) for r, v in zip(rb.rounds, rb.values) if r in a})
    return order_effect(orders, by_row, alpha)


def order_effect(
    orders: Sequence[str], pairs_by_row: Sequence[Mapping[int, tuple[float, float]]], alpha: float = 0.05,
    confidence: float = 0.95,
) -> OrderEffect:
    """Fit log(B/A) = delta + p * s over the rounds every row has a pair in (s = +1 when B went second);
    return exp(p) with its interval. `pairs_by_row`: per row, round -> (A's IOPS, B's IOPS). `orders` are the
    rounds planned; those after the last measured one (a session stopped early: interrupted, or a tune knob
    decided at an early look) were never run and are not reported as run."""
    orders = tuple(orders)
    if pairs_by_row:
        orders = orders[:max((r + 1 for row in pairs_by_row for r in row), default=0)]
    rounds = [r for r in range(len(orders)) if pairs_by_row and all(r in row for row in pairs_by_row)]
    used = len(rounds)

    def none(reason: str) -> OrderEffect:
        return OrderEffect(orders, used, None, None, None, None, alpha, reason)

    if not rounds:
        return none("no round has a pair in every row")
    signs = [second_arm_sign(orders[r]) for r in rounds]
    if len(set(signs)) == 1:
        first = "A" if signs[0] > 0 else "B"
        return none(f"{first} went first in every round (rounds before counterbalancing): the order effect cannot "
                    "be told apart from the change")
    logs = [sum(math.log(row[r][1] / row[r][0]) for row in pairs_by_row) / len(pairs_by_row) for r in rounds]
    n = used
    sum_s, sum_d = sum(signs), sum(logs)
    sum_sd = sum(s * d for s, d in zip(signs, logs))
    spread = n * n - sum_s * sum_s  # n * sum(s^2) - (sum s)^2, with s^2 = 1
    slope = (n * sum_sd - sum_s * sum_d) / spread
    intercept = (sum_d - slope * sum_s) / n
    ratio = math.exp(slope)
    if n < 3:
        return OrderEffect(orders, used, ratio, None, None, None, alpha, "2 rounds: no interval")
    residual = sum((d - intercept - slope * s) ** 2 for s, d in zip(signs, logs))
    se = math.sqrt(residual / (n - 2) * n / spread)
    if se == 0:
        return OrderEffect(orders, used, ratio, ratio, ratio, 1.0 if slope == 0 else 0.0, alpha)
    p = float(2 * student_t.sf(abs(slope / se), n - 2))
    half = float(student_t.ppf(0.5 + confidence / 2, n - 2)) * se
    return OrderEffect(orders, used, ratio, math.exp(slope - half), math.exp(slope + half), p, alpha)


def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f}%"
