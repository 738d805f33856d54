"""The power-of-two file-size histogram, with the semantics of the practitioners' awk pipeline.

    find . -type f -print0 | xargs -0 ls -l | awk '{ n=int(log($5)/log(2)); if (n<10) { n=10; } size[n]++ } ...'

A regular file of size s lands in bin 2^floor(log2 s); everything under 1 KiB, empty files included, lands in
the 1 KiB bin. Integer arithmetic (`bit_length`) gives the exact floor; awk's floating-point log agrees for
every size below 2^48 - 1 bytes (256 TiB). Memory is constant: one count and one byte sum per bin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MIN_BIN_EXP = 10  # 1 KiB


def bin_of(size: int) -> int:
    """The bin (a power of two, in bytes) a file of `size` bytes belongs to."""
    if size < 1 << MIN_BIN_EXP:
        return 1 << MIN_BIN_EXP
    return 1 << (size.bit_length() - 1)


def from_bit_lengths(counts: list[int], sizes: list[int]) -> "SizeHistogram":
    """Bins from counts and bytes indexed by `size.bit_length()`, which is how the walker counts: a list
    index per file instead of a bin computation and two dictionary updates. Every size of one bit length
    falls in one bin (the bin of its smallest size, 2^(length-1), or 0 for length 0)."""
    histogram = SizeHistogram()
    for length, count in enumerate(counts):
        if count:
            b = bin_of((1 << length) >> 1)
            histogram.counts[b] = histogram.counts.get(b, 0) + count
            histogram.sizes[b] = histogram.sizes.get(b, 0) + sizes[length]
    return histogram


@dataclass
class SizeHistogram:
    counts: dict[int, int] = field(default_factory=dict)
    sizes: dict[int, int] = field(default_factory=dict)

    def add(self, size: int) -> None:
        b = bin_of(size)
        self.counts[b] = self.counts.get(b, 0) + 1
        self.sizes[b] = self.sizes.get(b, 0) + size

    def merge(self, other: "SizeHistogram") -> None:
        for b, n in other.counts.items():
            self.counts[b] = self.counts.get(b, 0) + n
        for b, s in other.sizes.items():
            self.sizes[b] = self.sizes.get(b, 0) + s

    @property
    def files(self) -> int:
        return sum(self.counts.values())

    @property
    def total_bytes(self) -> int:
        return sum(self.sizes.values())

    def bytes_below(self, limit: int) -> int:
        """Bytes in files smaller than `limit` (a power of two >= 1 KiB): the bins strictly below it."""
        return sum(s for b, s in self.sizes.items() if b < limit)

    def rows(self) -> list[dict[str, Any]]:
        """Bins in ascending order with cumulative bytes and cumulative % of all bytes."""
        total = self.total_bytes
        cumulative = 0
        rows = []
        for b in sorted(self.counts):
            cumulative += self.sizes[b]
            rows.append(
                {
                    "bin": b,
                    "count": self.counts[b],
                    "bytes": self.sizes[b],
                    "cumulative_bytes": cumulative,
                    "cumulative_pct": cumulative / total * 100 if total else 100.0,
                }
            )
        return rows

    def to_json(self) -> dict[str, dict[str, int]]:
        return {str(b): {"count": self.counts[b], "bytes": self.sizes[b]} for b in sorted(self.counts)}
