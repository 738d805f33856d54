"""`stackbench run` as a library call: plan -> fio per cell -> store, with cleanup that always happens.

The order of things is the safety story:
1. everything that can refuse (fio missing, unsafe target, too little space) refuses before a byte is
   written;
2. the run row is stored before the first cell, each cell is stored the moment fio finishes it, together
   with its raw output, so an interruption keeps every finished cell and the run is marked incomplete;
3. the scratch file is removed in a `finally` that also covers Ctrl-C and SIGTERM (turned into a
   KeyboardInterrupt while the run is active), after fio has been stopped.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator, Protocol

from stackbench import __version__
from stackbench.analysis.stability import run_warnings
from stackbench.engine.fio import FioInvocation, failure_from_output, find_fio, fio_version, job_file, run_fio
from stackbench.engine.fio_json import parse_fio_json
from stackbench.engine.fio_logs import Sample
from stackbench.engine.merge import merge_segments
from stackbench.engine.result import DirectionResult, FioResult
from stackbench.errors import FioJobError, FioOutputError, Interrupted, StackbenchError
from stackbench.plan import Plan, Workload
from stackbench.probe.block import collect_target_facts
from stackbench.probe.system import collect_system_facts
from stackbench.results import Run, new_id
from stackbench.safety import Target, cache_warning, resolve_target
from stackbench.store import Store
from stackbench.store.repository import CellRecord, OutputRecord


class RunObserver(Protocol):
    """What the CLI (progress bar, per-cell lines) hears from a run; all methods are optional no-ops."""

    def run_started(self, run_id: str, plan: Plan, target: Target) -> None: ...
    def cell_started(self, index: int, workload: Workload) -> None: ...
    def cell_progress(self, index: int, elapsed: float) -> None: ...
    def cell_finished(self, index: int, workload: Workload, results: list[DirectionResult]) -> None: ...
    def warning(self, text: str) -> None: ...


class SilentObserver:
    def run_started(self, run_id: str, plan: Plan, target: Target) -> None: ...
    def cell_started(self, index: int, workload: Workload) -> None: ...
    def cell_progress(self, index: int, elapsed: float) -> None: ...
    def cell_finished(self, index: int, workload: Workload, results: list[DirectionResult]) -> None: ...
    def warning(self, text: str) -> None: ...


@dataclass(frozen=True)
class RunRequest:
    target: Path
    plan: Plan
    label: str | None = None
    destroy_data: bool = False
    fio: str | None = None


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the run is, so the same cleanup as Ctrl-C happens."""


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP (terminal closed, tmux/ssh session killed) clean up exactly like Ctrl-C."""
    def handler(signum: int, _frame: Any) -> None:
        raise Terminated(signal.Signals(signum).name)

    previous = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def execute_run(store: Store, request: RunRequest, observer: RunObserver | None = None) -> Run:
    """Run every cell of the plan and return the stored run. Raises StackbenchError subclasses."""
    observer = observer or SilentObserver()
    plan = request.plan
    fio_path = find_fio(request.fio)
    version = fio_version(fio_path)
    run_id = new_id()
    target = resolve_target(
        request.target, size=plan.size, destroy_data=request.destroy_data, run_id=run_id
    )
    system = collect_system_facts()
    target_facts = collect_target_facts(Path(target.fio_filename).parent if target.kind != "device" else request.target)
    facts: dict[str, Any] = {
        "fio_version": version,
        "fio_path": fio_path,
        "stackbench_version": __version__,
        "system": system,
        "target": {**target_facts, "path": str(request.target), "kind": target.kind, "file": target.fio_filename},
        "plan": {
            "name": plan.name,
            "workloads": [w.to_dict() for w in plan.workloads],
            "repeat": plan.repeat,
            "stopping": plan.stopping.to_dict() if plan.stopping else None,
        },
        "command": sys.argv,
    }
    warnings: list[str] = []
    if target.kind != "device":
        text = cache_warning(system, plan.size, any(w.reads for w in plan.workloads), target_facts.get("fs_type"))
        if text:
            warnings.append(text)
            observer.warning(text)

    store.create_run(
        run_id=run_id,
        source="measured",
        label=request.label,
        target=str(request.target),
        plan_name=plan.name,
        planned_cells=len(plan.workloads),
        facts=facts,
        warnings=warnings,
    )
    observer.run_started(run_id, plan, target)
    finished = 0
    status = "failed"
    try:
        with _sigterm_as_interrupt():
            for index, workload in enumerate(plan.workloads):
                observer.cell_started(index, workload)
                results = _run_cell(store, run_id, fio_path, version, workload, target, index, observer, plan)
                finished += 1
                observer.cell_finished(index, workload, results)
        status = "complete"
    except KeyboardInterrupt as interrupt:
        status = "incomplete"
        why = (interrupt.args[0] if interrupt.args else "SIGTERM") if isinstance(interrupt, Terminated) else "Ctrl-C"
        raise Interrupted(
            f"{why} stopped the run after {finished} of {len(plan.workloads)} cells; "
            f"the finished cells are stored as run {run_id} (marked incomplete) and the scratch file was removed",
            f"See them with `stackbench show {run_id[:12]}`, or run again",
        ) from None
    except StackbenchError:
        status = "incomplete" if finished else "failed"
        raise
    finally:
        _remove_scratch(target)
        try:
            warnings.extend(run_warnings(list(store.get_run(run_id).cells)))
            store.finish_run(run_id, status, warnings)
        except Exception:  # the store failing must not hide the original error
            if status == "complete":
                raise
    return store.get_run(run_id)


def _run_cell(
    store: Store,
    run_id: str,
    fio_path: str,
    version: str,
    workload: Workload,
    target: Target,
    index: int,
    observer: RunObserver,
    plan: Plan,
) -> list[DirectionResult]:
    """Measure one cell in one or more fio runs (segments) and store it with its samples."""
    what = f"cell {index + 1} ({workload.name})"
    rule = plan.stopping
    segments: list[tuple[FioInvocation, FioResult]] = []
    samples: dict[str, list[Sample]] = {}
    elapsed = 0.0
    stop_reason = f"{plan.repeat} fixed run(s) of {workload.runtime:g} s"
    while True:
        segment = len(segments)
        if rule is None:
            if segment == plan.repeat:
                break
            seconds = workload.runtime
        else:
            seconds = rule.first_chunk() if segment == 0 else rule.next_chunk(elapsed)
        text = job_file(workload, target.fio_filename, runtime=seconds)
        offset = elapsed
        invocation = run_fio(
            fio_path, text, on_tick=lambda t, base=offset: observer.cell_progress(index, base + t)
        )
        parsed = _check(invocation, what)
        segments.append((invocation, parsed))
        elapsed += invocation.seconds
        for direction, values in invocation.samples.items():
            samples.setdefault(direction, []).extend(
                replace(v, segment=segment, ramp=rule is not None and segment == 0 and v.t_s <= rule.ramp_seconds)
                for v in values
            )
        if rule is not None:
            primary = parsed.directions[0].direction
            measured = [v.iops for v in samples.get(primary, []) if not v.ramp]
            stop, stop_reason = rule.decide(measured, elapsed)
            if stop:
                break
    measurement = {
        "mode": "adaptive" if rule else "fixed",
        "segments": len(segments),
        "seconds": round(elapsed, 3),
        "stop_reason": stop_reason,
        **({"rule": rule.to_dict()} if rule else {"repeat": plan.repeat}),
    }
    directions = [d.direction for d in segments[0][1].directions]
    results = [merge_segments([p for _, p in segments], direction) for direction in directions]
    store.add_measurement(
        run_id,
        [
            OutputRecord(
                raw_text=inv.stdout,
                fio_version=parsed.fio_version or version,
                command=inv.command,
                job_file=inv.job_file,
                exit_code=inv.exit_code,
                started_at=inv.started_at,
            )
            for inv, parsed in segments
        ],
        [
            CellRecord(workload, result, tuple(samples.get(result.direction, ())), measurement)
            for result in results
        ],
    )
    return results


def _check(invocation: FioInvocation, what: str) -> FioResult:
    """The parsed output of a successful fio run, or the one-line error of a failed one."""
    try:
        parsed = parse_fio_json(invocation.stdout, source=f"fio output of {what}")
    except FioOutputError:
        if invocation.exit_code != 0:
            raise failure_from_output(invocation, what) from None
        raise
    if parsed.job_errors:
        error = parsed.job_errors[0]
        failure = failure_from_output(invocation, what)
        raise FioJobError(
            f"fio failed on {what}: {error.message} (errno {error.code})"
            + (f"; fio said: {failure.what.split(': ', 1)[-1]}" if invocation.stderr.strip() else ""),
            failure.fix,
        )
    if invocation.exit_code != 0:
        raise failure_from_output(invocation, what)
    return parsed


def _remove_scratch(target: Target) -> None:
    if not target.remove_after:
        return
    try:
        os.unlink(target.fio_filename)
    except FileNotFoundError:
        pass
