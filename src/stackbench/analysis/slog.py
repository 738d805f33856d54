"""Ranking SLOG candidates (docs/method.md section 4), with every claim proven across separate runs.

A ZFS log device only serves synchronous writes, so what matters is the latency of a 4 KiB sync write at
queue depth 1 and how it holds up at QD16, measured in short runs: ZFS flushes a transaction group every
5 s, and a longer run measures how fast the data disks absorb the flush, not the log device. Classes from
the practitioners' measurements: Optane 45-63 µs median at QD1; enterprise SAS/SATA SSD 0.3-0.5 ms;
consumer SATA SSD ~1.9 ms; HDD mirror ~12 ms.

Why intervals: one ext4 target was "fit: enterprise-SSD" (median 362 µs) in one measurement and "marginal:
consumer-SSD" (2.07 ms) in the next. The unit is a separate fio run (analysis/between_runs.py): each run has
its own QD1 median latency, a candidate's value is their geometric mean with the t-interval on the logs,
and its class is named only when the whole interval lies in one class ("enterprise-SSD or consumer-SSD:
the runs cannot tell" otherwise). "A is better than B" is compare's test (analysis/compare.ratio_test:
paired by round when both were measured in one `slog` or `ab` session, Welch on log values otherwise) with
compare's verdict rule (significant after Holm over every pair the ranking claims, and at least
`min_effect` lower), and "best" is printed only when the first candidate is proven better than the second.
A target that is not a device (tmpfs, the page cache, a network file system) is ranked after the devices
and never called best. Where the runs leave a class or the ranking open, a SYNC_NOISE warning says how
many runs the spread seen calls for (`--runs N`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from stackbench.analysis.between_runs import Estimate, RatioTest, estimate, holm, runs_needed
from stackbench.analysis.cells import RUNS, Replicates
from stackbench.analysis.compare import REVERT, SAME, ab_session, ratio_test, row_verdict
from stackbench.analysis.stats import format_p
from stackbench.model.plan import MAX_RUNS
from stackbench.model.results import Cell, Run
from stackbench.base.units import format_latency_ns, format_size
from stackbench.model.warning import Warning, WarningCode

CLASS_SIZE = 4096  # the classes are bounds on 4 KiB writes
# (upper bound of the QD1 median completion latency in ns, class name, verdict)
CLASSES = (
    (100_000, "Optane", "excellent: Optane class"),
    (600_000, "enterprise-SSD", "fit: enterprise-SSD class"),
    (2_500_000, "consumer-SSD", "marginal: consumer-SSD class; gains little over the pool's own ZIL on SSDs"),
    (math.inf, "HDD", "unfit: HDD class"),
)
PLP_NOTE = "power-loss protection cannot be measured: check the datasheet before trusting a SLOG with data"
ALPHA = 0.05
MIN_EFFECT = 0.05  # "better" needs at least 5 % lower latency, as compare's keep needs 5 % more IOPS

# File systems with no storage device of this machine under them: what they measure is RAM, or another
# machine's disk behind a network, never the candidate a log device would be.
MEMORY_FS = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"})
NETWORK_FS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "virtiofs", "ceph", "glusterfs", "fuse.sshfs",
                        "afs", "lustre"})


@dataclass(frozen=True)
class DepthResult:
    """One queue depth of a candidate: fio's numbers over all its runs (`median_ns` from the runs' merged
    histograms), and each separate run's own median with its round (none for imports and runs stored
    before stackbench counted separate runs)."""

    iops: float
    median_ns: float | None
    mean_ns: float | None
    stdev_ns: float | None
    best_1s_iops: float | None
    run_medians_ns: tuple[float, ...] = ()
    rounds: tuple[int, ...] = ()

    @property
    def median_estimate(self) -> Estimate | None:
        """The geometric mean of the runs' medians with its 95 % interval (none from one run)."""
        return estimate(self.run_medians_ns) if self.run_medians_ns else None

    @property
    def replicates(self) -> Replicates:
        return Replicates(self.run_medians_ns, RUNS, self.rounds)


