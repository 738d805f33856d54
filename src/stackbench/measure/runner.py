"""`stackbench run` as a library call: plan -> fio per cell -> store, with cleanup that always happens.

The order of things is the safety story:
1. everything that can refuse (fio missing, unsafe target, too little space) refuses before a byte is
   written (measure/preparation.py);
2. the run row is stored before the first cell, each cell is stored the moment fio finishes it, together
   with its raw output, so an interruption keeps every finished cell and the run is marked incomplete;
3. the scratch file is removed in a `finally` that also covers Ctrl-C and SIGTERM (turned into a
   KeyboardInterrupt while the run is active), after fio has been stopped.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from stackbench.analysis.across_runs import across_runs, pooled_figures
from stackbench.analysis.estimate import remaining_runs, run_cap
from stackbench.analysis.stability import run_warnings
from stackbench.analysis.stopping import decide
from stackbench.base.errors import (
    FioJobError, FioOutputError, Interrupted, StackbenchError, StoreError, Terminated, interrupt_cause,
)
from stackbench.base.units import count
from stackbench.engine.fio import FioInvocation, failure_from_output, job_log_prefix, run_fio, sweep_job_file
from stackbench.engine.fio_json import parse_fio_jobs, parse_fio_json
from stackbench.engine.fio_logs import whole_run_sample
from stackbench.engine.merge import merge_segments
from stackbench.measure import abandoned, recovery
from stackbench.measure.preparation import (
    Prepared, RunObserver, RunRequest, SilentObserver, cell_job_file, estimate_run, prepare,
)
from stackbench.measure.safety import Target
from stackbench.measure.telemetry import end_of, job_ends, run_summary, sampled_layers
from stackbench.model.fio_result import DirectionResult, FioResult, Sample
from stackbench.model.plan import Plan, Workload
from stackbench.model.results import Run, new_id
from stackbench.probe.conditions import ConditionSampler
from stackbench.store import Store
from stackbench.store.repository import CellRecord, OutputRecord


@contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP (terminal closed, tmux/ssh session killed) clean up exactly like Ctrl-C."""
    def handler(signum: int, _frame: Any) -> None:
        raise Terminated(signal.Signals(signum).name)

    previous = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is not signal.SIG_IGN:  # nohup's ignored SIGHUP stays ignored
                previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def replicate(meta: dict[str, Any], d: DirectionResult | None) -> dict[str, Any]:
    """One separate fio run of a cell as `measurement.replicates` keeps it (docs/json.md): where it ran in
    the run's order (`meta`) and its own figures, which the cell's figures summarise (analysis/across_runs)."""
    clat, sync = (d.clat, d.sync_lat) if d else (None, None)
    return {
        **meta,
        "iops": d.iops if d else 0.0,
        "bw_bytes": d.bw_bytes if d else 0.0,
        "clat_mean_ns": clat.mean_ns if clat else None,
        "clat_p50_ns": clat.p50_ns if clat else None,
        "clat_p99_ns": clat.p99_ns if clat else None,
        "clat_p999_ns": clat.p999_ns if clat else None,
        "sync_lat_p99_ns": sync.p99_ns if sync else None,
    }


@dataclass
class _CellState:
    """One cell while it is being measured: its separate fio runs so far and whether it needs more."""

    index: int
    workload: Workload
    group_id: str
    results: list[FioResult] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)  # round, order, seconds, started_at per run
    seconds: float = 0.0
    done: bool = False
    stop_reason: str = ""

    @property
    def directions(self) -> list[str]:
        return [d.direction for d in self.results[0].directions] if self.results else []

    def replicates(self, direction: str) -> list[dict[str, Any]]:
        """One entry per fio run: its own post-ramp IOPS, bandwidth and latency percentiles."""
        return [replicate(meta, next((x for x in result.directions if x.direction == direction), None))
                for meta, result in zip(self.runs, self.results)]

    def of_direction(self, direction: str) -> list[DirectionResult]:
        """Each run's own result for `direction`, in order."""
        return [next(d for d in result.directions if d.direction == direction) for result in self.results]

    def primary_iops(self) -> list[float]:
        return [r["iops"] for r in self.replicates(self.directions[0]) if r["iops"] > 0] if self.results else []


