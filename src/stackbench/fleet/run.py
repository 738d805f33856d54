"""`stackbench run --hosts`: one plan on every host at once, stored as per-host cells of one run.

The order of things, as in a local run (runner.py), is the safety story:
1. every host is checked before anything starts anywhere (preflight.py); any failure stops the run with a
   line per host;
2. the run row is stored, then fio's servers and their forwards are started (servers.py);
3. each cell runs on all hosts at once with ONE `fio --client=127.0.0.1,PORT1 host1.fio --client=... ` call;
   each host's result is taken from its own `client_stats` entry (mapped back by its local port) and stored
   as that host's cell, and the total is computed here from those per-host results (IOPS and bytes/s
   summed, latency percentiles from the summed json+ histograms), never taken from fio's "All clients";
4. a host that drops out (fio killed, network, host down) ends its cells with a warning naming it, the
   other hosts go on, and the run is marked `partial`;
5. whatever happens (success, failure, Ctrl-C, SIGTERM) the servers and forwards are stopped, which makes
   each host's agent remove its scratch file and confirm it; a cleanup pass over a new ssh connection does
   it on every host that did not confirm.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stackbench import __version__

from stackbench.measure import abandoned, recovery
from stackbench.analysis.across_runs import across_runs, pooled_figures
from stackbench.analysis.stability import run_warnings
from stackbench.analysis.stopping import decide
from stackbench.engine.fio import FioInvocation, find_fio, fio_version, job_file, run_fio
from stackbench.engine.fio_json import parse_client_results
from stackbench.model.fio_result import DirectionResult, FioResult, Sample
from stackbench.engine.merge import bins_of, merge_parallel, merge_segments
from stackbench.base.errors import FioJobError, FioOutputError, Interrupted, StackbenchError, StoreError, UsageError
from stackbench.fleet import timing
from stackbench.fleet.preflight import Sessions, judge, open_sessions
from stackbench.fleet.servers import HostServer, ReadyHost, start_servers, stop_servers
from stackbench.fleet.ssh import AgentFailed, Ssh, explain
from stackbench.model.plan import MIN_AUTO_SIZE, Plan, Workload, auto_size
from stackbench.probe.system import collect_system_facts
from stackbench.model.results import TOTAL_HOST, Run, new_id
from stackbench.measure.preparation import RunObserver, SilentObserver, plan_facts
from stackbench.measure.runner import interrupt_cause, replicate, samples_of_run, signals_as_interrupt
from stackbench.measure.safety import cache_warning, check_target_text
from stackbench.store import Store
from stackbench.store.repository import CellRecord, OutputRecord
from stackbench.base.units import count, format_size
from stackbench.model.warning import Warning, WarningCode

CLEANUP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class FleetRequest:
    hosts: list[str]
    target: Path
    plan: Plan
    label: str | None = None
    ssh: Ssh = field(default_factory=Ssh)
    sessions: Sessions | None = None  # opened early by the caller (see cli/fleet.py); else opened here
    local_fio: Future[tuple[str, str]] | None = None  # this machine's fio (path, version), asked early likewise


@dataclass
class _HostRuns:
    """One host's separate fio runs of one cell so far."""

    results: list[FioResult] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    latest: dict[str, list[Sample]] = field(default_factory=dict)  # the last run's per-second samples


@dataclass
class _FleetCell:
    index: int
    workload: Workload
    group_id: str
    hosts: dict[str, _HostRuns] = field(default_factory=dict)
    rounds: list[dict[str, Any]] = field(default_factory=list)  # meta of every fio --client run of this cell
    seconds: float = 0.0
    done: bool = False
    stop_reason: str = ""

    def complete_rounds(self, names: list[str]) -> list[int]:
        """The runs (by number) in which every host of the fleet reported: the only ones a total covers."""
        numbers = [set(r["index"] for r in self.hosts[n].runs) if n in self.hosts else set() for n in names]
        common = set.intersection(*numbers) if numbers else set()
        return sorted(common)


def _fleet_observer_call(observer: RunObserver, method: str, *args: Any) -> None:
    call = getattr(observer, method, None)
    if call is not None:
        call(*args)


def _direction(result: FioResult, direction: str) -> DirectionResult | None:
    return next((d for d in result.directions if d.direction == direction), None)


def _summed_bins(results: list[FioResult], direction: str, sync: bool = False) -> Counter[int] | None:
    total: Counter[int] = Counter()
    for result in results:
        bins = bins_of(result.document, direction, sync=sync)
        if bins is None:
            return None
        total.update(bins)
    return total


