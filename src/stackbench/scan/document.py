"""A stored scan read back: the `smallblocks --json` document (built by report/smallblocks.py) turned into the
walk's result, the recommendation and the usage estimates again, so `show` prints it as `smallblocks` did.

The document comes from the store, where anything may have happened to it (an older version, a hand edit):
every field is checked, and a document that does not hold what a scan holds raises `ValueError` naming the
field, never a half-shown scan.
"""

from __future__ import annotations

from typing import Any

from stackbench.scan.histogram import SizeHistogram
from stackbench.scan.special_vdev import Estimate, Recommendation
from stackbench.scan.walker import WalkResult


def _field(data: Any, key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    if not isinstance(data, dict) or key not in data:
        raise ValueError(f"no {where}{key!r} in the stored scan")
    value = data[key]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise ValueError(f"{where}{key!r} is not a number")
    if not isinstance(value, kind):
        raise ValueError(f"{where}{key!r} is {type(value).__name__}, not {getattr(kind, '__name__', 'a number')}")
    return value


def histogram_from_json(bins: Any) -> SizeHistogram:
    """The inverse of `SizeHistogram.to_json`: {"1024": {"count", "bytes"}, ...}."""
    if not isinstance(bins, dict):
        raise ValueError("'bins' is not an object of size bins")
    histogram = SizeHistogram()
    for key, value in bins.items():
        if not str(key).isdigit() or int(key) < 1024 or int(key) & (int(key) - 1):
            raise ValueError(f"bin {key!r} is not a power of two of at least 1024")
        count, size = _field(value, "count", int, f"bin {key} "), _field(value, "bytes", int, f"bin {key} ")
        if count < 0 or size < 0:
            raise ValueError(f"bin {key} has a negative count or size")
        histogram.counts[int(key)] = count
        histogram.sizes[int(key)] = size
    return histogram


def scan_from_json(document: Any) -> tuple[WalkResult, Recommendation, list[Estimate]]:
    """(the walk, the recommendation, the estimate per special_small_blocks value) of a stored scan."""
    histogram = histogram_from_json(_field(document, "bins", dict))
    if histogram.files != _field(document, "files", int) or histogram.total_bytes != _field(document, "bytes", int):
        raise ValueError("the bins do not add up to the stored file count and bytes")
    examples = document.get("unreadable_examples", [])
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise ValueError("'unreadable_examples' is not a list of paths")
    result = WalkResult(
        histogram=histogram,
        seconds=float(_field(document, "seconds", (int, float))),
        unreadable=_field(document, "unreadable_dirs", int),
        unreadable_examples=list(examples),
        partial=_field(document, "partial", bool),
        workers=_field(document, "workers", int),
    )
    raw = _field(document, "recommendation", dict)
    try:
        rec = Recommendation(**raw)
    except TypeError as error:
        raise ValueError(f"the recommendation does not fit this version: {error}") from None
    usage = _field(document, "special_usage", list)
    table = [
        Estimate(_field(e, "special_small_blocks", int, "special_usage "), _field(e, "small_file_bytes", int,
                 "special_usage "), _field(e, "metadata_bytes", int, "special_usage "))
        for e in usage
    ]
    return result, rec, table
