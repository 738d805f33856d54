"""Parse fio's normal (human-readable) output, fio 3.x, into the same `FioResult` the JSON parser gives.

People keep fio's normal output in notes, tickets and forum posts far more often than JSON, so importing it
lets old measurements sit beside new ones. The output is made for eyes, not programs; what makes it hard,
and how each point is handled:

- The summary `IOPS=10.3k` is rounded to 3 significant digits. The exact value is recomputed the way fio
  computes it: I/Os from `issued rwts: total=R,W,T,X` divided by the direction's runtime, taken from the
  `(40.1MiB/1001msec)` part of the direction line. Bandwidth is I/Os x block size / runtime, exact whenever
  the block size is fixed; with `bsrange`/`bssplit` (printed as `4096B-16.0KiB`) only the rounded io size
  on the direction line is known, so bandwidth and the (average) block size are good to about 3 digits.
- Latency units vary per line (`clat (nsec|usec|msec)`, `clat percentiles (nsec|usec|msec)`) and min/max
  carry decimal k/M suffixes (`max=2283.5k`); everything is converted to ns. The printed values have the
  precision fio chose for the unit (`avg= 4.23` usec is only good to 10 ns).
- rw, block sizes, ioengine and iodepth are only in the job header line (`w: (g=0): rw=randwrite, bs=(R)
  4096B-4096B, (W) ..., ioengine=psync, iodepth=1`), printed once per job name before the results. A job
  with `numjobs=N` but no `group_reporting` prints N result blocks under one header.
- fsync/fdatasync latency sits in its own block after `fsync/fdatasync/sync_file_range:`; like the JSON
  parser, it is attached to the write (or mixed) direction.
- fio 3.1 prints `issued rwt: total=R,W,T, short=...` (three counts and a comma), 3.2 and later
  `issued rwts: total=R,W,T,X short=...`; both are read. fio 2.x normal output (`bs=4K-4K/4K-4K/4K-4K`,
  `read : io=...`) is refused in one line naming what is supported (its JSON imports).
- A section without latency lines in a job that printed its `issued` line is whole: fio measured no latency
  (gtod_reduce), which stays absent. A write job's read section (its verify pass) is stored under the read
  direction with random or sequential unknown, not under the job's pattern.
- A job that fails before doing I/O prints no result block at all; its error is on stderr as
  `fio: pid=0, err=20/file:..., error=Not a directory`, which is read when present (output kept with 2>&1).

Every failure is a `FioOutputError` naming the line (or the line where the broken job starts) and what was
wrong there; unrecognised lines between the parts above are skipped, because fio versions add lines (zone
resets, prio stats) that carry nothing this parser needs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from stackbench.engine.fio_json import does_direction
from stackbench.engine.input_formats import supported
from stackbench.model.fio_result import DirectionResult, FioResult, JobError, Latency
from stackbench.base.errors import FioOutputError

_FIX = "Pass the complete output of one fio 3.x run (--output-format=normal), or use --output-format=json"
_OLD_FIX = "Re-run fio with --output-format=json (every fio version writes it), or pass that output"
# fio 2.x normal output: `bs=4K-4K/4K-4K/4K-4K` in the header, `read : io=...` sections
_OLD_HEADER = re.compile(r"bs=\d[\w.]*-\d[\w.]*(?:/\d[\w.]*-\d[\w.]*)*$")
_NUM = r"\d{1,20}(?:\.\d{1,20})?"
_HEADER = re.compile(
    r"^(?P<name>\S.*?): \(g=\d{1,9}\): rw=(?P<rw>\w+), bs=(?P<bs>.*?), ioengine=(?P<engine>[^,\s]+), "
    r"iodepth=(?P<depth>\d{1,9})\s*$"
)
_VERSION = re.compile(r"^fio-\d+\.\d+\S*$")
_RESULT = re.compile(
    r"^(?P<name>\S.*?): \(groupid=\d{1,9}, jobs=(?P<jobs>\d{1,9})\): err=\s*(?P<err>-?\d{1,9})(?P<rest>.*)$"
)
_DIRECTION_START = re.compile(r"^\s+(?P<dir>read|write|trim|mixed)\s*:")
_DIRECTION = re.compile(
    rf"^\s+(?P<dir>read|write|trim|mixed)\s*: IOPS=\s*{_NUM}[kMGT]?, BW=\s*{_NUM}\s*[KMGTP]?i?B/s "
    rf"\([^)]*\)\((?P<io>{_NUM})(?P<io_unit>[kKMGTP]?i?B)/(?P<ms>\d{{1,20}})msec\)"
)
_STAT = re.compile(r"^\s+(?P<kind>slat|clat|lat|sync)\s+\((?P<unit>nsec|usec|msec)\)\s*:\s*(?P<body>[a-z].*)$")
_STAT_ITEM = re.compile(rf"^\s*(?P<key>[a-zA-Z]+)=\s*(?P<value>{_NUM})(?P<suffix>[kKMGTP]?)\s*$")
_PCT_HEAD = re.compile(r"^\s+(?P<kind>\S.*?)\s+percentiles\s+\((?P<unit>nsec|usec|msec)\)\s*:\s*$")
_PCT_ITEM = re.compile(rf"^\s*(?P<point>{_NUM})th=\[\s*(?P<value>{_NUM})(?P<suffix>[kKMGTP]?)\s*\]\s*$")
_CPU = re.compile(rf"^\s+cpu\s*:\s*usr=(?P<usr>{_NUM})%, sys=(?P<sys>{_NUM})%")
# fio 3.1 prints `issued rwt: total=R,W,T, short=...` (three counts, a comma after them), 3.2 and later
# `issued rwts: total=R,W,T,X short=...`
_ISSUED = re.compile(r"^\s+issued rwts?\s*:\s*total=(?P<total>\d{1,20}(?:,\d{1,20}){2,3})(?:,?\s|,?$)")
_STDERR_ERROR = re.compile(r"^fio: pid=(?P<pid>\d+), err=(?P<err>\d{1,9})/(?P<rest>.*)$")
_UNIT_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6}
_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_SIZE = re.compile(rf"^(?P<value>{_NUM})(?P<unit>[kKMGTP]?i?B)$")
_SIZE_FACTOR = {
    "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4, "PiB": 1024**5,
    "kB": 1000, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4, "PB": 1000**5,
}
_LETTER = {"R": "read", "W": "write", "T": "trim"}
_U64 = 2**64 - 1
_ISSUED_INDEX = {"read": 0, "write": 1, "trim": 2}


def looks_like(text: str) -> bool:
    """True when `text` holds at least one fio 3.x normal-output job result line (for auto-detection)."""
    return bool(re.search(r"^\S.*: \(groupid=\d+, jobs=\d+\): err=", text, re.MULTILINE))


@dataclass
class _Header:
    line_no: int
    rw: str
    sizes: dict[str, tuple[int, bool]]  # direction -> (bytes, exact: a fixed size printed without rounding)
    engine: str
    depth: int


@dataclass
class _Section:
    """One `read:`/`write:`/`trim:`/`mixed:` section of a job, or the job's sync block."""

    name: str
    line_no: int
    runtime_ms: int = 0
    io_bytes_printed: float = 0.0
    stats: dict[str, dict[str, float]] = field(default_factory=dict)
    percentiles: dict[str, dict[float, float]] = field(default_factory=dict)