def total_result(per_host: dict[str, list[FioResult]], direction: str) -> DirectionResult | None:
    """The fleet's total for `direction` from each host's runs: rates summed, latency from summed bins."""
    parts, clat, sync = [], [], []
    for results in per_host.values():
        if not results or any(_direction(r, direction) is None for r in results):
            return None
        parts.append(merge_segments(results, direction))
        clat.append(_summed_bins(results, direction))
        sync.append(_summed_bins(results, direction, sync=True))
    if not parts:
        return None
    return replace(merge_parallel(parts, clat, sync), host=TOTAL_HOST)


def _measurement(plan: Plan, cell: _FleetCell, runs: int, replicates: list[dict[str, Any]], seconds: float,
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "mode": "adaptive" if plan.stopping else "fixed",
        "unit": "separate fio runs",
        "runs": runs,
        "seconds": round(seconds, 3),
        "stop_reason": cell.stop_reason if cell.done else "measuring",
        **({"rule": plan.stopping.to_dict()} if plan.stopping else {}),
        "replicates": replicates,
        **(extra or {}),
    }


def _log_prefix(server: HostServer) -> str:
    """The per-second logs' prefix in a host's job file (`host0`, like its job file `host0.fio`)."""
    return f"host{server.host.index}"  # type: ignore[union-attr]


def host_dropped(host: str, cell_index: int, cell_name: str, reason: str, fix: str = "") -> Warning:
    """The warning for a host that dropped out of a fleet run mid-run (the run becomes partial)."""
    return Warning(
        WarningCode.HOST_DROPPED, host,
        f"dropped out during cell {cell_index + 1} ({cell_name}): {reason}; its results from then on are "
        "missing and the fleet's total covers only the runs where every host reported",
        (fix[0].lower() + fix[1:]) if fix else "check the host (fio killed, network, host down) and run again",
    )


