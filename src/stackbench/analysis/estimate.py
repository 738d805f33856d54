"""How long a plan takes: the one model behind `run --dry-run`, the run line's "about" and the progress ETA.

Why a model of its own (issue 27): the old estimate counted ramp + runtime + 0.4 s per fio run at the
adaptive rule's minimum number of runs, so it was 15-25 % low on short runs (it left out start-up, the checks
and fio laying out the file), far low on adaptive plans (a plan that needs more than the minimum said 38 s
and took 88 s) and meaningless for a cache-exhaustion write, whose fio time is a 6 h cap.

A run's wall time, in the order it is spent:
- start-up and the checks before the first cell (interpreter, store, `fio --version`, the target's facts,
  the O_DIRECT probes): what the caller measured, plus the interpreter's start-up it cannot see;
- laying out the file: before the first fio run, when that run reads a file that does not exist yet (or is
  smaller than the test size), fio writes it whole; a write run only allocates it. At the target's write rate;
- every fio run: ramp + runtime + fio's own start-up and exit and storing the run. A cell that writes its
  file once (cache-exhaustion) takes size / write rate instead; its runtime is only a cap;
- the number of runs: fixed, or for the adaptive rule the expected stopping point of its sequential
  interval test (`expected_runs`) given how much the cell's separate runs differ: as an earlier run of the
  cell on this target showed (`Priors`), else `UNKNOWN_SPREAD` (a realistic disk's, so that a
  first-time estimate is not low) and the run line says the spread is not yet known;
- the end: statistics and the table.

The write rate is the sequential write bandwidth an earlier run measured on this target, else an assumed
rate; estimates that depend on it say which rate they assume and give the range over plausible rates.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass, field
from statistics import median
from typing import Sequence

from stackbench.model.plan import JOB_OVERHEAD_S, RUN_OVERHEAD_S, Plan, StoppingRule, Workload
from stackbench.model.results import Run
from stackbench.base.units import count, format_bytes, format_duration

# The interpreter and the CLI's imports before a command's code runs (README: `runs` starts in about 0.4 s);
# what comes after (the store, the checks) is measured by the command itself.
STARTUP_S = 0.4
# After the last fio run: the statistics (SciPy's first import), marking the run finished, the table.
FINISH_S = 0.5
# Between-run spread (sd of log IOPS) assumed for a cell when the store has no earlier run on the target, so
# nothing tells how this target's runs differ. A disk's: the low end of the 10-40 % by which the virtio disk's
# 4K QD1 cells differed between separate runs in bench/RESULTS.md's A/A studies (ab_truth, claims_truth).
# Issue 27 first assumed 4 %, and first-time adaptive estimates came out 30-40 % low: nearly every cell ran
# to --max-runs (bench/RESULTS.md, time estimates). At 10 % the default rule (±5 %, 5-10 runs) expects 9.6
# runs, so the point estimate sits near the range's upper end, where such runs end.
UNKNOWN_SPREAD = 0.10
# The same for tmpfs, whose runs write RAM: separate runs on /dev/shm differed by 1-5 % (bench/RESULTS.md,
# adaptive mode).
RAM_SPREAD = 0.04
# Sequential write rates (bytes/s): assumed when no earlier run measured one on the target (a SATA SSD's
# order, between a hard disk and an NVMe drive), and the plausible range the estimate's range spans.
ASSUMED_WRITE_RATE = 500e6
FAST_WRITE_RATE = 3e9
SLOW_WRITE_RATE = 100e6
# tmpfs writes into RAM.
RAM_WRITE_RATE = 2e9
RAM_FAST_WRITE_RATE = 8e9
RAM_SLOW_WRITE_RATE = 500e6
# What an estimate may not know yet (`PlanTime.not_yet_known`), in the run line's words.
UNKNOWN_WORDS = {"spread": "the runs' spread", "write_rate": "the write rate"}
SIMULATIONS = 400  # per (rule, spread, cap): E[runs] to about 0.05 runs, deterministic (fixed seed)


@dataclass(frozen=True)
class WriteRate:
    """The write rate an estimate assumes, the plausible range around it, and where it comes from."""

    bytes_s: float
    fast_bytes_s: float
    slow_bytes_s: float
    source: str  # "assumed" or "measured by run 3f2a9c1b7e04"

    def describe(self) -> str:
        return f"{format_rate(self.bytes_s)} ({self.source}; {format_rate(self.slow_bytes_s)} to " \
               f"{format_rate(self.fast_bytes_s)} plausible)"


def _seconds(seconds: float) -> str:
    """A part of an estimate: tenths below ten seconds, where whole seconds would show 0.4 s as 0 s."""
    return f"{seconds:.1f} s" if seconds < 10 else format_duration(seconds)


def format_rate(bytes_s: float) -> str:
    return f"{bytes_s / 1e9:.3g} GB/s" if bytes_s >= 1e9 else f"{bytes_s / 1e6:.3g} MB/s"


def write_rate(measured: float | None, source: str = "", *, ram: bool = False) -> WriteRate:
    """The rate to assume: the one measured on the target when there is one, else a typical one."""
    fast, slow, assumed = (
        (RAM_FAST_WRITE_RATE, RAM_SLOW_WRITE_RATE, RAM_WRITE_RATE) if ram
        else (FAST_WRITE_RATE, SLOW_WRITE_RATE, ASSUMED_WRITE_RATE)
    )
    if measured and measured > 0:
        return WriteRate(measured, max(fast, measured), min(slow, measured), source or "measured")
    return WriteRate(assumed, fast, slow, "assumed" + (": tmpfs writes into RAM" if ram else ""))


@dataclass(frozen=True)
class Priors:
    """What earlier runs on the same target showed: each cell's between-run spread (sd of log IOPS) by
    cell key, a sequential write rate, and the wall time a fio run took beyond ramp + runtime."""

    spreads: dict[str, float] = field(default_factory=dict)
    write_bytes_s: float | None = None
    run_overhead_s: float | None = None
    source: str = ""  # the run they come from, for the estimate's text


@dataclass(frozen=True)
class CellTime:
    """One cell's part of the estimate."""

    run_seconds: float  # wall time of one fio run
    expected_runs: float
    least_runs: int
    most_runs: int
    spread: float | None  # the between-run spread the adaptive rule's expectation used
    spread_known: bool  # from an earlier run of this cell (True), or the target's typical or an assumed one
    fastest_run_s: float  # one run at the fast end of the write rate (a once-through cell), else run_seconds
    slowest_run_s: float