class Measurement:
    """One stored run being measured, a round at a time: the cells' runs so far and the run's order.

    `execute_run` drives it until every cell is done; `stackbench ab` drives two of them in alternation,
    one round each, with a configuration command between them.
    """

    def __init__(
        self, store: Store, prepared: Prepared, observer: RunObserver, *, label: str | None,
        target_text: str, extra_facts: dict[str, Any] | None = None,
    ) -> None:
        self.store = store
        self.prepared = prepared
        self.observer = observer
        self.run_id = new_id()
        self.cells = [_CellState(i, w, new_id()) for i, w in enumerate(prepared.plan.workloads)]
        self.order = 0
        self.devices, self.pools = sampled_layers(prepared.facts)
        # Recorded before fio starts, so the next command can clean up after a SIGKILL or power cut.
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{abandoned.WORKDIR_PREFIX}{self.run_id[:12]}-"))
        process = abandoned.process_record(
            workdir=self.workdir,
            scratch=prepared.target.fio_filename if prepared.target.remove_after else None,
        )
        store.create_run(
            run_id=self.run_id,
            source="measured",
            label=label,
            target=target_text,
            plan_name=prepared.plan.name,
            planned_cells=len(prepared.plan.workloads),
            facts={**prepared.facts, **(extra_facts or {}), "process": process},
            warnings=list(prepared.warnings),
        )

    @property
    def done(self) -> bool:
        return all(c.done for c in self.cells)

    def measured_cells(self) -> int:
        return sum(1 for c in self.cells if c.runs)

    def round(self, round_index: int, *, every_cell: bool = False) -> None:
        """One fio run of each cell that still needs one (of every cell with `every_cell`): one fio process
        per cell, or one for them all when the plan says `one_process`."""
        p = self.prepared
        states = [state for state in self.cells if every_cell or not state.done]
        if p.plan.one_process and states:
            self.observer.cell_started(states[0].index, states[0].workload)
            measured = self._measure_round(states, round_index)
            self.order += len(states)
            for state, results in zip(states, measured):
                self.observer.cell_finished(state.index, state.workload, results)
            return
        for state in states:
            self.observer.cell_started(state.index, state.workload)
            results = self._measure_once(state, round_index)
            self.order += 1
            self.observer.cell_finished(state.index, state.workload, results)
            rule = p.plan.stopping
            if rule is not None:
                cap = run_cap(rule, p.plan.run_seconds(state.workload))
                expected = len(state.runs) if state.done else remaining_runs(rule, state.primary_iops(), cap)
                if expected is not None:  # one run tells no spread: the estimate's expectation stands
                    self.observer.cell_outlook(state.index, expected)

    def record_fio(self, pid: int, job_dir: Path) -> None:
        """Store the fio process about to get its job with the run: what the next command stops if we are
        killed outright and fio outlives us (abandoned.py)."""
        self.store.record_process(self.run_id, "fio", abandoned.fio_record(pid, job_dir))

    def started(self, sampler: ConditionSampler, ramp_s: float | None = None) -> Callable[[int, Path], None]:
        """What to do once fio has a pid: record it, and have the sampler tell its CPU time from the rest and,
        for a fio process of one job (its `ramp_s`), read the devices as its measured window begins."""
        def on_started(pid: int, job_dir: Path) -> None:
            sampler.watch(pid, ramp_s)
            self.record_fio(pid, job_dir)
        return on_started

    def _measure_once(self, state: _CellState, round_index: int) -> list[DirectionResult]:
        """One separate fio run of a cell, stored the moment it finishes, with its place in the run's order."""
        p = self.prepared
        what = f"cell {state.index + 1} ({state.workload.name}), run {len(state.runs) + 1}"
        with self.sampler() as sampler:
            invocation = run_fio(
                p.fio_path, cell_job_file(state.workload, p.target),
                on_tick=lambda t: self.observer.cell_progress(state.index, t), workdir_parent=self.workdir,
                on_started=self.started(sampler, state.workload.ramp_time), extra_args=p.target.fio_args,
            )
        parsed = _check(invocation, what)
        conditions = sampler.result()
        summary = self._summary(conditions, parsed, end_of(parsed, invocation.measured_from), logged=invocation)
        return self._record(state, parsed, invocation, samples_of_run(invocation, parsed),
                            round_index=round_index, order=self.order, seconds=invocation.seconds, what=what,
                            conditions=(conditions, summary))

    def sampler(self) -> ConditionSampler:
        """The machine's conditions, sampled each second around one fio process (measure/telemetry.py), for
        the devices and pools under the target (`devices`, `pools`: the run sets them from its facts)."""
        return ConditionSampler(self.devices, self.pools)

    def _summary(self, conditions: dict[str, Any], parsed: FioResult, end: float | None, *, timed: bool = True,
                 logged: FioInvocation | None = None) -> dict[str, Any]:
        """One fio run's conditions summary (measure/telemetry.run_summary); for a fio process of one job
        (`logged`), fio's bytes in each counted second from its per-second logs."""
        cpus = (self.prepared.facts.get("system") or {}).get("cpu_count")
        return run_summary(conditions, parsed, end, devices=self.devices, pools=self.pools,
                           cpus=cpus if isinstance(cpus, int) else None, timed=timed,
                           samples=logged.samples if logged else None,
                           measured_from=logged.measured_from if logged else None)

    def _measure_round(self, states: list[_CellState], round_index: int) -> list[list[DirectionResult]]:
        """One separate fio run of each of `states`' cells in one fio process (`sweep_job_file`: a stonewalled
        job per cell), each stored as that cell's run the moment the process ends, with its own place in the
        run's order. The round's seconds are shared out by the cells' planned times."""
        p, observer = self.prepared, self.observer
        what = f"round {round_index + 1} ({len(states)} cells in one fio run)"
        budgets = [p.plan.run_seconds(state.workload) for state in states]
        starts = [sum(budgets[:i]) for i in range(len(states))]
        current = [0]

        def tick(elapsed: float) -> None:
            """Progress through the jobs by their planned times: fio says nothing while it runs."""
            while current[0] + 1 < len(states) and elapsed >= starts[current[0] + 1]:
                observer.cell_progress(states[current[0]].index, budgets[current[0]])
                current[0] += 1
                observer.cell_started(states[current[0]].index, states[current[0]].workload)
            observer.cell_progress(states[current[0]].index, elapsed - starts[current[0]])

        prefixes = tuple(job_log_prefix(i) for i in range(len(states)))
        with self.sampler() as sampler:
            invocation = run_fio(
                p.fio_path, sweep_job_file([s.workload for s in states], p.target.fio_filename,
                                           title=f"{p.plan.name}: {len(states)} cells, one stonewalled job each"),
                on_tick=tick, workdir_parent=self.workdir, job_logs=prefixes,
                on_started=self.started(sampler, states[0].workload.ramp_time if len(states) == 1 else None),
                extra_args=p.target.fio_args,
            )
        whole = _check(invocation, what)
        jobs = parse_fio_jobs(invocation.stdout, source=f"fio output of {what}")
        if len(jobs) != len(states):
            raise FioOutputError(
                f"fio output of {what} has {len(jobs)} jobs for {len(states)} cells",
                "Run the stored job file by hand with fio to see why (stackbench show RUN --json)",
            )
        total = sum(budgets)
        conditions = sampler.result()
        ends = job_ends(end_of(whole), jobs, [s.workload for s in states])
        return [
            self._record(state, parsed, invocation, samples_of_run(invocation, parsed, job=prefix),
                         round_index=round_index, order=self.order + i, seconds=invocation.seconds * budgets[i] / total,
                         what=f"cell {state.index + 1} ({state.workload.name}), run {len(state.runs) + 1}",
                         conditions=(conditions if i == 0 else None,
                                     self._summary(conditions, parsed, ends[i], timed=len(states) == 1)))
            for i, (state, parsed, prefix) in enumerate(zip(states, jobs, prefixes))
        ]

    def _record(
        self,
        state: _CellState,
        parsed: FioResult,
        invocation: FioInvocation,
        samples: dict[str, list[Sample]],
        *,
        round_index: int,
        order: int,
        seconds: float,
        what: str,
        conditions: tuple[dict[str, Any] | None, dict[str, Any]] | None = None,
    ) -> list[DirectionResult]:
        """Store one finished fio run of a cell (`parsed`: its own fio output) with its samples, its place
        in the run's order and the machine's conditions (the seconds sampled, stored once per fio process,
        and their summary over this run's window, kept with its replicate); the cell's merged result and
        `measurement` are replaced to include it."""
        plan = self.prepared.plan
        workload = state.workload
        number = len(state.runs)
        state.results.append(parsed)
        state.runs.append({
            "index": number,
            "round": round_index,
            "order": order,
            "seconds": round(seconds, 3),
            "started_at": invocation.started_at.isoformat(),
            **({"conditions": conditions[1]} if conditions else {}),
        })
        state.seconds += seconds
        _decide(state, plan)
        pooled = [merge_segments(state.results, direction) for direction in state.directions]
        merged = [across_runs(state.of_direction(fio.direction), fio) for fio in pooled]
        records = [
            CellRecord(
                workload,
                result,
                tuple(replace(v, segment=number) for v in samples.get(result.direction, ())),
                {
                    "mode": "adaptive" if plan.stopping else "fixed",
                    "unit": "separate fio runs",
                    "runs": len(state.runs),
                    "seconds": round(state.seconds, 3),
                    "stop_reason": state.stop_reason if state.done else "measuring",
                    **({"rule": plan.stopping.to_dict()} if plan.stopping else {}),
                    "replicates": state.replicates(result.direction),
                    **pooled_figures(fio),
                },
            )
            for result, fio in zip(merged, pooled)
        ]
        output = OutputRecord(
            raw_text=parsed.raw_text,
            fio_version=parsed.fio_version or self.prepared.version,
            command=invocation.command,
            job_file=invocation.job_file,
            exit_code=invocation.exit_code,
            started_at=invocation.started_at,
        )
        run_id = self.run_id
        try:
            self.store.add_replicate(run_id, state.group_id, output, records,
                                     conditions=conditions[0] if conditions else None)
        except StoreError as error:
            kept = recovery.keep(invocation.stdout,
                                 f"stackbench-{run_id[:12]}-cell{state.index + 1}-run{number + 1}.json")
            if kept is None:
                raise StoreError(
                    f"{error.what}; the fio output of {what} could not be stored or kept anywhere", error.fix
                ) from None
            raise StoreError(
                f"{error.what}; the finished fio run of {what} could not be stored, so its fio output is kept in "
                f"{kept}",
                f"{error.fix}, then store it with `stackbench import {kept}`",
            ) from None
        return merged

    def finish(self, status: str) -> Run:
        """Store the final status and the run's warnings; never hides an error already on its way."""
        shutil.rmtree(self.workdir, ignore_errors=True)
        try:
            stored = self.store.get_run(self.run_id)
            self.store.finish_run(self.run_id, status,
                                  [*self.prepared.warnings, *run_warnings(list(stored.cells), stored.facts)])
        except Exception:
            if status == "complete":
                raise
        return self.store.get_run(self.run_id) if status == "complete" else None  # type: ignore[return-value]


