"""Re-validation of a pushed run (POST /api/runs): nothing a client sends is trusted.

The body is read up to `MAX_BYTES` (past it: 413), parsed as strict JSON (no NaN or Infinity, nesting
at most `MAX_DEPTH` deep), and every field of the document (store/uploads.py) is checked for presence,
type and range before anything is stored; unknown fields are refused rather than dropped. The first
problem found is the one-line reason of the 400.
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import datetime
from typing import Any

from stackbench.model.fio_result import DirectionResult, Latency, Sample
from stackbench.engine.ranges import check_direction, check_measure
from stackbench.base.errors import StackbenchError
from stackbench.model.plan import Workload
from stackbench.store.uploads import DOCUMENT_FORMAT, DOCUMENT_VERSION, OUTPUT_FIELDS, PUSHABLE, result_from_dict
from stackbench.base.usertext import refusal

MAX_BYTES = 32 * 1024**2  # a run of 200 cells with their raw fio outputs and samples is a few MiB
MAX_DEPTH = 32  # the document is 6 deep; facts a few more
RUN_ID = re.compile(r"[0-9a-f]{32}")
DIRECTIONS = ("read", "write", "trim")
SOURCES = ("measured", "imported")


class Refused(Exception):
    """An upload refused: HTTP `status` and a one-line reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def parse(body: bytes) -> dict[str, Any]:
    """The validated document from a request body; Refused(413 or 400) otherwise."""
    if len(body) > MAX_BYTES:
        raise Refused(413, f"the upload is larger than {MAX_BYTES // 1024**2} MiB")
    try:
        document = json.loads(body, parse_constant=_no_constant)
    except RecursionError:
        raise Refused(400, f"the JSON is nested more than {MAX_DEPTH} deep") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise Refused(400, f"the body is not JSON: {str(error)[:120]}") from None
    if _depth(document) > MAX_DEPTH:
        raise Refused(400, f"the JSON is nested more than {MAX_DEPTH} deep")
    validate(document)
    return document


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value: Any) -> int:
    """Nesting depth, iteratively (a recursive walk could itself be made to overflow)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                return level
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def validate(document: Any) -> None:
    """Check every field of a push document (store/uploads.py); Refused(400) naming the first problem."""
    _keys(document, "document", {"format", "format_version", "run", "fio_outputs", "cells"})
    if document["format"] != DOCUMENT_FORMAT or document["format_version"] != DOCUMENT_VERSION:
        raise Refused(400, f"not a {DOCUMENT_FORMAT} document of version {DOCUMENT_VERSION}: upgrade stackbench "
                      "on the pushing machine or the server so that both speak it")
    _validate_run(document["run"])
    seqs = _validate_outputs(document["fio_outputs"])
    _validate_cells(document["cells"], seqs)


def _validate_run(run: Any) -> None:
    _keys(run, "run", {"id", "label", "status", "source", "created_at", "finished_at", "target", "plan",
                       "planned_cells", "facts", "warnings"})
    _check(isinstance(run["id"], str) and RUN_ID.fullmatch(run["id"]), "run.id is not 32 hex digits")
    _text(run["label"], "run.label", 200, optional=True)
    reason = refusal("run.label", run["label"]) if run["label"] is not None else None
    _check(reason is None, f"{reason} (as `run --label` requires)")
    _check(run["status"] in PUSHABLE, f"run.status must be one of {', '.join(PUSHABLE)}")
    _check(run["source"] in SOURCES, f"run.source must be one of {', '.join(SOURCES)}")
    _time(run["created_at"], "run.created_at")
    _time(run["finished_at"], "run.finished_at", optional=True)
    _text(run["target"], "run.target", 4096, optional=True)
    _text(run["plan"], "run.plan", 100, optional=True)
    _check(run["planned_cells"] is None or _count(run["planned_cells"]), "run.planned_cells is not a count")
    _check(isinstance(run["facts"], dict), "run.facts is not an object")
    _check(isinstance(run["warnings"], list), "run.warnings is not a list")
    for index, warning in enumerate(run["warnings"]):
        _keys(warning, f"run.warnings[{index}]", {"code", "subject", "text", "fix"})
        for name, value in warning.items():
            _text(value, f"run.warnings[{index}].{name}", 10_000)


def _validate_outputs(outputs: Any) -> set[int]:
    """The fio outputs' fields; their sequence numbers, which cells name."""
    _check(isinstance(outputs, list), "fio_outputs is not a list")
    seqs = set()
    for index, out in enumerate(outputs):
        where = f"fio_outputs[{index}]"
        _keys(out, where, set(OUTPUT_FIELDS))
        _check(_count(out["seq"]) and out["seq"] not in seqs, f"{where}.seq is not a new count")
        seqs.add(out["seq"])
        _check(out["segment"] is None or _count(out["segment"]), f"{where}.segment is not a count")
        _check(out["group_id"] is None or isinstance(out["group_id"], str) and RUN_ID.fullmatch(out["group_id"]),
               f"{where}.group_id is not 32 hex digits")
        _text(out["fio_version"], f"{where}.fio_version", 64, optional=True)
        _check(out["command"] is None or isinstance(out["command"], list)
               and all(isinstance(a, str) for a in out["command"]), f"{where}.command is not a list of strings")
        _text(out["job_file"], f"{where}.job_file", MAX_BYTES, optional=True)
        _text(out["raw_text"], f"{where}.raw_text", MAX_BYTES)
        _check(out["exit_code"] is None or _int(out["exit_code"]) and -(2**31) <= out["exit_code"] < 2**31,
               f"{where}.exit_code is not an exit status")
        _text(out["source_name"], f"{where}.source_name", 4096, optional=True)
        _time(out["started_at"], f"{where}.started_at", optional=True)
        _time(out["finished_at"], f"{where}.finished_at", optional=True)
    return seqs