@dataclass(frozen=True)
class PlanTime:
    """The estimated wall time of a plan on one target, its parts and its range."""

    setup_s: float
    layout_bytes: int
    cells: tuple[CellTime, ...]
    finish_s: float
    rate: WriteRate
    run_overhead_s: float
    adaptive: StoppingRule | None = None
    priors_source: str = ""
    typical_spread: float | None = None  # the spread assumed for cells new to the target, when it was measured
    unknown_spread: float = UNKNOWN_SPREAD  # the spread assumed when no earlier run on the target tells one

    @property
    def layout_s(self) -> float:
        return self.layout_bytes / self.rate.bytes_s

    @property
    def fio_seconds(self) -> float:
        """The part a progress bar counts: laying out the file and every expected fio run."""
        return self.layout_s + sum(c.expected_runs * c.run_seconds for c in self.cells)

    @property
    def seconds(self) -> float:
        return self.setup_s + self.fio_seconds + self.finish_s

    @property
    def low(self) -> float:
        return (self.setup_s + self.finish_s + self.layout_bytes / self.rate.fast_bytes_s
                + sum(c.least_runs * c.fastest_run_s for c in self.cells))

    @property
    def high(self) -> float:
        return (self.setup_s + self.finish_s + self.layout_bytes / self.rate.slow_bytes_s
                + sum(c.most_runs * c.slowest_run_s for c in self.cells))

    @property
    def fio_runs(self) -> float:
        return sum(c.expected_runs for c in self.cells)

    @property
    def not_yet_known(self) -> tuple[str, ...]:
        """What the estimate had to assume because no earlier run on the target measured it: the point
        estimate is then a guess inside its range, and the run line says so."""
        unknown = []
        if self.adaptive and self.typical_spread is None:
            unknown.append("spread")
        # the write rate, where it matters: where the plausible rates move the estimate by more than 10 %
        by_rate = self.layout_bytes * (1 / self.rate.slow_bytes_s - 1 / self.rate.fast_bytes_s) + sum(
            c.expected_runs * (c.slowest_run_s - c.fastest_run_s) for c in self.cells)
        if not self.rate.source.startswith("measured") and by_rate > 0.1 * self.seconds:
            unknown.append("write_rate")
        return tuple(unknown)

    def headline(self) -> str:
        """`about 49 s (46 s to 52 s)`: what the run line and the dry run print, with what is not yet known."""
        about, low, high = (format_duration(x) for x in (self.seconds, self.low, self.high))
        if low == high:
            return f"about {about}"
        unknown = self.not_yet_known
        said = f"; {' and '.join(UNKNOWN_WORDS[x] for x in unknown)} {'are' if len(unknown) > 1 else 'is'} not yet known" if unknown else ""
        return f"about {about} ({low} to {high}{said})"

    def details(self) -> list[str]:
        """What the estimate is made of and what it assumes, one line each."""
        runs = self.fio_runs
        lines = [f"start-up and checks {_seconds(self.setup_s)}, statistics and table {_seconds(self.finish_s)}"]
        if self.layout_bytes:
            lines.append(f"fio lays out the {format_bytes(self.layout_bytes)} file before the first run: "
                         f"{_seconds(self.layout_s)} at {self.rate.describe()}")
        measured = self.priors_source and self.run_overhead_s != RUN_OVERHEAD_S
        each = "each " if round(runs, 1) != 1 else ""
        lines.append(f"{count(round(runs, 1), 'fio run')}, {each}{self.run_overhead_s:.2f} s beyond its ramp and "
                     "runtime for fio's start-up and storing it"
                     + (f" (as in {self.priors_source})" if measured else ""))
        once = [c for c in self.cells if c.slowest_run_s != c.fastest_run_s]
        if once:
            lines.append(f"the file is written once at {self.rate.describe()}; its --runtime is only a cap")
        if self.adaptive:
            known = [c.spread for c in self.cells if c.spread_known and c.spread is not None]
            fallback = (
                f"{self.typical_spread:.1%} (the median of the cells {self.priors_source} measured on this target)"
                if self.typical_spread is not None
                else f"{self.unknown_spread:.0%} (assumed, not yet known: no earlier run on this target; "
                     + ("runs on tmpfs differ by 1-5 %)" if self.unknown_spread == RAM_SPREAD
                        else "a disk's separate runs often differ by 10-40 %)")
            )
            if not known:
                spreads = f"runs that differ by {fallback} (sd of log IOPS)"
            elif len(known) == len(self.cells):
                spreads = f"the spreads {self.priors_source} measured (median {median(known):.1%})"
            else:
                spreads = (f"the spreads {self.priors_source} measured for {len(known)} of {len(self.cells)} cells "
                           f"(median {median(known):.1%}), {fallback} for the rest")
            lines.append(f"adaptive: about {runs / len(self.cells):.1f} runs per cell ({self.adaptive.min_runs} to "
                         f"{self.adaptive.max_runs}) until ±{self.adaptive.ci_target:.0%}, for {spreads}")
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "seconds": round(self.seconds, 1),
            "low_seconds": round(self.low, 1),
            "high_seconds": round(self.high, 1),
            "setup_seconds": round(self.setup_s, 2),
            "layout_bytes": self.layout_bytes,
            "layout_seconds": round(self.layout_s, 2),
            "fio_runs": round(self.fio_runs, 2),
            "run_overhead_seconds": round(self.run_overhead_s, 3),
            "finish_seconds": round(self.finish_s, 2),
            "write_rate_bytes_s": round(self.rate.bytes_s),
            "write_rate_source": self.rate.source,
            "not_yet_known": list(self.not_yet_known),
            "cells": [
                {"expected_runs": round(c.expected_runs, 2), "run_seconds": round(c.run_seconds, 2),
                 "spread": None if c.spread is None else round(c.spread, 4), "spread_known": c.spread_known}
                for c in self.cells
            ],
        }


