"""Parse fio's JSON and json+ output, whatever fio 2.x/3.x and its surroundings did to it.

The facts this parser is built around (tests/engine hold an output for each):
- fio prints notices and errors before the JSON document, in the same stream; parse from the first `{` that
  starts a valid document and keep the text before it. fio's documents open with `"fio version"`.
- `--status-interval` concatenates several documents (any number); the last one is the final result, and a
  truncated last one is an error, not a silent fall back to an earlier snapshot.
- `bs=read,write,trim`: a missing value repeats the last one, an empty one is fio's default 4k;
  `bs_is_seq_rand=1` makes the two values sequential/random. A direction that moved no bytes (a failed
  job counts its failed I/O in `total_ios`) is not a measurement.
- Job options hold only what was set explicitly, so `rw`, `bs` and `iodepth` may be absent (fio's defaults
  apply: read, 4k, 1); global options may be a dict or (fio >= 3.39, client mode) a list of dicts. A job
  with no `job options` at all (fio 2.1 and 2.2 print none; client entries can lack them) says nothing of its
  workload: random or sequential, iodepth and numjobs are unknown (`DirectionResult.unknown`), the
  direction is the side that moved data, and the block size is bytes / I/Os where that is exact (from
  `total_ios`, or from the truncated KiB, KiB/s and IOPS of fio < 2.17, `engine.truncated`).
- fio < 3.0 reports `clat` in microseconds; later versions `clat_ns`. fio < 3.2 has no `bw_bytes` (`bw` is
  KiB/s). fio 2.x's `io_bytes` is KiB (3.0 made it bytes and added `io_kbytes`). `sync` (fsync/fdatasync
  latency) exists since 3.4, and only matters when it has samples. A latency fio did not measure
  (gtod_reduce, disable_clat) has `N` 0, or before 3.x all zeros: it is absent (None), never 0 us.
- A direction a job's rw does not do (the reads of a write job with verify) is that direction's own pattern,
  with random or sequential unknown, never the job's.
- Client/server output uses `client_stats` with an "All clients" aggregate next to the per-host entries.

Anything else that does not fit raises `FioOutputError` with the place it failed: never a traceback.
"""

from __future__ import annotations

import json
import math
import os
import re
from array import array
from typing import Any

from stackbench.engine.ranges import check_result
from stackbench.engine.truncated import recover
from stackbench.model.fio_result import DirectionResult, FioResult, JobError, Latency, LatencyBuckets
from stackbench.base.errors import FioOutputError, StackbenchError
from stackbench.base.units import parse_size

DIRECTIONS = ("read", "write", "trim", "mixed")
_FIO_DOC_START = re.compile(r'\{\s*"fio version"\s*:')
_OBJECT_START = re.compile(r'\{\s*"')
_MAX_FAILED_DECODES = 200
_U64 = 2**64 - 1
_DEFAULT_BS = 4096
_MISSING = object()
_FIX = "Pass the complete output of `fio --output-format=json` (or json+), e.g. the file written by --output"


def parse_fio_json(text: str | bytes, *, source: str = "fio output", buckets: bool = True) -> FioResult:
    """Parse fio JSON/json+ text into a `FioResult`; raise `FioOutputError` naming the problem.

    json+ latency buckets are checked either way; with `buckets=False` they are not kept in the result's
    `document` (`import` stores the raw text, from which charts read them), which saves most of a large
    json+ output's memory."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise FioOutputError(f"{source} is not text", _FIX)
    document, preamble = _last_document(text, source, _KEEP_BUCKETS if buckets else _CHECK_BUCKETS)
    return _parse_document(document, text, preamble, source)


def looks_like(text: str) -> bool:  # `import` detects a document with jobs or clients, after any text
    return '"jobs"' in text or '"client_stats"' in text or not text.strip()


def read(text: str, source: str) -> tuple[FioResult, dict[str, Any]]:
    """`import`'s reader: json+ buckets are checked, not kept (the store keeps the raw text)."""
    return parse_fio_json(text, source=source, buckets=False), {}


