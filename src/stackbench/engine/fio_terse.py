"""Parse fio's `--output-format=terse` (version 3) lines, one per job.

Terse is semicolon-separated and positional. Version 3 as fio 3.x prints it: 5 header fields (terse
version, fio version, job name, group id, error), then per direction (read, write) 41 fields: KiB
transferred, bandwidth KiB/s, IOPS, runtime ms, submission latency min/max/mean/stdev (usec), completion
latency min/max/mean/stdev (usec), 20 completion-latency percentiles as `P%=usec`, total latency
min/max/mean/stdev, bandwidth min/max/aggregate %/mean/stdev; then CPU usr%/sys%/... and depth and latency
distributions. Terse carries no rw, bs or iodepth: the pattern is inferred from which directions did I/O
(sequential vs random cannot be known), the block size from bytes / I/Os (I/Os from rounded IOPS x runtime),
so imported terse cells are approximate in those fields and exact in IOPS to the unit.
"""

from __future__ import annotations

import os

from stackbench.engine.result import DirectionResult, FioResult, JobError, Latency
from stackbench.errors import FioOutputError

_FIX = "Pass complete lines of `fio --output-format=terse` (terse version 3)"
HEADER = 5
DIRECTION_FIELDS = 41
_DIRECTIONS = ("read", "write")


def looks_like_fio_terse(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return first.startswith("3;fio-") and first.count(";") >= HEADER + 2 * DIRECTION_FIELDS


def _num(fields: list[str], index: int, line_no: int, source: str) -> float:
    try:
        return float(fields[index].rstrip("%"))
    except (IndexError, ValueError):
        raise FioOutputError(
            f"{source} line {line_no}: field {index + 1} is {fields[index] if index < len(fields) else 'missing'!r}, "
            "not a number",
            _FIX,
        ) from None


def parse_fio_terse(text: str, *, source: str = "fio output") -> FioResult:
    results: list[DirectionResult] = []
    errors: list[JobError] = []
    version = "unknown"
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split(";")
        if fields[0] != "3":
            raise FioOutputError(f"{source} line {line_no}: terse version {fields[0][:10]!r} is not 3", _FIX)
        needed = HEADER + 2 * DIRECTION_FIELDS + 2
        if len(fields) < needed:
            raise FioOutputError(
                f"{source} line {line_no}: {len(fields)} fields, terse v3 has at least {needed}; the line is cut",
                _FIX,
            )
        version, name = fields[1], fields[2]
        error = int(_num(fields, 4, line_no, source))
        if error:
            errors.append(JobError(name, error, os.strerror(error)))
        usr = _num(fields, HEADER + 2 * DIRECTION_FIELDS, line_no, source)
        sys_ = _num(fields, HEADER + 2 * DIRECTION_FIELDS + 1, line_no, source)
        active = []
        for d_index, direction in enumerate(_DIRECTIONS):
            base = HEADER + d_index * DIRECTION_FIELDS
            kib, bw_kib, iops, runtime = (_num(fields, base + i, line_no, source) for i in range(4))
            if kib > 0 and iops > 0:
                active.append((direction, base, kib, bw_kib, iops, runtime))
        rw = {1: None, 2: "rw"}.get(len(active))
        for direction, base, kib, bw_kib, iops, runtime in active:
            total_ios = max(1, round(iops * runtime / 1000))
            bs = max(512, round(kib * 1024 / total_ios / 512) * 512)
            percentiles: dict[float, float] = {}
            for field in fields[base + 12 : base + 32]:
                point, _, value = field.partition("%=")
                try:
                    percentiles[round(float(point), 4)] = float(value) * 1000
                except ValueError:
                    raise FioOutputError(
                        f"{source} line {line_no}: percentile field {field!r} is not 'P%=usec'", _FIX
                    ) from None
            clat = Latency(
                mean_ns=_num(fields, base + 10, line_no, source) * 1000,
                stddev_ns=_num(fields, base + 11, line_no, source) * 1000,
                min_ns=_num(fields, base + 8, line_no, source) * 1000,
                max_ns=_num(fields, base + 9, line_no, source) * 1000,
                p50_ns=percentiles.get(50.0),
                p99_ns=percentiles.get(99.0),
                p999_ns=percentiles.get(99.9),
            )
            results.append(
                DirectionResult(
                    job_name=name,
                    direction=direction,
                    rw=rw or direction,
                    bs=bs,
                    iodepth=1,
                    numjobs=1,
                    iops=iops,
                    bw_bytes=bw_kib * 1024,
                    io_bytes=int(kib * 1024),
                    total_ios=total_ios,
                    runtime_ms=runtime,
                    usr_cpu=usr,
                    sys_cpu=sys_,
                    clat=clat,
                    options={"terse": "1"},
                )
            )
    if not results and not errors:
        raise FioOutputError(f"no terse job lines with I/O found in {source}", _FIX)
    return FioResult(
        fio_version=version, timestamp=None, directions=tuple(results), job_errors=tuple(errors), raw_text=text
    )
