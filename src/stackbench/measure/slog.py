"""`stackbench slog`'s measurement: every candidate measured in the same rounds, never one after the other.

Candidates measured one after the other compare the machine's state at two times as much as the devices: a
neighbour VM, a pool filling, a drive warming up make the last candidate look slow. So each round measures
every candidate once (one fio process per candidate and round, all its cells stonewalled in it: the plan's
`one_process`), in mirrored order (`round_order.arm_orders`: forward, backward, ...), and each candidate is
stored as its own run whose replicates carry their round. The runs share a session id in their facts
(`slog.session`), which is what lets the ranking pair them by round (analysis/slog.py), as compare pairs
the arms of an `ab` session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from stackbench.base.errors import Interrupted, StackbenchError, interrupt_cause
from stackbench.model.plan import Plan
from stackbench.model.results import Run, new_id
from stackbench.model.round_order import arm_orders
from stackbench.measure.runner import (
    Measurement, RunObserver, RunRequest, SilentObserver, prepare, remove_scratch,
    signals_as_interrupt,
)
from stackbench.store import Store


@dataclass(frozen=True)
class SlogSession:
    """The stored runs of one `slog` measurement, one per candidate in the order given, and each round's
    order of candidates (indexes into `runs`)."""

    session: str
    runs: tuple[Run, ...]
    orders: tuple[tuple[int, ...], ...]


def execute_slog(
    store: Store,
    plan: Plan,
    candidates: Sequence[tuple[str, Path]],
    *,
    destroy_data: bool = False,
    observer: RunObserver | None = None,
    on_turn: Callable[[str, int], None] | None = None,
) -> SlogSession:
    """Measure `candidates` (name, target) in interleaved rounds, `plan.runs` of them; `on_turn(name, round)`
    is called before each candidate's turn. Every candidate is checked (fio, the target, its free space)
    before anything is written; the scratch files are removed however it ends."""
    observer = observer or SilentObserver()
    session = new_id()
    names = [name for name, _ in candidates]
    prepared = [
        prepare(RunRequest(target=path, plan=plan, label=f"slog:{name}", destroy_data=destroy_data), new_id(), observer)
        for name, path in candidates
    ]
    orders = arm_orders(len(candidates), plan.runs)
    measurements: list[Measurement] = []
    status = "failed"
    try:
        for (name, path), ready in zip(candidates, prepared):
            facts = {"slog": {"session": session, "candidate": name, "candidates": names, "orders": orders}}
            measurements.append(Measurement(store, ready, observer, label=f"slog:{name}", target_text=str(path),
                                            extra_facts=facts))
            observer.run_started(measurements[-1].run_id, ready.plan, ready.target)
        with signals_as_interrupt():
            for round_index, order in enumerate(orders):
                for arm in order:
                    if on_turn:
                        on_turn(names[arm], round_index)
                    measurements[arm].round(round_index, every_cell=True)
        status = "complete"
    except KeyboardInterrupt as interrupt:
        status = "incomplete"
        done = sum(m.order for m in measurements)
        raise Interrupted(
            f"{interrupt_cause(interrupt)} stopped the SLOG shoot-out after {done} fio run(s); the finished runs "
            f"are stored as runs {', '.join(m.run_id[:12] for m in measurements)} (incomplete) and the scratch "
            "files were removed",
            "Rank them with `stackbench slog --run ID ...`, or run again",
        ) from None
    except StackbenchError:
        status = "incomplete" if any(m.order for m in measurements) else "failed"
        raise
    finally:
        for ready in prepared:
            remove_scratch(ready.target)
        for measurement in measurements:
            measurement.finish(status)
    return SlogSession(session, tuple(store.get_run(m.run_id) for m in measurements),
                       tuple(tuple(order) for order in orders))
