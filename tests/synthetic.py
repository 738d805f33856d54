"""Synthetic runs for testing the analysis functions on known answers (not measurements: the values are
chosen so the expected statistics can be computed by hand)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

from stackbench.model.fio_result import DirectionResult, Latency, Sample
from stackbench.model.plan import Workload
from stackbench.model.results import Cell, Run


def cell(rw: str = "randwrite", bs: int = 4096, qd: int = 4, samples: list[float] | None = None,
         iops: float | None = None, p99_ns: float = 1e6, sync: bool = False,
         runs: list[float] | None = None, rounds: list[int] | None = None) -> Cell:
    """A cell with per-second `samples` (the legacy shape) and/or per-run IOPS `runs` (replicates)."""
    values = samples or []
    # a measured cell's IOPS is the geometric mean of its runs (analysis/across_runs.py), as the runner stores it
    mean = iops if iops is not None else (
        math.exp(sum(math.log(v) for v in runs) / len(runs)) if runs
        else (sum(values) / len(values) if values else 1000.0))
    measurement = None
    if runs:
        measurement = {"mode": "fixed", "replicates": [
            {"index": i, "round": (rounds[i] if rounds else i), "iops": v} for i, v in enumerate(runs)]}
    workload = Workload(rw=rw, bs=bs, iodepth=qd, size=1024**3, runtime=10, sync=sync)
    result = DirectionResult(
        job_name="j", direction="read" if "read" in rw else "write", rw=rw, bs=bs, iodepth=qd, numjobs=1,
        iops=mean, bw_bytes=mean * bs, io_bytes=int(mean * bs * 10), total_ios=int(mean * 10), runtime_ms=10000,
        usr_cpu=1.0, sys_cpu=2.0, clat=Latency(mean_ns=p99_ns / 2, p50_ns=p99_ns / 2, p99_ns=p99_ns, p999_ns=p99_ns * 2),
    )
    return Cell(id=f"c{rw}{bs}{qd}", seq=0, workload=workload, result=result,
                samples=tuple(Sample(t_s=i + 1.0, iops=v) for i, v in enumerate(values)), measurement=measurement)


def run(cells: list[Cell], label: str = "r", facts: dict | None = None, run_id: str = "0" * 32) -> Run:
    return Run(id=run_id, label=label, status="complete", source="measured",
               created_at=datetime.now(timezone.utc), finished_at=None, target="/x", plan_name="custom",
               facts=facts or {"fio_version": "fio-3.33"}, cells=tuple(cells))


def ab_arms(orders: list[str], a_runs: list[float], b_runs: list[float], *, a_command: str = "true",
            b_command: str = "true", b_rounds: list[int] | None = None, label: str = "s") -> tuple[Run, Run]:
    """The two arms of one `stackbench ab` session of one cell whose rounds ran `orders` (their facts as
    measure/ab.py stores them); B's runs may be listed in another sequence than their rounds (`b_rounds`)."""
    def arm(letter: str, command: str, runs: list[float], rounds: list[int], run_id: str) -> Run:
        ab = {"session": "5" * 32, "arm": letter, "command": command, "rounds": len(orders), "orders": list(orders)}
        return run([cell(runs=runs, rounds=rounds)], label=f"{label}-{letter.lower()}", run_id=run_id,
                   facts={"fio_version": "fio-3.33", "ab": ab})

    return (arm("A", a_command, a_runs, list(range(len(a_runs))), "1" * 32),
            arm("B", b_command, b_runs, b_rounds or list(range(len(b_runs))), "2" * 32))


def spread(centre: float, log_sd: float, n: int) -> list[float]:
    """n per-run values around `centre` (their geometric mean) whose logs have exactly this sample standard
    deviation: a chosen run-to-run spread."""
    import math

    if n == 1:
        return [centre]
    z = [i - (n - 1) / 2 for i in range(n)]
    scale = log_sd / math.sqrt(sum(v * v for v in z) / (n - 1))
    return [centre * math.exp(scale * v) for v in z]


def slog_candidate(label: str, medians_us: list[float], *, session: str | None = "5" * 32, fs_type: str = "xfs",
                   sync: bool = True, rounds: list[int] | None = None, run_id: str | None = None) -> Run:
    """A run as `stackbench slog` stores a candidate: 4 KiB random sync writes at QD1 and QD16 (twice the
    latency), each separate run's median completion latency (`medians_us`, chosen) in the replicates with
    its round, and the slog session in the facts (None: a run of no session)."""
    from dataclasses import replace

    def depth(qd: int, scale: float) -> Cell:
        made = cell(rw="randwrite", bs=4096, qd=qd, sync=sync, p99_ns=2 * scale * medians_us[0] * 1000,
                    runs=[1e6 / (m * scale) for m in medians_us], rounds=rounds)
        replicates = [{**r, "clat_p50_ns": m * scale * 1000} for r, m in zip(made.measurement["replicates"], medians_us)]
        return replace(made, id=f"{label}-qd{qd}", measurement={**made.measurement, "replicates": replicates})

    facts: dict = {"fio_version": "fio-3.33", "target": {"fs_type": fs_type}}
    if session:
        facts["slog"] = {"session": session, "candidate": label}
    made = run([depth(1, 1.0), depth(16, 2.0)], label=label, facts=facts,
               run_id=run_id or (label.encode().hex() + "0" * 32)[:32])
    return replace(made, plan_name="slog", planned_cells=2)
