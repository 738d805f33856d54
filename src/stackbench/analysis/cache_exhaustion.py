"""Where a sequential write falls off a cliff: the write cache (an SSD's SLC cache, a RAID controller's
DRAM, the page cache's dirty limit) is full and the rest goes at the speed of what is behind it.

The detector is a change point on the per-second bandwidth that is robust to the noise real drives make:
for every split of the series into "before" and "after" (each at least MIN_SIDE seconds), the cost is the
sum of absolute deviations from each side's median (the L1 change point: one garbage-collection stall or a
txg flush moves a median by nothing, a mean by a lot). The split with the lowest cost is the candidate.
It is only claimed as a fall when all of these hold, so a flat or noisy run says "no fall" rather than
inventing one:

- the after-median is at least MIN_DROP (20 %) below the before-median: smaller steps are within the
  run-to-run noise of real devices (separate runs differ by 14-40 % in docs/statistics.md);
- the two sides separate: at least SEPARATION (80 %) of the seconds on each side lie on their own side of
  the midpoint between the medians (a fall, not a slow drift or a saw-tooth);
- the split explains the series: it removes at least EXPLAINED (50 %) of the absolute deviation from the
  single median (a step, not noise around a level).

The fall's position is given in bytes written before it (what a buyer compares with the cache size in a
review) and in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any, Sequence

MIN_SIDE = 3
MIN_DROP = 0.20
SEPARATION = 0.80
EXPLAINED = 0.50


@dataclass(frozen=True)
class CacheFall:
    """The result of looking for a fall in one series of per-second bandwidths (bytes/s)."""

    fell: bool
    reason: str
    index: int | None = None  # the first second after the fall
    seconds: float | None = None  # time of the fall from the first sample
    bytes_before: float | None = None  # bytes written before the fall
    before_bytes_s: float | None = None  # median bandwidth before
    after_bytes_s: float | None = None  # median bandwidth after

    @property
    def drop(self) -> float | None:
        """The fall as a fraction of the bandwidth before it (0.75 = 75 % slower)."""
        if self.before_bytes_s is None or self.after_bytes_s is None or not self.before_bytes_s:
            return None
        return 1 - self.after_bytes_s / self.before_bytes_s

    def to_json(self) -> dict[str, Any]:
        return {
            "fell": self.fell, "reason": self.reason, "index": self.index, "seconds": self.seconds,
            "bytes_before": self.bytes_before, "before_bytes_s": self.before_bytes_s,
            "after_bytes_s": self.after_bytes_s, "drop": self.drop,
        }


def _cost(values: Sequence[float]) -> float:
    centre = median(values)
    return sum(abs(v - centre) for v in values)


def find_fall(bandwidth: Sequence[float], interval_s: float = 1.0) -> CacheFall:
    """Look for one lasting fall in `bandwidth` (bytes/s, one value per `interval_s`, in time order)."""
    values = [float(v) for v in bandwidth]
    n = len(values)
    if n < 2 * MIN_SIDE:
        return CacheFall(False, f"too short: {n} seconds, a fall needs at least {MIN_SIDE} on each side")
    whole = _cost(values)
    best_k, best_cost = None, None
    for k in range(MIN_SIDE, n - MIN_SIDE + 1):
        cost = _cost(values[:k]) + _cost(values[k:])
        if best_cost is None or cost < best_cost:
            best_k, best_cost = k, cost
    assert best_k is not None and best_cost is not None
    before, after = values[:best_k], values[best_k:]
    high, low = median(before), median(after)
    common = dict(index=best_k, seconds=best_k * interval_s, bytes_before=sum(before) * interval_s,
                  before_bytes_s=high, after_bytes_s=low)
    if high <= 0 or low > high * (1 - MIN_DROP):
        return CacheFall(False, f"no fall: the best split changes the median by less than {MIN_DROP:.0%}", **common)
    middle = (high + low) / 2
    above = sum(v > middle for v in before) / len(before)
    below = sum(v < middle for v in after) / len(after)
    if min(above, below) < SEPARATION:
        return CacheFall(
            False, f"no clear fall: only {min(above, below):.0%} of the seconds on one side of the split stay on "
            f"their side (a fall needs {SEPARATION:.0%}): a drift or an oscillation, not a cache running out",
            **common,
        )
    explained = 1 - best_cost / whole if whole else 0.0
    if explained < EXPLAINED:
        return CacheFall(
            False, f"no clear fall: the split explains {explained:.0%} of the variation (a fall needs "
            f"{EXPLAINED:.0%})", **common,
        )
    return CacheFall(True, f"throughput falls by {1 - low / high:.0%} after {best_k * interval_s:g} s", **common)
