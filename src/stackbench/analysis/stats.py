"""Sample statistics that make no normality assumption, as benchstat does.

Storage benchmark samples are skewed and autocorrelated (a ZFS txg flush every 5 s, garbage collection in
an SSD), so the centre is the median with a distribution-free confidence interval from order statistics,
and two samples are compared with the Mann-Whitney U test and a Hodges-Lehmann interval for the shift.
Every result carries warnings rather than silently degrading: too few samples for an interval, too few to
ever detect a difference, a failed test (reported as p = 1, never as significant).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

    from stackbench.model.results import Cell


def _scipy_stats():  # noqa: ANN202 - scipy.stats takes 0.7 s to import: only when a statistic is computed
    from scipy import stats

    return stats


@dataclass(frozen=True)
class Summary:
    """Centre and spread of one sample."""

    n: int
    median: float
    ci_low: float
    ci_high: float
    confidence: float
    mean: float
    stdev: float
    minimum: float
    maximum: float
    warnings: tuple[str, ...] = ()

    @property
    def cv(self) -> float:
        """Coefficient of variation (stdev / mean); 0 for a single value."""
        return self.stdev / self.mean if self.mean else 0.0

    @property
    def ci_half_width_rel(self) -> float:
        """The larger distance from the median to an interval end, relative to the median (inf if unknown)."""
        if not math.isfinite(self.ci_low) or not math.isfinite(self.ci_high) or self.median == 0:
            return math.inf
        return max(self.median - self.ci_low, self.ci_high - self.median) / abs(self.median)


def format_p(p: float) -> str:
    """A p-value as printed beside a claim: three decimals, or `p<0.001` where three decimals would round it
    to `p=0.000`, which reads as "impossible by chance" and no test says that."""
    return "p<0.001" if p < 0.0005 else f"p={p:.3f}"


def min_samples_for_ci(confidence: float) -> int:
    """The smallest n whose extreme order statistics (min, max) cover the median with this confidence."""
    n = 1
    while 1 - 2 * 0.5**n < confidence:
        n += 1
    return n


def median_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free CI of the median: the widest-inside symmetric pair of order statistics.

    The coverage of (x_(j), x_(n+1-j)) is P(j <= B <= n-j) = 1 - 2 P(B <= j-1) for B ~ Binomial(n, 1/2); we
    take the largest j whose coverage still reaches `confidence`. Too few samples give (-inf, inf). The
    binomial sums are exact integers (standard library only: every run's within-run summary comes here, and
    numpy and scipy.stats would cost a run command about a second of imports).
    """
    data = sorted(float(v) for v in values)
    n = len(data)
    if n < min_samples_for_ci(confidence):
        return (-math.inf, math.inf)
    total = 2**n
    below = 0  # 2**n * P(B <= j-1), built term by term: C(n, k+1) = C(n, k) * (n-k) / (k+1)
    term = 1  # C(n, j-1)
    best = 1
    for j in range(1, n // 2 + 1):
        below += term
        term = term * (n - j + 1) // j
        if (total - 2 * below) / total >= confidence:
            best = j
        else:
            break
    return data[best - 1], data[n - best]


def summarize(values: Sequence[float], confidence: float = 0.95) -> Summary:
    """A sample's centre and spread (standard library only, like `median_ci`)."""
    data = [float(v) for v in values]
    if not data:
        raise ValueError("cannot summarize an empty sample")
    if not all(math.isfinite(v) for v in data):
        raise ValueError("samples must be finite numbers")
    warnings = []
    low, high = median_ci(data, confidence)
    if not math.isfinite(low):
        warnings.append(
            f"need >= {min_samples_for_ci(confidence)} samples for a confidence interval at level {confidence:g}"
        )
    n = len(data)
    mean = math.fsum(data) / n
    return Summary(
        n=n,
        median=statistics.median(data),
        ci_low=low,
        ci_high=high,
        confidence=confidence,
        mean=mean,
        stdev=math.sqrt(math.fsum((v - mean) ** 2 for v in data) / (n - 1)) if n > 1 else 0.0,
        minimum=min(data),
        maximum=max(data),
        warnings=tuple(warnings),
    )


@dataclass(frozen=True)
class Comparison:
    """B against A: relative change of the medians, its interval, and whether it is significant."""

    base: Summary
    other: Summary
    delta_pct: float
    delta_ci_low_pct: float
    delta_ci_high_pct: float
    p_value: float
    alpha: float
    warnings: tuple[str, ...] = ()

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha

    @property
    def ratio(self) -> float:
        return self.other.median / self.base.median if self.base.median else math.inf


def min_samples_to_detect(alpha: float) -> int:
    """Smallest equal sample size at which Mann-Whitney U can reach p < alpha at all (two-sided)."""
    n = 1
    while 2 / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


def compare_samples(
    base: Sequence[float], other: Sequence[float], *, alpha: float = 0.05, confidence: float = 0.95
) -> Comparison:
    import numpy as np

    a = np.asarray(base, dtype=float)
    b = np.asarray(other, dtype=float)
    sa, sb = summarize(a, confidence), summarize(b, confidence)
    warnings: list[str] = []
    smallest_p = 2 / math.comb(a.size + b.size, a.size)
    if smallest_p >= alpha:
        warnings.append(
            f"need >= {min_samples_to_detect(alpha)} samples per side to detect a difference at alpha={alpha:g}"
        )
    try:
        if np.all(a == a[0]) and np.all(b == a[0]):
            p_value = 1.0  # identical constants: no evidence of any difference
        else:
            p_value = float(_scipy_stats().mannwhitneyu(a, b, alternative="two-sided").pvalue)
        if not math.isfinite(p_value):
            raise ValueError("non-finite p-value")
    except ValueError as error:
        warnings.append(f"the Mann-Whitney U test failed ({error}); reporting p = 1")
        p_value = 1.0
    low, high = _shift_ci(a, b, confidence)
    scale = 100.0 / sa.median if sa.median else math.nan
    return Comparison(
        base=sa,
        other=sb,
        delta_pct=(sb.median - sa.median) * scale,
        delta_ci_low_pct=low * scale,
        delta_ci_high_pct=high * scale,
        p_value=p_value,
        alpha=alpha,
        warnings=tuple(warnings),
    )


def _shift_ci(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    """Hodges-Lehmann interval for the shift b - a from the order statistics of all pairwise differences."""
    import numpy as np

    n, m = a.size, b.size
    differences = np.sort(np.subtract.outer(b, a).ravel())
    z = _scipy_stats().norm.ppf(0.5 + confidence / 2)
    k = int(math.floor(n * m / 2 - z * math.sqrt(n * m * (n + m + 1) / 12)))
    if k < 0:
        return (-math.inf, math.inf)
    return float(differences[k]), float(differences[n * m - 1 - k])


def sample_summary(cell: "Cell", confidence: float = 0.95) -> Summary | None:
    """Within-run diagnostics: the statistics of a cell's per-second IOPS after the ramp (None without samples)."""
    values = [s.iops for s in cell.measured_samples]
    return summarize(values, confidence) if values else None