@dataclass(frozen=True)
class Candidate:
    name: str
    run_id: str
    qd1: DepthResult | None
    qd16: DepthResult | None
    fs_type: str | None = None
    size: int = CLASS_SIZE
    not_device: str | None = None  # why the target is not a storage device, or None
    session: str | None = None  # the slog or ab session whose rounds pair this candidate's runs with others'

    @property
    def qd1_latency_ns(self) -> float | None:
        """What the ranking orders by: the geometric mean of the runs' QD1 medians; for a candidate without
        separate runs its median, or its mean where the source has no percentiles (diskinfo -wS)."""
        if self.qd1 is None:
            return None
        found = self.qd1.median_estimate
        if found is not None:
            return found.centre
        return self.qd1.median_ns if self.qd1.median_ns is not None else self.qd1.mean_ns

    @property
    def qd1_interval(self) -> tuple[float, float] | None:
        found = self.qd1.median_estimate if self.qd1 else None
        return (found.low, found.high) if found and found.low is not None and found.high is not None else None

    @property
    def runs(self) -> int:
        """Separate runs behind the QD1 value (1 for a single result: an import, an old run)."""
        return max(1, len(self.qd1.run_medians_ns)) if self.qd1 else 0

    @property
    def ranked(self) -> bool:
        """Whether the candidate takes part in the ranking: a device with a QD1 value."""
        return self.not_device is None and self.qd1_latency_ns is not None

    @property
    def classes(self) -> tuple[str, ...]:
        """The classes the QD1 median may be in: one when the interval (or the single value) lies in it;
        none for another write size than the classes' 4 KiB."""
        latency = self.qd1_latency_ns
        if latency is None or self.size != CLASS_SIZE:
            return ()
        low, high = self.qd1_interval or (latency, latency)
        return tuple(name for i, (bound, name, _) in enumerate(CLASSES)
                     if high > (CLASSES[i - 1][0] if i else 0) and low <= bound)

    @property
    def verdict(self) -> str:
        if self.not_device:
            return f"not a device: {self.not_device}"
        if self.qd1_latency_ns is None:
            return f"unknown: no {format_size(self.size)} QD1 sync-write result"
        if self.size != CLASS_SIZE:
            return f"no class: the classes are for {format_size(CLASS_SIZE)} writes"
        classes = self.classes
        if len(classes) > 1:
            return f"{_either(classes)}: the runs cannot tell"
        text = next(verdict for _, name, verdict in CLASSES if name == classes[0])
        return text if self.qd1_interval else f"{text} (one value: no interval)"

    def to_json(self) -> dict[str, Any]:
        def depth(d: DepthResult | None, median: float | None, interval: tuple[float, float] | None) -> Any:
            if d is None:
                return None
            return {
                "iops": d.iops,
                "clat_median_us": median / 1000 if median is not None else None,
                "clat_median_ci_us": [interval[0] / 1000, interval[1] / 1000] if interval else None,
                "clat_median_per_run_us": [v / 1000 for v in d.run_medians_ns],
                "clat_mean_us": d.mean_ns / 1000 if d.mean_ns is not None else None,
                "clat_stdev_us": d.stdev_ns / 1000 if d.stdev_ns is not None else None,
                "best_1s_iops": d.best_1s_iops,
            }

        qd1_median = self.qd1_latency_ns if self.qd1 and (self.qd1.run_medians_ns or self.qd1.median_ns) else None
        qd16_median = self.qd16.median_estimate.centre if self.qd16 and self.qd16.median_estimate else (
            self.qd16.median_ns if self.qd16 else None)
        return {"candidate": self.name, "run_id": self.run_id, "size_bytes": self.size, "runs": self.runs,
                "qd1": depth(self.qd1, qd1_median, self.qd1_interval), "qd16": depth(self.qd16, qd16_median, None),
                "classes": list(self.classes), "not_device": self.not_device, "verdict": self.verdict}


