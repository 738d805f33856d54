"""Turning fio outputs produced elsewhere into stored runs.

All files are read and parsed before the first write, so a bad file stores nothing. The workload of an
imported cell is reconstructed from fio's own job options (only the options set explicitly are in the
output, fio's defaults fill the rest); what cannot be known, such as the file size of a time-based job
that did not say it, is recorded as what the output implies. A workload field the output does not say at
all (random or sequential in terse, every option of a fio 2.1 JSON job) is stored as unknown, never as a
default presented as a fact, and the run carries a coded warning saying so (`import_warnings`); so do fields
computed exactly from the printed numbers, and a latency fio did not measure.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from stackbench.engine.input_formats import AUTO, detect, input_format, supported
from stackbench.engine.ranges import check_result
from stackbench.model.fio_result import DirectionResult, FioResult
from stackbench.base.errors import FioOutputError, Interrupted, StackbenchError, UsageError, interrupt_cause
from stackbench.base.inputs import FIO_OUTPUT, read_input
from stackbench.store.repository import OutputRecord
from stackbench.model.plan import RW_MODES, Workload
from stackbench.model.results import Run, new_id
from stackbench.store import Store
from stackbench.base.units import parse_size
from stackbench.model.warning import Warning, WarningCode


# The first line fio prints for a job, in normal output: `name: (g=0): rw=randrw, bs=(R) 64.0KiB-64.0KiB, ...`
_FIO_START = re.compile(r"^\S.*: \(g=\d+\): rw=\w+, bs=", re.MULTILINE)


def parse_any(data: bytes, source: str, fmt: str = AUTO) -> tuple[FioResult, dict]:
    """Parse an output of one of the formats `import` reads (engine/input_formats.py), detected unless `fmt`.

    Returns the result and extra facts to store (the diskinfo device facts).
    """
    return parse_text(data.decode("utf-8", errors="replace"), source, fmt)


def parse_text(text: str, source: str, fmt: str = AUTO) -> tuple[FioResult, dict]:
    """`parse_any` on text already decoded."""
    text = text.removeprefix("\ufeff")  # a byte-order mark that an editor or a Windows tool put first
    if fmt == AUTO:
        chosen = detect(text)
        if chosen is None:
            if _FIO_START.search(text):  # fio's job header and no job's result: it died or was stopped first
                raise FioOutputError(
                    f"{source}: fio output with no result block (fio printed its job header, then no job's "
                    f"results: it failed or was stopped before the end); {supported()}",
                    "Import the output of a fio run that finished")
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            raise StackbenchError(f"{source}: unknown format (first line {first[:60]!r}); {supported()}",
                                  "Pass an output in one of those formats")
    else:
        chosen = input_format(fmt)
    result, extra = chosen.read(text, source)
    return check_result(result, source), extra  # every format, a new one too: no number fio cannot report


def read_fio_file(path: Path, fmt: str = AUTO) -> tuple[FioResult, str, dict]:
    """The parsed result, the SHA-256 of the file and the extra facts: read through the bounded reader, and
    the bytes dropped as soon as they are text and hashed (the text is what the store keeps)."""
    data = read_input(path, FIO_OUTPUT)
    digest = hashlib.sha256(data).hexdigest()
    text = data.decode("utf-8", errors="replace")
    del data
    result, extra = parse_text(text, str(path), fmt)
    return result, digest, extra


def workload_of(result: DirectionResult, source: str = "fio output") -> Workload:
    """The workload fio ran, from its own options; one fio accepts (not `run`'s plan limits: an import is
    what fio did elsewhere), else FioOutputError naming the file, the job and the option."""
    rw = result.rw if result.rw in RW_MODES else {"readwrite": "rw"}.get(result.rw, result.rw)
    if rw not in RW_MODES:
        raise StackbenchError(
            f"{source}: fio job {result.job_name!r} uses rw={result.rw}, which stackbench does not store yet",
            "Import jobs with read, write, randread, randwrite, rw or randrw",
        )
    try:
        return _workload(result, rw)
    except UsageError as error:
        raise FioOutputError(f"{source}: job {result.job_name!r} {result.direction}: {error.what}",
                             "Pass fio's own output, unedited") from None


def _workload(result: DirectionResult, rw: str) -> Workload:
    options = result.options
    writes = rw not in ("read", "randread")
    size = _size(options.get("size") or options.get("filesize"), result)
    runtime = _seconds(options.get("runtime")) or (result.runtime_ms / 1000 if result.runtime_ms else 0) or 1.0
    return Workload(
        rw=rw,
        bs=result.bs,
        iodepth=result.iodepth,
        numjobs=result.numjobs,
        unknown=tuple(name for name in ("pattern", "bs", "iodepth", "numjobs") if name in result.unknown),
        # fsync/fdatasync act on writes: on a read job (fio-plot's randread with fsync=10000) they change nothing
        sync=writes and (_truthy(options.get("sync")) or _truthy(options.get("fsync")) or _truthy(options.get("fdatasync"))),
        dsync=writes and options.get("sync") == "dsync",
        direct=_truthy(options.get("direct")),
        size=max(size, result.bs),
        runtime=runtime,
        ioengine=options.get("ioengine", "psync"),
    )


MAX_LABEL = 200  # the store's label column, and what `--label` accepts


def numbered_labels(label: str | None, count: int) -> list[str | None]:
    """One label per imported run: the label for one file, LABEL-1 to LABEL-N for N files (in the order
    given). A label names the newest run with it, so N runs under one label would leave all but one
    reachable only by id, and `rm LABEL` would delete one of the N."""
    if label is None or count == 1:
        return [label] * count
    labels: list[str | None] = [f"{label}-{number}" for number in range(1, count + 1)]
    longest = len(labels[-1] or "")
    if longest > MAX_LABEL:
        raise UsageError(
            f"--label with {count} files makes labels up to LABEL-{count}, {longest} characters (at most {MAX_LABEL})",
            f"Use a label of at most {MAX_LABEL - len(str(count)) - 1} characters",
        )
    return labels


def import_files(store: Store, paths: Sequence[Path], *, label: str | None = None, fmt: str = AUTO,
                 stored: list[tuple[Path, str]] | None = None) -> list[Run]:
    """Parse every file, then store each as one run in its own transaction; (path, run id) of each stored
    run is appended to `stored` the moment it is known, so that a caller interrupted later (while it
    prints) can still say which runs are kept (`interrupted`)."""
    labels = numbered_labels(label, len(paths))
    parsed = []
    for path in paths:
        result, digest, extra = read_fio_file(path, fmt)
        if result.job_errors:
            first = result.job_errors[0]
            raise StackbenchError(
                f"{path}: fio job {first.job_name!r} failed ({first.message}, errno {first.code})",
                "Import only outputs of successful fio runs",
            )
        cells = [(workload_of(d, str(path)), d) for d in result.directions]
        parsed.append((path, replace(result, document={}), digest, cells, extra))  # the tree is no longer needed
    stored = [] if stored is None else stored
    pending: tuple[Path, str] | None = None
    try:
        for (path, result, digest, cells, extra), run_label in zip(parsed, labels):
            facts = {
                "fio_version": result.fio_version,
                "imported_from": str(path.resolve()),
                "sha256": digest,
                "fio_timestamp": result.timestamp,
                **extra,
            }
            output = OutputRecord(raw_text=result.raw_text, fio_version=result.fio_version, source_name=str(path))
            pending = (path, new_id())
            store.import_run(label=run_label, facts=facts, output=output, cells=cells, run_id=pending[1],
                             warnings=import_warnings(cells))
            stored.append(pending)
            pending = None
        return [store.get_run(run_id) for _, run_id in stored]
    except KeyboardInterrupt as interrupt:
        # The signal can land after the transaction committed and before the id was noted: the store says.
        if pending is not None and store.has_run(pending[1]):
            stored.append(pending)
        raise interrupted(interrupt_cause(interrupt), stored, len(parsed)) from None


_FIELD_WORDS = {"pattern": "random or sequential", "bs": "the block size", "iodepth": "the iodepth",
                "numjobs": "numjobs", "rw": "the direction (from the side that moved data)",
                "total_ios": "the I/O count (from the truncated KiB, KiB/s and IOPS)",
                "io_bytes": "the bytes (fio 2.x prints KiB)"}


def import_warnings(cells: Sequence[tuple[Workload, DirectionResult]]) -> tuple[Warning, ...]:
    """What an import did not read as a fact from the file, as coded warnings: unknown fields (stored as such,
    shown as `?`), fields computed exactly from the printed numbers, latency fio did not measure."""
    def listed(names: Sequence[str]) -> str:
        return ", ".join(_FIELD_WORDS[name] for name in names)

    def grouped(key: Callable[[Workload, DirectionResult], tuple[str, ...]]) -> dict[tuple[str, ...], list[str]]:
        groups: dict[tuple[str, ...], list[str]] = {}
        for workload, result in cells:
            names = key(workload, result)
            if names:
                groups.setdefault(names, []).append(f"{result.job_name} ({result.direction})")
        return groups

    def verify(result: DirectionResult) -> bool:  # a direction the job's own rw does not do: its verify pass
        return "rw" in result.derived and "rw" in result.options

    warnings = []
    for names, subjects in grouped(lambda w, r: w.unknown if not verify(r) else ()).items():
        warnings.append(Warning(
            WarningCode.IMPORT_UNKNOWN, ", ".join(subjects),
            f"the output does not say {listed(names)}: stored as unknown, shown as ?, never matched to another "
            "run's cell", "Import fio's JSON output of fio 3.x, which lists each job's options"))
    for names, subjects in grouped(lambda w, r: w.unknown if verify(r) else ()).items():
        warnings.append(Warning(
            WarningCode.IMPORT_UNKNOWN, ", ".join(subjects),
            f"I/O in a direction the job's rw does not do (a write job's verify reads): stored under that "
            f"direction, {listed(names)} unknown, never matched to another run's cell"))
    for names, subjects in grouped(lambda w, r: tuple(n for n in r.derived if n in _FIELD_WORDS)).items():
        warnings.append(Warning(
            WarningCode.IMPORT_DERIVED, ", ".join(subjects),
            f"not printed, computed exactly from the numbers fio printed: {listed(names)}"))
    unmeasured = [f"{r.job_name} ({r.direction})" for _, r in cells if r.clat is None]
    if unmeasured:
        warnings.append(Warning(
            WarningCode.NO_LATENCY, ", ".join(unmeasured),
            "fio measured no completion latency (gtod_reduce or disable_clat): the latency columns are empty, not 0",
            "Measure without gtod_reduce for latencies"))
    return tuple(warnings)


def interrupted(cause: str, stored: Sequence[tuple[Path, str]], total: int) -> Interrupted:
    """What an import stopped by `cause` kept: each stored file is a whole run, and which run it is."""
    kept = ", ".join(f"{path} as {run_id[:12]}" for path, run_id in stored) or "none"
    if stored and len(stored) == total:
        return Interrupted(f"{cause} stopped the import: {len(stored)} of {total} files were stored, each whole "
                           f"({kept}); they are kept", "See them with `stackbench runs`")
    return Interrupted(f"{cause} stopped the import: {len(stored)} of {total} files were stored, each whole "
                       f"({kept}); nothing of the other files was stored", "Import the remaining files again")


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip() not in ("", "0", "false", "off")


def _size(text: str | None, result: DirectionResult) -> int:
    if text:
        try:
            return parse_size(text.split(",")[0].split("-")[0])
        except StackbenchError:
            pass
    return max(result.io_bytes, result.bs)


def _seconds(text: str | None) -> float | None:
    if not text:
        return None
    text = text.strip().lower()
    for suffix, factor in (("ms", 0.001), ("us", 1e-6), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if text.endswith(suffix):
            try:
                return float(text[: -len(suffix)]) * factor
            except ValueError:
                return None
    try:
        return float(text)
    except ValueError:
        return None