@dataclass
class _Job:
    name: str
    line_no: int
    jobs: int
    err: int
    err_message: str
    sections: list[_Section] = field(default_factory=list)
    sync: _Section | None = None
    usr: float | None = None
    sys: float | None = None
    issued: list[int] | None = None


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.headers: list[tuple[str, _Header]] = []
        self.jobs: list[_Job] = []
        self.stderr_errors: list[tuple[int, int, str]] = []  # (line, errno, message)
        self.version = "unknown"
        self.job: _Job | None = None
        self.section: _Section | None = None
        self.pct: tuple[_Section | None, str, float] | None = None  # where percentile rows go

    def fail(self, line_no: int, what: str) -> FioOutputError:
        return FioOutputError(f"{self.source} line {line_no}: {what}", _FIX)

    def feed(self, line_no: int, line: str) -> None:
        if line.lstrip().startswith("|"):
            self.percentile_row(line_no, line)
            return
        self.pct = None
        if match := _HEADER.match(line):
            self.headers.append((match["name"], self.header(line_no, match)))
            return
        if _VERSION.match(line.strip()):
            self.version = line.strip()
            if re.match(r"fio-[012]\.", self.version):
                raise FioOutputError(f"{self.source} line {line_no}: {self.version} normal output is not supported: "
                                     f"{supported()}", _OLD_FIX)
            return
        if match := _STDERR_ERROR.match(line):
            detail = re.search(r"error=(.*)$", match["rest"])
            self.stderr_errors.append((line_no, int(match["err"]), detail[1].strip() if detail else match["rest"]))
            return
        if match := _RESULT.match(line):
            self.end_job()
            detail = re.search(r"error=(.*?)\)?: pid=", match["rest"])
            code = int(match["err"])
            message = detail[1].strip() if detail else (_strerror(code) if code else "")
            self.job = _Job(match["name"], line_no, int(match["jobs"]), code, message)
            self.jobs.append(self.job)
            self.section = None
            return
        if line.startswith(("Run status group", "Disk stats")):
            self.end_job()
            return
        if self.job is None:
            return
        self.job_line(line_no, line, self.job)

    def header(self, line_no: int, match: re.Match[str]) -> _Header:
        if _OLD_HEADER.match(f"bs={match['bs']}"):
            raise FioOutputError(f"{self.source} line {line_no}: fio 2.x normal output (bs={match['bs'][:40]}) is not "
                                 f"supported: {supported()}", _OLD_FIX)
        sizes: dict[str, tuple[int, bool]] = {}
        for letter, low, high in re.findall(r"\((R|W|T)\)\s*([^\s,]+?)-([^\s,]+)", match["bs"]):
            low_bytes, low_exact = self.size(line_no, low, "block size")
            high_bytes, _ = self.size(line_no, high, "block size")
            sizes[_LETTER[letter]] = (low_bytes, low_exact and low_bytes == high_bytes and low == high)
        if not sizes:
            raise self.fail(line_no, f"no block sizes '(R) 4096B-4096B' in bs={match['bs'][:60]!r}")
        return _Header(line_no, match["rw"], sizes, match["engine"], max(1, int(match["depth"])))

    def size(self, line_no: int, text: str, what: str) -> tuple[int, bool]:
        match = _SIZE.match(text)
        if not match or match["unit"] not in _SIZE_FACTOR:
            raise self.fail(line_no, f"{what} {text[:30]!r} is not a size like 4096B or 64.0KiB")
        value = float(match["value"]) * _SIZE_FACTOR[match["unit"]]
        self.within(line_no, value, f"{what} {text[:30]!r}")
        return round(value), value.is_integer()

    def within(self, line_no: int, value: float, what: str) -> float:
        """`value` (bytes, ns, I/Os, ms) if fio's 64-bit counters can hold it: printed numbers carry 20 digits
        and a suffix up to P, so a pasted or edited line could claim more than any fio reports."""
        if value > _U64:
            raise self.fail(line_no, f"{what} is too large for fio's 64-bit counters")
        return value

    def job_line(self, line_no: int, line: str, job: _Job) -> None:
        if _DIRECTION_START.match(line):
            match = _DIRECTION.match(line)
            if not match:
                raise self.fail(
                    line_no,
                    f"cannot read the direction summary {line.strip()[:80]!r} (expected fio 3.x "
                    f"'write: IOPS=..., BW=... (...)(SIZE/Nmsec)'; fio 2.x output is not supported: {supported()})",
                )
            io_bytes, _ = self.size(line_no, match["io"] + match["io_unit"], "io size")
            self.within(line_no, int(match["ms"]), f"runtime {match['ms']}msec")
            self.section = _Section(match["dir"], line_no, int(match["ms"]), io_bytes)
            job.sections.append(self.section)
            return
        stripped = line.strip()
        if stripped.startswith("fsync/fdatasync/sync_file_range"):
            job.sync = _Section("sync", line_no)
            self.section = job.sync
            return
        if match := _STAT.match(line):
            owner = self.owner(line_no, match["kind"], job)
            owner.stats[match["kind"]] = self.stat_values(line_no, match["body"], _UNIT_NS[match["unit"]])
            return
        if match := _PCT_HEAD.match(line):
            kind = match["kind"]
            owner = self.owner(line_no, kind, job) if kind in ("clat", "lat", "slat", "sync") else None
            if owner is not None:
                owner.percentiles[kind] = {}
            self.pct = (owner, kind, _UNIT_NS[match["unit"]])
            return
        if stripped.startswith("cpu"):
            if not (match := _CPU.match(line)):
                raise self.fail(line_no, f"cannot read the cpu line {stripped[:80]!r}")
            job.usr, job.sys = (self.within(line_no, float(match[k]), f"cpu {k}={match[k]}%") for k in ("usr", "sys"))
            return
        if stripped.startswith("issued rwt"):
            if not (match := _ISSUED.match(line)):
                raise self.fail(line_no, f"cannot read the issued I/O counts {stripped[:80]!r}")
            job.issued = [int(self.within(line_no, int(x), f"issued count {x}")) for x in match["total"].split(",")]
            return

    def owner(self, line_no: int, kind: str, job: _Job) -> _Section:
        if kind == "sync":
            if job.sync is None:
                raise self.fail(line_no, "sync latency outside the 'fsync/fdatasync/sync_file_range:' block")
            return job.sync
        if self.section is None or self.section is job.sync:
            raise self.fail(line_no, f"{kind} latency outside a read/write/trim section")
        return self.section

    def stat_values(self, line_no: int, body: str, scale: float) -> dict[str, float]:
        values: dict[str, float] = {}
        for item in body.split(","):
            match = _STAT_ITEM.match(item)
            if not match:
                raise self.fail(line_no, f"cannot read {item.strip()[:40]!r} in a latency line (expected key=number)")
            values[match["key"]] = self.within(line_no, float(match["value"]) * _SUFFIX[match["suffix"]] * scale,
                                               f"{match['key']}={match['value']}{match['suffix']}")
        if "avg" not in values:
            raise self.fail(line_no, "latency line has no avg=")
        return values

    def percentile_row(self, line_no: int, line: str) -> None:
        if self.pct is None:
            raise self.fail(line_no, "a percentile row '| 1.00th=[...]' without its 'percentiles (unit):' header")
        owner, kind, scale = self.pct
        items = [item for item in line.split("|", 1)[1].split(",") if item.strip()]
        if not items:
            raise self.fail(line_no, "an empty percentile row")
        for item in items:
            match = _PCT_ITEM.match(item)
            if not match:
                raise self.fail(line_no, f"cannot read the percentile {item.strip()[:40]!r} (expected P.PPth=[value])")
            if float(match["point"]) > 100:
                raise self.fail(line_no, f"the percentile {item.strip()[:40]!r} is not a percentage")
            if owner is not None:
                value = self.within(line_no, float(match["value"]) * _SUFFIX[match["suffix"]] * scale,
                                    f"the percentile {item.strip()[:40]!r}")
                owner.percentiles[kind][round(float(match["point"]), 4)] = value

    def end_job(self) -> None:
        """Check the job just finished is whole: a cut capture must not import as a smaller result."""
        job, self.job, self.section, self.pct = self.job, None, None, None
        if job is None:
            return
        # A section without latency lines is whole when the job's `issued` line (printed after every section)
        # is there: fio measured no latency (gtod_reduce, disable_lat), and the latency is absent, not 0.
        for section in job.sections if job.issued is None else ():
            if "clat" not in section.stats and "lat" not in section.stats:
                raise self.fail(
                    section.line_no, f"job {job.name!r}: the {section.name} section has no latency lines; "
                    "the output is cut"
                )
        if job.sections and job.issued is None:
            raise self.fail(
                job.line_no, f"job {job.name!r} has no 'issued rwts: total=...' line; the output is cut"
            )