def parse_client_results(text: str | bytes, *, source: str = "fio output") -> list[tuple[str, int, FioResult]]:
    """Each client's own result from `fio --client` output: (hostname, port, result), in fio's order.

    fio's "All clients" entry is skipped: its totals have been wrong in fio releases, so a fleet's total is
    computed from these per-client results instead. Each result's `document` holds only that client's
    entry, so its json+ histograms are that client's. A client that dropped out has no entry at all.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    document, preamble = _last_document(text, source)
    entries = document.get("client_stats")
    if not isinstance(entries, list):
        raise FioOutputError(f"{source} has no 'client_stats' list (not fio --client output)", _FIX)
    found = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("jobname") == "All clients":
            continue
        host, port = entry.get("hostname"), entry.get("port")
        if not isinstance(host, str) or not _is_number(port) or not 0 <= port <= 65535:
            raise FioOutputError(f"{source} has a client entry without hostname and port", _FIX)
        one = {**document, "client_stats": [entry]}
        found.append((host, int(port), _parse_document(one, text, preamble, f"{source} ({host}:{port})")))
    return found


def parse_fio_jobs(text: str | bytes, *, source: str = "fio output") -> list[FioResult]:
    """Each job of one fio output as a result of its own, in the job file's order: a sweep job file
    measures one cell per (stonewalled) job. Each result's `document` and `raw_text` hold only that job's
    entry (and fio's header), so what is stored per cell is a complete fio JSON document of that cell alone,
    which the json+ histograms and `import` read back like any other."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    document, preamble = _last_document(text, source)
    jobs = _list(document, "jobs", source)
    found = []
    for index, entry in enumerate(jobs):
        one = {**document, "jobs": [entry]}
        own_text = preamble + json.dumps(one, indent=1, default=_as_json)
        name = entry.get("jobname") if isinstance(entry, dict) else None
        found.append(_parse_document(one, own_text, preamble, f"{source} (job {_show(name or index + 1)})"))
    return found


def _as_json(value: object) -> dict[str, Any]:
    """What json.dumps cannot write itself: the parser's compact json+ buckets (result.LatencyBuckets), written
    back as the object fio wrote."""
    if isinstance(value, LatencyBuckets):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _parse_document(document: dict[str, Any], text: str, preamble: str, source: str) -> FioResult:
    version = document.get("fio version")
    if not isinstance(version, str) or not version.strip():
        version = "unknown"
    timestamp = document.get("timestamp")
    if not _is_number(timestamp):
        timestamp = None
    elif not 0 <= timestamp <= _U64:
        raise FioOutputError(f"{source} has timestamp={_show(timestamp)}, not a time fio writes", _FIX)
    if "client_stats" in document:
        jobs = _list(document, "client_stats", source)
        jobs = [job for job in jobs if not (isinstance(job, dict) and job.get("jobname") == "All clients")] or jobs
    else:
        jobs = _list(document, "jobs", source)
    if not jobs:
        raise FioOutputError(f"{source} contains no jobs", _FIX)
    global_options = document.get("global options", {})
    directions: list[DirectionResult] = []
    errors: list[JobError] = []
    for index, job in enumerate(jobs):
        where = f"{source}: job #{index + 1}"
        if not isinstance(job, dict):
            raise FioOutputError(f"{where} is not an object", _FIX)
        name = str(job.get("jobname", f"job{index + 1}"))
        where = f"{source}: job {_show(name)}"
        code = job.get("error", 0)
        if not _is_number(code):
            raise FioOutputError(f"{where} has a non-numeric error field {_show(code)}", _FIX)
        if not 0 <= code < 2**31:
            raise FioOutputError(f"{where} has error={_show(code)}, not an errno fio reports", _FIX)
        if code:
            errors.append(JobError(name, int(code), _strerror(int(code))))
        host = job.get("hostname") if isinstance(job.get("hostname"), str) else None
        options = _options(global_options, job.get("job options"), host, where)
        said = "job options" in job  # fio lists a job's explicit options there: what is absent is a default
        directions.extend(_directions(job, name, host, options, said, _major(version), where))
    if not directions and not errors:
        raise FioOutputError(f"{source} has jobs but none did any I/O", "Check the job's runtime and size")
    return check_result(FioResult(
        fio_version=version.strip(),
        timestamp=int(timestamp) if timestamp is not None else None,
        directions=tuple(directions),
        job_errors=tuple(errors),
        raw_text=text,
        preamble=preamble,
        document=document,
    ), source)


def _last_document(text: str, source: str, decoder: json.JSONDecoder | None = None) -> tuple[dict[str, Any], str]:
    """Find the fio result documents in `text` and return the last one and the text before the first.

    fio's documents start with `{` and `"fio version"`, which noise before them (error lines, job-file text
    with `${VAR}`) does not; a document that starts like that but cannot be read is a truncated one, and if
    it is the last one the final result is missing, so that is an error rather than a silent fall back to
    an earlier `--status-interval` snapshot. Outputs without that key go through a generic scan.
    """
    decoder = decoder or _KEEP_BUCKETS
    first: int | None = None
    last: dict[str, Any] | None = None  # only the last document is kept: a long --status-interval log has
    failure: tuple[int, ValueError] | None = None  # thousands, and each can be a large json+ document
    for match in _FIO_DOC_START.finditer(text):
        start = match.start()
        value, _end, error = _decode(decoder, text, start, source)
        if error is not None:
            failure = (start, error)
        elif isinstance(value, dict) and ("jobs" in value or "client_stats" in value):
            first = start if first is None else first
            last, failure = value, None
    if failure is not None:
        raise _truncated(text, source, *failure)
    if last is not None and first is not None:
        return last, text[:first]
    return _scan_for_document(decoder, text, source)


def _scan_for_document(decoder: json.JSONDecoder, text: str, source: str) -> tuple[dict[str, Any], str]:
    """The generic scan: try every `{"` in order; count only failures, so many documents are fine."""
    first: int | None = None
    last: dict[str, Any] | None = None
    first_failure: tuple[int, ValueError] | None = None
    failures = 0
    position = 0
    while True:
        match = _OBJECT_START.search(text, position)
        if not match:
            break
        start = match.start()
        value, end, error = _decode(decoder, text, start, source)
        if error is not None:
            first_failure = first_failure or (start, error)
            failures += 1
            if failures > _MAX_FAILED_DECODES:
                raise FioOutputError(
                    f"{source} has more than {_MAX_FAILED_DECODES} places that look like broken JSON", _FIX
                )
            position = start + 1
            continue
        if isinstance(value, dict) and ("jobs" in value or "client_stats" in value):
            first = start if first is None else first
            last = value
        position = end
    if last is None or first is None:
        if first_failure is not None:
            raise _truncated(text, source, *first_failure)
        raise FioOutputError(f"no fio JSON document found in {source}", _FIX)
    return last, text[:first]


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any] | LatencyBuckets:
    """A JSON object as the decoder builds it: json+ latency buckets (every key a whole number of ns, every
    value a whole count, both within fio's 64-bit counters) become `LatencyBuckets`, anything else a dict.
    Buckets that fail these checks stay a dict, and `_latency` names what is wrong with them."""
    if pairs and pairs[0][0].isdigit():
        values, counts = zip(*pairs)
        keys = "".join(values)  # one check in C for all the keys: ASCII digits only (int() takes more)
        if (keys.isascii() and keys.isdigit() and all(values) and set(map(type, counts)) == {int}
                and (max(map(len, values)) < 20 or all(len(value) == 20 and int(value) <= _U64 for value in values))):
            try:
                return LatencyBuckets(values, array("Q", counts))
            except OverflowError:  # a count below 0 or past 64 bits
                pass
    return dict(pairs)


