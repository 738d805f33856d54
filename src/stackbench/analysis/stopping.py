"""When to stop measuring a cell: fixed repeats, or adaptively until the IOPS estimate is tight enough.

The practitioners ran every cell for 300 s, so the 48-cell matrix took four hours. Most cells settle in
seconds; a few (a write cache filling, a ZFS txg rhythm) need longer. The adaptive rule samples fio's
per-second IOPS, discards a ramp, and stops once the median's confidence interval is within the target
(default ±5 %) or a time cap is reached, whichever comes first, and says which it was.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence



@dataclass(frozen=True)
class StoppingRule:
    ci_target: float = 0.05  # relative half-width of the median's CI
    confidence: float = 0.95
    min_samples: int = 10  # per-second samples after the ramp before the CI is trusted
    max_seconds: float = 60.0  # cap per cell, ramp included
    chunk_seconds: float = 5.0  # fio runs in chunks of this length after the first
    ramp_seconds: float = 2.0  # discarded from the first chunk

    def first_chunk(self) -> float:
        # +1 s because fio drops the last, partial one-second window from its iops log
        return min(self.max_seconds, self.ramp_seconds + self.min_samples + 1)

    def next_chunk(self, elapsed: float) -> float:
        return max(0.0, min(self.chunk_seconds, self.max_seconds - elapsed))

    def decide(self, values: Sequence[float], elapsed: float) -> tuple[bool, str]:
        """(stop?, why) after `elapsed` seconds with these post-ramp IOPS samples."""
        from stackbench.analysis.stats import summarize  # SciPy: imported only when measuring

        if len(values) >= self.min_samples:
            summary = summarize(values, self.confidence)
            width = summary.ci_half_width_rel
            if width <= self.ci_target:
                return True, f"stable: CI ±{width:.1%} after {len(values)} samples"
            if self.next_chunk(elapsed) < 1.0:
                return True, f"time cap {self.max_seconds:g} s reached with CI ±{width:.1%} (target ±{self.ci_target:.0%})"
        elif self.next_chunk(elapsed) < 1.0:
            return True, f"time cap {self.max_seconds:g} s reached with only {len(values)} samples"
        return False, ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
