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


def read_fio_file(path: Path) -> tuple[FioResult, bytes]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StackbenchError(f"{path} does not exist", "Check the file name") from None
    except IsADirectoryError:
        raise StackbenchError(f"{path} is a directory", "Pass the fio output files themselves, e.g. DIR/*.json") from None
    except OSError as error:
        raise StackbenchError(f"cannot read {path}: {error.strerror}", "Check the file's permissions") from None
    return parse_fio_json(data, source=str(path)), data


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
        direct=_truthy(options.get("direct")),
        size=max(size, result.bs),
        runtime=runtime,
        ioengine=options.get("ioengine", "psync"),
    )


def import_files(store: Store, paths: Sequence[Path], *, label: str | None = None) -> list[Run]:
    parsed = []
    for path in paths:
        result, data = read_fio_file(path)
        if result.job_errors:
            first = result.job_errors[0]
            raise StackbenchError(
                f"{path}: fio job {first.job_name!r} failed ({first.message}, errno {first.code})",
                "Import only outputs of successful fio runs",
            )
        cells = [(workload_of(d), d) for d in result.directions]
        parsed.append((path, result, data, cells))
    runs = []
    for path, result, data, cells in parsed:
        facts = {
            "fio_version": result.fio_version,
            "imported_from": str(path.resolve()),
            "sha256": hashlib.sha256(data).hexdigest(),
            "fio_timestamp": result.timestamp,
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
