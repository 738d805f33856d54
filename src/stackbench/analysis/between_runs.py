"""Statistics whose unit of replication is a separate fio run.

Why this module exists: the seconds inside one fio run are not independent replicates of a configuration.
They are correlated (~0.3 lag-1 here), and separate runs of the same cell differed by 14-40 % in their
medians on this project's CI machine, 1.1-8x more than the seconds imply. Treating seconds as replicates
called 68 % of A/A rows significant. benchstat (`-count` separate runs) and pyperf (separate worker
processes) replicate whole runs; so does this module.

Each run is summarised by one number (its post-ramp IOPS, as fio reports it). Throughput is a positive,
multiplicative quantity, so everything happens on log values: the cell estimate is the geometric mean with
a Student-t interval on the logs (n-1 degrees of freedom), and a change is a ratio whose interval is the
exponential of an interval on the difference of log means. A ratio interval can therefore never reach
-100 %, which the old median-shift interval could (-101 % was seen).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from stackbench.analysis import student_t  # not scipy.stats: 0.7-1.0 s of imports for every run command

# An interval whose ends are more than this factor apart says nothing a reader can use: presenters print the
# runs' range and "too noisy to tell" instead of its bounds (docs/statistics.md, "Too noisy to tell").
READABLE_FACTOR = 4.0


def too_noisy(low: float | None, high: float | None) -> bool:
    """Whether an interval (of a value or of a ratio) is missing or spans more than READABLE_FACTOR.

    One rule for every interval and spread, so no presenter prints `-100%/+211506333543310%`: four runs'
    worth of 27 % spread still give a readable interval; a run at 1,000,000 IOPS among runs at 10,000 does not.
    """
    if low is None or high is None or not (low > 0 and math.isfinite(high)):
        return True
    return high / low > READABLE_FACTOR


@dataclass(frozen=True)
class Estimate:
    """A cell's value across its runs: geometric mean and its interval (None below two runs)."""

    n: int
    centre: float
    low: float | None
    high: float | None
    confidence: float
    log_sd: float | None  # between-run standard deviation of ln(value); ~ the relative run-to-run spread

    @property
    def half_width_rel(self) -> float:
        """The larger distance from the centre to an interval end, relative to the centre (inf if unknown)."""
        if self.low is None or self.high is None or self.centre <= 0:
            return math.inf
        return max(self.centre - self.low, self.high - self.centre) / self.centre

    @property
    def spread_rel(self) -> float | None:
        """Run-to-run variation as a relative figure (exp(sd of logs) - 1), for messages."""
        return None if self.log_sd is None else math.expm1(self.log_sd)

    @property
    def too_noisy(self) -> bool:
        """No interval (one run), or one wider than READABLE_FACTOR: the runs' range says more."""
        return too_noisy(self.low, self.high)

    @property
    def spread_too_noisy(self) -> bool:
        """The same rule for the spread: the band of one sd either side of the centre spans more than
        READABLE_FACTOR (a spread above 100 %), where "sd 1571 %" would mean nothing."""
        return self.log_sd is None or too_noisy(math.exp(-self.log_sd), math.exp(self.log_sd))


def _logs(values: Sequence[float], what: str = "values") -> list[float]:
    # Plain floats, not NumPy: a handful of runs per cell, and `show` should not pay NumPy's import.
    data = [float(v) for v in values]
    if not data:
        raise ValueError(f"no {what}")
    if not all(math.isfinite(v) and v > 0 for v in data):
        raise ValueError(f"{what} must be finite and positive")
    return [math.log(v) for v in data]


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _variance(values: Sequence[float]) -> float:
    """Sample variance (n - 1), two-pass for accuracy."""
    centre = _mean(values)
    return math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1)


