"""Choosing `special_small_blocks` from a file-size histogram and a special vdev's size.

With special_small_blocks=P a dataset stores blocks of at most P bytes on the special vdev, so (to first
order, for files below the recordsize) every file smaller than P goes there; the bins below P are its bytes.
The special vdev also holds all metadata. Two facts bound the choice:
- OpenZFS stops placing small file blocks on the special class once it is 75 % full
  (`zfs_special_class_metadata_reserve_pct`, default 25), keeping the rest for metadata; so small blocks and
  metadata must fit in 75 % of the device;
- a value at or above the dataset's recordsize sends every block of the dataset to the special vdev, so
  only values below the recordsize are candidates;
- metadata is commonly estimated at about 0.3 % of the pool's data (a rule of thumb from practitioners'
  `zdb -Lbbb` measurements; docs/method.md's 3.74 TB pool used 11.9 GB of its special vdev with 16K small blocks,
  0.32 %). It is an estimate: `--metadata-share` overrides it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from stackbench.scan.histogram import SizeHistogram

CANDIDATES = tuple(1 << e for e in range(12, 21))  # 4K .. 1M
RESERVE_FRACTION = 0.25
DEFAULT_METADATA_SHARE = 0.003


@dataclass(frozen=True)
class Estimate:
    special_small_blocks: int
    small_file_bytes: int
    metadata_bytes: int

    @property
    def total(self) -> int:
        return self.small_file_bytes + self.metadata_bytes


@dataclass(frozen=True)
class Recommendation:
    special_small_blocks: int  # 0 = metadata only
    special_size: int | None
    usable_bytes: int | None
    estimated_usage_bytes: int
    metadata_bytes: int
    metadata_share: float
    fits: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def estimates(
    histogram: SizeHistogram, metadata_share: float = DEFAULT_METADATA_SHARE, recordsize: int = 128 * 1024
) -> list[Estimate]:
    metadata = int(histogram.total_bytes * metadata_share)
    return [Estimate(p, histogram.bytes_below(p), metadata) for p in CANDIDATES if p < recordsize]


def recommend(
    histogram: SizeHistogram,
    special_size: int | None,
    metadata_share: float = DEFAULT_METADATA_SHARE,
    recordsize: int = 128 * 1024,
) -> Recommendation:
    metadata = int(histogram.total_bytes * metadata_share)
    if special_size is None:
        return Recommendation(
            0, None, None, metadata, metadata, metadata_share, True,
            "give --special-size to get a special_small_blocks recommendation; the table shows the usage per value",
        )
    usable = int(special_size * (1 - RESERVE_FRACTION))
    candidates = estimates(histogram, metadata_share, recordsize)
    fitting = [e for e in candidates if e.total <= usable]
    if fitting:
        best = fitting[-1]
        return Recommendation(
            best.special_small_blocks, special_size, usable, best.total, metadata, metadata_share, True,
            "the largest value below the recordsize whose small files plus metadata fit in 75 % of the special vdev",
        )
    if metadata <= usable and not candidates:
        return Recommendation(
            0, special_size, usable, metadata, metadata, metadata_share, True,
            "no special_small_blocks value is below the recordsize, so only metadata can go to the special vdev",
        )
    if metadata <= usable:
        return Recommendation(
            0, special_size, usable, metadata, metadata, metadata_share, True,
            "even 4K small blocks do not fit: use the special vdev for metadata only (special_small_blocks=0)",
        )
    return Recommendation(
        0, special_size, usable, metadata, metadata, metadata_share, False,
        "the estimated metadata alone exceeds 75 % of the special vdev: it is too small for this data",
    )
