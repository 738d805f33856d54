"""Between-run statistics on simulated data with a known per-run random effect.

Simulated, not measured, on purpose: only a simulation knows the true value, so only a simulation can check
that intervals cover it and that A/A compares reject at the nominal rate. The model is the one measured on
this machine (aa-study.md): each separate run of a cell draws its own level (log-sd 0.05-0.25 between
runs), and the run's post-ramp IOPS is that level. Seeds are fixed, so these tests are deterministic; the
bounds are binomial 99.9 % bounds around the nominal rate, so a correct implementation passes them for any
seed and a pseudo-replicating one (seconds as replicates) fails them by a wide margin.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from stackbench.analysis.between_runs import (
    batch_means,
    estimate,
    holm,
    paired_ratio,
    rate_slope,
    runs_needed,
    welch_ratio,
)

TRIALS = 2000


def _binomial_upper(p: float, n: int) -> float:
    return sps.binom.ppf(0.9995, n, p) / n


def _runs(rng: np.random.Generator, level: float, log_sd: float, n: int) -> list[float]:
    return list(np.exp(rng.normal(math.log(level), log_sd, n)))


@pytest.mark.parametrize("log_sd", [0.05, 0.25])
@pytest.mark.parametrize("n", [3, 5, 10])
def test_interval_covers_the_true_geometric_mean_at_its_level(log_sd: float, n: int) -> None:
    rng = np.random.default_rng(11)
    misses = 0
    for _ in range(TRIALS):
        e = estimate(_runs(rng, 1000.0, log_sd, n))
        assert e.low is not None and e.high is not None
        misses += not (e.low <= 1000.0 <= e.high)
    assert misses / TRIALS <= _binomial_upper(0.05, TRIALS)
    assert misses / TRIALS >= 0.05 / 2  # not an interval that is simply too wide


@pytest.mark.parametrize("log_sd", [0.05, 0.27])
@pytest.mark.parametrize("n", [3, 5, 8])
def test_aa_false_positive_rate_is_nominal(log_sd: float, n: int) -> None:
    rng = np.random.default_rng(7)
    hits = sum(
        welch_ratio(_runs(rng, 5000, log_sd, n), _runs(rng, 5000, log_sd, n)).p_value < 0.05 for _ in range(TRIALS)
    )
    assert hits / TRIALS <= _binomial_upper(0.05, TRIALS)


def test_pseudo_replication_is_what_the_old_analysis_did_and_it_fails_this_bound() -> None:
    """The control: seconds of one run as replicates reject far above 5 % on the same model.

    Each run draws a level (log-sd 0.2); its 10 seconds scatter 3 % around that level. Testing seconds
    against seconds (10 vs 10, as the old compare did) rejects most A/A pairs. If this stops failing the
    bound, the simulation no longer has a per-run effect and the other tests here prove nothing.
    """
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(500):
        a_level, b_level = _runs(rng, 5000, 0.2, 2)
        a = np.exp(rng.normal(math.log(a_level), 0.03, 10))
        b = np.exp(rng.normal(math.log(b_level), 0.03, 10))
        hits += sps.mannwhitneyu(a, b).pvalue < 0.05
    assert hits / 500 > 0.5


@pytest.mark.parametrize(("shift", "log_sd", "n", "power"), [(0.10, 0.03, 5, 0.8), (0.25, 0.08, 5, 0.8), (0.5, 0.2, 8, 0.8)])
def test_power_on_known_shifts(shift: float, log_sd: float, n: int, power: float) -> None:
    rng = np.random.default_rng(5)
    found = sum(
        welch_ratio(_runs(rng, 1000, log_sd, n), _runs(rng, 1000 * (1 + shift), log_sd, n)).p_value < 0.05
        for _ in range(500)
    )
    assert found / 500 >= power


def test_paired_rounds_remove_drift_that_the_independent_test_counts_as_noise() -> None:
    """ABAB rounds under a machine whose speed drifts by 40 % over the rounds: pairing finds a 10 % gain."""
    rng = np.random.default_rng(9)
    paired_found = welch_found = 0
    for _ in range(300):
        drift = np.linspace(0.8, 1.2, 6)
        a = list(1000 * drift * np.exp(rng.normal(0, 0.02, 6)))
        b = list(1100 * drift * np.exp(rng.normal(0, 0.02, 6)))
        paired_found += paired_ratio(list(zip(a, b))).p_value < 0.05
        welch_found += welch_ratio(a, b).p_value < 0.05
    assert paired_found / 300 >= 0.9
    assert welch_found / 300 < 0.5


def test_paired_aa_under_drift_is_nominal() -> None:
    rng = np.random.default_rng(13)
    hits = 0
    for _ in range(TRIALS):
        drift = np.linspace(0.7, 1.3, 5)
        a = 1000 * drift * np.exp(rng.normal(0, 0.1, 5))
        b = 1000 * drift * np.exp(rng.normal(0, 0.1, 5))
        hits += paired_ratio(list(zip(a, b))).p_value < 0.05
    assert hits / TRIALS <= _binomial_upper(0.05, TRIALS)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(1e-3, 1e9), min_size=1, max_size=12),
    st.lists(st.floats(1e-3, 1e9), min_size=1, max_size=12),
)
def test_a_ratio_interval_never_passes_minus_100_percent(base: list[float], other: list[float]) -> None:
    test = welch_ratio(base, other)
    assert test.ratio > 0
    if test.testable:
        assert 0 < test.low <= test.ratio * (1 + 1e-9) and test.ratio <= test.high * (1 + 1e-9)
    assert 0 <= test.p_value <= 1


def test_one_run_per_side_is_not_testable() -> None:
    test = welch_ratio([1000.0], [2000.0])
    assert not test.testable and test.p_value == 1.0 and test.ratio == pytest.approx(2.0)
    assert estimate([5.0]).half_width_rel == math.inf


def test_identical_runs_are_no_evidence_and_identical_differences_are_exact() -> None:
    assert welch_ratio([100.0, 100.0], [100.0, 100.0]).p_value == 1.0
    assert welch_ratio([100.0, 100.0], [120.0, 120.0]).p_value == 0.0


def test_values_must_be_positive() -> None:
    with pytest.raises(ValueError):
        estimate([0.0, 1.0])
    with pytest.raises(ValueError):
        welch_ratio([1.0, math.nan], [1.0, 2.0])


def test_holm_matches_the_textbook_example() -> None:
    # Holm (1979) step-down: sorted p 0.01, 0.02, 0.03, 0.04 with m=4 -> 0.04, 0.06, 0.06, 0.06
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm([]) == []


@given(st.lists(st.floats(0, 1), min_size=1, max_size=50))
def test_holm_never_lowers_a_p_value_and_keeps_the_order(ps: list[float]) -> None:
    adjusted = holm(ps)
    assert all(a >= p - 1e-12 and a <= 1 for a, p in zip(adjusted, ps))
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    assert all(adjusted[order[i]] <= adjusted[order[i + 1]] + 1e-12 for i in range(len(ps) - 1))


def test_runs_needed_reaches_the_target_it_promises() -> None:
    rng = np.random.default_rng(1)
    n = runs_needed(0.1, 0.05)
    assert 10 < n < 30
    widths = [estimate(_runs(rng, 100, 0.1, n)).half_width_rel for _ in range(400)]
    assert float(np.median(widths)) <= 0.05 * 1.1
    assert runs_needed(0.0, 0.05) == 2
    assert runs_needed(5.0, 0.01, cap=50) == 50


def test_batch_means_need_enough_seconds() -> None:
    assert batch_means([1.0] * 9) == []
    assert batch_means(list(range(1, 11))) == [1.5, 3.5, 5.5, 7.5, 9.5]


def test_the_rate_slope_of_pairs_on_an_exact_line_is_that_line_with_no_width() -> None:
    """Every pair's other / base = exp(-0.0002 x rate): the slope is -0.0002 and nothing scatters about it."""
    points = [(rate, 1000.0, 1000.0 * math.exp(-0.0002 * rate)) for rate in (1, 10, 50, 100) for _ in range(3)]
    found = rate_slope(points)
    assert found.slope == pytest.approx(-0.0002, rel=1e-9) and found.n == 12
    assert found.low == pytest.approx(-0.0002, rel=1e-9) and found.high == pytest.approx(-0.0002, rel=1e-9)
    centre, low, high = found.ratio_at(1.0)
    assert centre == pytest.approx(math.exp(-0.0002)) and low == pytest.approx(centre) and high == pytest.approx(centre)


