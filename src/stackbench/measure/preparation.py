"""A run before its first fio process: the request, what the run tells its observer, and every check that
can refuse (fio missing, an unsafe target, too little space, O_DIRECT), made before a byte is written.

`prepare` is the one place those checks are made and `cell_job_file` the one place a cell's job file is
made; `dry_run` is both without measuring (`run --dry-run`), so the dry run cannot drift from the run.
measure/runner.py measures what `prepare` approved.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from stackbench import __version__
from stackbench.analysis.estimate import STARTUP_S, PlanTime, layout_bytes, plan_time, priors_from
from stackbench.base.errors import StoreError, UsageError
from stackbench.base.units import format_size
from stackbench.engine.fio import find_fio, fio_version, job_file
from stackbench.measure.safety import Target, cache_warning, resolve_target, room_for
from stackbench.model.fio_result import DirectionResult
from stackbench.model.plan import Plan, Workload, auto_size
from stackbench.model.warning import Warning, WarningCode
from stackbench.probe.block import collect_target_facts
from stackbench.probe.system import collect_system_facts
from stackbench.stack.discover import stack_facts
from stackbench.store import Store


class RunObserver(Protocol):
    """What the CLI (progress bar, per-cell lines) hears from a run; all methods are optional no-ops."""

    def run_started(self, run_id: str, plan: Plan, target: Target, estimate: PlanTime | None = None) -> None: ...
    def cell_started(self, index: int, workload: Workload) -> None: ...
    def cell_progress(self, index: int, elapsed: float) -> None: ...
    def cell_finished(self, index: int, workload: Workload, results: list[DirectionResult]) -> None: ...
    def cell_outlook(self, index: int, expected_runs: float) -> None: ...
    def warning(self, warning: Warning) -> None: ...


class SilentObserver(RunObserver):
    """Hears nothing: every method is the protocol's no-op, for a caller with nothing to show."""


@dataclass(frozen=True)
class RunRequest:
    target: Path
    plan: Plan
    label: str | None = None
    destroy_data: bool = False
    read_only: bool = False  # a device that holds data, only read: fio --readonly, reads only (layers --auto)
    fio: str | None = None
    started: float | None = None  # time.monotonic() when the command began: its start-up counts in the estimate



@dataclass(frozen=True)
class Prepared:
    """What every measurement of one target shares: fio, the approved target, the facts, the plan as run."""

    fio_path: str
    version: str
    target: Target
    plan: Plan
    facts: dict[str, Any]
    warnings: tuple[Warning, ...]
    seconds: float = 0.0  # what the checks took (an estimate counts them)


def settle_size(plan: Plan, target: Path, destroy_data: bool = False) -> Plan:
    """A plan whose size depends on the target (cache-exhaustion without --size) with that size chosen:
    2x RAM, at most the room on the target (plan.auto_size). Other plans are returned as they are."""
    if not plan.size_from_target:
        return plan
    room, device = room_for(target, destroy_data=destroy_data)
    return plan.with_size(auto_size(collect_system_facts().get("ram_bytes"), room, device=device))


def prepare(request: RunRequest, scratch_id: str, observer: RunObserver) -> Prepared:
    """Everything that can refuse, before a byte is written: fio, the target, free space, O_DIRECT.

    `run --dry-run` runs exactly this too (`dry_run`), so the dry run refuses what the run would refuse,
    with the same error, and shows the plan as the run will measure it (O_DIRECT settled, size chosen)."""
    clock = time.monotonic()
    plan = settle_size(request.plan, request.target, request.destroy_data)
    fio_path = find_fio(request.fio)
    version = fio_version(fio_path)
    if request.read_only and not all(w.rw in ("read", "randread") for w in plan.workloads):
        raise UsageError("a read-only run was given cells that write", "Give a read-only run read cells only")
    target = resolve_target(request.target, size=plan.size, destroy_data=request.destroy_data, run_id=scratch_id,
                            read_only=request.read_only)
    system = collect_system_facts()
    target_facts = collect_target_facts(Path(target.fio_filename).parent if target.kind != "device" else request.target)
    warnings: list[Warning] = []
    plan = _settle_direct(plan, target, warnings, observer)
    _check_direct_alignment(plan, target)
    facts: dict[str, Any] = {
        "fio_version": version,
        "fio_path": fio_path,
        "stackbench_version": __version__,
        "system": system,
        "target": {**target_facts, "path": str(request.target), "kind": target.kind, "file": target.fio_filename},
        "plan": plan_facts(plan),
        "stack": stack_facts(request.target, virtualization=system.get("virtualization")),
        "command": sys.argv,
    }
    if target.kind != "device":
        direct = all(w.direct for w in plan.workloads)
        cached = cache_warning(system, plan.size, any(w.reads for w in plan.workloads), target_facts.get("fs_type"),
                               direct=direct)
        if cached:
            warnings.append(cached)
            observer.warning(cached)
    return Prepared(fio_path, version, target, plan, facts, tuple(warnings), time.monotonic() - clock)