def read(text: str, source: str) -> tuple[FioResult, dict[str, Any]]:
    """`import`'s reader."""
    return parse_fio_text(text, source=source), {}


def parse_fio_text(text: str, *, source: str = "fio output") -> FioResult:
    """Parse fio 3.x normal output into a `FioResult`; raise `FioOutputError` naming the line at fault."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise FioOutputError(f"{source} is not text", _FIX)
    parser = _Parser(source)
    lines = text.splitlines()
    for line_no, line in enumerate(lines, 1):
        parser.feed(line_no, line)
    parser.end_job()
    if not parser.jobs:
        return _no_results(parser, lines, text, source)
    results: list[DirectionResult] = []
    errors: list[JobError] = []
    seen: dict[str, int] = {}
    matched: list[tuple[_Job, _Header]] = []
    for job in parser.jobs:
        matched.append((job, _header_for(parser, job, seen.get(job.name, 0))))
        seen[job.name] = seen.get(job.name, 0) + 1
    # numjobs=N without group_reporting: N blocks of jobs=1 under one header, each one of N clones (as the
    # JSON's numjobs option says for each of them)
    clones = {id(header): sum(1 for _, h in matched if h is header) for _, header in matched}
    for job, header in matched:
        if job.err:
            errors.append(JobError(job.name, job.err, job.err_message or _strerror(job.err)))
        numjobs = job.jobs if job.jobs > 1 else clones[id(header)]
        results.extend(_directions(job, header, numjobs, source))
    if not results and not errors:
        raise FioOutputError(f"{source} line {parser.jobs[0].line_no}: the jobs did no I/O", _FIX)
    return FioResult(
        fio_version=parser.version,
        timestamp=None,
        directions=tuple(results),
        job_errors=tuple(errors),
        raw_text=text,
    )


def _no_results(parser: _Parser, lines: list[str], text: str, source: str) -> FioResult:
    """No result block: either fio failed before any I/O (its stderr says so) or this is not fio output."""
    if parser.stderr_errors:
        names = [name for name, _ in parser.headers]
        errors = tuple(
            JobError(names[i] if i < len(names) else (names[-1] if names else "fio"), code, message)
            for i, (_, code, message) in enumerate(parser.stderr_errors)
        )
        return FioResult(parser.version, None, (), errors, text)
    if parser.headers:
        name, header = parser.headers[0]
        raise FioOutputError(
            f"{source} line {header.line_no}: job {name!r} starts here but no result block "
            f"'{name}: (groupid=0, jobs=1): err= 0: ...' follows; the output is cut, or the job failed and its "
            "error went to stderr",
            "Pass the complete output, with stderr (2>&1), or use --output-format=json",
        )
    first = next(((n, line.strip()) for n, line in enumerate(lines, 1) if line.strip()), (1, ""))
    raise FioOutputError(
        f"{source} line {first[0]}: {first[1][:60]!r} does not start fio normal output, and no job result line "
        "'name: (groupid=N, jobs=N): err= N' was found",
        _FIX,
    )


def _header_for(parser: _Parser, job: _Job, occurrence: int) -> _Header:
    """The header line of the job's name; with repeated names (one job file, two jobs called the same),
    the k-th result block takes the k-th header, and clones of `numjobs` reuse the last."""
    matching = [header for name, header in parser.headers if name == job.name]
    if not matching:
        raise FioOutputError(
            f"{parser.source} line {job.line_no}: job {job.name!r} has results but no header line "
            f"'{job.name}: (g=0): rw=..., bs=..., ioengine=..., iodepth=...' before them",
            "Include the whole output, from its first line",
        )
    return matching[min(occurrence, len(matching) - 1)]


def _directions(job: _Job, header: _Header, numjobs: int, source: str) -> list[DirectionResult]:
    results = []
    sync_lat = _latency(job.sync, "sync") if job.sync is not None else None
    for section in job.sections:
        assert job.issued is not None  # end_job checked it
        if section.name == "mixed":
            ios = sum(job.issued[:3])
            bs, exact = header.sizes.get("read", next(iter(header.sizes.values())))
        else:
            ios = job.issued[_ISSUED_INDEX[section.name]]
            bs, exact = header.sizes.get(section.name, next(iter(header.sizes.values())))
        if ios <= 0:
            raise FioOutputError(
                f"{source} line {section.line_no}: job {job.name!r} prints a {section.name} section but its "
                "'issued rwts' count for it is 0",
                _FIX,
            )
        unknown: list[str] = []
        if exact:
            io_bytes = ios * bs
        else:  # bsrange/bssplit or a rounded size: only the printed (3-digit) io size is known
            io_bytes = int(section.io_bytes_printed)
            bs = max(1, round(io_bytes / ios))  # the average bytes per I/O, a placeholder: no block size
            unknown.append("bs")
        rw, derived = header.rw, ()
        if not does_direction(header.rw, section.name):  # a write job's reads: its verify pass
            rw, derived = section.name, ("rw",)
            unknown.append("pattern")
        seconds = section.runtime_ms / 1000
        options = {"rw": header.rw, "bs": str(bs), "ioengine": header.engine, "iodepth": str(header.depth)}
        if numjobs > 1:
            options["numjobs"] = str(numjobs)
        if sync_lat is not None:
            options["fsync"] = "1"  # fsync, fdatasync or sync_file_range was used; the output does not say which
        results.append(
            DirectionResult(
                job_name=job.name,
                direction=section.name,
                rw=rw,
                bs=bs,
                iodepth=header.depth,
                numjobs=numjobs,
                iops=ios / seconds if seconds else 0.0,
                bw_bytes=io_bytes / seconds if seconds else 0.0,
                io_bytes=io_bytes,
                total_ios=ios,
                runtime_ms=section.runtime_ms,
                usr_cpu=job.usr,
                sys_cpu=job.sys,
                clat=_latency(section, "clat"),
                sync_lat=sync_lat if section.name in ("write", "mixed") else None,
                options=options,
                unknown=tuple(unknown),
                derived=derived,
            )
        )
    return results


def _latency(section: _Section, kind: str) -> Latency | None:
    stats = section.stats.get(kind)
    if stats is None:
        return None
    pct = section.percentiles.get(kind, {})
    return Latency(
        mean_ns=stats["avg"],
        stddev_ns=stats.get("stdev"),
        min_ns=stats.get("min"),
        max_ns=stats.get("max"),
        p50_ns=pct.get(50.0),
        p99_ns=pct.get(99.0),
        p999_ns=pct.get(99.9),
    )


def _strerror(code: int) -> str:
    try:
        return os.strerror(code)
    except (ValueError, OverflowError):
        return f"error {code}"