class FleetMeasurement:
    """One fleet run being measured: its cells, the hosts still in it, and what to store after each call."""

    def __init__(self, store: Store, plan: Plan, names: list[str], servers: list[HostServer], fio_path: str,
                 run_id: str, workdir: Path, observer: RunObserver) -> None:
        self.store, self.plan, self.names, self.servers = store, plan, names, servers
        self.fio_path, self.run_id, self.workdir, self.observer = fio_path, run_id, workdir, observer
        self.cells = [_FleetCell(i, w, new_id()) for i, w in enumerate(plan.workloads)]
        self.order = 0
        self.dropped: list[Warning] = []

    @property
    def done(self) -> bool:
        return all(c.done for c in self.cells)

    def alive(self) -> list[HostServer]:
        return [s for s in self.servers if s.dead is None]

    def _drop(self, server: HostServer, reason: str, cell: _FleetCell, fix: str = "") -> None:
        server.dead = server.dead or reason
        note = host_dropped(server.name, cell.index, cell.workload.name, server.dead, fix)
        self.dropped.append(note)
        self.observer.warning(note)
        _fleet_observer_call(self.observer, "host_status", server.name, f"dropped: {server.dead}")

    def round(self, round_index: int) -> None:
        for cell in self.cells:
            if cell.done:
                continue
            for server in self.alive():
                if server.poll():
                    self._drop(server, server.dead or "gone", cell)
            alive = self.alive()
            if not alive:
                raise FioJobError(
                    f"every host dropped out (last: {self.dropped[-1].subject if self.dropped else '?'}); the "
                    "finished runs are stored", "Check the hosts named in the warnings and run again")
            self.observer.cell_started(cell.index, cell.workload)
            results = self._measure(cell, alive, round_index)
            self.order += 1
            self.observer.cell_finished(cell.index, cell.workload, results)

    def _measure(self, cell: _FleetCell, alive: list[HostServer], round_index: int) -> list[DirectionResult]:
        workload = cell.workload
        what = f"cell {cell.index + 1} ({workload.name}), run {len(cell.rounds) + 1}"
        # each host's per-second logs under its own prefix: fio's servers send them to the client, which
        # writes them all in its directory (engine/fio_logs.py)
        jobs = {f"host{s.host.index}.fio": job_file(workload, s.host.scratch, unlink=True, log_prefix=_log_prefix(s),
                                                    title=f"{workload.name} on {s.name}") for s in alive}
        names = list(jobs)
        extra_args: list[str] = []
        for server, name in zip(alive[:-1], names[:-1]):
            extra_args += [f"--client=127.0.0.1,{server.port}", name]
        extra_args.append(f"--client=127.0.0.1,{alive[-1].port}")
        for server in alive:
            _fleet_observer_call(self.observer, "host_status", server.name, f"running {workload.name}")
        with timing.phase("fio_client"):
            invocation = run_fio(
                self.fio_path, jobs[names[-1]], extra_args=tuple(extra_args),
                extra_files={n: jobs[n] for n in names[:-1]},
                on_tick=lambda t: self.observer.cell_progress(cell.index, t), workdir_parent=self.workdir,
                client=True, client_logs=tuple(_log_prefix(s) for s in alive),
            )
        with timing.phase("store_cell"):
            return self._keep(cell, alive, jobs, invocation, what, round_index)

    def _keep(self, cell: _FleetCell, alive: list[HostServer], jobs: dict[str, str], invocation: FioInvocation,
              what: str, round_index: int) -> list[DirectionResult]:
        """One fio --client call's results: per host from its own client_stats entry, dropped hosts named, the
        cell decided and stored."""
        workload = cell.workload
        try:
            clients = parse_client_results(invocation.stdout, source=f"fio --client output of {what}")
        except FioOutputError:
            clients = []
        by_port = {s.port: s for s in alive}
        reported: dict[str, FioResult] = {}
        for hostname, port, result in clients:
            server = by_port.get(port)
            if server is None or hostname not in ("127.0.0.1", "localhost"):
                continue
            if result.job_errors:
                error = result.job_errors[0]
                self._drop(server, f"fio failed there: {error.message} (errno {error.code})", cell)
                continue
            reported[server.name] = result
        complaint = " ".join(invocation.stderr.split())[:200]
        for server in alive:
            if server.name not in reported and server.dead is None:
                server.poll()
                said = "".join(server.stderr)  # ssh's own words about this host (a refused forward, a lost link)
                why = explain(server.name, None, said) if said.strip() else None
                lost = f"fio's client lost it ({why.what if why else 'fio said: ' + (complaint or 'nothing')})"
                self._drop(server, server.dead or lost, cell, why.fix if why and not server.dead else "")
        if not reported:
            raise FioJobError(
                f"fio --client failed on {what} on every host (exit {invocation.exit_code})"
                + (f": {complaint}" if complaint else ""), "Check the hosts named in the warnings and run again")
        number = len(cell.rounds)
        meta = {"index": number, "round": round_index, "order": self.order, "seconds": round(invocation.seconds, 3),
                "started_at": invocation.started_at.isoformat()}
        cell.rounds.append(meta)
        cell.seconds += invocation.seconds
        prefixes = {s.name: _log_prefix(s) for s in alive}
        for runs in cell.hosts.values():
            runs.latest = {}
        for name, result in reported.items():
            runs = cell.hosts.setdefault(name, _HostRuns())
            runs.results.append(result)
            runs.runs.append(meta)
            runs.latest = {direction: [replace(v, segment=number) for v in values]  # a host's as a local run's
                           for direction, values in samples_of_run(invocation, result, client=prefixes[name]).items()}
        for server in alive:
            if server.name in reported:
                _fleet_observer_call(self.observer, "host_status", server.name,
                                     f"done {workload.name} run {number + 1}")
        self._decide(cell)
        records, shown = self._records(cell)
        output = OutputRecord(
            raw_text=invocation.stdout, fio_version=next(iter(reported.values())).fio_version,
            command=invocation.command, job_file="\n".join(f"# {n}\n{t}" for n, t in jobs.items()),
            exit_code=invocation.exit_code, started_at=invocation.started_at,
        )
        try:
            self.store.add_replicate(self.run_id, cell.group_id, output, records)
        except StoreError as error:  # as a local run does: keep fio's output where `import` can store it
            kept = recovery.keep(invocation.stdout, f"stackbench-{self.run_id[:12]}-cell{cell.index + 1}-run"
                                                    f"{number + 1}-fleet.json")
            where = f"its fio output is kept in {kept}" if kept else "its fio output could not be kept anywhere"
            raise StoreError(f"{error.what}; the finished fio run of {what} could not be stored, so {where}",
                             f"{error.fix}, then store it with `stackbench import {kept}`" if kept else error.fix
                             ) from None
        return shown

    def _total_runs(self, cell: _FleetCell) -> tuple[list[int], dict[str, list[FioResult]]]:
        numbers = cell.complete_rounds(self.names)
        per_host = {
            name: [r for r, m in zip(cell.hosts[name].results, cell.hosts[name].runs) if m["index"] in numbers]
            for name in self.names
        } if numbers else {}
        return numbers, per_host

    def _records(self, cell: _FleetCell) -> tuple[list[CellRecord], list[DirectionResult]]:
        records: list[CellRecord] = []
        shown: list[DirectionResult] = []
        directions = [d.direction for d in next(iter(cell.hosts.values())).results[0].directions]
        for name in self.names:
            runs = cell.hosts.get(name)
            if runs is None or not runs.results:
                continue
            for direction in directions:
                if any(_direction(r, direction) is None for r in runs.results):
                    continue
                pooled = replace(merge_segments(runs.results, direction), host=name)
                merged = across_runs([_direction(r, direction) for r in runs.results], pooled)  # type: ignore[misc]
                replicates = [replicate(m, _direction(r, direction)) for m, r in zip(runs.runs, runs.results)]
                seconds = sum(m["seconds"] for m in runs.runs)
                extra = {"stop_reason": f"the fleet stopped on its total ({cell.stop_reason})"} \
                    if self.plan.stopping and cell.done and "out of reach" not in cell.stop_reason else {}
                if self.plan.stopping and cell.done and not extra:  # the total's row carries the warning
                    extra = {"stop_reason": "the fleet stopped on its total's interval, which stayed wide: "
                                            f"see the {TOTAL_HOST} row"}
                records.append(CellRecord(cell.workload, merged, tuple(runs.latest.get(direction, ())),
                                          _measurement(self.plan, cell, len(runs.runs), replicates, seconds,
                                                       {**extra, **pooled_figures(pooled)})))
                shown.append(merged)
        numbers, per_host = self._total_runs(cell)
        for direction in directions:
            total = total_result(per_host, direction) if per_host else None
            if total is None:
                continue
            replicates, per_run = [], []
            for position, number in enumerate(numbers):
                one = total_result({n: [rs[position]] for n, rs in per_host.items()}, direction)
                meta = next(m for m in cell.rounds if m["index"] == number)
                replicates.append(replicate(meta, one))
                per_run.append(one)
            seconds = sum(m["seconds"] for m in cell.rounds if m["index"] in numbers)
            # the total's figures: the geometric mean of each run's total (the hosts' sum in that run)
            summary = across_runs(per_run, total) if all(one is not None for one in per_run) else total
            records.append(CellRecord(cell.workload, summary, (), _measurement(
                self.plan, cell, len(numbers), replicates, seconds,
                {"total_of": list(self.names), "total": "computed by stackbench from the per-host results",
                 **pooled_figures(total)})))
            shown.append(summary)
        return records, shown

    def _decide(self, cell: _FleetCell) -> None:
        """Fixed: the planned number of runs. Adaptive: the rule applied to the fleet's total IOPS per run."""
        n = len(cell.rounds)
        rule = self.plan.stopping
        if rule is None:
            if n >= self.plan.runs:
                cell.done, cell.stop_reason = True, f"{count(n, 'separate fio run')} on every host, as planned"
            return
        numbers, per_host = self._total_runs(cell)
        first = next(iter(cell.hosts.values())).results[0].directions[0].direction
        values = []
        for position in range(len(numbers)):
            one = total_result({name: [rs[position]] for name, rs in per_host.items()}, first)
            if one is not None and one.iops > 0:
                values.append(one.iops)
        stop, why = decide(rule, values, cell.seconds, self.plan.run_seconds(cell.workload))
        if stop or n >= rule.max_runs:
            cell.done, cell.stop_reason = True, why or f"{n} runs, the most allowed"


