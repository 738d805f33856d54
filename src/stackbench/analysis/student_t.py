"""Student's t distribution: its upper tail and its quantiles, from SciPy's special functions.

Every run command with two or more runs per cell puts a t interval on each cell (between_runs.py).
scipy.stats, where these are `t.sf` and `t.ppf`, takes 0.7-1.0 s to import here, as long as a short fleet
run's whole coordination; scipy.special, whose `stdtr` and `stdtrit` scipy.stats.t itself calls, about a
third of that. So the numbers are SciPy's, for less of its start-up, imported when first used.
"""

from __future__ import annotations

import math


def sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom (scipy.stats.t.sf)."""
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return math.nan
    from scipy.special import stdtr

    return float(stdtr(df, -t))


def ppf(p: float, df: float) -> float:
    """The t with P(T <= t) = p, for Student's t with `df` degrees of freedom (scipy.stats.t.ppf)."""
    if math.isnan(p) or math.isnan(df) or df <= 0 or not 0.0 <= p <= 1.0:
        return math.nan
    if p in (0.0, 1.0):  # stdtrit answers +inf for both
        return math.inf if p == 1.0 else -math.inf
    from scipy.special import stdtrit

    return float(stdtrit(df, p))