@dataclass(frozen=True)
class Comparison:
    """A ranked candidate against the next one: their QD1 medians' ratio (this / next, below 1 = this one
    is faster) with compare's test, its Holm-adjusted p-value and compare's verdict on it."""

    candidate: Candidate
    next: Candidate
    test: RatioTest | None
    p_holm: float
    verdict: str

    @property
    def better(self) -> bool:
        """Proven faster: the latencies' `revert` (significantly lower by at least the minimum effect)."""
        return self.verdict == REVERT

    @property
    def same(self) -> bool:
        return self.verdict == SAME

    def to_json(self) -> dict[str, Any]:
        t = self.test
        testable = t is not None and t.testable
        return {
            "candidate": self.candidate.name, "next": self.next.name,
            "latency_ratio": t.ratio if t else None,
            "latency_ratio_ci": [t.low, t.high] if testable else None,  # type: ignore[union-attr]
            "p_value": t.p_value if t else None, "p_holm": self.p_holm if testable else None,
            "test": t.method if t else None, "n": [t.n_other, t.n_base] if t else [0, 0],
            "better": self.better, "same": self.same, "verdict": self.verdict,
        }


@dataclass(frozen=True)
class SizeRanking:
    """The candidates at one write size, devices fastest first, then the others; and each device against
    the next."""

    size: int
    ranked: tuple[Candidate, ...]
    comparisons: tuple[Comparison, ...]

    @property
    def devices(self) -> list[Candidate]:
        return [c for c in self.ranked if c.ranked]

    @property
    def best(self) -> Candidate | None:
        """The first device, when it is proven better than the second; never a target that is not a device."""
        return self.comparisons[0].candidate if self.comparisons and self.comparisons[0].better else None

    def versus_next(self, candidate: Candidate) -> Comparison | None:
        return next((c for c in self.comparisons if c.candidate is candidate), None)

    def to_json(self) -> dict[str, Any]:
        return {"size_bytes": self.size, "best": self.best.name if self.best else None,
                "comparisons": [c.to_json() for c in self.comparisons]}


@dataclass(frozen=True)
class Ranking:
    sizes: tuple[SizeRanking, ...]
    warnings: tuple[Warning, ...] = ()
    alpha: float = ALPHA
    min_effect: float = MIN_EFFECT
    note: str = PLP_NOTE

    @property
    def candidates(self) -> list[Candidate]:
        return [c for ranking in self.sizes for c in ranking.ranked]

    def to_json(self) -> dict[str, Any]:
        return {
            "candidates": [c.to_json() for c in self.candidates],
            "rankings": [r.to_json() for r in self.sizes],
            "alpha": self.alpha, "min_effect_pct": self.min_effect * 100, "multiple_comparisons": "holm",
            "note": self.note, "warnings": [w.to_json() for w in self.warnings],
        }


def _depth(cell: Cell | None) -> DepthResult | None:
    if cell is None:
        return None
    clat = cell.result.clat
    samples = [s.iops for s in cell.measured_samples]
    stored = [r for r in (cell.measurement or {}).get("replicates") or [] if (r.get("clat_p50_ns") or 0) > 0]
    return DepthResult(
        iops=cell.result.iops,
        median_ns=clat.p50_ns if clat else None,
        mean_ns=clat.mean_ns if clat else None,
        stdev_ns=clat.stddev_ns if clat else None,
        best_1s_iops=max(samples) if samples else None,
        run_medians_ns=tuple(float(r["clat_p50_ns"]) for r in stored),
        rounds=tuple(int(r.get("round", i)) for i, r in enumerate(stored)),
    )


def _find(run: Run, depth: int, size: int) -> Cell | None:
    """The random-write cell of this size at this depth; sync cells first."""
    cells = [c for c in run.cells if c.workload.rw == "randwrite" and c.workload.bs == size and c.result.direction == "write"]
    exact = [c for c in cells if c.workload.iodepth == depth and c.workload.knows("iodepth")]
    exact.sort(key=lambda c: not c.workload.sync)
    return exact[0] if exact else None


