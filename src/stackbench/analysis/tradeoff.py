"""Is one side of a comparison faster because it is less safe? The settings of each side, read against the
table of unsafe settings (unsafe_settings.py), and the words that mark a verdict with what was traded.

Each side's settings come from its `ab` command (the arm's shell command, read as shell words), its facts
(mount options, ZFS properties) and its workloads (fio's --sync and --direct); a command wins over a fact,
because `ab` probes the facts once before any arm's command runs. A side is less safe on an entry when it
holds one of the entry's unsafe values and the other side holds a safe one, or says nothing about the
setting while the setting's default is safe (`silent_is_safe`: `--a true --b "zfs set sync=disabled t"`).
Nothing is marked when neither side names a value for it: stackbench never guesses a machine's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stackbench.model.results import Run
from stackbench.model.unsafe_settings import (
    UNSAFE_SETTINGS, SettingValue, UnsafeSetting, settings_in_command, settings_in_facts, settings_of_workloads,
)
from stackbench.model.warning import Warning, WarningCode

A, B = "A", "B"
_KEEP, _REVERT, _SAME = "keep", "revert", "same"  # analysis/compare's verdicts (which imports this module)


@dataclass(frozen=True)
class SafetyDifference:
    """One entry of the table on which the two sides differ: which side is less safe, and what each holds."""

    entry: UnsafeSetting
    less_safe: str  # "A" or "B"
    base: SettingValue | None
    other: SettingValue | None

    def evidence(self) -> str:
        """`B: zfs set sync=disabled tank/vm; A: zfs set sync=standard tank/vm`, the less safe side first."""
        sides = [(B, self.other), (A, self.base)] if self.less_safe == B else [(A, self.base), (B, self.other)]
        return "; ".join(f"{side}: {value.evidence}" for side, value in sides if value is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.entry.id, "setting": self.entry.setting, "less_safe": self.less_safe,
            "base": self.base.to_json() if self.base else None, "other": self.other.to_json() if self.other else None,
            "risk": self.entry.risk, "safer": self.entry.safer, "audit_rule": self.entry.audit_rule,
        }


@dataclass(frozen=True)
class SafetyTradeoff:
    """Where B is less safe than A (or safer), entry by entry; empty when the sides do not differ."""

    differences: tuple[SafetyDifference, ...] = ()

    @property
    def less_safe(self) -> str | None:
        """"B" when B is less safe, "A" when A is (B is the safer), "both" when each is in some way, else None."""
        sides = {d.less_safe for d in self.differences}
        return None if not sides else sides.pop() if len(sides) == 1 else "both"

    def marking(self, verdict: str) -> str:
        """What the verdict means given the trade: `B is faster because it is less safe: <risk>`, "" if none."""
        side = self.less_safe
        if side is None:
            return ""
        if side == "both":
            worse = [d for d in self.differences if d.less_safe == B]
            better = [d for d in self.differences if d.less_safe == A]
            return f"B is less safe in one way and safer in another: B: {_risks(worse)}; A: {_risks(better)}"
        differences = list(self.differences)
        if side == B:
            phrase = {_KEEP: "B is faster because it is less safe", _REVERT: "B is slower and less safe",
                      _SAME: "B is no faster, and less safe"}.get(verdict, "B is less safe, with no proven gain")
            return f"{phrase}: {_risks(differences)}"
        phrase = {_REVERT: "B is slower because it is safer", _KEEP: "B is faster and safer",
                  _SAME: "B is as fast and safer"}.get(verdict, "B is safer, with no proven difference in speed")
        return f"{phrase} (A is less safe: {_risks(differences)})"

    def warning(self, verdict: str) -> Warning | None:
        """The coded warning scripts filter on (LESS_SAFE), or None when the sides do not differ."""
        if not self.differences:
            return None
        return Warning(
            WarningCode.LESS_SAFE, "", self.marking(verdict),
            "; ".join(dict.fromkeys(d.entry.safer for d in self.differences)),
        )

    def to_json(self, verdict: str) -> dict[str, Any]:
        return {"less_safe": self.less_safe, "marking": self.marking(verdict) or None,
                "differences": [d.to_json() for d in self.differences]}


def _risks(differences: list[SafetyDifference]) -> str:
    return "; ".join(f"{d.entry.risk} ({d.evidence()})" for d in differences)


def arm_settings(run: Run, *, with_facts: bool = True) -> dict[str, SettingValue]:
    """The settings one side holds, the last word on each: workloads, then facts, then its ab command."""
    facts = run.facts or {}
    found = settings_of_workloads((c.workload.sync for c in run.cells), (c.workload.direct for c in run.cells))
    if with_facts:
        found += settings_in_facts(facts)
    ab = facts.get("ab")
    if isinstance(ab, dict) and isinstance(ab.get("command"), str):
        found += settings_in_command(ab["command"])
    return {value.setting: value for value in found}


def safety_tradeoff(base: Run, other: Run, *, one_session: bool = False) -> SafetyTradeoff:
    """The entries on which A and B differ in safety, the most serious per setting (the table's order).

    The two arms of one `ab` session share facts probed before either arm's command ran: the state before
    the session, not of either arm (an arm that leaves a setting alone runs with what the other arm set).
    Their settings (`one_session`) come from their commands alone.
    """
    a, b = arm_settings(base, with_facts=not one_session), arm_settings(other, with_facts=not one_session)
    differences: list[SafetyDifference] = []
    decided: set[str] = set()
    for entry in UNSAFE_SETTINGS:
        if not entry.marks_verdicts or entry.setting in decided:
            continue
        side = _less_safe(entry, a.get(entry.setting), b.get(entry.setting))
        if side:
            decided.add(entry.setting)
            differences.append(SafetyDifference(entry, side, a.get(entry.setting), b.get(entry.setting)))
    return SafetyTradeoff(tuple(differences))


def _less_safe(entry: UnsafeSetting, base: SettingValue | None, other: SettingValue | None) -> str | None:
    def state(value: SettingValue | None) -> bool | None:  # True unsafe, False safe, None not said
        return None if value is None else entry.is_unsafe(value.value)

    unsafe_a, unsafe_b = state(base), state(other)
    silent_safe = entry.silent_is_safe
    if unsafe_b and (unsafe_a is False or (unsafe_a is None and silent_safe)):
        return B
    if unsafe_a and (unsafe_b is False or (unsafe_b is None and silent_safe)):
        return A
    return None