def execute_run(store: Store, request: RunRequest, observer: RunObserver | None = None) -> Run:
    """Measure every cell of the plan in interleaved rounds of separate fio runs; return the stored run.

    Raises StackbenchError subclasses.
    """
    observer = observer or SilentObserver()
    scratch_id = new_id()
    prepared = prepare(request, scratch_id, observer)
    estimate = estimate_run(prepared, request, store)
    measurement = Measurement(store, prepared, observer, label=request.label, target_text=str(request.target))
    run_id = measurement.run_id
    observer.run_started(run_id, prepared.plan, prepared.target, estimate=estimate)
    status = "failed"
    try:
        with signals_as_interrupt():
            round_index = 0
            while not measurement.done:
                measurement.round(round_index)
                round_index += 1
        status = "complete"
    except KeyboardInterrupt as interrupt:
        status = "incomplete"
        raise Interrupted(
            f"{interrupt_cause(interrupt)} stopped the run after {count(measurement.order, 'fio run')} "
            f"({measurement.measured_cells()} of {count(len(measurement.cells), 'cell')} measured at least once); "
            f"every finished fio run is stored as run {run_id} (marked incomplete) and the scratch file was removed",
            f"See them with `stackbench show {run_id[:12]}`, or run again",
        ) from None
    except StackbenchError:
        status = "incomplete" if measurement.order else "failed"
        raise
    finally:
        remove_scratch(prepared.target)
        measurement.finish(status)
    return store.get_run(run_id)


