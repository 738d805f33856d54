"""The I/O count and block size behind fio's truncated numbers, when an output prints no count.

fio's terse lines and its JSON before 2.17 give a direction's KiB moved (bytes >> 10), its bandwidth in KiB/s
and its IOPS as integers, each truncated, and no I/O count. A fixed block size `bs` and count `n` must
reproduce all three at once; when exactly one block size does (multiples of 512 first), the block size is a
fact, and when one count does too, so is the IOPS fio computed from it. Otherwise the output does not say
them, and the caller must store them as unknown rather than take an average for a block size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_MAX_CANDIDATES = 20_000


@dataclass(frozen=True)
class Recovered:
    ios: int  # the count when `ios_exact`, else the middle of the counts that fit
    bs: int  # the block size when `bs_exact`, else the average bytes per I/O (not a block size)
    ios_exact: bool
    bs_exact: bool


def recover(kib: int, bw_kib: int, iops: int, runtime_ms: int) -> Recovered:
    """(I/O count, block size) from kib = bytes >> 10, bw_kib = (1000 * bytes // runtime) // 1024 and
    iops = 1000 * ios // runtime, as fio computes them; every (ios, bs) pair with a whole block size that
    reproduces all three is a candidate."""
    if runtime_ms <= 0:
        return Recovered(0, 4096, False, False)
    bytes_lo = max(kib * 1024, math.ceil(bw_kib * 1024 * runtime_ms / 1000))
    bytes_hi = min(kib * 1024 + 1023, math.ceil((bw_kib + 1) * 1024 * runtime_ms / 1000) - 1)
    ios_lo = max(1, math.ceil(iops * runtime_ms / 1000))
    ios_hi = math.ceil((iops + 1) * runtime_ms / 1000) - 1
    candidates: list[tuple[int, int]] = []
    if bytes_lo <= bytes_hi and ios_lo <= ios_hi and ios_hi - ios_lo <= _MAX_CANDIDATES:
        for ios in range(ios_lo, ios_hi + 1):
            low, high = math.ceil(bytes_lo / ios), bytes_hi // ios
            if len(candidates) + max(0, high - low + 1) > _MAX_CANDIDATES:
                candidates = []  # too little information to single out a block size
                break
            candidates.extend((ios, bs) for bs in range(low, high + 1))
    for pool in ([c for c in candidates if c[1] % 512 == 0], candidates):
        sizes = {bs for _, bs in pool}
        if len(sizes) == 1:
            counts = sorted(ios for ios, _ in pool)
            return Recovered(counts[len(counts) // 2], sizes.pop(), len(counts) == 1, True)
    ios = max(1, round((iops + 0.5) * runtime_ms / 1000))
    return Recovered(ios, max(1, round((bytes_lo + bytes_hi) / 2 / ios)), False, False)