_NO_BUCKETS = LatencyBuckets((), array("Q"))


def _object_checked(pairs: list[tuple[str, Any]]) -> dict[str, Any] | LatencyBuckets:
    """`_object`, with checked buckets dropped (`parse_fio_json(buckets=False)`)."""
    value = _object(pairs)
    return _NO_BUCKETS if isinstance(value, LatencyBuckets) else value


_KEEP_BUCKETS = json.JSONDecoder(object_pairs_hook=_object)
_CHECK_BUCKETS = json.JSONDecoder(object_pairs_hook=_object_checked)


def _decode(
    decoder: json.JSONDecoder, text: str, start: int, source: str
) -> tuple[Any, int, ValueError | None]:
    try:
        value, end = decoder.raw_decode(text, start)
    except RecursionError:
        raise FioOutputError(f"{source} nests JSON too deeply to be fio output", _FIX) from None
    except ValueError as error:  # JSONDecodeError, or an integer too long for int() (Python's 4300 digits)
        return None, start, error
    return value, end, None


def _truncated(text: str, source: str, start: int, error: ValueError) -> FioOutputError:
    if isinstance(error, json.JSONDecodeError):
        where = f"line {error.lineno}, column {error.colno}: {error.msg}"
    else:  # not a syntax error: say where the document that holds it starts
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        where = f"document at line {line}, column {column}: {_show_text(str(error))}"
    return FioOutputError(f"{source} is not complete fio JSON ({where}); the output may be truncated", _FIX)


