"""Parse fio's `--output-format=terse` (terse version 3, fio's default) into a `FioResult`.

Terse is one semicolon-separated line per job, positional, as fio's HOWTO lists and fio 3.33 prints it
(checked field by field against the JSON of the same runs in tests/data/fio/text/pair-*-terse-json.txt):

    0 terse version (3); 1 fio version; 2 job name; 3 group id; 4 error (errno)
    then per direction, 41 fields: KiB done; bandwidth KiB/s; IOPS; runtime ms;
        slat min;max;mean;stdev (usec); clat min;max;mean;stdev (usec); 20 clat percentiles `P%=usec`;
        lat min;max;mean;stdev (usec); bw min;max;aggregate %;mean;stdev (KiB/s)
    directions: read and write; only one ("mixed") with unified_rw_reporting. Version 3 has NO trim fields
    (fio prints trim in terse only for versions 2, 4 and 5), so trim I/O is invisible here.
    then cpu usr%;sys%;ctx;majf;minf; IO depth distribution 1;2;4;8;16;32;>=64 (%);
    latency distribution usec 2..1000 (10 fields) and msec 2..>=2000 (12 fields);
    then optional disk util groups (name + 8 fields each), error counts and the job description.

Terse carries no rw, bs, iodepth or numjobs, and fio truncates the numbers it does carry (KiB = bytes >> 10,
IOPS and bandwidth to integers, latencies min/max and percentiles to whole usec). This parser recovers what the
numbers fix exactly and marks the rest unknown (`DirectionResult.unknown`), never a guess presented as a fact:
- I/O count and block size (`engine.truncated`): when exactly one block size fits the three truncations, it
  is derived (`derived`), and the IOPS too when one count fits; with variable block sizes (bsrange/bssplit)
  or too little information the block size is unknown (the average bytes per I/O is kept as a placeholder).
- the direction from which sides did I/O ("read", "write", "rw"); random or sequential is unknown
  (`pattern`).
- iodepth: unknown; the power-of-two bucket where the job spent most of its time is only a lower bound
  (kept as the placeholder and in options["iodepth_from"]).
- numjobs: the number of lines with the same job name and group (numjobs without group_reporting); one line
  is one job or a group_reporting sum of several, so it is unknown.
Latencies become ns; means are exact to 1 ns, min/max/percentiles to 1 usec (truncated).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from stackbench.engine.truncated import recover
from stackbench.model.fio_result import DirectionResult, FioResult, JobError, Latency
from stackbench.base.errors import FioOutputError

_FIX = "Pass the complete lines of `fio --output-format=terse` (terse version 3, fio's default)"
HEADER = 5
DIRECTION_FIELDS = 41
TAIL_FIELDS = 34  # cpu (5), IO depths (7), latency distribution usec (10) and msec (12)
_DEPTH_LABELS = (1, 2, 4, 8, 16, 32, 64)
_INT = re.compile(r"^\d{1,20}$")
_FLOAT = re.compile(r"^\d{1,20}(?:\.\d{1,20})?%?$")
_PCT = re.compile(r"^(?P<point>\d{1,3}(?:\.\d{1,20})?)%=(?P<value>\d{1,20})$")
_U64 = 2**64 - 1
_USEC_MAX = _U64 / 1000  # latencies are in usec: at most 2^64 ns
_Number = TypeVar("_Number", int, float)


def looks_like(text: str) -> bool:
    """True when the first non-blank line is a terse v3 job line (for auto-detection)."""
    first = next((line for line in text.splitlines() if line.strip() and not line.startswith("fio: ")), "")
    return first.startswith("3;fio-") and first.count(";") >= HEADER + DIRECTION_FIELDS + TAIL_FIELDS - 1


@dataclass(frozen=True)
class _Line:
    no: int
    fields: list[str]
    source: str

    def fail(self, what: str) -> FioOutputError:
        return FioOutputError(f"{self.source} line {self.no}: {what}", _FIX)

    def int(self, index: int, what: str) -> int:
        text = self.fields[index]
        if not _INT.match(text):
            raise self.fail(f"field {index + 1} ({what}) is {text[:30]!r}, not a whole number")
        return self.within(int(text), index, what, _U64)

    def float(self, index: int, what: str, high: float = _U64) -> float:
        """A number fio prints from its 64-bit counters: at most `high` (2^64, or 2^64 ns in usec)."""
        text = self.fields[index]
        if not _FLOAT.match(text):
            raise self.fail(f"field {index + 1} ({what}) is {text[:30]!r}, not a number")
        return self.within(float(text.rstrip("%")), index, what, high)

    def within(self, value: _Number, index: int, what: str, high: float) -> _Number:
        if value > high:
            raise self.fail(f"field {index + 1} ({what}) is {self.fields[index][:30]!r}, too large for fio's "
                            "64-bit counters")
        return value


def read(text: str, source: str) -> tuple[FioResult, dict[str, Any]]:
    """`import`'s reader."""
    return parse_fio_terse(text, source=source), {}


