"""Parse fio's normal (human-readable) output, fio 3.x, as people paste it into forums and notes.

What makes this output hard, and how each is handled:
- IOPS are rounded (`IOPS=10.3k`); exact values come from `issued rwts: total=R,W,T,X` and the direction's
  runtime in the `(40.1MiB/1001msec)` part: iops = ios * 1000 / runtime_ms, as fio itself computes.
- Latency units vary per line (`clat (nsec|usec|msec)`, `percentiles (nsec|usec|msec)`) and values carry
  k/M suffixes (`max=2277.9k`); everything is converted to ns.
- Block sizes and the job's pattern are only in the job header line (`name: (g=0): rw=randwrite, bs=(R)
  4096B-4096B, (W) ..., ioengine=psync, iodepth=1`), printed once per job name before the results.
- Sync latency sits in its own block after `fsync/fdatasync/sync_file_range:`.
Unknown or truncated text raises `FioOutputError` naming the line.
"""

from __future__ import annotations

import re

from stackbench.engine.result import DirectionResult, FioResult, JobError, Latency
from stackbench.errors import FioOutputError

_FIX = "Pass the complete output of one fio run (fio 3.x normal output), or use --output-format=json"
_HEADER = re.compile(r"^(?P<name>\S.*?): \(g=\d+\): rw=(?P<rw>\w+), bs=(?P<bs>.*?), ioengine=(?P<engine>\S+), iodepth=(?P<depth>\d+)")
_RESULT = re.compile(r"^(?P<name>\S.*?): \(groupid=\d+, jobs=(?P<jobs>\d+)\): err=\s*(?P<err>\d+)")
_DIRECTION = re.compile(r"^\s+(?P<dir>read|write|trim): IOPS=[^,]+, BW=[^(]*\([^)]*\)\([^/]+/(?P<ms>\d+)msec\)")
_STAT = re.compile(r"^\s+(?P<kind>slat|clat|lat|sync) \((?P<unit>nsec|usec|msec)\): (?P<body>.*)$")
_PCT_HEAD = re.compile(r"^\s+(?P<kind>clat|lat|slat|sync) percentiles \((?P<unit>nsec|usec|msec)\):")
_PCT = re.compile(r"(\d+\.\d+)th=\[\s*(\d+(?:\.\d+)?[kKM]?)\]")
_CPU = re.compile(r"^\s+cpu\s+: usr=(?P<usr>[\d.]+)%, sys=(?P<sys>[\d.]+)%")
_ISSUED = re.compile(r"^\s+issued rwts: total=(?P<total>[\d,]+)")
_UNIT_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6}
_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|k|K|M|G)?$")
_SIZE_FACTOR = {None: 1, "B": 1, "KiB": 1024, "k": 1024, "K": 1024, "MiB": 1024**2, "M": 1024**2, "GiB": 1024**3, "G": 1024**3}
DIRECTION_INDEX = {"read": 0, "write": 1, "trim": 2}


def looks_like_fio_normal(text: str) -> bool:
    return bool(re.search(r"^\S.*: \(groupid=\d+, jobs=\d+\): err=", text, re.MULTILINE))


def _number(text: str, line_no: int, source: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)([kKM]?)\s*", text)
    if not match:
        raise FioOutputError(f"{source} line {line_no}: {text.strip()!r} is not a number", _FIX)
    return float(match[1]) * _SUFFIX[match[2]]


def _block_sizes(spec: str, line_no: int, source: str) -> dict[str, int]:
    """`(R) 4096B-4096B, (W) 64.0KiB-64.0KiB, (T) ...` -> {"read": 4096, "write": 65536, "trim": ...}."""
    sizes = {}
    for letter, low in re.findall(r"\((R|W|T)\)\s*([^\s,-]+)-", spec):
        match = _SIZE.match(low)
        if not match:
            raise FioOutputError(f"{source} line {line_no}: block size {low!r} is not a size", _FIX)
        sizes[{"R": "read", "W": "write", "T": "trim"}[letter]] = int(round(float(match[1]) * _SIZE_FACTOR[match[2]]))
    if not sizes:
        raise FioOutputError(f"{source} line {line_no}: no block sizes in {spec!r}", _FIX)
    return sizes


class _Direction:
    def __init__(self, name: str, runtime_ms: int) -> None:
        self.name = name
        self.runtime_ms = runtime_ms
        self.stats: dict[str, dict[str, float]] = {}
        self.percentiles: dict[str, dict[float, float]] = {}


class _Job:
    def __init__(self, name: str, jobs: int, err: int) -> None:
        self.name = name
        self.jobs = jobs
        self.err = err
        self.directions: list[_Direction] = []
        self.sync: _Direction = _Direction("sync", 0)
        self.usr: float | None = None
        self.sys: float | None = None
        self.issued: list[int] | None = None


