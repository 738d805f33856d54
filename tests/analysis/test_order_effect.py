"""Counterbalanced rounds (round_order.py) and the order-effect diagnostic (analysis/order_effect.py) on
synthetic sessions with known answers, and the paired compare of arms measured in that order."""

from __future__ import annotations

import math
import random

import pytest

from stackbench.analysis.compare import KEEP, REVERT, compare_runs
from stackbench.analysis.order_effect import order_effect, session_orders
from stackbench.model.round_order import AB, BA, even_rounds, round_orders, second_arm_sign
from synthetic import ab_arms, cell, run


def _measurements(orders: list[str]) -> list[str]:
    return [arm for order in orders for arm in order]


def _bias(orders: list[str], *, position: float = 0.0, carry_a: float = 0.0, carry_b: float = 0.0,
          drift: float = 0.0) -> float:
    """The mean log(B/A) over the rounds when A and B are the same configuration and only the order acts:
    `position` added to the second measurement of a round, `carry_X` to a measurement that follows one of
    arm X, `drift` per measurement. A perfect order gives 0."""
    previous, step, ratios = None, 0, []
    for order in orders:
        value = {}
        for place, arm in enumerate(order):
            value[arm] = place * position + {"A": carry_a, "B": carry_b}.get(previous, 0.0) + drift * step
            previous, step = arm, step + 1
        ratios.append(value["B"] - value["A"])
    return sum(ratios) / len(ratios)


@pytest.mark.parametrize("rounds", range(2, 13))
def test_rounds_alternate_which_arm_goes_first(rounds: int) -> None:
    orders = round_orders(rounds)
    assert len(orders) == rounds and set(orders) <= {AB, BA} and orders[0] == AB
    assert orders.count(AB) - orders.count(BA) == rounds % 2  # balanced, one AB more for an odd count
    measured = _measurements(orders)
    # every round after the first starts with the arm that ended the round before: both measurements of a
    # round follow the same arm, so what that arm leaves behind hits A and B alike
    assert all(measured[2 * r - 1] == measured[2 * r] for r in range(1, rounds))
    if rounds % 2 == 0:
        assert _bias(orders, position=1.0) == 0.0 and _bias(orders, drift=1.0) == 0.0
    assert _bias(orders, carry_b=1.0) == 0.0
    assert _bias(orders, carry_a=1.0) == pytest.approx(1 / rounds)  # round 1's A follows nothing at all


def test_the_abba_by_rounds_order_would_leave_carry_over_in_the_change() -> None:
    """Why not AB, BA, BA, AB: it balances position, but a carry-over from B moves the change by half of it."""
    abba = [AB if r % 4 in (0, 3) else BA for r in range(400)]
    assert _bias(abba, position=1.0) == 0.0
    assert _bias(abba, carry_b=1.0) == pytest.approx(-0.5, abs=0.01)
    assert _bias(["AB"] * 12, position=1.0) == 1.0  # the old fixed order: all of it


def test_an_odd_number_of_rounds_is_raised_to_the_next_even_one() -> None:
    assert [even_rounds(n) for n in range(2, 9)] == [2, 4, 4, 6, 6, 8, 8]
    assert second_arm_sign(AB) == 1 and second_arm_sign(BA) == -1
    with pytest.raises(ValueError):
        second_arm_sign("AA")


def _session(orders: list[str], change: float, position: float, noise: float, seed: int, cells: int = 1):
    """Per row, round -> (A, B) IOPS of a session: B = A x change, the second arm of a round x position."""
    rng = random.Random(seed)
    rows = []
    for index in range(cells):
        pairs = {}
        for r, order in enumerate(orders):
            level = 10_000 * (1 + index) * math.exp(rng.gauss(0, 0.2))  # the round's drift: hits both arms
            a = level * math.exp(rng.gauss(0, noise))
            b = level * change * math.exp(rng.gauss(0, noise))
            if order == AB:
                b *= position
            else:
                a *= position
            pairs[r] = (a, b)
        rows.append(pairs)
    return rows


def test_a_planted_order_effect_is_found_and_measured_apart_from_the_change() -> None:
    orders = round_orders(8)
    found = order_effect(orders, _session(orders, change=1.30, position=1.06, noise=0.01, seed=1, cells=3))
    assert found.significant and found.low < 1.06 < found.high
    assert found.ratio == pytest.approx(1.06, abs=0.015)
    assert found.a_first == found.b_first == 4
    warning = found.warning()
    assert warning is not None and warning.code == "ORDER_EFFECT"
    assert "second in a round was faster" in warning.text and "not biased" in warning.text and "--prepare" in warning.fix


def test_no_order_effect_gives_an_interval_around_none_and_no_warning() -> None:
    orders = round_orders(8)
    found = order_effect(orders, _session(orders, change=1.30, position=1.0, noise=0.01, seed=2, cells=3))
    assert not found.significant and found.low < 1.0 < found.high and found.warning() is None
    assert "not significant" in found.summary() and found.summary().startswith("Round order: AB BA AB BA")