def _options(global_options: Any, job_options: Any, host: str | None, where: str) -> dict[str, str]:
    merged: dict[str, str] = {}
    if isinstance(global_options, list):  # fio >= 3.39: one dict per host in client mode
        chosen = [g for g in global_options if isinstance(g, dict) and g.get("hostname") in (host, None)]
        global_options = chosen[0] if chosen else (global_options[0] if global_options else {})
    for source in (global_options, job_options):
        if source is None:
            continue
        if not isinstance(source, dict):
            raise FioOutputError(f"{where} has job options that are not an object", _FIX)
        for key, value in source.items():
            merged[str(key)] = str(value)
    return merged


def _directions(job: dict[str, Any], name: str, host: str | None, options: dict[str, str], said: bool,
                major: int | None, where: str) -> list[DirectionResult]:
    """One result per direction that moved data. `said`: the job printed its options, so an option absent
    there is fio's default; otherwise the workload fields the options do not hold are unknown."""
    written = options.get("rw", options.get("readwrite"))
    rw = (written or "read").split(":")[0]
    iodepth = _int_option(options, "iodepth", 1, where)
    numjobs = _int_option(options, "numjobs", 1, where)
    usr = _optional_number(job, "usr_cpu", where)
    sys_ = _optional_number(job, "sys_cpu", where)
    sync_lat = _sync_latency(job.get("sync"), where)
    moved = [(d, job[d]) for d in DIRECTIONS if isinstance(job.get(d), dict)]
    for direction in DIRECTIONS:
        if job.get(direction) is not None and not isinstance(job.get(direction), dict):
            raise FioOutputError(f"{where}: {direction} is not an object", _FIX)
    active = []
    for direction, stats in moved:
        dwhere = f"{where} {direction}"
        io_bytes, kib = _io_bytes(stats, major, dwhere)
        if io_bytes > 0:  # nothing moved: an idle direction, or only the failed I/O of a job that errored
            active.append((direction, stats, io_bytes, kib))
    sides = {d for d, *_ in active} - {"trim"}
    results = []
    for direction, stats, io_bytes, kib in active:
        dwhere = f"{where} {direction}"
        unknown: list[str] = [] if said else [k for k in ("iodepth", "numjobs") if k not in options]
        derived: list[str] = ["io_bytes"] if kib else []
        cell_rw = rw
        if (written is None and not said) or not does_direction(rw, direction):
            # a job that says no rw, or a direction its rw does not do (verify reads): the side that moved
            # data is known, random or sequential is not
            cell_rw = "rw" if direction == "mixed" or (written is None and sides >= {"read", "write"}) else (
                "write" if direction == "write" else "read")
            unknown.append("pattern")
            derived.append("rw")
        total_ios = _number(stats, "total_ios", dwhere, default=None)
        iops = _number(stats, "iops", dwhere)
        bw_bytes = _number(stats, "bw_bytes", dwhere, default=None)
        if bw_bytes is None:
            bw_bytes = _number(stats, "bw", dwhere, scale=1024) * 1024  # fio < 3.2: KiB/s
        runtime = _number(stats, "runtime", dwhere, default=0)
        if "bs" in options or "blocksize" in options or said:
            bs = _block_size(options, direction, cell_rw, io_bytes, total_ios or 0, where)
        else:
            bs, count, exact = _derived_size(stats, io_bytes, total_ios, iops, runtime, dwhere)
            (derived if exact else unknown).append("bs")
            if count and not total_ios and runtime:  # recovered from truncated numbers: fio's own IOPS
                total_ios, iops = count, count * 1000 / runtime
                derived.append("total_ios")
        results.append(
            DirectionResult(
                job_name=name,
                direction=direction,
                rw=cell_rw,
                bs=bs,
                iodepth=iodepth,
                numjobs=numjobs,
                iops=iops,
                bw_bytes=bw_bytes,
                io_bytes=int(io_bytes),
                total_ios=int(total_ios or 0),
                runtime_ms=runtime,
                usr_cpu=usr,
                sys_cpu=sys_,
                clat=_clat(stats, dwhere),
                sync_lat=sync_lat if direction in ("write", "mixed") else None,
                host=host,
                options=options,
                unknown=tuple(unknown),
                derived=tuple(derived),
            )
        )
    return results