def not_a_device(run: Run, qd1: Cell | None) -> str | None:
    """Why the run's target is not a storage device a log device could be, or None: RAM (tmpfs), the page
    cache (writes neither synchronous nor O_DIRECT), or a file system with no device of this machine under
    it. Imports without facts are given the benefit of the doubt."""
    fs_type = ((run.facts or {}).get("target") or {}).get("fs_type")
    if fs_type in MEMORY_FS:
        return f"{fs_type} is RAM and loses every write on power loss"
    if fs_type in NETWORK_FS:
        return (f"{fs_type} is a file system without a device of this machine under it: the writes go to "
                "another machine's storage")
    if qd1 is not None and not (qd1.workload.sync or qd1.workload.dsync or qd1.workload.direct):
        return "the writes were neither synchronous nor O_DIRECT, so they stayed in the page cache"
    return None


def candidate_from_run(name: str, run: Run, size: int = CLASS_SIZE) -> Candidate:
    fs_type = ((run.facts or {}).get("target") or {}).get("fs_type")
    qd1 = _find(run, 1, size)
    return Candidate(name=name, run_id=run.id, qd1=_depth(qd1), qd16=_depth(_find(run, 16, size)), fs_type=fs_type,
                     size=size, not_device=not_a_device(run, qd1), session=_session(run))


def stored_candidate(run: Run, size: int = CLASS_SIZE) -> Candidate:
    """A stored run as a candidate (`slog --run`, the server's SLOG page), named by its label, else its
    short id."""
    return candidate_from_run(run.label or run.id[:12], run, size)


def _session(run: Run) -> str | None:
    """The session whose rounds interleaved this run with others: a `slog` shoot-out or an `ab` session."""
    slog = (run.facts or {}).get("slog")
    if isinstance(slog, dict) and slog.get("session"):
        return str(slog["session"])
    return ab_session(run)


def rank(candidates: Sequence[Candidate], *, alpha: float = ALPHA, min_effect: float = MIN_EFFECT,
         command: str = "stackbench slog CANDIDATE...") -> Ranking:
    """Per write size: the devices by QD1 latency (lowest first), then the targets that are not devices,
    then candidates without a QD1 result; each device tested against the next, Holm over all those pairs.
    `command` is what the advice tells the user to run again."""
    by_size: dict[int, list[Candidate]] = {}
    for candidate in candidates:
        by_size.setdefault(candidate.size, []).append(candidate)
    ordered = {size: sorted(group, key=_order) for size, group in sorted(by_size.items())}
    pairs = [(size, a, b) for size, group in ordered.items()
             for a, b in zip([c for c in group if c.ranked], [c for c in group if c.ranked][1:])]
    tests = [_test(a, b) for _, a, b in pairs]
    testable = [i for i, t in enumerate(tests) if t is not None and t.testable]
    adjusted = dict(zip(testable, holm([tests[i].p_value for i in testable])))  # type: ignore[union-attr]
    comparisons: dict[int, list[Comparison]] = {size: [] for size in ordered}
    for index, ((size, a, b), test) in enumerate(zip(pairs, tests)):
        p_holm = adjusted.get(index, 1.0)
        comparisons[size].append(Comparison(a, b, test, p_holm, row_verdict(test, p_holm, alpha, min_effect)))
    sizes = tuple(SizeRanking(size, tuple(group), tuple(comparisons[size])) for size, group in ordered.items())
    return Ranking(sizes, tuple(_advice(sizes, alpha, min_effect, len(testable), command)), alpha, min_effect)


def _order(candidate: Candidate) -> tuple[int, float]:
    latency = candidate.qd1_latency_ns
    return (0 if candidate.ranked else 1 if latency is not None else 2, latency or 0.0)


def _test(candidate: Candidate, following: Candidate) -> RatioTest | None:
    """compare's test of this candidate's QD1 run medians against the next one's (ratio this / next), paired
    by round when both come from one session; None when a side has no separate runs."""
    if candidate.qd1 is None or following.qd1 is None:
        return None
    if not candidate.qd1.run_medians_ns or not following.qd1.run_medians_ns:
        return None
    paired = candidate.session is not None and candidate.session == following.session
    return ratio_test(following.qd1.replicates, candidate.qd1.replicates, paired)


