"""How `tune --max-time` is shared: the time kept back for what comes later (the confirmation of the kept set,
a race's proof of its winner) and when another pair of rounds would not fit.

Why apart from the session (tune_session.py): these are the budget's arithmetic, the dry run shows them
(cli/tune.py) before anything is measured, and tests/tune/test_tune_budget.py holds them to their numbers.
"""

from __future__ import annotations

import time
from typing import Protocol


class Budgeted(Protocol):
    """What the reserves read of a session's request (tune_session.TuneRequest)."""

    @property
    def max_time(self) -> float | None: ...  # seconds for the whole session; None: no --max-time

    @property
    def confirm(self) -> bool: ...  # whether the kept set is confirmed afresh at the end


def first_look_reserve(looks: tuple[int, ...], round_s: float, budget_s: float) -> float:
    """Seconds kept back for a paired measurement that comes later (the confirmation, a race's proof): the
    rounds of its first look, where it can first be decided, but never more than half of `budget_s` (what
    comes before keeps the other half; a measurement cut short decides on the rounds it has)."""
    return max(0.0, min(looks[0] * round_s, budget_s / 2))


def confirmation_reserve(request: Budgeted, looks: tuple[int, ...], round_s: float) -> float:
    """Seconds of --max-time kept back from the knobs for the confirmation. Without it the knobs could use the
    whole budget and the kept set would be undone unconfirmed; with it a knob stops early instead. 0 without a
    budget or a confirmation."""
    if request.max_time is None or not request.confirm:
        return 0.0
    return first_look_reserve(looks, round_s, request.max_time)


def proof_reserve(request: Budgeted, looks: tuple[int, ...], round_s: float) -> float:
    """Seconds of the knobs' share of --max-time (the budget less the confirmation's reserve) a race keeps back
    for its winner's proof, as the dry run shows it; a session works it out again from the time left when the
    race starts. Without it a race out of time left its winner two rounds of proof at most, too few to
    decide anything. 0 without a budget."""
    if request.max_time is None:
        return 0.0
    return first_look_reserve(looks, round_s, request.max_time - confirmation_reserve(request, looks, round_s))


def out_of_time(deadline: float | None, started: float, rounds: int) -> bool:
    """Whether another pair of rounds, at the mean time of the `rounds` measured since `started`, would pass
    `deadline` (None: no --max-time). A pair, not one round: tune stops only after an even round, where each
    arm has gone first as often as the other. Before any round there is nothing to go by: never out of time."""
    if deadline is None or not rounds:
        return False
    now = time.monotonic()
    return now + 2 * (now - started) / rounds > deadline


def race_proof_reserve(looks: tuple[int, ...], round_s: float, budget_s: float, race_s: float,
                       arm_visits: int) -> float:
    """Seconds a race keeps back for its winner's proof, worked out again before each pair of its rounds: the
    proof's first look at the slower of two round times, the calibration's `round_s` and two of the race's
    own arm visits (`race_s` over `arm_visits`: a proof round visits two arms), never more than half of
    `budget_s`, the knobs' time left when the race started. The calibration's alone was measured minutes
    before, at another load and with no switch between its arms: a proof slower than it was cut off
    after 2 rounds, too few to decide."""
    pace = 2 * race_s / arm_visits if arm_visits else 0.0
    return first_look_reserve(looks, max(round_s, pace), budget_s)

