"""What a `stackbench tune` session found, part by part, as its JSON stores it: the calibration, each knob's
rounds (and race), the confirmation, and the session as a whole.

Why apart from the session's running (tune_session.py): `show`, `report` and the web read these records of
sessions that ended long ago; the records hold no behaviour beyond describing themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from stackbench.analysis.compare import RunComparison
from stackbench.analysis.race import Dropped, Look
from stackbench.base.errors import StackbenchError
from stackbench.measure.tune_journal import Change
from stackbench.measure.tune_persist import persist_lines
from stackbench.measure.tune_plan import PlannedKnob


@dataclass(frozen=True)
class Calibration:
    """What A/A rounds (the same settings in both arms) say about this machine now: the sd of the per-round log
    ratio (the largest over the plan's cells) and the smallest change a knob's rounds can prove."""

    rounds: int
    noise: float
    provable: float
    max_rounds: int
    alpha: float

    def describe(self) -> str:
        provable = "no change" if math.isinf(self.provable) else f"changes of {self.provable:.0%} or more"
        return (f"noise {self.noise:.1%} per round ({self.rounds} A/A rounds): {provable} can be proven in "
                f"{self.max_rounds} rounds")

    def refusal(self, min_effect: float, force: bool) -> StackbenchError | None:
        """The error that stops a session before its first knob, or None to go on: a knob's rounds cannot
        prove --min-effect when the smallest provable change is over three times it (no change at all is
        provable: infinite), and measuring anyway would only spend the time; --force goes on regardless."""
        if force or self.provable <= 3 * min_effect:
            return None
        return StackbenchError(
            f"this machine is too noisy now to prove a change of {min_effect * 100:g}%: {self.describe()}",
            "Quiet the machine or measure longer (--runtime), raise --min-effect, or add --force to "
            "tune anyway; nothing was changed")

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "noise": self.noise,
                "provable": None if math.isinf(self.provable) else self.provable, "max_rounds": self.max_rounds,
                "alpha_last_look": self.alpha, "said": self.describe()}


@dataclass
class KnobResult:
    planned: PlannedKnob
    decision: str  # kept, undone, not measured
    why: str
    comparison: RunComparison | None = None
    orders: tuple[str, ...] = ()
    kept: tuple[Change, ...] = ()
    stop: str = ""  # which look decided, or that the last one did not
    round_s: float = 0.0
    race: Race | None = None  # the race that chose the candidate proven here (`planned` is the winner's)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {**self.planned.to_json(), "decision": self.decision, "why": self.why,
                                "rounds": len(self.orders), "orders": list(self.orders), "stop": self.stop}
        if self.race is not None:
            data["race"] = self.race.to_json()
        if self.comparison is not None:
            data["compare"] = self.comparison.to_json()
        return data


@dataclass
class TuneResult:
    session: str
    journal: str
    target: str
    created_at: datetime
    results: list[KnobResult] = field(default_factory=list)
    calibration: Calibration | None = None
    confirmation: Confirmation | None = None
    kept: list[Change] = field(default_factory=list)  # what the session left applied
    status: str = "completed"  # completed | interrupted | failed
    finished_at: datetime | None = None
    error: str | None = None  # why it did not complete: the error line, what was undone included
    audit: dict[str, Any] | None = None  # as TuneRequest's

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "status": self.status, "error": self.error,
                "created_at": self.created_at.isoformat(),
                "finished_at": self.finished_at.isoformat() if self.finished_at else None,
                "journal": self.journal, "target": self.target, "audit": self.audit,
                "calibration": self.calibration.to_json() if self.calibration else None,
                "confirmation": self.confirmation.to_json() if self.confirmation else None,
                "knobs": [r.to_json() for r in self.results],
                "now_set": [c.apply[0].shown() if len(c.apply) == 1 else "; ".join(a.shown() for a in c.apply)
                            for c in self.kept],
                "persist": persist_lines(self.kept),
                "undo": f"stackbench tune --rollback {self.session}"}


@dataclass
class Paired:
    """What one knob's (or the confirmation's) rounds gave: compare's result of the two runs, the rounds run
    and why they stopped, and the changes left applied by the last round."""

    comparison: RunComparison
    orders: tuple[str, ...]
    stop: str
    applied: list[Change]
    round_s: float = 0.0  # seconds a round took, on average


@dataclass
class Race:
    """What a race over several candidates of one knob gave: who was measured, who was dropped at which look
    and why, and the winner handed to the proof (None: no candidate was left, or none could be measured)."""

    original: str
    candidates: tuple[str, ...]
    not_raced: dict[str, str] = field(default_factory=dict)  # candidate -> why (its reversibility check)
    dropped: list[Dropped] = field(default_factory=list)
    orders: list[list[str]] = field(default_factory=list)
    looks: list[Look] = field(default_factory=list)
    winner: str | None = None
    stop: str = ""
    alpha_looks: tuple[float, ...] = ()  # each look's share of alpha (O'Brien-Fleming-type, as a knob's)
    ratios: dict[str, float | None] = field(default_factory=dict)  # each raced candidate to the original, all its rounds
    proof_reserve_s: float | None = None  # of --max-time, kept back from the race for its winner's proof

    @property
    def rounds(self) -> int:
        return len(self.orders)

    def to_json(self) -> dict[str, Any]:
        return {"original": self.original, "candidates": list(self.candidates), "rounds": self.rounds,
                "orders": self.orders, "alpha_looks": list(self.alpha_looks),
                "not_raced": [{"value": v, "why": why} for v, why in self.not_raced.items()],
                "dropped": [d.to_json() for d in self.dropped],
                "looks": [look.to_json() for look in self.looks],
                "ratios": self.ratios, "winner": self.winner, "stop": self.stop,
                "proof_reserve_s": self.proof_reserve_s,
                "said": "the race only chooses; the winner's verdict comes from fresh rounds against the original"}


@dataclass
class Confirmation:
    """The kept set against the original, measured afresh: the effect to quote (a knob's own estimate, taken
    at the look that stopped it, leans high), and whether the set stays."""

    decision: str  # kept, undone
    why: str
    measured: Paired | None  # None: no time was left to measure it

    def to_json(self) -> dict[str, Any]:
        measured = self.measured
        return {"decision": self.decision, "why": self.why, "rounds": len(measured.orders) if measured else 0,
                "orders": list(measured.orders) if measured else [], "stop": measured.stop if measured else "",
                "compare": measured.comparison.to_json() if measured else None}