def run_seconds(
    workload: Workload, overhead_s: float = RUN_OVERHEAD_S, rate_bytes_s: float = ASSUMED_WRITE_RATE,
) -> float:
    """Wall time of one fio run of a cell: ramp + runtime + overhead, or for a cell that writes its file
    once, the time to write it (never more than its runtime cap) + overhead."""
    if not workload.time_based:
        return min(workload.runtime, workload.size / rate_bytes_s) + workload.ramp_time + overhead_s
    return workload.ramp_time + workload.runtime + overhead_s


def run_cap(rule: StoppingRule, seconds_per_run: float) -> int:
    """The most runs the rule allows a cell whose runs take `seconds_per_run` (its runs and time caps)."""
    most = rule.max_runs
    if rule.max_seconds is not None and seconds_per_run > 0:
        most = min(most, max(1, math.floor(rule.max_seconds / seconds_per_run + 1e-9)))
    return most


@functools.lru_cache(maxsize=512)
def expected_runs(rule: StoppingRule, spread: float, cap: int | None = None) -> float:
    """The expected number of runs the adaptive rule takes for a cell whose runs differ by `spread` (sd of
    log IOPS): the rule stops at the first n >= min_runs where t(n-1) * sd_n / sqrt(n) <= log(1 + target),
    sd_n being the sample sd of n runs, which is itself random; simulated with a fixed seed."""
    most = min(rule.max_runs, cap if cap is not None else rule.max_runs)
    least = min(rule.min_runs, most)
    if spread <= 0 or least >= most:
        return float(least if spread <= 0 else most)
    from stackbench.analysis import student_t  # SciPy: the same quantiles the rule uses

    goal = math.log1p(rule.ci_target)
    limit = {n: goal * math.sqrt(n) / student_t.ppf(0.5 + rule.confidence / 2, n - 1)
             for n in range(max(least, 2), most + 1)}
    draw = random.Random(27).gauss
    total = 0
    for _ in range(SIMULATIONS):
        count, mean, squares = 0, 0.0, 0.0
        while True:
            count += 1
            value = draw(0.0, spread)
            delta = value - mean
            mean += delta / count
            squares += delta * (value - mean)
            if count < least:
                continue
            if count >= most or (count >= 2 and math.sqrt(squares / (count - 1)) <= limit[count]):
                break
        total += count
    return total / SIMULATIONS