def does_direction(rw: str, direction: str) -> bool:
    """Whether a job of pattern `rw` does I/O in `direction` (a write job's reads are its verify pass)."""
    reads = "read" in rw or rw in ("rw", "randrw")
    writes = "write" in rw or rw in ("rw", "randrw")
    return {"read": reads, "write": writes, "trim": "trim" in rw}.get(direction, True)


def _major(version: str) -> int | None:
    match = re.match(r"\s*fio-(\d+)\.", version)
    return int(match[1]) if match else None


def _io_bytes(stats: dict[str, Any], major: int | None, where: str) -> tuple[float, bool]:
    """(bytes moved, whether they were given in KiB). fio 3.x prints `io_bytes` in bytes next to `io_kbytes`;
    fio 2.x prints only `io_bytes`, in KiB. Without a version, the bandwidth decides which one it is."""
    io_bytes = _number(stats, "io_bytes", where, default=None)
    if io_bytes is None:
        return _number(stats, "io_kbytes", where, default=0, scale=1024) * 1024, True
    if "io_kbytes" in stats or (major is not None and major >= 3):
        return io_bytes, False
    if major is None:
        bw_kib = _number(stats, "bw", where, default=0)
        runtime = _number(stats, "runtime", where, default=0)
        moved_kib = bw_kib * runtime / 1000
        if not moved_kib or abs(io_bytes - moved_kib) > abs(io_bytes - moved_kib * 1024):
            return io_bytes, False
    _number(stats, "io_bytes", where, scale=1024)  # within fio's counters once in bytes
    return io_bytes * 1024, True


