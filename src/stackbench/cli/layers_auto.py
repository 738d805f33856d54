"""`layers --auto TARGET [--run]`: the proposal table, and with --run the runs and the layers table."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from stackbench.cli.app import err, out, warn
from stackbench.cli.common import emit, emit_report, open_store_from

# (preset, bs, qd, rw, size, runtime, runs) as the layers command took them
PlanWords = tuple[Optional[str], Optional[list[str]], Optional[list[str]], Optional[list[str]], Optional[str],
                  Optional[str], Optional[int]]


def _plan(words: PlanWords) -> Any:
    from stackbench.cli.plan_options import PlanOptions

    preset, bs, qd, rw, size, runtime, runs = words
    return PlanOptions(preset=preset, bs=bs, qd=qd, rw=rw, size=size, runtime=runtime, runs=runs).plan()


def auto_layers(target: Path, *, run: bool, plan_words: PlanWords, metric: str, db: Optional[str], fmt: str,
                given_runs: Optional[list[str]], names: Optional[str]) -> None:
    from stackbench.base.errors import UsageError
    from stackbench.measure.layer_plan import propose, require_runnable
    from stackbench.report.layers import proposal_table
    from stackbench.stack.discover import discover

    if given_runs or names:
        raise UsageError("--auto finds and names the layers itself; runs and --names are for stored runs",
                         "Give either --auto TARGET or the runs to compare")
    plan = _plan(plan_words)
    layer_plan = propose(discover(target), plan)
    if not run:
        emit(fmt, proposal_table(layer_plan), layer_plan.to_json())
        return
    steps = require_runnable(layer_plan)
    store = open_store_from(db)
    _measure(store, layer_plan, steps, metric, fmt)


def _measure(store: Any, layer_plan: Any, steps: list[Any], metric: str, fmt: str) -> None:
    from stackbench.analysis.layers import layer_gaps
    from stackbench.cli.progress import ProgressObserver
    from stackbench.measure.layer_runs import run_layers
    from stackbench.report.layers import layers_report

    if fmt == "table":
        out.print(f"Measuring {len(steps)} layers of {layer_plan.stack.target}, bottom first: "
                  + "; ".join(f"{step.name} ({step.how})" for step in steps), markup=False, highlight=False,
                  soft_wrap=True)

    def observer(step: Any) -> ProgressObserver:
        from dataclasses import replace

        return ProgressObserver(replace(layer_plan.plan, workloads=step.cells), enabled=err.is_terminal and fmt == "table",
                                quiet=fmt == "json")

    problems: list[str] = []
    try:
        runs = run_layers(store, layer_plan, steps, problems, observer=observer)
    finally:
        for problem in problems:
            warn(problem)
    gaps = layer_gaps(runs, [step.name for step in steps], metric)
    emit_report(fmt, layers_report(gaps, runs, {"proposal": layer_plan.to_json()}))
