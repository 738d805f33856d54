"""`layers --auto --run`: the proposed steps as separate `run`s, bottom layer first, each scratch volume
made just before its run and removed right after it (layer_plan.py says what is safe where)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Callable

from stackbench.base.errors import Interrupted, interrupt_cause
from stackbench.base.usertext import refusal
from stackbench.engine.fio import failure_from_output, find_fio, job_file, run_fio
from stackbench.measure import scratch_volumes
from stackbench.measure.layer_plan import LayerPlan, LayerStep
from stackbench.measure.runner import RunObserver, RunRequest, execute_run
from stackbench.model.plan import Plan, Workload
from stackbench.model.results import Run
from stackbench.store import Store

FILL_BS = 1024**2
FILL_CAP_S = 3600.0


def _fill(device: str, size: int, fio: str | None) -> None:
    """Write a new volume once, start to end, so its reads read blocks (a new zvol's holes read as zeros
    without touching a disk)."""
    fill = Workload("write", FILL_BS, 4, size=size, direct=True, runtime=FILL_CAP_S, time_based=False)
    invocation = run_fio(find_fio(fio), job_file(fill, device, title="fill the scratch volume", sample_logs=False))
    if invocation.exit_code != 0:
        raise failure_from_output(invocation, f"filling the scratch volume {device}")


def _volume(step: LayerStep) -> scratch_volumes.ScratchVolume | None:
    spec, token = step.create, scratch_volumes.new_token()
    if step.how == "scratch-dataset":
        return scratch_volumes.create_dataset(spec["pool"], token)
    if step.how == "scratch-zvol":
        return scratch_volumes.create_zvol(spec["pool"], token, spec["size"], spec.get("properties") or {})
    if step.how == "scratch-lv":
        return scratch_volumes.create_lv(spec["vg"], token, spec["size"])
    return None


def _request(step: LayerStep, plan: Plan, volume: scratch_volumes.ScratchVolume | None, fio: str | None) -> RunRequest:
    label = step.name[:200] if refusal("a label", step.name[:200]) is None else None
    layer_plan = replace(plan, workloads=step.cells, direct_auto=plan.direct_auto and step.how != "read-device")
    if volume is None:
        return RunRequest(Path(step.where or ""), layer_plan, label=label, read_only=step.how == "read-device",
                          fio=fio)
    if volume.device is None:
        return RunRequest(Path(volume.mountpoint or ""), layer_plan, label=label, fio=fio)
    if any(w.rw in ("read", "randread", "rw", "randrw") for w in step.cells):
        _fill(volume.device, layer_plan.size, fio)
    return RunRequest(Path(volume.device), layer_plan, label=label, destroy_data=True, fio=fio)


def run_step(store: Store, step: LayerStep, plan: Plan, problems: list[str], observer: RunObserver | None = None,
             fio: str | None = None) -> Run:
    """One layer's run, stored; a scratch volume that could not be removed is added to `problems` (its
    journal entry stays, so the next command tries again)."""
    volume = None
    try:
        volume = _volume(step)
        return execute_run(store, _request(step, plan, volume, fio), observer)
    finally:
        if volume is not None:
            problem = scratch_volumes.remove(volume)
            if problem is not None:
                problems.append(problem)


def run_layers(store: Store, layer_plan: LayerPlan, steps: list[LayerStep], problems: list[str],
               observer: Callable[[LayerStep], AbstractContextManager[RunObserver | None]] = lambda s: nullcontext(),
               fio: str | None = None) -> list[Run]:
    """Every step as its own run, bottom first (`observer(step)`: the progress display of its run); an
    interruption names the runs already stored."""
    runs: list[Run] = []
    for step in steps:
        try:
            with observer(step) as seen:
                run = run_step(store, step, layer_plan.plan, problems, seen, fio)
        except (KeyboardInterrupt, Interrupted) as stop:
            cause = stop.what if isinstance(stop, Interrupted) else interrupt_cause(stop)
            kept = ", ".join(r.id[:12] for r in runs) or "none"
            raise Interrupted(f"{cause}; layers --auto stopped at layer {step.name} after {len(runs)} of {len(steps)} "
                              f"layers (stored runs: {kept}); every scratch volume it made was removed",
                              "Run it again, or compare the stored runs with `stackbench layers RUN ...`") from None
        runs.append(run)
    return runs