def _derived_size(stats: dict[str, Any], io_bytes: float, total_ios: float | None, iops: float, runtime: float,
                  where: str) -> tuple[int, float, bool]:
    """(block size, I/O count, exact?) for a job that names no block size: bytes / I/Os when that divides
    exactly, or what fio's truncated KiB, KiB/s and IOPS fix (fio before 2.17 prints no count)."""
    if total_ios:
        exact = io_bytes % total_ios == 0
        return (int(io_bytes // total_ios) if exact else max(1, round(io_bytes / total_ios))), total_ios, exact
    bw_kib = _number(stats, "bw", where, default=0)
    found = recover(int(io_bytes) >> 10, int(bw_kib), int(iops), int(runtime))
    return found.bs, (found.ios if found.ios_exact else 0), found.bs_exact


def _clat(stats: dict[str, Any], where: str) -> Latency | None:
    if "clat_ns" in stats:
        return _measured(_latency(stats["clat_ns"], 1.0, f"{where} clat_ns"))
    if "clat" in stats:  # fio 2.x: microseconds
        return _measured(_latency(stats["clat"], 1000.0, f"{where} clat"))
    return None


def _measured(latency: Latency) -> Latency | None:
    """None for a latency fio did not measure (gtod_reduce, disable_clat): `N` is 0, or, before fio 3.x had
    `N`, every value is 0. A mean of 0 us is no measurement; storing it would show as 0 us."""
    if latency.samples == 0:
        return None
    if latency.samples is None and not latency.mean_ns and not latency.max_ns and not latency.p50_ns:
        return None
    return latency


def _sync_latency(sync: Any, where: str) -> Latency | None:
    if not isinstance(sync, dict):
        return None
    lat = sync.get("lat_ns")
    if not isinstance(lat, dict):
        return None
    latency = _latency(lat, 1.0, f"{where} sync lat_ns")
    if not latency.samples:
        return None
    return latency


def _latency(data: Any, scale: float, where: str) -> Latency:
    if not isinstance(data, dict):
        raise FioOutputError(f"{where} is not an object", _FIX)
    percentiles: dict[float, float] = {}
    raw = data.get("percentile")
    if isinstance(raw, dict):
        for key, value in raw.items():
            try:
                point = float(key)
            except ValueError:
                point = math.nan
            if not 0 <= point <= 100:  # NaN too
                raise FioOutputError(f"{where} has a percentile key {_show(key)} that is not a percentage", _FIX)
            if not _is_number(value) or value < 0 or value * scale > _U64 + 1:
                raise FioOutputError(f"{where} percentile {_show_text(key)} has a bad value {_show(value)}", _FIX)
            percentiles[round(point, 4)] = float(value) * scale
    elif raw is not None:
        raise FioOutputError(f"{where} percentile is not an object", _FIX)
    bins = data.get("bins")
    if bins is not None and not isinstance(bins, LatencyBuckets) and bins != {}:
        raise FioOutputError(f"{where} bins {_bad_bucket(bins)}", _FIX)
    samples = _number(data, "N", where, default=None)
    mean = _number(data, "mean", where, default=0.0, scale=scale)

    def scaled(key: str) -> float | None:
        value = _number(data, key, where, default=None, scale=scale)
        return value * scale if value is not None else None

    return Latency(
        mean_ns=mean * scale,
        stddev_ns=scaled("stddev"), min_ns=scaled("min"), max_ns=scaled("max"),
        p50_ns=percentiles.get(50.0),
        p99_ns=percentiles.get(99.0),
        p999_ns=percentiles.get(99.9),
        samples=int(samples) if samples is not None else None,
    )


def _bad_bucket(bins: Any) -> str:
    """What is wrong with json+ buckets the decoder did not take (`_object`), for the error message."""
    if not isinstance(bins, dict):
        return f"is {_show(bins)}, not an object of buckets"
    for key, count in bins.items():
        if not (key.isascii() and key.isdigit()) or len(key) > 20 or int(key) > _U64:
            return f"has a bucket {_show(key)}, not a whole number of ns up to 2^64-1"
        if type(count) is not int or not 0 <= count <= _U64:
            return f"has a count {_show(count)} in bucket {_show(key)}, not a whole number up to 2^64-1"
    return "could not be read"  # pragma: no cover - _object takes every object that passes the checks above


def _block_size(
    options: dict[str, str], direction: str, rw: str, io_bytes: float, total_ios: float, where: str
) -> int:
    """The job's block size for `direction`, as fio reads `bs=read,write,trim`.

    A missing trailing value repeats the last one given (`4k,64k`: trims 64k); an empty one is fio's
    default 4k (`,64k`: reads 4k; `8k,`: writes and trims 4k). With `bs_is_seq_rand=1` the two values are
    for sequential and random I/O instead. A `mixed` (unified) direction whose read and write sizes differ
    has no single size, so it gets the measured average, as does a job without `bs`.
    """
    text = options.get("bs", options.get("blocksize"))
    if not text:
        return _average_size(io_bytes, total_ios)
    parts = [part.strip() for part in text.split(",")]

    def size_at(index: int) -> int:
        chosen = parts[min(index, len(parts) - 1)].split("-")[0].split(":")[0]
        if not chosen:
            return _DEFAULT_BS
        try:
            return parse_size(chosen, option="bs")
        except StackbenchError:
            raise FioOutputError(f"{where} has a block size {_show(text)} that is not a size", _FIX) from None

    if options.get("bs_is_seq_rand", "0").strip().lower() in ("1", "true", "yes", "on"):
        return size_at(1 if rw.startswith("rand") else 0)
    if direction == "mixed":
        read, write = size_at(0), size_at(1)
        return read if read == write else _average_size(io_bytes, total_ios)
    return size_at({"read": 0, "write": 1, "trim": 2}.get(direction, 0))


def _average_size(io_bytes: float, total_ios: float) -> int:
    if total_ios >= 1:
        return max(1, round(io_bytes / total_ios))
    return _DEFAULT_BS


def _int_option(options: dict[str, str], key: str, default: int, where: str) -> int:
    text = options.get(key)
    if text is None:
        return default
    try:
        value = int(float(text))
    except (ValueError, OverflowError):  # "deep", "nan", "inf", "1e400"
        raise FioOutputError(f"{where} has {key}={_show(text)}, which is not a number", _FIX) from None
    return max(value, 1)


def _is_number(value: Any) -> bool:
    """A finite JSON number that fits a float (json.loads returns unbounded ints: 1e400 as digits)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _show(value: Any) -> str:
    """A value for an error message: its repr, cut so one absurd value cannot flood the line."""
    return _show_text(repr(value))


def _show_text(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _number(data: dict[str, Any], key: str, where: str, default: Any = _MISSING, scale: float = 1.0) -> Any:
    """A field fio fills from its 64-bit counters: a number from 0 to 2^64 (in ns, bytes, I/Os) once
    multiplied by `scale` (fio 2.x latencies are in us, old bandwidths in KiB/s)."""
    value = data.get(key, _MISSING)
    if value is _MISSING:
        if default is _MISSING:
            raise FioOutputError(f"{where} has no {key!r} field", _FIX)
        return default
    if not _is_number(value) or value < 0:
        raise FioOutputError(f"{where} has {key}={_show(value)}, which is not a non-negative number", _FIX)
    if value * scale > _U64 + 1:
        raise FioOutputError(f"{where} has {key} too large for fio's 64-bit counters ({key}={_show(value)})", _FIX)
    return value


def _optional_number(data: dict[str, Any], key: str, where: str) -> float | None:
    value = _number(data, key, where, default=None)
    return float(value) if value is not None else None


def _list(document: dict[str, Any], key: str, source: str) -> list[Any]:
    value = document.get(key)
    if not isinstance(value, list):
        raise FioOutputError(f"{source} has no {key!r} list", _FIX)
    return value


def _strerror(code: int) -> str:
    try:
        return os.strerror(code)
    except (ValueError, OverflowError):
        return f"error {code}"