def parse_fio_normal(text: str, *, source: str = "fio output") -> FioResult:
    headers: dict[str, tuple[str, dict[str, int], str, int]] = {}
    jobs: list[_Job] = []
    version = "unknown"
    job: _Job | None = None
    current: _Direction | None = None
    pct_target: tuple[_Direction, str, float] | None = None
    for line_no, line in enumerate(text.splitlines(), 1):
        if match := _HEADER.match(line):
            headers[match["name"]] = (
                match["rw"], _block_sizes(match["bs"], line_no, source), match["engine"], int(match["depth"])
            )
            continue
        if re.fullmatch(r"fio-\d+\.\d+\S*", line.strip()):
            version = line.strip()
            continue
        if match := _RESULT.match(line):
            job = _Job(match["name"], int(match["jobs"]), int(match["err"]))
            jobs.append(job)
            current, pct_target = None, None
            continue
        if job is None:
            continue
        if match := _DIRECTION.match(line):
            current = _Direction(match["dir"], int(match["ms"]))
            job.directions.append(current)
            pct_target = None
            continue
        if line.strip().startswith("fsync/fdatasync/sync_file_range:"):
            pct_target = None  # the `sync (usec)` lines that follow belong to the job's sync latency
            continue
        if match := _STAT.match(line):
            owner = job.sync if match["kind"] == "sync" else current
            if owner is None:
                raise FioOutputError(f"{source} line {line_no}: latency line outside a read/write section", _FIX)
            values = {}
            for key, value in re.findall(r"(min|max|avg|stdev)=\s*([\d.]+[kKM]?)", match["body"]):
                values[key] = _number(value, line_no, source) * _UNIT_NS[match["unit"]]
            if "avg" not in values:
                raise FioOutputError(f"{source} line {line_no}: no avg= in {line.strip()!r}", _FIX)
            owner.stats[match["kind"]] = values
            pct_target = None
            continue
        if match := _PCT_HEAD.match(line):
            owner = job.sync if match["kind"] == "sync" else current
            if owner is None:
                raise FioOutputError(f"{source} line {line_no}: percentiles outside a read/write section", _FIX)
            pct_target = (owner, match["kind"], _UNIT_NS[match["unit"]])
            owner.percentiles.setdefault(match["kind"], {})
            continue
        if line.lstrip().startswith("|"):
            if pct_target is None:
                raise FioOutputError(f"{source} line {line_no}: a percentile row without its header", _FIX)
            owner, kind, scale = pct_target
            pairs = _PCT.findall(line)
            if not pairs or len(pairs) != line.count("th=["):
                raise FioOutputError(f"{source} line {line_no}: cannot read percentiles in {line.strip()!r}", _FIX)
            for point, value in pairs:
                owner.percentiles[kind][round(float(point), 4)] = _number(value, line_no, source) * scale
            continue
        pct_target = None
        if match := _CPU.match(line):
            job.usr, job.sys = float(match["usr"]), float(match["sys"])
            continue
        if match := _ISSUED.match(line):
            try:
                job.issued = [int(x) for x in match["total"].split(",")]
            except ValueError:
                raise FioOutputError(f"{source} line {line_no}: cannot read {line.strip()!r}", _FIX) from None
    if not jobs:
        raise FioOutputError(f"no fio job results found in {source}", _FIX)
    return _build(jobs, headers, version, text, source)


def _latency(direction: _Direction, kind: str) -> Latency | None:
    stats = direction.stats.get(kind)
    if stats is None:
        return None
    pct = direction.percentiles.get(kind, {})
    return Latency(
        mean_ns=stats["avg"],
        stddev_ns=stats.get("stdev"),
        min_ns=stats.get("min"),
        max_ns=stats.get("max"),
        p50_ns=pct.get(50.0),
        p99_ns=pct.get(99.0),
        p999_ns=pct.get(99.9),
    )


def _build(jobs: list[_Job], headers: dict, version: str, text: str, source: str) -> FioResult:
    results: list[DirectionResult] = []
    errors: list[JobError] = []
    for job in jobs:
        if job.err:
            import os

            errors.append(JobError(job.name, job.err, os.strerror(job.err)))
        header = headers.get(job.name)
        if header is None:
            raise FioOutputError(
                f"{source}: job {job.name!r} has results but no header line 'name: (g=0): rw=..., bs=...'",
                "Include the whole output, from its first line",
            )
        rw, sizes, engine, depth = header
        if job.directions and job.issued is None:
            raise FioOutputError(f"{source}: job {job.name!r} has no 'issued rwts' line; the output is truncated", _FIX)
        sync_lat = _latency(job.sync, "sync")
        for direction in job.directions:
            ios = job.issued[DIRECTION_INDEX[direction.name]]  # type: ignore[index]
            bs = sizes.get(direction.name, next(iter(sizes.values())))
            seconds = direction.runtime_ms / 1000
            results.append(
                DirectionResult(
                    job_name=job.name,
                    direction=direction.name,
                    rw=rw,
                    bs=bs,
                    iodepth=depth,
                    numjobs=job.jobs,
                    iops=ios / seconds if seconds else 0.0,
                    bw_bytes=ios * bs / seconds if seconds else 0.0,
                    io_bytes=ios * bs,
                    total_ios=ios,
                    runtime_ms=direction.runtime_ms,
                    usr_cpu=job.usr,
                    sys_cpu=job.sys,
                    clat=_latency(direction, "clat"),
                    sync_lat=sync_lat if direction.name == "write" else None,
                    options={
                        "rw": rw,
                        "ioengine": engine,
                        "iodepth": str(depth),
                        # the sync block means fsync, fdatasync or sync_file_range was used; which one is not printed
                        **({"fsync": "1"} if sync_lat is not None else {}),
                    },
                )
            )
    return FioResult(
        fio_version=version, timestamp=None, directions=tuple(results), job_errors=tuple(errors), raw_text=text
    )