def _settle_direct(plan: Plan, hosts: list[ReadyHost], warnings: list[Warning], observer: RunObserver) -> Plan:
    """O_DIRECT where every host's target honours it (with --direct auto); refuse misaligned block sizes."""
    if plan.direct_auto:
        refusing = [h for h in hosts if not (h.answer.get("direct") or {}).get("ok")]
        direct = not refusing
        if refusing:
            note = Warning(
                WarningCode.DIRECT_IO_UNAVAILABLE, ", ".join(h.name for h in refusing),
                f"O_DIRECT is not available on the target there ({refusing[0].answer['direct']['why']}): measuring "
                "buffered I/O on every host, so results include the page cache",
                "use targets on file systems that honour O_DIRECT for device numbers",
            )
            warnings.append(note)
            observer.warning(note)
        plan = replace(plan, workloads=tuple(replace(w, direct=direct) for w in plan.workloads))
    for host in hosts:
        alignment = (host.answer.get("direct") or {}).get("alignment")
        for workload in plan.workloads:
            if workload.direct and alignment and workload.bs % alignment:
                raise UsageError(
                    f"--bs {format_size(workload.bs)} is not a multiple of {alignment} bytes, the smallest O_DIRECT "
                    f"write the target on {host.name} accepts",
                    f"Use block sizes that are multiples of {format_size(alignment)}, or --buffered",
                )
    return plan