def _advice(sizes: Sequence[SizeRanking], alpha: float, min_effect: float, claims: int, command: str) -> list[Warning]:
    """SYNC_NOISE warnings where the runs leave something open, each with the runs that would decide it."""
    found: list[Warning] = []
    once = [c.name for ranking in sizes for c in ranking.devices if c.qd1 and len(c.qd1.run_medians_ns) == 1]
    if once:
        found.append(Warning(
            WarningCode.SYNC_NOISE, ", ".join(once),
            "measured in one run: no interval, so neither its class nor a ranking can be proven",
            f"run `{command}` with --runs 3 or more",
        ))
    for ranking in sizes:
        for candidate in ranking.devices:
            if len(candidate.classes) > 1:
                found.append(_class_advice(candidate, command))
        top = ranking.comparisons[0] if ranking.comparisons else None
        if top is not None and top.test is not None and top.test.testable and not top.better and not top.same:
            found.append(_ranking_advice(top, alpha, min_effect, max(claims, 1), command))
    return found


def _class_advice(candidate: Candidate, command: str) -> Warning:
    """The interval straddles a class bound: the runs needed for it to clear the nearest bound inside it."""
    found = candidate.qd1.median_estimate  # type: ignore[union-attr]
    assert found is not None and found.low is not None and found.high is not None
    bounds = [bound for bound, _, _ in CLASSES[:-1] if found.low <= bound < found.high]
    nearest = min(bounds, key=lambda bound: abs(math.log(found.centre / bound)))
    below = next(i for i, (bound, _, _) in enumerate(CLASSES) if bound == nearest)
    distance = abs(math.log(found.centre / nearest))
    needed = runs_needed(found.log_sd or 0.0, math.expm1(distance)) if distance > 0 else MAX_RUNS + 1
    # Plain wording; truth's shared formatting of intervals and advice replaces it at merge.
    text = (f"its QD1 median ({format_latency_ns(found.centre)}, 95 % interval {format_latency_ns(found.low)} to "
            f"{format_latency_ns(found.high)} over {found.n} runs, which differed by {found.spread_rel or 0:.0%}) "
            f"straddles the {format_latency_ns(nearest)} bound between {CLASSES[below][1]} and "
            f"{CLASSES[below + 1][1]}")
    return Warning(WarningCode.SYNC_NOISE, candidate.name, text, _runs_fix(needed, command, "tell its class"))


def _ranking_advice(top: Comparison, alpha: float, min_effect: float, claims: int, command: str) -> Warning:
    """No candidate proven better than the next: the runs per candidate the spread seen calls for, or why
    none would do."""
    test = top.test
    assert test is not None and test.low is not None and test.high is not None
    subject = f"{top.candidate.name} vs {top.next.name}"
    change = test.ratio - 1
    text = (f"no candidate proven better: {top.candidate.name}'s QD1 median is {change:+.1%} against "
            f"{top.next.name}'s (95 % interval {test.low - 1:+.1%} to {test.high - 1:+.1%}, {format_p(top.p_holm)} "
            f"after Holm, {test.method}, n={test.n_other}+{test.n_base})")
    if test.ratio > 1 - min_effect:
        return Warning(WarningCode.SYNC_NOISE, subject, text, (
            f"the difference seen is smaller than the {min_effect:.0%} a ranking claims: more runs would not prove "
            "either better"))
    sides = [c.qd1.median_estimate for c in (top.candidate, top.next)]  # type: ignore[union-attr]
    log_sd = math.sqrt(sum((e.log_sd or 0.0) ** 2 for e in sides if e is not None))
    needed = runs_needed(log_sd, math.expm1(abs(math.log(test.ratio))), confidence=1 - alpha / claims)
    return Warning(WarningCode.SYNC_NOISE, subject, text, _runs_fix(needed, command, "tell them apart"))


def _either(names: Sequence[str]) -> str:
    """`A or B`, `A, B or C`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _runs_fix(needed: int, command: str, what: str) -> str:
    if needed > MAX_RUNS:
        return (f"no practical number of runs would {what} (more than {MAX_RUNS}): keep the machine quiet, or "
                "accept that the runs cannot tell")
    return f"about {needed} runs per candidate would {what}: run `{command}` with --runs {needed}"

