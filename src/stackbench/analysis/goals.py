"""Success criteria written the way practitioners state them, checked against runs.

docs/method.md section 1 starts from one: "saturate a 1 Gbit/s link with a 10 GB copy inside the VM" is
`seq write 1M >= 117 MB/s`. A goal is an optional cell selector (pattern words, block size, QD), an optional
statistic, a comparison and a number with its unit; the unit decides the metric:

    seq write 1M >= 117 MB/s        4K QD4 rnd write >= 3000 IOPS        p99 <= 1 ms        rnd read p50 < 200 us
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any

from stackbench.base.errors import StackbenchError
from stackbench.base.usertext import check
from stackbench.model.goal import Goal
from stackbench.model.plan import out_of_fio_range
from stackbench.model.results import Cell, Run
from stackbench.base.units import format_size, parse_size

_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
_UNITS = {
    "iops": ("iops", 1.0),
    "kb/s": ("bw", 1e3), "mb/s": ("bw", 1e6), "gb/s": ("bw", 1e9),
    "kib/s": ("bw", 1024.0), "mib/s": ("bw", 1024.0**2), "gib/s": ("bw", 1024.0**3),
    "ns": ("lat", 1.0), "us": ("lat", 1e3), "µs": ("lat", 1e3), "ms": ("lat", 1e6), "s": ("lat", 1e9),
}
_STATS = {"p50": "p50", "median": "p50", "p99": "p99", "p99.9": "p999", "p999": "p999", "mean": "mean", "avg": "mean"}
_GOAL_RE = re.compile(r"^(?P<left>.*?)\s*(?P<op>>=|<=|>|<)\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>\S+)\s*$")
_MOST = 2.0**64  # a threshold in IOPS, bytes/s or ns: what fio's 64-bit counters can report
_FIX = 'Write e.g. "seq write 1M >= 117 MB/s", "4K QD4 rnd write >= 3000 IOPS" or "p99 <= 1 ms"'


def parse_goal(text: str, *, label: str | None = None, plan: str | None = None) -> Goal:
    """The goal `text` says, for the runs with this label and of this plan (neither: every run). The two
    are stored in the goal's spec, checked here as every label is (base/usertext.py)."""
    check("a label", label)
    check("a plan", plan)
    match = _GOAL_RE.match(text.strip())
    if not match:
        raise StackbenchError(f"cannot read the goal {text!r}", _FIX)
    unit = match["unit"].lower()
    if unit not in _UNITS:
        raise StackbenchError(f"unknown unit {match['unit']!r} in goal {text!r}", "Use IOPS, MB/s, GB/s, ms, us or ns")
    metric, factor = _UNITS[unit]
    words = match["left"].lower().replace(",", " ").split()
    kind = {"seq": False, "sequential": False, "rnd": True, "rand": True, "random": True}
    random_access: bool | None = None
    directions: list[str] = []
    selector: dict[str, Any] = {}
    statistic = None
    for word in words:
        if word in kind:
            random_access = kind[word]
        elif word in ("read", "reads"):
            directions.append("read")
        elif word in ("write", "writes"):
            directions.append("write")
        elif word in _STATS:
            statistic = _STATS[word]
        elif word == "sync":
            selector["sync"] = True
        elif re.fullmatch(r"qd\d+", word):
            selector["iodepth"] = _fio_value("iodepth", word[2:], word, text)
        elif re.fullmatch(r"t\d+", word):
            selector["numjobs"] = _fio_value("numjobs", word[1:], word, text)
        elif re.fullmatch(r"\d+[kmg]?", word):
            selector["bs"] = _fio_value("bs", parse_size(word, option="goal block size"), word, text)
        elif word in ("lat", "latency", "clat"):
            continue
        else:
            raise StackbenchError(f"unknown word {word!r} in goal {text!r}", _FIX)
    if statistic and metric != "lat":
        raise StackbenchError(f"{statistic} needs a time unit in goal {text!r}", "e.g. p99 <= 1 ms")
    threshold = float(match["number"]) * factor  # a number of 400 digits is inf: not a goal any cell can meet
    if not threshold <= _MOST:
        raise StackbenchError(f"the number {match['number'][:20]}{'...' if len(match['number']) > 20 else ''} in "
                              f"goal {text[:80]!r} is beyond anything fio can measure",
                              "Write the threshold in a unit that keeps it small, e.g. 2 GB/s or 1 ms")
    rw: list[str] = []
    for direction in directions or ["read", "write"]:
        if random_access in (None, True):
            rw.append("rand" + direction)
        if random_access in (None, False):
            rw.append(direction)
    return Goal(
        text=" ".join(text.split()),
        metric=metric,
        statistic=(statistic or "mean") if metric == "lat" else None,
        op=match["op"],
        threshold=threshold,
        rw=tuple(rw) if (directions or random_access is not None) else (),
        label=label,
        plan=plan,
        **selector,
    )


def _fio_value(name: str, value: int | str, word: str, text: str) -> int:
    """A selector's number (QDn, Tn, a block size) if fio accepts it; a cell never has another."""
    short = isinstance(value, int) or len(value) <= 20
    number = int(value) if short else 2**64  # more than fio takes, without int() of 5000 digits
    why = out_of_fio_range(name, number, None if short else f"{str(value)[:20]}...")
    if why is not None:
        raise StackbenchError(f"{word[:30]!r} in goal {text[:80]!r}: {why}", _FIX)
    return number


@dataclass(frozen=True)
class GoalResult:
    goal: Goal
    cell: Cell | None
    value: float | None
    passed: bool | None  # None: no matching cell
    margin_pct: float | None  # how far inside (+) or outside (-) the threshold

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.goal.text,
            "pattern": self.cell.pattern if self.cell else None,
            "value": self.value,
            "unit": {"iops": "IOPS", "bw": "bytes/s", "lat": "ns"}[self.goal.metric],
            "status": "n/a" if self.passed is None else ("pass" if self.passed else "fail"),
            "margin_pct": self.margin_pct,
        }


def evaluate(goals: list[Goal], run: Run) -> list[GoalResult]:
    """Every goal the run is for, checked against each of its matching cells. A goal set for the run (its
    label, its plan) and matching none of its cells is `n/a`, which says the run lacks the cell the goal
    needs; a goal for every run says nothing of a run without a matching cell (issue 33: every import
    of other cells grew rows of n/a)."""
    results = []
    for goal in goals:
        if not goal.applies_to(run):
            continue
        cells = [c for c in run.cells if goal.matches(c)]
        if not cells and goal.bound:
            results.append(GoalResult(goal, None, None, None, None))
        for cell in cells:
            value = goal.value(cell)
            if value is None:
                results.append(GoalResult(goal, cell, None, None, None))
                continue
            passed = _OPS[goal.op](value, goal.threshold)
            higher_is_better = goal.op in (">=", ">")
            margin = (value - goal.threshold) / goal.threshold * 100 if goal.threshold else None
            if margin is not None and not higher_is_better:
                margin = -margin
            results.append(GoalResult(goal, cell, value, passed, margin))
    return results


def describe_runs(goal: Goal) -> str:
    """The runs a goal is for, as `goal list` and `goal add` say it."""
    said = [*([f"labelled {goal.label}"] if goal.label is not None else []),
            *([f"plan {goal.plan}"] if goal.plan is not None else [])]
    return ", ".join(said) or "every run with such a cell"


def describe_selector(goal: Goal) -> str:
    parts = []
    if goal.bs:
        parts.append(format_size(goal.bs))
    if goal.iodepth:
        parts.append(f"QD{goal.iodepth}")
    parts.extend(goal.rw)
    return " ".join(parts) or "every cell"