def remaining_runs(rule: StoppingRule, values: Sequence[float], cap: int) -> float | None:
    """The expected total runs of a cell still being measured, from the spread of its runs so far (at
    least one more than it has); None below two runs, which tell no spread: the estimate's expectation
    (`plan_time`, from earlier runs or the assumed spread) stands."""
    n = len(values)
    spread = log_spread(values)
    if spread is None:
        return None
    return min(float(cap), max(float(n + 1), expected_runs(rule, spread, cap)))


def log_spread(values: Sequence[float]) -> float | None:
    """The sample sd of log values (the between-run spread the adaptive rule sees); None below two."""
    logs = [math.log(v) for v in values if v > 0]
    if len(logs) < 2:
        return None
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))


def layout_bytes(plan: Plan, *, new_file: bool, existing_bytes: int = 0) -> int:
    """Bytes fio writes to lay out the file before the first run: the file is shared by all cells and
    only the first run can find it missing; fio fills it when that run reads (a write only allocates)."""
    first = plan.workloads[0]
    if not first.reads:
        return 0
    return plan.size if new_file else max(0, plan.size - existing_bytes)


def plan_time(
    plan: Plan,
    *,
    setup_s: float = STARTUP_S,
    layout: int = 0,
    priors: Priors | None = None,
    ram: bool = False,
) -> PlanTime:
    """The estimate of `plan`: `setup_s` the time before the first fio run (start-up and the checks, as the
    caller measured them), `layout` the bytes fio lays out first (`layout_bytes`)."""
    priors = priors or Priors()
    rate = write_rate(priors.write_bytes_s, f"measured by {priors.source}" if priors.source else "", ram=ram)
    overhead = priors.run_overhead_s if priors.run_overhead_s is not None else RUN_OVERHEAD_S
    if plan.one_process:  # a round is one fio process: between its stonewalled jobs fio spends JOB_OVERHEAD_S
        overhead = JOB_OVERHEAD_S
    rule = plan.stopping
    # a cell not measured on the target before is expected to vary as the target's other cells did
    measured_typical = median(priors.spreads.values()) if priors.spreads else None
    unknown = RAM_SPREAD if ram else UNKNOWN_SPREAD
    typical = unknown if measured_typical is None else measured_typical
    cells = []
    for workload in plan.workloads:
        seconds = run_seconds(workload, overhead, rate.bytes_s)
        fastest = run_seconds(workload, overhead, rate.fast_bytes_s)
        slowest = run_seconds(workload, overhead, rate.slow_bytes_s)
        if rule is None:
            cells.append(CellTime(seconds, float(plan.runs), plan.runs, plan.runs, None, False, fastest, slowest))
            continue
        cap = run_cap(rule, seconds)
        known = priors.spreads.get(workload.key)
        spread = known if known is not None else typical
        cells.append(CellTime(seconds, expected_runs(rule, spread, cap), min(rule.min_runs, cap), cap, spread,
                              known is not None, fastest, slowest))
    return PlanTime(setup_s, layout, tuple(cells), FINISH_S, rate, overhead, rule, priors.source, measured_typical,
                    unknown)


