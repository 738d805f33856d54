"""Turning fio outputs produced elsewhere into stored runs.

All files are read and parsed before the first write, so a bad file stores nothing. The workload of an
imported cell is reconstructed from fio's own job options (only the options set explicitly are in the
output, fio's defaults fill the rest); what cannot be known, such as the file size of a time-based job
that did not say it, is recorded as what the output implies.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from stackbench.engine.fio_json import parse_fio_json
from stackbench.engine.result import DirectionResult, FioResult
from stackbench.errors import StackbenchError
from stackbench.plan import RW_MODES, Workload
from stackbench.results import Run
from stackbench.store import Store
from stackbench.units import parse_size


FORMATS = ("auto", "json", "normal", "terse", "diskinfo")


def parse_any(data: bytes, source: str, fmt: str = "auto") -> tuple[FioResult, dict]:
    """Parse fio JSON/json+, fio normal or terse output, or FreeBSD `diskinfo -wS` output.

    Returns the result and extra facts to store (the diskinfo device facts). Auto-detection looks for what
    only each format has: a JSON document with jobs, diskinfo's table title, terse's `3;fio-` lines, or the
    normal output's `name: (groupid=N, jobs=N): err=` result lines.
    """
    from stackbench.engine.diskinfo import diskinfo_to_fio_result, looks_like_diskinfo, parse_diskinfo
    from stackbench.engine.fio_normal import looks_like_fio_normal, parse_fio_normal
    from stackbench.engine.fio_terse import looks_like_fio_terse, parse_fio_terse

    text = data.decode("utf-8", errors="replace")
    if fmt == "auto":
        if '"jobs"' in text or '"client_stats"' in text or not text.strip():
            fmt = "json"
        elif looks_like_diskinfo(text):
            fmt = "diskinfo"
        elif looks_like_fio_terse(text):
            fmt = "terse"
        elif looks_like_fio_normal(text):
            fmt = "normal"
        else:
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            raise StackbenchError(
                f"{source}: unknown format (first line {first[:60]!r}); not fio JSON, normal or terse output, "
                "nor diskinfo -wS",
                "Pass fio's output (any of --output-format=json, json+, normal, terse) or diskinfo -wS output",
            )
    if fmt == "json":
        return parse_fio_json(text, source=source), {}
    if fmt == "normal":
        return parse_fio_normal(text, source=source), {}
    if fmt == "terse":
        return parse_fio_terse(text, source=source), {}
    if fmt == "diskinfo":
        info = parse_diskinfo(text, source=source)
        return diskinfo_to_fio_result(info, text), {"diskinfo": {"device": info.device, **info.facts}}
    raise StackbenchError(f"unknown --format {fmt!r}", f"Use one of: {', '.join(FORMATS)}")


def read_fio_file(path: Path, fmt: str = "auto") -> tuple[FioResult, bytes, dict]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StackbenchError(f"{path} does not exist", "Check the file name") from None
    except IsADirectoryError:
        raise StackbenchError(f"{path} is a directory", "Pass the fio output files themselves, e.g. DIR/*.json") from None
    except OSError as error:
        raise StackbenchError(f"cannot read {path}: {error.strerror}", "Check the file's permissions") from None
    result, extra = parse_any(data, str(path), fmt)
    return result, data, extra


def workload_of(result: DirectionResult) -> Workload:
    options = result.options
    rw = result.rw if result.rw in RW_MODES else {"readwrite": "rw"}.get(result.rw, result.rw)
    if rw not in RW_MODES:
        raise StackbenchError(
            f"fio job {result.job_name!r} uses rw={result.rw}, which stackbench does not store yet",
            "Import jobs with read, write, randread, randwrite, rw or randrw",
        )
    size = _size(options.get("size") or options.get("filesize"), result)
    runtime = _seconds(options.get("runtime")) or (result.runtime_ms / 1000 if result.runtime_ms else 0) or 1.0
    return Workload(
        rw=rw,
        bs=result.bs,
        iodepth=result.iodepth,
        numjobs=result.numjobs,
        sync=_truthy(options.get("sync")) or _truthy(options.get("fsync")) or _truthy(options.get("fdatasync")),
        dsync=options.get("sync") == "dsync",
        direct=_truthy(options.get("direct")),
        size=max(size, result.bs),
        runtime=runtime,
        ioengine=options.get("ioengine", "psync"),
    )


def import_files(store: Store, paths: Sequence[Path], *, label: str | None = None, fmt: str = "auto") -> list[Run]:
    parsed = []
    for path in paths:
        result, data, extra = read_fio_file(path, fmt)
        if result.job_errors:
            first = result.job_errors[0]
            raise StackbenchError(
                f"{path}: fio job {first.job_name!r} failed ({first.message}, errno {first.code})",
                "Import only outputs of successful fio runs",
            )
        cells = [(workload_of(d), d) for d in result.directions]
        parsed.append((path, result, data, cells, extra))
    runs = []
    for path, result, data, cells, extra in parsed:
        facts = {
            "fio_version": result.fio_version,
            "imported_from": str(path.resolve()),
            "sha256": hashlib.sha256(data).hexdigest(),
            "fio_timestamp": result.timestamp,
            **extra,
        }
        run_id = store.create_run(
            source="imported",
            label=label,
            target=None,
            plan_name="import",
            planned_cells=len(cells),
            facts=facts,
        )
        store.add_cells(
            run_id,
            raw_text=result.raw_text,
            fio_version=result.fio_version,
            cells=cells,
            source_name=str(path),
        )
        store.finish_run(run_id, "complete")
        runs.append(store.get_run(run_id))
    return runs


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