def test_the_rate_slope_is_least_squares_through_the_origin_with_a_t_interval_on_n_minus_1() -> None:
    """A scattered sample checked against numpy's least squares (no intercept column) and scipy's t."""
    rates = [1.0, 1.0, 10.0, 10.0, 50.0, 50.0, 100.0, 100.0]
    logs = [0.01, -0.02, -0.005, 0.012, -0.03, -0.004, -0.041, -0.018]
    found = rate_slope([(rate, 500.0, 500.0 * math.exp(d)) for rate, d in zip(rates, logs)])
    x, y = np.array(rates)[:, None], np.array(logs)
    (slope,), (residual_ss,), _, _ = np.linalg.lstsq(x, y, rcond=None)
    half = sps.t.ppf(0.975, len(rates) - 1) * math.sqrt(residual_ss / (len(rates) - 1)) / math.sqrt(sum(r * r for r in rates))
    assert found.slope == pytest.approx(slope, rel=1e-9)
    assert (found.low, found.high) == (pytest.approx(slope - half, rel=1e-9), pytest.approx(slope + half, rel=1e-9))
    centre, low, high = found.ratio_at(1.0)
    assert (centre, low, high) == (pytest.approx(math.exp(slope)), pytest.approx(math.exp(slope - half)),
                                   pytest.approx(math.exp(slope + half)))


def test_the_rate_slope_interval_covers_the_true_cost_at_its_level() -> None:
    """Pairs at 1, 10, 50 and 100 a second whose log ratio is -0.0001 x rate plus a pair's noise (log-sd 0.06,
    this virtio disk's pair-to-pair spread): the 95 % interval misses the true slope about 5 % of the time."""
    rng = np.random.default_rng(5)
    misses = 0
    for _ in range(TRIALS):
        points = [(rate, 1000.0, 1000.0 * math.exp(-0.0001 * rate + rng.normal(0, 0.06)))
                  for rate in (1, 10, 50, 100) for _ in range(5)]
        found = rate_slope(points)
        assert found.low is not None and found.high is not None
        misses += not (found.low <= -0.0001 <= found.high)
    assert 0.05 / 2 <= misses / TRIALS <= _binomial_upper(0.05, TRIALS)


def test_the_rate_slope_needs_pairs_and_a_rate() -> None:
    with pytest.raises(ValueError, match="no pairs"):
        rate_slope([])
    with pytest.raises(ValueError, match="rates"):
        rate_slope([(0.0, 1.0, 1.0), (0.0, 1.0, 2.0)])
    one = rate_slope([(10.0, 100.0, 99.0)])
    assert one.slope == pytest.approx(math.log(0.99) / 10) and one.low is None and one.ratio_at(1.0)[1] is None
