"""Combining the fio runs (segments) of one cell into one result.

A cell measured in several segments (`--repeat`, or the adaptive mode's chunks) must report what one long
fio run would have: IOPS and bandwidth over the total runtime, and latency percentiles of all I/Os. Averaging
per-segment percentiles is wrong, so percentiles are recomputed from fio's json+ latency histograms (`bins`,
bucket value in ns -> count), which add exactly. Without bins (plain json) the percentiles of the segment
with the most I/Os are kept and the result says so through `percentiles_from`.

`merge_parallel` combines results that ran at the same time (the hosts of a fleet run) instead: rates add
up, and the latency percentiles are again those of all I/Os, from the summed histograms.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from typing import Any, Optional, Sequence

from stackbench.model.fio_result import DirectionResult, FioResult, Latency, LatencyBuckets


def bins_of(
    document: dict[str, Any], direction: str, sync: bool = False, job_name: str | None = None, occurrence: int = 0
) -> Counter[int] | None:
    """The json+ histogram of clat (or of the sync latency) of the first job, or None without json+.

    For an imported output of several jobs: of the `occurrence`-th job named `job_name` (numjobs without
    group_reporting repeats a name, one entry per job, and each entry is a cell)."""
    jobs = document.get("jobs") or document.get("client_stats") or []
    if job_name is not None:
        jobs = [j for j in jobs if isinstance(j, dict) and j.get("jobname") == job_name][occurrence:]
    if not jobs or not isinstance(jobs[0], dict):
        return None
    source = jobs[0].get("sync") if sync else jobs[0].get(direction)
    if not isinstance(source, dict):
        return None
    lat = source.get("lat_ns" if sync else "clat_ns")
    bins = lat.get("bins") if isinstance(lat, dict) else None
    if isinstance(bins, LatencyBuckets):  # what the parser makes of them
        return bins.counter()
    if not isinstance(bins, dict):
        return None
    try:
        return Counter({int(k): int(v) for k, v in bins.items()})
    except (TypeError, ValueError):
        return None


def percentile_from_bins(bins: Counter[int], percent: float) -> float | None:
    """The bucket value at which the cumulative count first reaches `percent` of all I/Os (fio's rule)."""
    total = sum(bins.values())
    if total == 0:
        return None
    threshold = total * percent / 100.0
    cumulative = 0
    for value in sorted(bins):
        cumulative += bins[value]
        if cumulative >= threshold:
            return float(value)
    return float(max(bins))


def _merge_latency(parts: list[Latency | None], bins: list[Counter[int] | None]) -> Latency | None:
    present = [(lat, b) for lat, b in zip(parts, bins) if lat is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0][0]
    weights = [lat.samples or 0 for lat, _ in present]
    total = sum(weights)
    if total == 0:
        return present[-1][0]
    mean = sum(lat.mean_ns * w for (lat, _), w in zip(present, weights)) / total
    # pooled variance: within-segment variance plus the spread of the segment means
    variance = sum(
        w * ((lat.stddev_ns or 0.0) ** 2 + (lat.mean_ns - mean) ** 2) for (lat, _), w in zip(present, weights)
    ) / total
    mins = [lat.min_ns for lat, _ in present if lat.min_ns is not None]
    maxs = [lat.max_ns for lat, _ in present if lat.max_ns is not None]
    if all(b is not None for _, b in present):
        merged: Counter[int] = Counter()
        for _, b in present:
            merged.update(b)  # type: ignore[arg-type]
        p50, p99, p999 = (percentile_from_bins(merged, p) for p in (50.0, 99.0, 99.9))
    else:
        biggest = max(present, key=lambda item: item[0].samples or 0)[0]
        p50, p99, p999 = biggest.p50_ns, biggest.p99_ns, biggest.p999_ns
    return Latency(
        mean_ns=mean,
        stddev_ns=math.sqrt(variance),
        min_ns=min(mins) if mins else None,
        max_ns=max(maxs) if maxs else None,
        p50_ns=p50,
        p99_ns=p99,
        p999_ns=p999,
        samples=total,
    )


def merge_segments(segments: Sequence[FioResult], direction: str) -> DirectionResult:
    """One result for `direction` over all segments of a cell (each a single group-reported fio job)."""
    parts = [next(d for d in seg.directions if d.direction == direction) for seg in segments]
    if len(parts) == 1:
        return parts[0]
    runtime_ms = sum(p.runtime_ms for p in parts)
    total_ios = sum(p.total_ios for p in parts)
    io_bytes = sum(p.io_bytes for p in parts)
    seconds = runtime_ms / 1000 if runtime_ms else math.nan

    def cpu(values: list[float | None]) -> float | None:
        if any(v is None for v in values) or not runtime_ms:
            return None
        return sum(v * p.runtime_ms for v, p in zip(values, parts)) / runtime_ms  # type: ignore[operator]

    return replace(
        parts[0],
        iops=total_ios / seconds if runtime_ms else 0.0,
        bw_bytes=io_bytes / seconds if runtime_ms else 0.0,
        io_bytes=io_bytes,
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        usr_cpu=cpu([p.usr_cpu for p in parts]),
        sys_cpu=cpu([p.sys_cpu for p in parts]),
        clat=_merge_latency([p.clat for p in parts], [bins_of(s.document, direction) for s in segments]),
        sync_lat=_merge_latency(
            [p.sync_lat for p in parts], [bins_of(s.document, direction, sync=True) for s in segments]
        ),
    )


def merge_parallel(
    parts: Sequence[DirectionResult],
    clat_bins: Sequence[Optional[Counter[int]]],
    sync_bins: Sequence[Optional[Counter[int]]],
) -> DirectionResult:
    """One result for streams that ran concurrently (one per host): IOPS and bytes/s summed, latency merged.

    `clat_bins`/`sync_bins` are each part's json+ histograms (None where a part has none); percentiles come
    from their sum, so they are those of every I/O of every part, never an average of percentiles.
    """
    if not parts:
        raise ValueError("merge_parallel needs at least one result")
    first = parts[0]

    def mean_cpu(values: list[float | None]) -> float | None:
        return None if any(v is None for v in values) else sum(values) / len(values)  # type: ignore[arg-type]

    return replace(
        first,
        iops=sum(p.iops for p in parts),
        bw_bytes=sum(p.bw_bytes for p in parts),
        io_bytes=sum(p.io_bytes for p in parts),
        total_ios=sum(p.total_ios for p in parts),
        runtime_ms=max(p.runtime_ms for p in parts),
        usr_cpu=mean_cpu([p.usr_cpu for p in parts]),
        sys_cpu=mean_cpu([p.sys_cpu for p in parts]),
        clat=_merge_latency([p.clat for p in parts], list(clat_bins)),
        sync_lat=_merge_latency([p.sync_lat for p in parts], list(sync_bins)),
        host=None,
    )