def priors_from(runs: Sequence[Run], hostname: str | None) -> Priors:
    """What the newest of `runs` (measured on the target, newest first) on this host tell an estimate:
    each cell's between-run spread, the sequential write rate (a write of 128 KiB blocks or more) and the
    wall time a fio run took beyond its ramp and runtime. Runs of another host are not this machine's."""
    spreads: dict[str, float] = {}
    rate: float | None = None
    extra: list[float] = []
    sources: list[str] = []
    for run in runs:
        if hostname and (run.facts.get("system") or {}).get("hostname") not in (None, hostname):
            continue
        used = False
        this_run: list[float] = []
        for cell in run.cells:
            workload = cell.workload
            replicates = (cell.measurement or {}).get("replicates") or []
            spread = log_spread([float(r.get("iops") or 0) for r in replicates])
            if spread is not None and workload.key not in spreads:
                spreads[workload.key] = spread
                used = True
            if rate is None and workload.rw == "write" and workload.bs >= 128 * 1024 and cell.result.bw_bytes > 0:
                rate = cell.result.bw_bytes
                used = True
            if workload.time_based:
                # the run's first fio run may include laying out the file: not a run's usual cost
                this_run += [float(r["seconds"]) - workload.ramp_time - workload.runtime
                             for r in replicates if r.get("seconds") is not None and r.get("order", 1) != 0]
        if this_run and not extra:
            extra, used = this_run, True
        if used:
            sources.append(run.id[:12])
    overhead = min(max(median(extra), 0.1), 5.0) if extra else None
    source = "run " + sources[0] if len(sources) == 1 else ("runs " + ", ".join(sources)) if sources else ""
    return Priors(spreads, rate, overhead, source)