def parse_fio_terse(text: str, *, source: str = "fio output") -> FioResult:
    """Parse terse v3 lines into a `FioResult`; raise `FioOutputError` naming the line and field at fault."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise FioOutputError(f"{source} is not text", _FIX)
    lines: list[_Line] = []
    for line_no, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.startswith("fio: "):  # fio's own notices may share the stream
            continue
        fields = raw.strip().split(";")
        if len(fields) > 2 and fields[0] in ("2", "4", "5") and fields[1].startswith("fio-"):
            raise FioOutputError(
                f"{source} line {line_no}: terse version {fields[0]} is not supported",
                "Re-run fio with --terse-version=3 (the default) or --output-format=json",
            )
        if fields[0] != "3" or len(fields) < 3 or not fields[1].startswith("fio"):
            raise FioOutputError(
                f"{source} line {line_no}: {raw.strip()[:60]!r} is not a terse v3 line '3;fio-X.Y;job;...'", _FIX
            )
        lines.append(_Line(line_no, fields, source))
    if not lines:
        raise FioOutputError(f"{source} line 1: no terse job lines '3;fio-...' found", _FIX)
    clones: dict[tuple[str, str], int] = {}
    for line in lines:
        key = (line.fields[2], line.fields[3])
        clones[key] = clones.get(key, 0) + 1
    directions: list[DirectionResult] = []
    errors: list[JobError] = []
    for line in lines:
        found, error = _job(line, clones[(line.fields[2], line.fields[3])])
        directions.extend(found)
        if error is not None:
            errors.append(error)
    if not directions and not errors:
        raise FioOutputError(
            f"{source} line {lines[0].no}: no job did read or write I/O (terse v3 has no trim fields: a trim "
            "job's results are not in it)",
            "Use --output-format=json for trim jobs",
        )
    return FioResult(
        fio_version=lines[-1].fields[1],
        timestamp=None,
        directions=tuple(directions),
        job_errors=tuple(errors),
        raw_text=text,
    )


def _job(line: _Line, numjobs: int) -> tuple[list[DirectionResult], JobError | None]:
    fields = line.fields
    mixed = len(fields) > HEADER + DIRECTION_FIELDS + 1 and all(
        fields[HEADER + DIRECTION_FIELDS + i].endswith("%") for i in (0, 1)
    )
    count = 1 if mixed else 2
    needed = HEADER + count * DIRECTION_FIELDS + TAIL_FIELDS
    if len(fields) < needed:
        raise line.fail(f"{len(fields)} fields, a terse v3 job line has at least {needed}; the line is cut")
    name = fields[2]
    code = line.int(4, "error")
    error = JobError(name, code, _strerror(code)) if code else None
    tail = HEADER + count * DIRECTION_FIELDS
    usr = line.float(tail, "cpu usr")
    sys_ = line.float(tail + 1, "cpu sys")
    depth_shares = [line.float(tail + 5 + i, f"IO depth {label}") for i, label in enumerate(_DEPTH_LABELS)]
    iodepth = _DEPTH_LABELS[max(range(len(_DEPTH_LABELS)), key=lambda i: (depth_shares[i], -i))]
    names = ("mixed",) if mixed else ("read", "write")
    active = []
    for index, direction in enumerate(names):
        base = HEADER + index * DIRECTION_FIELDS
        values = [line.int(base + i, what) for i, what in enumerate(("KiB", "bandwidth KiB/s", "IOPS", "runtime"))]
        latency = _latency(line, base, direction)
        if any(values) or latency is not None:
            active.append((direction, values, latency))
    if mixed or len(active) == 2:
        rw = "rw"
    else:
        rw = active[0][0] if active else "read"
    results = []
    for direction, (kib, bw_kib, iops, runtime), latency in active:
        found = recover(kib, bw_kib, iops, runtime)
        total_ios, bs = found.ios, found.bs
        io_bytes = total_ios * bs if found.ios_exact else kib * 1024
        seconds = runtime / 1000
        unknown = ["pattern", "iodepth"] + ([] if found.bs_exact else ["bs"]) + (["numjobs"] if numjobs == 1 else [])
        results.append(
            DirectionResult(
                job_name=name,
                direction=direction,
                rw=rw,
                bs=bs,
                iodepth=iodepth,
                numjobs=numjobs,
                iops=total_ios / seconds if seconds else 0.0,
                bw_bytes=io_bytes / seconds if seconds else 0.0,
                io_bytes=io_bytes,
                total_ios=total_ios,
                runtime_ms=runtime,
                usr_cpu=usr,
                sys_cpu=sys_,
                clat=latency,
                options={
                    "rw": rw,
                    "bs": str(bs),
                    "bs_exact": "1" if found.bs_exact else "0",
                    "iodepth": str(iodepth),
                    "iodepth_from": "terse depth distribution (power-of-two bucket, a lower bound)",
                    **({"numjobs": str(numjobs)} if numjobs > 1 else {}),
                    "terse": "3",
                },
                unknown=tuple(unknown),
                derived=("bs",) + (("total_ios",) if found.ios_exact else ()) if found.bs_exact else (),
            )
        )
    return results, error


def _latency(line: _Line, base: int, direction: str) -> Latency | None:
    """The completion latency (usec in terse) in ns, or None when the direction has no samples."""
    minimum, maximum, mean, stdev = (
        line.float(base + 8 + i, f"{direction} clat {what}", _USEC_MAX)
        for i, what in enumerate(("min", "max", "mean", "stdev"))
    )
    percentiles: dict[float, float] = {}
    for index in range(base + 12, base + 32):
        match = _PCT.match(line.fields[index])
        if not match:
            raise line.fail(
                f"field {index + 1} ({direction} clat percentile) is {line.fields[index][:30]!r}, not 'P%=usec'"
            )
        point = round(float(match["point"]), 4)
        line.within(float(match["value"]), index, f"{direction} clat percentile", _USEC_MAX)
        if point > 100:
            raise line.fail(f"field {index + 1} ({direction} clat percentile) is {line.fields[index][:30]!r}, "
                            "not a percentage")
        if point > 0:
            percentiles[point] = float(match["value"]) * 1000
    if maximum == 0 and mean == 0:
        return None
    return Latency(
        mean_ns=mean * 1000,
        stddev_ns=stdev * 1000,
        min_ns=minimum * 1000,
        max_ns=maximum * 1000,
        p50_ns=percentiles.get(50.0),
        p99_ns=percentiles.get(99.0),
        p999_ns=percentiles.get(99.9),
    )


def _strerror(code: int) -> str:
    try:
        return os.strerror(code)
    except (ValueError, OverflowError):
        return f"error {code}"
