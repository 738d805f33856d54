"""Student's t from scipy.special (analysis/student_t.py) against scipy.stats.t, the reference the
verdicts were first computed with: the same numbers."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from stackbench.analysis import student_t

# degrees of freedom from run counts (n - 1, Welch's fractional ones) up to far beyond them
DFS = [0.5, 1, 1.5, 2, 2.7, 3, 4, 5, 7, 9.3, 10, 19, 29, 50, 99, 150.5, 300, 1000, 5000, 1e5, 2e6, 5e7, math.inf]


@pytest.mark.parametrize("df", DFS)
def test_quantiles_are_scipy_stats(df: float) -> None:
    for p in (0.6, 0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.99999, 0.4, 0.025, 0.001):
        assert student_t.ppf(p, df) == pytest.approx(float(stats.t.ppf(p, df)), rel=1e-12), p


@pytest.mark.parametrize("df", DFS)
def test_tails_are_scipy_stats(df: float) -> None:
    for t in (0.0, 1e-6, 0.01, 0.3, 1.0, 1.96, 2.5, 4.0, 10.0, 30.0, 1e3):
        for signed in (t, -t):
            assert student_t.sf(signed, df) == pytest.approx(float(stats.t.sf(signed, df)), rel=1e-12,
                                                             abs=1e-300), signed


def test_the_quantile_inverts_the_tail() -> None:
    for df in (1, 4, 29):
        for p in (0.5000001, 0.9, 0.975):
            assert 1 - student_t.sf(student_t.ppf(p, df), df) == pytest.approx(p, rel=1e-9)  # SciPy's own precision


def test_edges() -> None:
    assert (student_t.ppf(0.5, 3), student_t.ppf(1.0, 3), student_t.ppf(0.0, 3)) == (0.0, math.inf, -math.inf)
    assert (student_t.sf(math.inf, 3), student_t.sf(-math.inf, 3), student_t.sf(0.0, 3)) == (0.0, 1.0, 0.5)
    assert student_t.sf(1.96, math.inf) == pytest.approx(float(stats.norm.sf(1.96)), rel=1e-12)
    for bad in ((math.nan, 3.0), (1.0, math.nan), (1.0, 0.0), (1.0, -2.0)):
        assert math.isnan(student_t.sf(*bad)) and math.isnan(student_t.ppf(0.9 if bad[0] == 1.0 else bad[0], bad[1]))
    assert math.isnan(student_t.ppf(1.5, 3))


def test_a_run_command_imports_scipy_special_not_scipy_stats() -> None:
    """The point of this module: what a run's cells need costs scipy.special's import, not scipy.stats'."""
    import subprocess
    import sys

    probe = ("import sys; from stackbench.analysis.between_runs import *; from stackbench.analysis import student_t; "
             "student_t.ppf(0.975, 4); student_t.sf(2.0, 4); print('scipy.stats' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "False\n"


@pytest.mark.parametrize("p", sorted(student_t.TABLED))
def test_the_tabled_quantiles_are_scipy_special_to_the_last_bit(p: float) -> None:
    """The written-down quantiles give the same intervals, to the byte, as asking SciPy would."""
    from scipy.special import stdtrit

    tabled = student_t.TABLED[p]
    assert len(tabled) == 100
    for df in range(1, len(tabled) + 1):
        assert student_t.ppf(p, df) == float(stdtrit(df, p)), df
        assert student_t.ppf(p, float(df)) == float(stdtrit(df, p)), df


def test_a_run_s_intervals_import_no_scipy_at_all() -> None:
    """`show` and `report` put a 95 % interval on each cell of n runs (between_runs.estimate); with the
    quantiles tabled they pay none of SciPy's start-up. A quantile outside the table still asks SciPy."""
    import subprocess
    import sys

    probe = ("import sys; from stackbench.analysis import between_runs, student_t; "
             "between_runs.estimate([100.0, 110.0, 95.0]); student_t.ppf(0.95, 29); print('scipy' in sys.modules); "
             "student_t.ppf(0.975, 2.5); print('scipy.special' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "False\nTrue\n"
