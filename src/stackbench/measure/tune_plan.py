"""What `stackbench tune` will do, read and checked before anything is changed: each `--knob` parsed, found in
the catalogue or the user's file, checked against the target, the flags and the forbidden list, its
subjects' state read, its candidates (several make a race) and the exact commands of each change and its
undo; and the rounds after which a verdict is looked at. The dry run prints this; the session
(tune_session.py) runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stackbench.base.errors import UsageError
from stackbench.base.registry import unknown
from stackbench.tune.knob import Knob, Safety, State, Subject
from stackbench.tune.knobs import BY_ID
from stackbench.tune.knobs.forbidden import forbidden_knob, forbidden_value
from stackbench.tune.subjects import TargetInfo
from stackbench.model.plan import Plan
from stackbench.tune.user_knobs import UserCommands


def knob_by_id(knob_id: str, user: dict[str, Knob] | None = None) -> Knob:
    """A catalogue knob, or one of `user` (a `--knobs` file's); a forbidden one is refused with its reason, an
    unknown one with the catalogue."""
    refused = forbidden_knob(knob_id)
    if refused is not None:
        raise UsageError(f"tune never tries {knob_id} ({refused.values}): {refused.reason}",
                         f"{refused.safer[:1].upper()}{refused.safer[1:]}")
    known = {**BY_ID, **(user or {})}
    if knob_id not in known:
        error = unknown("knob", knob_id, known)
        raise UsageError(error.what, f"{error.fix}; a knob of your own is declared in a file given with --knobs")
    return known[knob_id]


def parse_knob_option(text: str, user: dict[str, Knob] | None = None) -> tuple[Knob, str | tuple[str, ...] | None]:
    """`--knob ID`, `--knob ID=VALUE`, or `--knob ID=V1,V2,...`: several values are raced."""
    knob_id, sep, given = text.partition("=")
    knob = knob_by_id(knob_id.strip(), user)
    if not sep:
        return knob, None
    values = [v.strip() for v in given.split(",")] if "," in given else [given.strip()]
    if isinstance(knob.access, UserCommands):  # verify = "number": 8.0 names the value 8
        values = [knob.access.normalised(v) for v in values]
    if len(set(values)) != len(values) or not all(values):
        raise UsageError(f"--knob {text}: a value is empty or named twice", f"Use e.g. --knob {knob.id}=V1,V2")
    return knob, (values[0] if len(values) == 1 else tuple(values))


@dataclass(frozen=True)
class PlannedKnob:
    """One knob as the dry run shows it and the session runs it: its subjects, their state now, the value
    tried, and the exact commands of the change and its undo."""

    knob: Knob
    subjects: tuple[Subject, ...]
    now: tuple[State, ...]
    value: str
    apply: tuple[str, ...]
    undo: tuple[str, ...]
    race: tuple[PlannedKnob, ...] = ()  # several candidates: each planned as if alone, raced, the winner proven

    def to_json(self) -> dict[str, Any]:
        data = {"knob": self.knob.id, "subjects": [s.name for s in self.subjects], "now": [dict(s) for s in self.now],
                "from": self.from_value, "to": self.value, "safety": self.knob.safety.value,
                "cost": self.knob.cost.value, "apply": list(self.apply), "undo": list(self.undo)}
        if self.race:
            data["to"] = "race: " + ", ".join(p.value for p in self.race)
            data["race"] = [{"to": p.value, "apply": list(p.apply), "undo": list(p.undo)} for p in self.race]
        return data

    @property
    def from_value(self) -> str:
        return ", ".join(dict.fromkeys(self.knob.access.value_of(state) for state in self.now))


def plan_knob(knob: Knob, value: str | tuple[str, ...] | None, info: TargetInfo, allow: frozenset[Safety]
              ) -> PlannedKnob:
    """Check one `--knob` against the target and the flags, reading (never changing) its subjects' state.
    Several values (given, or the knob's candidates other than its value now when none is named) make a race:
    each candidate checked as if named alone."""
    if isinstance(value, tuple):
        return _race_plan([plan_knob(knob, v, info, allow) for v in value])
    if knob.safety is Safety.FORBIDDEN:  # only a user knob can be: the catalogue lists forbidden ones apart
        raise UsageError(f"{knob.id} is declared forbidden in {knob.source}: tune never tries it",
                         "Change its safety in the file if it is safe to try; no flag overrides forbidden")
    if knob.safety is not Safety.SAFE and knob.safety not in allow:
        raise UsageError(f"{knob.id} is a {knob.safety.value} knob: {SAFETY_WHY[knob.safety]}",
                         f"Add --allow {knob.safety.value} to try it")
    found = knob.subjects(info)
    if isinstance(found, str):
        raise UsageError(f"{knob.id} does not apply to {info.describe()}: {found}", "Choose another knob")
    subjects = tuple(found)
    now = tuple(knob.access.read(subject) for subject in subjects)
    current = {knob.access.value_of(state) for state in now}
    offered = knob.access.offered(subjects[0], now[0])
    candidates = [c for c in knob.values.candidates(subjects[0], now[0]) if offered is None or c in offered]
    if value is None:
        different = [c for c in candidates if c not in current]
        if not different:
            raise UsageError(f"{knob.id} has no candidate other than its value now ({', '.join(sorted(current))})",
                             "Choose another knob")
        if len(different) > 1:
            return plan_knob(knob, tuple(different), info, allow)
        value = different[0]
    if forbidden_value(knob, value) is not None:
        entry = forbidden_value(knob, value)
        raise UsageError(f"tune never sets {knob.id} to {value}: {entry.risk}", entry.safer)  # type: ignore[union-attr]
    if value not in candidates:
        raise UsageError(f"{value!r} is not a value {knob.id} tries on {subjects[0].name}",
                         f"Use one of: {', '.join(candidates)}")
    if value in current and len(current) == 1:
        raise UsageError(f"{knob.id} is already {value} on {', '.join(s.name for s in subjects)}",
                         "Name another value")
    apply = tuple(a.shown() for s, st in zip(subjects, now) for a in knob.access.apply(s, value, st))
    undo = tuple(a.shown() for s, st in zip(subjects, now) for a in knob.access.undo(knob.undo, s, st))
    return PlannedKnob(knob, subjects, now, value, apply, undo)


def _race_plan(candidates: list[PlannedKnob]) -> PlannedKnob:
    """The plan of a race: the first candidate's, with every candidate's (their commands differ by value)."""
    first = candidates[0]
    return PlannedKnob(first.knob, first.subjects, first.now, first.value,
                       tuple(c for p in candidates for c in p.apply), first.undo, tuple(candidates))


SAFETY_WHY = {
    Safety.SEMANTIC: "it changes what programs can observe (access times)",
    Safety.TRADEOFF: "it trades durability or memory for speed (a longer window of unwritten data)",
    Safety.RESTART: "it restarts a virtual machine",
}


DEFAULT_LOOKS = (4, 6, 8, 12)


def looks_for(rounds: int, asked: tuple[int, ...] = DEFAULT_LOOKS) -> tuple[int, ...]:
    """The rounds after which a knob's verdict is looked at: the asked ones up to `rounds`, and `rounds`.

    Even rounds only: with the mirrored order AB, BA, ... a look after an odd round has one more round with B
    second than with A second, so the position effect the order cancels would leak into that look."""
    if any(look < 2 or look % 2 for look in asked):
        raise UsageError(f"--looks {','.join(map(str, asked))}: every look must be an even round of 2 or more",
                         "Use e.g. --looks 4,6,8,12: an even round has A first as often as B")
    return tuple(sorted({look for look in asked if look < rounds} | {rounds}))


def plan_round_seconds(plan: Plan) -> float:
    """A round's fio time as the plan says it (every cell once per arm): what the reserve for the
    confirmation is worked out from when no calibration measured a round (the dry run, --calibrate-rounds 0)."""
    return 2 * sum(plan.run_seconds(workload) for workload in plan.workloads)