def samples_of_run(invocation: FioInvocation, parsed: FioResult, *, job: str | None = None,
                   client: str | None = None) -> dict[str, list[Sample]]:
    """fio's per-second samples of one run: of the fio process; with `job` (its log prefix) of that job of a
    sweep job file; with `client` (the log prefix of a host's job file) of that host of a `fio --client` run;
    `parsed` being that job's or host's own result. fio logs a window only when it is full, so a run that
    ended before its first one-second window closed gets the whole run as its one sample rather than none: a
    write of the file once with a small --size, a `--runtime 1` run whose one window ended a moment after fio
    stopped (seen on a loaded machine: a time-based one-second run stored no sample), every job of synclat's
    sweep (0.25 s per size), and a fleet host's run shorter than a second."""
    logged = invocation.job_samples.get(job, {}) if job is not None \
        else invocation.client_samples.get(client, {}) if client is not None else invocation.samples
    return {d.direction: logged.get(d.direction) or [whole_run_sample(d)] for d in parsed.directions}


def _decide(state: _CellState, plan: Plan) -> None:
    """Mark the cell done when it has its runs (fixed) or its interval is tight or capped (adaptive)."""
    n = len(state.runs)
    rule = plan.stopping
    if rule is None:
        if n >= plan.runs:
            state.done, state.stop_reason = True, f"{count(n, 'separate fio run')}, as planned"
        return
    values = state.primary_iops()
    stop, why = decide(rule, values, state.seconds, plan.run_seconds(state.workload))
    if stop:
        state.done, state.stop_reason = True, why


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


def remove_scratch(target: Target) -> None:
    if not target.remove_after:
        return
    try:
        os.unlink(target.fio_filename)
    except FileNotFoundError:
        pass
