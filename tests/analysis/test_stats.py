"""Statistics on synthetic samples with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackbench.analysis.stats import (
    compare_samples,
    format_p,
    median_ci,
    min_samples_for_ci,
    min_samples_to_detect,
    summarize,
)
from stackbench.analysis.stopping import StoppingRule, decide


def test_median_ci_uses_the_binomial_order_statistics() -> None:
    # n=10: P(2 <= B <= 8) = 1 - 2*11/1024 = 0.9785 >= 0.95, P(3 <= B <= 7) = 0.8906 < 0.95 -> (x2, x9)
    values = list(range(1, 11))
    assert median_ci(values, 0.95) == (2.0, 9.0)
    assert median_ci(list(reversed(values)), 0.95) == (2.0, 9.0)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(min_value=1, max_value=800), confidence=st.floats(min_value=0.5, max_value=0.999))
@pytest.mark.slow
def test_median_ci_picks_the_pair_scipys_binomial_picks(n: int, confidence: float) -> None:
    """The order statistics chosen agree with the binomial coverage computed by SciPy, for any sample size
    and level (the interval itself is computed without SciPy, which a run command should not import)."""
    from scipy.stats import binom

    best = 0
    for j in range(1, n // 2 + 1):
        if binom.cdf(n - j, n, 0.5) - binom.cdf(j - 1, n, 0.5) >= confidence:
            best = j
        else:
            break
    low, high = median_ci([float(i) for i in range(1, n + 1)], confidence)
    if best == 0 or n < min_samples_for_ci(confidence):
        assert (low, high) == (-math.inf, math.inf)
    else:
        assert (low, high) == (float(best), float(n + 1 - best))


def test_too_few_samples_have_no_interval_and_say_how_many_are_needed() -> None:
    assert min_samples_for_ci(0.95) == 6  # 1 - 2 * 0.5**6 = 0.969
    summary = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert math.isinf(summary.ci_low) and math.isinf(summary.ci_half_width_rel)
    assert summary.warnings == ("need >= 6 samples for a confidence interval at level 0.95",)


def test_summary_values() -> None:
    summary = summarize([10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0])
    assert (summary.median, summary.cv, summary.ci_half_width_rel) == (10.0, 0.0, 0.0)
    summary = summarize([1.0, 2.0, 3.0, 4.0])
    assert summary.mean == 2.5 and summary.median == 2.5
    assert summary.stdev == pytest.approx(np.std([1, 2, 3, 4], ddof=1))


def test_median_ci_covers_the_true_median_at_least_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(1)
    hits = 0
    trials = 2000
    for _ in range(trials):
        sample = rng.lognormal(mean=0.0, sigma=0.5, size=20)  # true median exp(0) = 1
        low, high = median_ci(sample)
        hits += low <= 1.0 <= high
    assert hits / trials >= 0.94  # nominal coverage of the chosen pair is 0.9586 for n=20


def test_mann_whitney_exact_p_for_fully_separated_samples() -> None:
    comparison = compare_samples([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert comparison.p_value == pytest.approx(2 / math.comb(10, 5))
    assert comparison.significant
    assert comparison.delta_pct == pytest.approx((8 - 3) / 3 * 100)


def test_delta_is_the_relative_change_of_medians() -> None:
    comparison = compare_samples([100.0] * 3 + [101.0] * 3, [150.0] * 3 + [151.0] * 3)
    assert comparison.delta_pct == pytest.approx((150.5 - 100.5) / 100.5 * 100)


def test_identical_samples_are_never_significant() -> None:
    comparison = compare_samples([5.0] * 10, [5.0] * 10)
    assert comparison.p_value == 1.0 and not comparison.significant


def test_too_few_samples_can_never_be_significant_and_say_so() -> None:
    assert min_samples_to_detect(0.05) == 4  # 2 / C(8, 4) = 0.029 < 0.05; 2 / C(6, 3) = 0.1
    comparison = compare_samples([1, 2, 3], [10, 11, 12])
    assert not comparison.significant
    assert "need >= 4 samples per side" in comparison.warnings[0]


def test_hodges_lehmann_interval_contains_a_pure_shift() -> None:
    rng = np.random.default_rng(7)
    base = rng.normal(1000, 20, size=30)
    comparison = compare_samples(base, base + 100)
    assert comparison.delta_ci_low_pct <= 100 / np.median(base) * 100 <= comparison.delta_ci_high_pct


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=1, max_value=1e7), min_size=1, max_size=40))
def test_summary_ci_always_brackets_the_median(values: list[float]) -> None:
    summary = summarize(values)
    if math.isfinite(summary.ci_low):
        assert summary.ci_low <= summary.median <= summary.ci_high
    assert summary.minimum <= summary.median <= summary.maximum


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=1, max_value=1e6), min_size=1, max_size=30))
def test_a_sample_compared_with_itself_is_never_significant(values: list[float]) -> None:
    assert not compare_samples(values, values).significant


def test_stopping_rule_counts_runs_and_says_when_the_target_is_out_of_reach() -> None:
    rule = StoppingRule(ci_target=0.05, min_runs=5, max_runs=10, max_seconds=None)
    steady = [1000.0, 1010.0, 995.0, 1005.0, 1002.0]
    assert decide(rule, steady[:4], 10, 2) == (False, "")  # below the minimum runs
    stop, why = decide(rule, steady, 10, 2)
    assert stop and why.startswith("stable: ±") and "after 5 runs" in why
    noisy = [1000.0, 1500.0, 800.0, 1300.0, 900.0]
    assert decide(rule, noisy, 10, 2) == (False, "")
    stop, why = decide(rule, noisy * 2, 20, 2)
    assert stop and "out of reach on this machine: 10 runs reached" in why and "would need about" in why
    capped = StoppingRule(ci_target=0.05, min_runs=5, max_runs=10, max_seconds=12)
    stop, why = decide(capped, noisy, 10.5, 2)
    assert stop and "time cap 12 s" in why
    assert decide(capped, noisy[:2], 11, 2) == (True, "time cap 12 s reached after 2 runs, fewer than 5")


def test_a_p_value_too_small_for_three_decimals_is_printed_as_an_upper_bound() -> None:
    """`p=0.000` would claim more than any test says: below what three decimals show it is `p<0.001`, and
    every other p keeps its three decimals (a p of 0.0005 rounds up to 0.001, which is what it is)."""
    assert format_p(0.0) == "p<0.001"
    assert format_p(0.00049) == "p<0.001"
    assert format_p(0.0005) == "p=0.001"
    assert format_p(0.0123) == "p=0.012"
    assert format_p(1.0) == "p=1.000"
