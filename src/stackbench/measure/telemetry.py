"""A run's telemetry: which layers to sample, the sampler around each fio process, and each fio run's
summary over fio's measured window.

probe/conditions.py reads the counters and analysis/conditions.py sums them up; this ties them to a
measured run: the devices and pools of the target's stack, when fio measured (its output's end and its
runtime; for the stonewalled jobs of one fio process, back from its end), when within that window fio moved
its bytes (its per-second logs: `fio_timeline`), and where the I/O fio did not do can be counted at all.
"""

from __future__ import annotations

from typing import Any

from stackbench.analysis.conditions import FioTimeline, fio_window, summarize
from stackbench.engine.fio_logs import LOG_AVG_MSEC
from stackbench.model.fio_result import FioResult, Sample
from stackbench.model.plan import Workload
from stackbench.stack.layer import Stack

def sampled_layers(facts: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The block devices, top down (the target's own first: foreign I/O is counted on it), and ZFS pools
    whose counters a run samples: every layer of the discovered stack (`facts.stack`), else what the probe
    found under the target."""
    try:
        names = Stack.from_json(facts.get("stack")).counter_names()
    except (ValueError, TypeError, KeyError, AttributeError):
        names = None
    if names is not None and (names.diskstats or names.pools):
        return list(names.diskstats), list(names.pools)
    target = facts.get("target") or {}
    devices = [d["name"] for d in target.get("block_devices") or () if isinstance(d, dict) and d.get("name")]
    dataset = target.get("zfs_dataset")
    pools = [dataset.split("/", 1)[0]] if isinstance(dataset, str) and dataset else []
    return devices, pools


def end_of(parsed: FioResult, measured_from: float | None = None) -> float | None:
    """When fio ended its measured window, in epoch seconds: its runtime after it began measuring
    (`measured_from`, from its per-second logs: engine/fio_logs.py), else when it wrote its output
    (`timestamp_ms`), which is later by its teardown (56 ms on an idle VM, more on a slow one)."""
    runtime = max((d.runtime_ms for d in parsed.directions), default=0.0) / 1000
    if measured_from is not None and runtime > 0:
        return measured_from + runtime
    stamp = parsed.document.get("timestamp_ms")
    if isinstance(stamp, (int, float)) and stamp > 0:
        return stamp / 1000
    return float(parsed.timestamp) if parsed.timestamp else None


def job_ends(end: float | None, jobs: list[FioResult], workloads: list[Workload]) -> list[float | None]:
    """When each stonewalled job of one fio process ended: the last at the process's end, each earlier one
    the later jobs' ramps and runtimes before it."""
    if end is None:
        return [None] * len(jobs)
    ends: list[float | None] = []
    for job, workload in zip(reversed(jobs), reversed(workloads)):
        ends.append(end)
        end -= max((d.runtime_ms for d in job.directions), default=0.0) / 1000 + workload.ramp_time
    return ends[::-1]


def fio_timeline(parsed: FioResult, samples: dict[str, list[Sample]] | None,
                 measured_from: float | None) -> FioTimeline | None:
    """When fio moved its bytes within its measured window, per direction: each second of its per-second
    logs (engine/fio_logs.read_logs) at its place after `measured_from`, with its bandwidth's bytes, and
    the rest of fio's total over the part-second its logs end before its runtime does (fio logs only full
    seconds); scaled to fio's total where the logs hold more than it or leave no time. None where the logs
    cannot place them (no epoch times, a direction with bytes and no logged second): the layer table then
    prorates fio's bytes at its mean rate, which an uneven run (the lab guests': 67, 99 and 199 MB in three
    seconds) puts in the wrong seconds."""
    runtime = max((d.runtime_ms for d in parsed.directions), default=0.0) / 1000
    if not samples or measured_from is None or runtime <= 0:
        return None
    step, end = LOG_AVG_MSEC / 1000, measured_from + runtime
    timeline: FioTimeline = {}
    for direction in parsed.directions:
        pieces: list[tuple[float, float, float]] = []
        for sample in samples.get(direction.direction) or ():
            start, stop = measured_from + sample.t_s - step, min(end, measured_from + sample.t_s)
            rate = sample.bw_bytes if sample.bw_bytes is not None else sample.iops * direction.bs
            if stop > start:
                pieces.append((start, stop, rate * (stop - start)))
        logged, total = sum(moved for _, _, moved in pieces), float(direction.io_bytes)
        if total <= 0:
            timeline[direction.direction] = []
            continue
        if logged <= 0:
            return None
        last = max(stop for _, stop, _ in pieces)
        if end > last and total > logged:
            pieces.append((last, end, total - logged))
        else:
            pieces = [(start, stop, moved * total / logged) for start, stop, moved in pieces]
        timeline[direction.direction] = pieces
    return timeline


def run_summary(conditions: dict[str, Any], parsed: FioResult, end: float | None, *, devices: list[str],
                pools: list[str], cpus: int | None, timed: bool = True,
                samples: dict[str, list[Sample]] | None = None, measured_from: float | None = None) -> dict[str, Any]:
    """One fio run's conditions over its measured window (analysis/conditions.py), fio's bytes in each
    device's counted seconds taken from its per-second logs (`samples`, placed by `measured_from`:
    `fio_timeline`) where they can be placed. A job of a fio process that ran several (`timed` False) has a
    window known only to within fio's gaps between jobs, which moves another job's bytes into it: its I/O
    fio did not do is left out, and said to be."""
    runtime = max((d.runtime_ms for d in parsed.directions), default=0.0) / 1000
    # On ZFS the pool's disks see compression, the ARC, txg and parity, never fio's bytes one for one
    foreign_on = devices[0] if devices and not pools and timed else None
    summary = summarize(conditions, fio_window(end, runtime), fio_bytes=sum(d.io_bytes for d in parsed.directions),
                        foreign_on=foreign_on, cpus=cpus,
                        fio_moved={d.direction: d.io_bytes for d in parsed.directions}, idle_after=timed,
                        timeline=fio_timeline(parsed, samples, measured_from) if timed else None)
    if not timed:
        summary["unavailable"] = [*summary.get("unavailable", ()), "foreign (one fio process, several jobs)"]
    return summary
