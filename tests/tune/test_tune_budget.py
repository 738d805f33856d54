"""`--max-time` keeps time back for the confirmation and for a race's proof: the reserves worked out from a
round's time, and the one check of whether another pair of rounds fits (the dry runs that show the reserves
and real sessions that keep them are in test_tune_session.py and test_tune_race.py)."""

from __future__ import annotations

import dataclasses
import time

from stackbench.measure.tune_budget import confirmation_reserve, out_of_time, proof_reserve, race_proof_reserve
from stackbench.measure.tune_session import TuneRequest

REQUEST = TuneRequest(run=None, knobs=(), max_time=600.0)  # type: ignore[arg-type] - the reserve reads no run


def test_the_reserve_is_the_confirmation_s_first_look() -> None:
    assert confirmation_reserve(REQUEST, (4, 6, 8, 12), 10.0) == 40.0
    assert confirmation_reserve(REQUEST, (6, 12), 10.0) == 60.0


def test_no_reserve_without_a_budget_or_a_confirmation() -> None:
    assert confirmation_reserve(dataclasses.replace(REQUEST, max_time=None), (4, 12), 10.0) == 0.0
    assert confirmation_reserve(dataclasses.replace(REQUEST, confirm=False), (4, 12), 10.0) == 0.0


def test_the_knobs_keep_at_least_half_the_budget() -> None:
    assert confirmation_reserve(REQUEST, (100,), 10.0) == 300.0


def test_a_race_keeps_its_proof_s_first_look_from_what_the_knobs_have() -> None:
    assert proof_reserve(REQUEST, (4, 6, 8, 12), 10.0) == 40.0
    assert proof_reserve(REQUEST, (100,), 10.0) == 150.0  # half of the knobs' 300 s (the confirmation has 300)
    assert proof_reserve(dataclasses.replace(REQUEST, confirm=False), (100,), 10.0) == 300.0
    assert proof_reserve(dataclasses.replace(REQUEST, max_time=None), (4, 12), 10.0) == 0.0


def test_a_race_s_reserve_follows_its_own_pace_when_that_is_slower_than_the_calibration_s() -> None:
    """The calibration measured 1 s a round; the race's 8 arm visits took 12 s, switches included: a proof
    round (two visits) now takes 3 s, so its first look needs 12 s, not the calibration's 4 s (with 4 s kept
    back, a proof at the race's pace was cut off after 2 rounds). A race faster than the calibration keeps
    the calibration's; half the budget is still the most."""
    assert race_proof_reserve((4, 6, 8, 12), 1.0, 100.0, 12.0, 8) == 12.0
    assert race_proof_reserve((4, 6, 8, 12), 5.0, 100.0, 12.0, 8) == 20.0
    assert race_proof_reserve((4, 6, 8, 12), 1.0, 100.0, 0.0, 0) == 4.0  # before its first round
    assert race_proof_reserve((4, 6, 8, 12), 1.0, 10.0, 40.0, 8) == 5.0


def test_another_pair_of_rounds_is_started_only_when_it_fits_before_the_deadline() -> None:
    """Four rounds took 4 s: a pair takes 2 s more; no rounds yet: nothing to go by, never out of time."""
    now = time.monotonic()
    assert out_of_time(now + 1.0, now - 4.0, 4) and not out_of_time(now + 3.0, now - 4.0, 4)
    assert not out_of_time(now - 1.0, now, 0) and not out_of_time(None, now - 100.0, 1)