def estimate(values: Sequence[float], confidence: float = 0.95) -> Estimate:
    """Geometric mean of per-run values with a t-interval on their logs."""
    logs = _logs(values, "per-run values")
    n = len(logs)
    mean = _mean(logs)
    if n < 2:
        return Estimate(n, math.exp(mean), None, None, confidence, None)
    sd = math.sqrt(_variance(logs))
    half = float(student_t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return Estimate(n, math.exp(mean), math.exp(mean - half), math.exp(mean + half), confidence, sd)


@dataclass(frozen=True)
class RatioTest:
    """other / base across runs: the ratio of geometric means, its interval, and a two-sided p-value."""

    ratio: float
    low: float | None
    high: float | None
    p_value: float
    n_base: int
    n_other: int
    method: str  # "welch-log" or "paired-log"
    confidence: float
    df: float = 0.0  # degrees of freedom of the t distribution behind p and the interval
    # The run-to-run spread the test saw, as an sd of log values: for a paired test the sd of the per-round
    # log ratios, for Welch the root mean square of the two sides' sds (None below two runs a side). What
    # `advice.runs_to_decide` takes to say how many runs or rounds would decide the question.
    log_sd: float | None = None

    def interval_at(self, confidence: float) -> tuple[float, float] | None:
        """The ratio interval at another confidence level (e.g. 90 % for the two one-sided tests of `same`)."""
        if self.low is None or self.high is None:
            return None
        half = (math.log(self.high) - math.log(self.low)) / 2
        if half == 0 or self.df <= 0:
            return self.low, self.high
        scale = student_t.ppf(0.5 + confidence / 2, self.df) / student_t.ppf(0.5 + self.confidence / 2, self.df)
        centre = math.log(self.ratio)
        return math.exp(centre - half * scale), math.exp(centre + half * scale)

    @property
    def testable(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def too_noisy(self) -> bool:
        """Untestable, or an interval of the ratio wider than READABLE_FACTOR."""
        return too_noisy(self.low, self.high)


def welch_ratio(base: Sequence[float], other: Sequence[float], confidence: float = 0.95) -> RatioTest:
    """Welch's t-test on log values of independent runs; the interval is on the ratio of geometric means.

    Welch rather than Student: a change often changes the spread too (a cache makes runs steadier).
    Below two runs per side there is no between-run variance, so no test: p = 1 and no interval.
    """
    a, b = _logs(base, "base runs"), _logs(other, "other runs")
    diff = _mean(b) - _mean(a)
    ratio = math.exp(diff)
    if len(a) < 2 or len(b) < 2:
        return RatioTest(ratio, None, None, 1.0, len(a), len(b), "welch-log", confidence)
    va, vb = _variance(a) / len(a), _variance(b) / len(b)
    spread = math.sqrt((_variance(a) + _variance(b)) / 2)
    se2 = va + vb
    if se2 == 0:
        # Identical runs on both sides: a difference of exactly zero is no evidence; any other is exact.
        p = 1.0 if diff == 0 else 0.0
        return RatioTest(ratio, ratio, ratio, p, len(a), len(b), "welch-log", confidence, log_sd=0.0)
    df = se2**2 / ((va**2 / (len(a) - 1)) + (vb**2 / (len(b) - 1)))
    se = math.sqrt(se2)
    t = diff / se
    p = float(2 * student_t.sf(abs(t), df))
    half = float(student_t.ppf(0.5 + confidence / 2, df)) * se
    return RatioTest(ratio, math.exp(diff - half), math.exp(diff + half), p, len(a), len(b), "welch-log",
                     confidence, df, spread)


def paired_ratio(pairs: Sequence[tuple[float, float]], confidence: float = 0.95) -> RatioTest:
    """A paired t-test on per-round log ratios (ABAB rounds of `stackbench ab`).

    Pairing by round removes drift that hits A and B of one round alike (a pool filling, a neighbour VM),
    which the independent test would count as noise.
    """
    if not pairs:
        raise ValueError("no pairs")
    a = _logs([p[0] for p in pairs], "base runs")
    b = _logs([p[1] for p in pairs], "other runs")
    d = [y - x for x, y in zip(a, b)]
    n = len(d)
    mean = _mean(d)
    ratio = math.exp(mean)
    if n < 2:
        return RatioTest(ratio, None, None, 1.0, n, n, "paired-log", confidence)
    sd = math.sqrt(_variance(d))
    if sd == 0:
        p = 1.0 if mean == 0 else 0.0
        return RatioTest(ratio, ratio, ratio, p, n, n, "paired-log", confidence, log_sd=0.0)
    se = sd / math.sqrt(n)
    p = float(2 * student_t.sf(abs(mean / se), n - 1))
    half = float(student_t.ppf(0.5 + confidence / 2, n - 1)) * se
    return RatioTest(ratio, math.exp(mean - half), math.exp(mean + half), p, n, n, "paired-log", confidence, n - 1, sd)


@dataclass(frozen=True)
class RateSlope:
    """How a paired ratio (other / base) moves with a rate, per unit of the rate: the least-squares slope
    of the pairs' log ratios through the origin, and its t-interval. What a dose-response bench fits to
    make an effect too small for one pair resolvable: the cost of a sampler at 100 samples a second is a
    hundred times its cost at one, and the slope says what one costs (bench/overhead_bench.py)."""

    slope: float  # ln(other / base) per unit of rate
    low: float | None
    high: float | None
    n: int
    confidence: float
    log_sd: float | None  # the residual sd of the log ratios about the line

    def ratio_at(self, rate: float) -> tuple[float, float | None, float | None]:
        """The ratio the line implies at `rate` (not negative), and its interval's ends (None below two
        pairs)."""
        centre = math.exp(self.slope * rate)
        if self.low is None or self.high is None:
            return centre, None, None
        return centre, math.exp(self.low * rate), math.exp(self.high * rate)


def rate_slope(points: Sequence[tuple[float, float, float]], confidence: float = 0.95) -> RateSlope:
    """Least squares through the origin of each pair's log ratio ln(other / base) on its rate, from
    (rate, base, other) triples: at rate 0 the two sides are the same thing, so the line has no intercept.
    The interval is Student's on the slope with n - 1 degrees of freedom, the pairs' scatter about the line
    taken as the same at every rate."""
    if not points:
        raise ValueError("no pairs")
    rates = [float(rate) for rate, _, _ in points]
    if not all(math.isfinite(rate) and rate >= 0 for rate in rates) or not any(rates):
        raise ValueError("rates must be finite, not negative, and not all zero")
    base = _logs([p[1] for p in points], "base runs")
    other = _logs([p[2] for p in points], "other runs")
    d = [y - x for x, y in zip(base, other)]
    leverage = math.fsum(r * r for r in rates)
    slope = math.fsum(r * v for r, v in zip(rates, d)) / leverage
    n = len(d)
    if n < 2:
        return RateSlope(slope, None, None, n, confidence, None)
    sd = math.sqrt(math.fsum((v - slope * r) ** 2 for r, v in zip(rates, d)) / (n - 1))
    half = float(student_t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(leverage)
    return RateSlope(slope, slope - half, slope + half, n, confidence, sd)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (same order as given): family-wise error <= alpha over all rows.

    Holm rather than Bonferroni: uniformly more powerful, and valid under any dependence between rows
    (rows of one run share the machine, so they are not independent).
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def geomean_interval(tests: Sequence[RatioTest]) -> tuple[float, float, float] | None:
    """The geometric mean of several ratios with a 95 % interval combined from each one's log-ratio
    interval (treated as independent): compare's summary line and layers' geomean row. None when a ratio
    has no interval."""
    halves, logs = [], []
    for test in tests:
        if test.low is None or test.high is None:
            return None
        halves.append((math.log(test.high) - math.log(test.low)) / 2)
        logs.append(math.log(test.ratio))
    if not logs:
        return None
    centre = sum(logs) / len(logs)
    half = math.sqrt(sum(h * h for h in halves)) / len(logs)
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)


def runs_needed(log_sd: float, target_half_width: float, confidence: float = 0.95, cap: int = 1000) -> int:
    """Runs per cell for the geometric mean's interval to reach +-target, given the between-run log-sd seen."""
    if log_sd <= 0:
        return 2
    goal = math.log1p(target_half_width)
    for n in range(2, cap + 1):
        if student_t.ppf(0.5 + confidence / 2, n - 1) * log_sd / math.sqrt(n) <= goal:
            return n
    return cap


def batch_means(values: Sequence[float], batches: int = 5) -> list[float]:
    """Means of consecutive blocks of a per-second series: the weak stand-in for runs of a legacy cell.

    Only for runs stored before replicates existed. Blocks of one run still share its state (file layout,
    cache contents), so they understate the run-to-run variation; verdicts built on them carry a warning.
    """
    data = [float(v) for v in values if v > 0 and math.isfinite(v)]
    if len(data) < batches * 2:
        return []
    size = len(data) // batches
    return [sum(data[i * size:(i + 1) * size]) / size for i in range(batches)]