def cell_job_file(workload: Workload, target: Target) -> str:
    """The job file fio gets for every run of a cell: the one text the run passes and the dry run prints."""
    return job_file(workload, target.fio_filename)


def estimate_run(prepared: Prepared, request: RunRequest, store: Store | None) -> PlanTime:
    """How long the prepared run will take (analysis/estimate.py), told by earlier runs on the same target
    where the store has some; `run --dry-run` prints it, the run line and the progress bar use it. The time
    until now is measured: since the command began (`request.started`), else the checks alone."""
    clock = time.monotonic()
    target_text = str(request.target)
    runs = []
    if store is not None:
        try:
            runs = store.measured_runs_on(target_text)
        except StoreError:
            runs = []  # no earlier runs to learn from: the estimate assumes, and says so
    priors = priors_from(runs, (prepared.facts.get("system") or {}).get("hostname"))
    target = prepared.target
    if target.kind == "device":
        layout = 0
    elif target.remove_after:
        layout = layout_bytes(prepared.plan, new_file=True)
    else:
        try:
            existing = os.stat(target.fio_filename).st_size
        except OSError:
            existing = 0
        layout = layout_bytes(prepared.plan, new_file=False, existing_bytes=existing)
    ram = (prepared.facts.get("target") or {}).get("fs_type") == "tmpfs"
    now = time.monotonic()
    setup = STARTUP_S + (now - request.started if request.started is not None else prepared.seconds + now - clock)
    return plan_time(prepared.plan, setup_s=setup, layout=layout, priors=priors, ram=ram)


# The dry run's scratch file name holds this where the run's holds an id chosen when it starts.
DRY_RUN_SCRATCH_ID = "<id>"


@dataclass(frozen=True)
class DryRun:
    """What `run --dry-run` shows: the run as prepared, the job file of every cell, and the estimate."""

    prepared: Prepared
    job_files: tuple[str, ...]
    estimate: PlanTime


def dry_run(request: RunRequest, store: Store | None, observer: RunObserver | None = None) -> DryRun:
    """Every check the run makes before its first cell, and the job files it would pass to fio, without
    writing anything (the O_DIRECT probes create and remove their own small files, docs/run.md)."""
    prepared = prepare(request, DRY_RUN_SCRATCH_ID, observer or SilentObserver())
    files = tuple(cell_job_file(w, prepared.target) for w in prepared.plan.workloads)
    return DryRun(prepared, files, estimate_run(prepared, request, store))


def plan_facts(plan: Plan) -> dict[str, Any]:
    """The plan as the run's facts store it (a fleet run stores the same)."""
    return {
        "name": plan.name,
        "workloads": [w.to_dict() for w in plan.workloads],
        "runs": plan.runs,
        "stopping": plan.stopping.to_dict() if plan.stopping else None,
        "interleaved": True,
        "direct_auto": plan.direct_auto,
        "one_process": plan.one_process,
    }



def _check_direct_alignment(plan: Plan, target: Target) -> None:
    """Refuse O_DIRECT block sizes the target cannot take, before any cell runs."""
    direct = [w for w in plan.workloads if w.direct]
    if not direct:
        return
    if target.kind == "device":
        from stackbench.probe.block import logical_block_size

        alignment = logical_block_size(Path(target.fio_filename))
    else:
        from stackbench.probe.direct_io import direct_io_alignment

        alignment = direct_io_alignment(target.space_dir)
    if not alignment:
        return
    for workload in direct:
        if workload.bs % alignment:
            raise UsageError(
                f"--bs {format_size(workload.bs)} is not a multiple of {alignment} bytes, the smallest O_DIRECT "
                f"write this target accepts",
                f"Use block sizes that are multiples of {format_size(alignment)}, or --buffered",
            )


def _settle_direct(plan: Plan, target: Target, warnings: list[Warning], observer: RunObserver) -> Plan:
    """With `direct_auto`, use O_DIRECT where the target honours it; say so where it does not."""
    if not plan.direct_auto:
        return plan
    from stackbench.probe.direct_io import honours_o_direct

    if target.kind == "device":
        ok, why = True, ""
    else:
        ok, why = honours_o_direct(target.space_dir)
    if ok:
        return replace(plan, workloads=tuple(replace(w, direct=True) for w in plan.workloads))
    buffered = Warning(
        WarningCode.DIRECT_IO_UNAVAILABLE, "",
        f"O_DIRECT is not available on this target ({why}): measuring buffered I/O, so results include the "
        "page cache",
        "use a target on a file system that honours O_DIRECT for device numbers",
    )
    warnings.append(buffered)
    observer.warning(buffered)
    return replace(plan, workloads=tuple(replace(w, direct=False) for w in plan.workloads))