def fleet_size(hosts: list[ReadyHost]) -> int:
    """The one file size of a plan sized from its target (cache-exhaustion without --size) on every host:
    the largest host's need (2x its RAM, as `plan.auto_size` gives a local run) but no more than the
    tightest host's room (90 % of its free space); UsageError naming that host when it has too little."""
    rams = [int((h.answer.get("system") or {}).get("ram_bytes") or 0) for h in hosts]
    rooms = [(h.answer.get("target") or {}).get("room") for h in hosts]
    need = max(rams) if any(rams) else None
    known = [(room, h) for room, h in zip(rooms, hosts) if room is not None]
    tightest = min(known, key=lambda pair: pair[0]) if known else None
    try:
        return auto_size(need, tightest[0] if tightest else None)
    except UsageError as error:
        if tightest is None:
            raise
        raise UsageError(f"{tightest[1].name}: {error.what}", error.fix.replace(
            "Free some space there", f"Free some space on {tightest[1].name}")) from None


def cache_warnings(plan: Plan, hosts: list[ReadyHost]) -> list[Warning]:
    """A local run's page-cache and tmpfs warnings, judged on each host's RAM and file system; hosts with
    the same warning share one, naming them all."""
    direct = all(w.direct for w in plan.workloads)
    reads = any(w.reads for w in plan.workloads)
    found: dict[WarningCode, tuple[Warning, list[str]]] = {}
    for host in hosts:
        fs_type = (host.answer.get("target_facts") or {}).get("fs_type")
        note = cache_warning(host.answer.get("system") or {}, plan.size, reads, fs_type, direct=direct)
        if note is not None:
            found.setdefault(note.code, (note, []))[1].append(host.name)
    return [replace(note, subject=", ".join(names)) for note, names in found.values()]


def cleanup_pass(ssh: Ssh, hosts: list[ReadyHost], socket_dirs: dict[str, str]) -> list[Warning]:
    """Remove these hosts' scratch files over ssh (the hosts whose agent did not confirm, as it stopped, that
    it removed them: its connection dropped, or it was never started); a SCRATCH_LEFT warning per host where
    that failed."""

    def clean(host: ReadyHost) -> Warning | None:
        try:
            ssh.call(host.name, "cleanup", {"scratch": [host.scratch] if host.remove_after else [],
                                            "socket_dir": socket_dirs.get(host.name)}, timeout=CLEANUP_TIMEOUT_S)
        except AgentFailed as failed:
            return Warning(WarningCode.SCRATCH_LEFT, host.name,
                           f"{host.scratch} may be left there: the cleanup could not reach it ({failed.failure.what})",
                           "remove it by hand")
        return None

    with ThreadPoolExecutor(max_workers=min(32, max(1, len(hosts)))) as pool:
        return [r for r in pool.map(clean, hosts) if r]


def _local_fio(request: FleetRequest) -> tuple[Path, str, str]:
    """The target checked and this machine's fio (found while the hosts were reached, when it was); on
    failure the hosts' sessions are closed."""
    try:
        with timing.phase("local_fio"):
            target = check_target_text(request.target)
            if request.local_fio is not None:
                fio_path, version = request.local_fio.result()
            else:
                fio_path = find_fio()
                version = fio_version(fio_path)
    except BaseException:
        if request.sessions:
            request.sessions.close()
        raise
    return target, fio_path, version