def test_without_noise_the_fit_gives_the_planted_effect_exactly() -> None:
    orders = round_orders(6)
    found = order_effect(orders, [{r: (1000.0, 1500.0 * (1.1 if o == AB else 1 / 1.1)) for r, o in enumerate(orders)}])
    assert found.ratio == pytest.approx(1.1) and found.low == pytest.approx(1.1) and found.p_value < 1e-12


def test_an_unbalanced_session_says_how_much_of_the_effect_the_change_carries() -> None:
    orders = round_orders(5)  # AB BA AB BA AB: an interrupted or odd session
    found = order_effect(orders, _session(orders, change=1.0, position=1.08, noise=0.005, seed=3))
    assert found.significant and (found.a_first, found.b_first) == (3, 2)
    assert "A went first in 3 rounds and B in 2" in found.warning().text


def test_a_session_stopped_early_shows_the_rounds_it_ran_not_those_planned() -> None:
    """tune plans 12 rounds and stops a knob at the first look that decides (round 4); an interrupted ab
    stops too: the line said "Round order: AB BA" twelve times."""
    planned = round_orders(12)
    found = order_effect(planned, _session(planned[:4], change=1.0, position=1.0, noise=0.01, seed=5))
    assert found.orders == (AB, BA, AB, BA) and found.summary().startswith("Round order: AB BA AB BA;")


def test_sessions_before_counterbalancing_cannot_separate_order_from_change() -> None:
    legacy = run([cell(runs=[1000.0, 1010.0])], facts={"fio_version": "fio-3.33",
                                                       "ab": {"session": "s", "arm": "A", "rounds": 2}})
    assert session_orders(legacy) == (AB, AB)
    found = order_effect((AB,) * 6, _session([AB] * 6, change=1.0, position=1.05, noise=0.01, seed=4))
    assert found.ratio is None and "A went first in every round" in found.reason
    assert found.warning() is None and "cannot be told apart" in found.summary()


def test_two_rounds_give_an_estimate_and_no_interval() -> None:
    found = order_effect(round_orders(2), [{0: (1000.0, 1100.0), 1: (1000.0, 1000.0)}])
    assert found.ratio == pytest.approx(math.sqrt(1.1)) and found.low is None and not found.significant
    assert "no interval" in found.summary()


def test_compare_pairs_the_arms_by_round_whatever_the_order_they_were_stored_in() -> None:
    """B's runs stored in another sequence than A's (B went first in every other round): the pairs are made
    by round, so the change and the order effect are the planted ones."""
    orders = round_orders(6)
    drift = [0.6, 0.8, 1.0, 1.2, 1.4, 1.6]
    a_runs = [1000 * d * (1.05 if o == BA else 1) for d, o in zip(drift, orders)]
    b_runs = [1200 * d * (1.05 if o == AB else 1) for d, o in zip(drift, orders)]
    shuffled = [5, 0, 3, 1, 4, 2]
    a, b = ab_arms(orders, a_runs, [b_runs[r] for r in shuffled], b_rounds=shuffled)
    result = compare_runs(a, b)
    assert result.paired and result.rows[0].test.method == "paired-log"
    assert result.rows[0].ratio == pytest.approx(1.2)  # counterbalanced: the 5 % of going second cancels
    assert result.verdict == KEEP  # paired by round, the drift (0.6x to 1.6x) is gone: a tight interval
    assert result.order_effect is not None and result.order_effect.ratio == pytest.approx(1.05)
    data = result.to_json()
    assert data["order_effect"]["orders"] == orders and data["order_effect"]["a_first"] == 3
    assert [w["code"] for w in data["warnings"]] == ["ORDER_EFFECT"]
    swapped = compare_runs(b, a)  # B's run as A: every round's order reads mirrored, the effect is the same
    assert swapped.order_effect.orders == tuple(o[::-1] for o in orders)
    assert swapped.order_effect.ratio == pytest.approx(1.05) and swapped.rows[0].ratio == pytest.approx(1 / 1.2)


def test_a_planted_order_effect_keeps_a_null_change_under_the_fixed_order_only() -> None:
    """tune-design.md Appendix B as a test: A and B are the same, the arm measured second does +3 %, the
    per-round noise is 3 %. Over 300 sessions of 6 rounds, compare's verdict keeps (or reverts) the null
    change in many sessions when A always goes first and in (almost) none when the rounds are counterbalanced."""
    rng = random.Random(27)

    def false_verdicts(orders: list[str]) -> int:
        count = 0
        for _ in range(300):
            a_runs, b_runs = [], []
            for order in orders:
                level = 10_000 * math.exp(rng.gauss(0, 0.2))
                a, b = level * math.exp(rng.gauss(0, 0.03 / math.sqrt(2))), level * math.exp(rng.gauss(0, 0.03 / math.sqrt(2)))
                a_runs.append(a * (1.03 if order == BA else 1))
                b_runs.append(b * (1.03 if order == AB else 1))
            count += compare_runs(*ab_arms(orders, a_runs, b_runs)).verdict in (KEEP, REVERT)
        return count

    fixed, balanced = false_verdicts([AB] * 6), false_verdicts(round_orders(6))
    assert fixed >= 12  # at least 4 % of sessions
    assert balanced <= 6  # at most 2 %
