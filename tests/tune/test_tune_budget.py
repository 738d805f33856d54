"""`--max-time` keeps time back for the confirmation: the reserve worked out from a round's time (the dry run
that shows it and a real session that keeps it are in test_tune_session.py)."""

from __future__ import annotations

import dataclasses

from stackbench.measure.tune_session import TuneRequest, confirmation_reserve

REQUEST = TuneRequest(run=None, knobs=(), max_time=600.0)  # type: ignore[arg-type] - the reserve reads no run


def test_the_reserve_is_the_confirmation_s_first_look() -> None:
    assert confirmation_reserve(REQUEST, (4, 6, 8, 12), 10.0) == 40.0
    assert confirmation_reserve(REQUEST, (6, 12), 10.0) == 60.0


def test_no_reserve_without_a_budget_or_a_confirmation() -> None:
    assert confirmation_reserve(dataclasses.replace(REQUEST, max_time=None), (4, 12), 10.0) == 0.0
    assert confirmation_reserve(dataclasses.replace(REQUEST, confirm=False), (4, 12), 10.0) == 0.0


def test_the_knobs_keep_at_least_half_the_budget() -> None:
    assert confirmation_reserve(REQUEST, (100,), 10.0) == 300.0