def _run_facts(plan: Plan, target: Path, hosts: list[ReadyHost], servers: list[HostServer], *, fio_path: str,
               version: str, system: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """The fleet run's facts: fio's client and its machine, the plan, every host's facts, and the process
    record that lets a later command clean up after a killed run."""
    return {
        "fio_version": version,
        "fio_path": fio_path,
        "stackbench_version": __version__,
        "system": system,  # the machine that ran fio's client
        "target": {"path": str(target), "kind": "fleet"},
        "plan": plan_facts(plan),
        "command": sys.argv,
        "fleet": {"hosts": [h.name for h in hosts], "total_host": TOTAL_HOST,
                  "tunnel": "ssh -L 127.0.0.1:PORT to a Unix socket"},
        "hosts": {h.name: h.facts() for h in hosts},
        "process": abandoned.process_record(workdir=workdir, scratch=None,
                                            control_dirs=tuple(s.control_dir for s in servers)),
    }


def _say_ready(servers: list[HostServer], observer: RunObserver) -> None:
    """Each host's line on the fleet's progress display: its fio, its file system and its scratch file."""
    for server in servers:
        ready = server.host
        fs = (ready.answer.get("target_facts") or {}).get("fs_type") or "unknown fs"  # type: ignore[union-attr]
        _fleet_observer_call(observer, "host_status", server.name,
                             f"ready: {ready.fio_version}, {fs}, {ready.scratch}")  # type: ignore[union-attr]


def execute_fleet_run(store: Store, request: FleetRequest, observer: RunObserver | None = None) -> Run:
    """Check every host, then measure every cell on all of them at once; return the stored run."""
    observer = observer or SilentObserver()
    plan = request.plan
    target, fio_path, version = _local_fio(request)
    checked_size = MIN_AUTO_SIZE if plan.size_from_target else plan.size  # sized from the answers below
    sessions = request.sessions or open_sessions(request.ssh, request.hosts, target=str(target), size=checked_size,
                                                 scratch_id=new_id())
    with ThreadPoolExecutor(max_workers=1) as pool, timing.phase("checks_wait"):  # our facts while hosts answer
        local_system = pool.submit(collect_system_facts)
        servers = judge(sessions, version)
        system = local_system.result()
    hosts = [s.host for s in servers if s.host is not None]
    names = [h.name for h in hosts]
    warnings: list[Warning] = []
    run_id = new_id()
    workdir: Path | None = None
    try:
        if plan.size_from_target:  # every host's RAM and room are known now
            plan = plan.with_size(fleet_size(hosts))
        plan = _settle_direct(plan, hosts, warnings, observer)
        for note in cache_warnings(plan, hosts):
            warnings.append(note)
            observer.warning(note)
        workdir = Path(tempfile.mkdtemp(prefix=f"{abandoned.WORKDIR_PREFIX}{run_id[:12]}-"))
        facts = _run_facts(plan, target, hosts, servers, fio_path=fio_path, version=version, system=system,
                           workdir=workdir)
        with timing.phase("store_run"):
            store.create_run(run_id=run_id, source="measured", label=request.label,
                             target=f"{','.join(names)}:{target}", plan_name=plan.name,
                             planned_cells=len(plan.workloads), facts=facts, warnings=warnings)
    except BaseException:
        stop_servers(servers)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    observer.run_started(run_id, plan, target)
    status = "failed"
    measurement: FleetMeasurement | None = None
    try:
        with signals_as_interrupt():
            start_servers(servers)
            _say_ready(servers, observer)
            measurement = FleetMeasurement(store, plan, names, servers, fio_path, run_id, workdir, observer)
            round_index = 0
            while not measurement.done:
                measurement.round(round_index)
                round_index += 1
        status = "partial" if measurement.dropped else "complete"
    except KeyboardInterrupt as interrupt:
        status = "incomplete"
        raise Interrupted(
            f"{interrupt_cause(interrupt)} stopped the fleet run after "
            f"{count(measurement.order if measurement else 0, 'fio run')}; every finished one is stored as run {run_id} (marked incomplete), fio's servers were "
            "stopped and the scratch files removed on every host",
            f"See them with `stackbench show {run_id[:12]}`, or run again",
        ) from None
    except StackbenchError:
        status = "incomplete" if measurement and measurement.order else "failed"
        raise
    finally:
        with timing.phase("servers_stop"):
            stop_servers(servers)
        confirmed = {s.name for s in servers if s.cleaned}
        with timing.phase("cleanup_pass"):
            left = cleanup_pass(request.ssh, [h for h in hosts if h.name not in confirmed],
                                {s.name: s.socket_dir for s in servers})
        shutil.rmtree(workdir, ignore_errors=True)
        notes = [*warnings, *(measurement.dropped if measurement else [])]
        notes += left
        with timing.phase("store_finish"):
            try:
                stored = store.get_run(run_id)
                store.finish_run(run_id, status, [*notes, *run_warnings(list(stored.cells), stored.facts)])
            except Exception:
                if status in ("complete", "partial"):
                    raise
    with timing.phase("store_finish"):
        return store.get_run(run_id)
