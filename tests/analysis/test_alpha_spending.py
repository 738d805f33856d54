"""The alpha tune's sequential looks spend: the O'Brien-Fleming-type increments, and by simulation what they promise.

The simulations run the rule tune runs on one cell, compare's paired test of the per-round log ratios
(between_runs.paired_ratio) read at the looks 4, 6, 8, 12 and stopped at the first significant one, on seeded
normal per-round log differences: no machine is needed to check what the rule does with noise and with an effect.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from stackbench.analysis.alpha_spending import alpha_left, look_alphas, obrien_fleming_spent
from stackbench.analysis.between_runs import paired_ratio

LOOKS = (4, 6, 8, 12)


@pytest.mark.parametrize("looks", [LOOKS, (2, 4), (4, 8, 12, 16, 20), (12,)])
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_the_increments_sum_to_alpha(looks: tuple[int, ...], alpha: float) -> None:
    alphas = look_alphas(looks, alpha)
    assert len(alphas) == len(looks) and all(a > 0 for a in alphas)
    assert math.isclose(sum(alphas), alpha, rel_tol=1e-12)


@pytest.mark.parametrize("looks", [LOOKS, (2, 4, 6, 8, 10, 12), (4, 8, 12, 16, 20)])
def test_obrien_fleming_spends_little_early_and_most_at_the_end(looks: tuple[int, ...]) -> None:
    alphas = look_alphas(looks, 0.05)
    assert list(alphas) == sorted(alphas) and len(set(alphas)) == len(alphas)
    assert alphas[0] < 0.05 / len(looks) < alphas[-1]  # less than the even split first, more last


def test_one_look_is_tested_at_alpha() -> None:
    assert look_alphas((12,), 0.05) == (0.05,)


def test_the_spending_function_is_lan_demets_obrien_fleming() -> None:
    """alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)): at t = 1/4 and alpha 0.05, 2 - 2 Phi(3.919928)."""
    assert obrien_fleming_spent(0.25, 0.05) == pytest.approx(8.857e-5, rel=1e-3)
    assert obrien_fleming_spent(1.0, 0.05) == 0.05 and obrien_fleming_spent(0.0, 0.05) == 0.0


def test_an_unplanned_last_test_spends_what_is_left() -> None:
    alphas = look_alphas(LOOKS, 0.05)
    assert alpha_left(alphas, 0, 0.05) == 0.05
    assert alpha_left(alphas, 2, 0.05) == pytest.approx(0.05 - alphas[0] - alphas[1])
    assert alpha_left(alphas, 4, 0.05) == pytest.approx(0.0, abs=1e-15)


def _decided(differences: np.ndarray, alphas: tuple[float, ...]) -> np.ndarray:
    """Per simulated knob: whether any look's paired test is below that look's alpha (a keep or a revert)."""
    decided = np.zeros(len(differences), dtype=bool)
    for i, d in enumerate(differences):
        for look, alpha in zip(LOOKS, alphas):
            pairs = [(1.0, math.exp(x)) for x in d[:look]]
            if paired_ratio(pairs).p_value < alpha:
                decided[i] = True
                break
    return decided


def _upper(rate: float, n: int) -> float:
    """Three binomial standard errors above `rate`: the simulation's own sampling error, generously."""
    return rate + 3 * math.sqrt(rate * (1 - rate) / n)


def test_an_aa_knob_is_decided_falsely_at_most_alpha_of_the_time() -> None:
    """No effect: the sequential rule decides in at most 5 % of simulated knobs. The same harness with every
    look at the whole alpha (what looking without spending does) goes above it: the check can fail."""
    n = 1500
    differences = np.random.default_rng(29).normal(0.0, 0.05, size=(n, LOOKS[-1]))
    spent = _decided(differences, look_alphas(LOOKS, 0.05)).mean()
    assert spent <= _upper(0.05, n)
    unspent = _decided(differences, (0.05,) * len(LOOKS)).mean()
    assert unspent > _upper(0.05, n)


def test_a_known_effect_is_found_at_least_as_often_as_with_the_even_split() -> None:
    """A 3 % change under 5 % noise per round (found in a quarter to a half of the knobs): the same rounds
    judged by both splits; O'Brien-Fleming's larger last look finds it more often."""
    n = 1000
    differences = np.random.default_rng(2983).normal(math.log(1.03), 0.05, size=(n, LOOKS[-1]))
    spending = _decided(differences, look_alphas(LOOKS, 0.05)).mean()
    even = _decided(differences, (0.05 / len(LOOKS),) * len(LOOKS)).mean()
    assert 0.1 < even and spending >= even