def _validate_cells(cells: Any, seqs: set[int]) -> None:
    _check(isinstance(cells, list), "cells is not a list")
    for index, cell in enumerate(cells):
        where = f"cells[{index}]"
        _keys(cell, where, {"seq", "fio_output_seq", "workload", "result", "measurement", "samples"})
        _check(_count(cell["seq"]), f"{where}.seq is not a count")
        _check(cell["fio_output_seq"] is None or cell["fio_output_seq"] in seqs,
               f"{where}.fio_output_seq names no fio output of this upload")
        _fields(Workload, cell["workload"], f"{where}.workload")
        _fields(DirectionResult, cell["result"], f"{where}.result")
        result = cell["result"]
        for name in ("clat", "sync_lat"):
            if result.get(name) is not None:
                _fields(Latency, result[name], f"{where}.result.{name}")
        _check(result["direction"] in DIRECTIONS, f"{where}.result.direction must be one of {', '.join(DIRECTIONS)}")
        _text(result["host"], f"{where}.result.host", 255, optional=True)
        _text(result["job_name"], f"{where}.result.job_name", 4096)
        try:
            Workload.from_dict(cell["workload"])  # its own range checks (rw, bs, iodepth, ...): what fio accepts
            check_direction(result_from_dict(result), f"{where}.result")  # what fio can report, as on import
        except (StackbenchError, TypeError) as error:
            raise Refused(400, f"{where}: {error}") from None
        _check(cell["measurement"] is None or isinstance(cell["measurement"], dict),
               f"{where}.measurement is not an object")
        _check(isinstance(cell["samples"], list), f"{where}.samples is not a list")
        for number, sample in enumerate(cell["samples"]):
            _fields(Sample, sample, f"{where}.samples[{number}]")
            _check(_count(sample.get("segment", 0)), f"{where}.samples[{number}].segment is not a count")
            for name in ("t_s", "iops", "bw_bytes", "clat_mean_ns"):
                try:
                    check_measure(sample.get(name), f"{where}.samples[{number}].{name}")
                except StackbenchError as error:
                    raise Refused(400, error.what) from None


def _check(condition: Any, reason: str) -> None:
    if not condition:
        raise Refused(400, reason)


def _keys(value: Any, where: str, expected: set[str]) -> None:
    _check(isinstance(value, dict), f"{where} is not an object")
    missing, unknown = expected - value.keys(), value.keys() - expected
    _check(not missing, f"{where} lacks {', '.join(sorted(missing))}")
    _check(not unknown, f"{where} has unknown fields: {', '.join(sorted(unknown))[:200]}")


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    """A count the store keeps in an integer column (32-bit on PostgreSQL)."""
    return _int(value) and 0 <= value < 2**31


def _text(value: Any, where: str, longest: int, optional: bool = False) -> None:
    if value is None and optional:
        return
    _check(isinstance(value, str), f"{where} is not a string")
    _check(len(value) <= longest, f"{where} is longer than {longest} characters")


def _time(value: Any, where: str, optional: bool = False) -> None:
    if value is None and optional:
        return
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    _check(moment is not None and moment.tzinfo is not None, f"{where} is not an ISO 8601 time with a zone")


_SIMPLE = {"str": str, "bool": bool, "None": type(None)}


def _fields(cls: type, value: Any, where: str) -> None:
    """`value` has `cls`'s fields with their annotated types: required ones present, no unknown ones."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    required = {name for name, f in fields.items()
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    _check(isinstance(value, dict), f"{where} is not an object")
    missing, unknown = required - value.keys(), value.keys() - fields.keys()
    _check(not missing, f"{where} lacks {', '.join(sorted(missing))}")
    _check(not unknown, f"{where} has unknown fields: {', '.join(sorted(unknown))[:200]}")
    for name, item in value.items():
        _check(_fits(str(fields[name].type), item), f"{where}.{name} is not {fields[name].type}")


def _fits(annotation: str, value: Any) -> bool:
    """Whether a JSON value fits a dataclass field's annotation (the few forms these dataclasses use)."""
    for option in (part.strip() for part in annotation.split("|")):
        if option == "int" and _int(value):
            return True
        if option == "float" and (_int(value) or isinstance(value, float)):
            return True
        if option in _SIMPLE and type(value) is _SIMPLE[option]:
            return True
        if option == "dict[str, str]" and isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            return True
        if option == "Latency" and isinstance(value, dict):
            return True  # checked field by field by the caller
        if option == "tuple[str, ...]" and isinstance(value, list) and all(isinstance(v, str) for v in value):
            return True  # an import's unknown and derived fields (JSON has no tuples)
    return False
