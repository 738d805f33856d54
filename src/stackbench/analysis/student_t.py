"""Student's t distribution, its upper tail and its quantiles, in the standard library.

Every run command with two or more runs per cell puts a t interval on each cell (between_runs.py), and
scipy.stats, which these two functions came from, takes 0.7-1.0 s to import: as long as the rest of a
short fleet run's coordination. The tail is the regularized incomplete beta function,
P(T > t) = I_x(df/2, 1/2) / 2 with x = df / (df + t^2), evaluated by its continued fraction (modified Lentz,
as Numerical Recipes' betacf), good to about 1e-14 relative for the degrees of freedom a run count gives;
the quantile is that tail inverted by Newton's method inside a bisection bracket. tests/analysis/test_student_t.py checks
both against scipy. Above ten million degrees of freedom (far beyond any count of runs) it is the normal
distribution, whose quantiles differ from the t ones by under 1e-6 relative there.
"""

from __future__ import annotations

import math

_NORMAL_DF = 1e7
_TINY = 1e-300
_EPSILON = 1e-16


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), which converges fast for x < (a + 1) / (a + b + 2)."""
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPSILON:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float, y: float) -> float:
    """The regularized incomplete beta function I_x(a, b); `y` is 1 - x, computed by the caller without
    cancellation."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, y) / b


def sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom (scipy.stats.t.sf)."""
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    if df > _NORMAL_DF:
        return 0.5 * math.erfc(t / math.sqrt(2.0))
    if t == 0:
        return 0.5
    square = t * t
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + square), square / (df + square))
    return tail if t > 0 else 1.0 - tail


def ppf(p: float, df: float) -> float:
    """The t with P(T <= t) = p, for Student's t with `df` degrees of freedom (scipy.stats.t.ppf)."""
    if math.isnan(p) or math.isnan(df) or df <= 0 or not 0.0 <= p <= 1.0:
        return math.nan
    if p in (0.0, 1.0):
        return math.inf if p == 1.0 else -math.inf
    if p < 0.5:
        return -ppf(1.0 - p, df)
    if p == 0.5:
        return 0.0
    upper = 1.0 - p
    low, high = 0.0, 1.0
    while sf(high, df) > upper:  # bracket it: the tail falls below `upper` somewhere past `high`
        low, high = high, high * 2.0
    t = (low + high) / 2.0
    for _ in range(200):  # Newton's steps on the tail, kept inside the bracket (bisection when they leave it)
        excess = sf(t, df) - upper  # falls as t grows
        if excess > 0:
            low = t
        else:
            high = t
        step = t + excess / _density(t, df)
        following = step if low < step < high else (low + high) / 2.0
        if abs(following - t) <= 4 * _EPSILON * abs(t) or following in (low, high):
            return following
        t = following
    return t


def _density(t: float, df: float) -> float:
    if df > _NORMAL_DF:
        return math.exp(-t * t / 2.0) / math.sqrt(2.0 * math.pi)
    return math.exp(math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
                    - (df + 1.0) / 2.0 * math.log1p(t * t / df))
