"""The throwaway child dataset a session measures ZFS dataset knobs on, so that the user's dataset is changed
only once a kept set has been proven (docs/tune.md, "Where a knob is measured").

Why a child: ZFS properties are persistent (a crash leaves them applied across reboots) and reach everything
on the dataset, the user's files and other programs included; a fresh child of the target's dataset D sits
on the same pool and vdevs and inherits D's properties, so a knob tried there measures what it would do on
D while D itself holds its values for every round. Only the final "keep what was confirmed" touches D.

The child `D/.stackbench-tune-<first 12 of the session id>`:
- its creation is a change like any other (the internal knob `tune.child-dataset`, tune/access/zfs.py
  `ChildDataset`): its intent, with the undo `zfs destroy`, is durable in the journal before
  `zfs create -o stackbench:session=ID` runs, so a kill -9 at any instant leaves a journal that names it;
- the undo is compare-and-swap as every other: it runs only where the child exists and still carries this
  session's mark; a dataset of that name someone else made is never destroyed;
- the scratch file and fio are in its mountpoint, and the dataset knobs are applied to it (re-planned from
  the child's own state: a property D sets locally reaches the child as inherited, and is undone there by
  `zfs inherit`);
- after the confirmation, the child's changes are undone and the child destroyed (first: the child
  inherits from D, so its undos are verified against a D not yet changed), then each kept dataset value is
  applied to D (journaled, with its undo), only where D still reads as the plan read it. An error, Ctrl-C,
  or a kill -9 followed by the next command's rollback undo what is open newest first: D's changes, the
  child's knobs, then the child itself.

Where a child is not possible (`--no-child`, a target that is a file rather than a directory, a dataset
not mounted at a directory), the knobs are measured on D itself, as the plan says.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from stackbench.measure.tune_changes import ALREADY, UNDONE, Changes, Outcome
from stackbench.measure.tune_journal import Change
from stackbench.measure.tune_plan import PlannedKnob, plan_knob
from stackbench.tune import actions
from stackbench.tune.access.zfs import CHILD_PREFIX, checked_name
from stackbench.tune.actions import ActionFailed
from stackbench.tune.knob import Safety, Subject, differing_views
from stackbench.tune.knobs import CHILD_DATASET
from stackbench.tune.subjects import TargetInfo

SHORT_ID = 12  # characters of the session id in the child's name, as `tune --status` shows a session


def child_name(parent: str, session: str) -> str:
    return f"{checked_name(parent)}/{CHILD_PREFIX}{session[:SHORT_ID]}"


def on_dataset(plan: PlannedKnob, dataset: str | None) -> bool:
    """Whether a planned knob acts on the dataset `dataset` (a ZFS property of the target's dataset)."""
    return dataset is not None and any(s.kind == "dataset" and s.name == dataset for s in plan.subjects)


def _mount_state(dataset: str) -> tuple[str, str]:
    text = actions.output_of(["zfs", "get", "-Hp", "-o", "value", "mountpoint,mounted", checked_name(dataset)])
    values = [line.strip() for line in text.splitlines()] + ["", ""]
    return values[0], values[1]


@dataclass(frozen=True)
class ChildChoice:
    """Where a session's dataset knobs are measured: on a child of `parent` (`use`), or on `parent` itself,
    and why (`why_not`). `parent` is None when the session has no dataset knob."""

    parent: str | None = None
    use: bool = False
    why_not: str = ""

    def describe(self, session: str | None = None) -> str:
        """The plan's line: where the experiments run and when the user's dataset is changed."""
        if self.parent is None:
            return ""
        if not self.use:
            return f"the dataset knobs are measured on {self.parent} itself: {self.why_not}"
        name = child_name(self.parent, session) if session else f"{self.parent}/{CHILD_PREFIX}<session>"
        return (f"experiments run on the child dataset {name} (created, removed at the end); {self.parent} "
                "itself is changed only after the kept set is confirmed")


def choose_child(info: TargetInfo, planned: list[PlannedKnob], target: Path, no_child: bool) -> ChildChoice:
    """Whether the session's dataset knobs can be measured on a child of the target's dataset (read only)."""
    if not any(on_dataset(plan, info.dataset) for plan in planned):
        return ChildChoice()
    parent = str(info.dataset)
    if no_child:
        return ChildChoice(parent, False, "--no-child asks so")
    if not target.is_dir():
        return ChildChoice(parent, False, "the target is a file, and a child's scratch file would not be it")
    mountpoint, mounted = _mount_state(parent)
    if not mountpoint.startswith("/") or mounted != "yes":
        return ChildChoice(parent, False, f"it is not mounted at a directory (mountpoint {mountpoint or '?'}, "
                                          f"mounted {mounted or '?'}), so its child would not be either")
    return ChildChoice(parent, True)


def on_child(plan: PlannedKnob, info: TargetInfo, child: str, allow: frozenset[Safety]) -> PlannedKnob:
    """The plan of a dataset knob made again for the child: its state, candidates and commands read there."""
    value = tuple(p.value for p in plan.race) if plan.race else plan.value
    return plan_knob(plan.knob, value, dataclasses.replace(info, dataset=child), allow)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


@dataclass
class SessionChild:
    """The live child of one session: made, measured on, its kept values carried to the parent, destroyed."""

    changes: Changes
    parent: str
    session: str
    made: Change | None = None
    mountpoint: str = ""
    record: dict[str, Any] = field(default_factory=dict)  # what the report says about it (`to_json`)

    @property
    def name(self) -> str:
        return child_name(self.parent, self.session)

    def create(self) -> str:
        """Make the child (journaled first) and return the directory it is mounted at."""
        self.record = {"dataset": self.name, "parent": self.parent, "created_at": None, "destroyed_at": None,
                       "applied_to_parent_at": None, "applied_to_parent": [], "left_alone": [], "removal": []}
        try:
            self.made = self.changes.apply(CHILD_DATASET, Subject("dataset", self.name), self.session)
        except ActionFailed as error:  # no space, a read-only parent, no permission: its undo follows
            raise ActionFailed(f"cannot make the session's child dataset: {error.what}",
                               "Free space or fix the dataset, or run tune with --no-child to measure on the "
                               "dataset itself") from None
        self.record["created_at"] = _now()
        mountpoint, mounted = _mount_state(self.name)
        if not mountpoint.startswith("/") or mounted != "yes":
            raise ActionFailed(f"the child dataset {self.name} is not mounted (mountpoint {mountpoint}, mounted "
                               f"{mounted})", "Run tune with --no-child to measure on the dataset itself")
        self.mountpoint = mountpoint
        return mountpoint

    def finish(self, kept: list[Change], on_parent: dict[str, PlannedKnob]) -> list[Change]:
        """The end of a session that measured on the child: the child removed (`remove`: its undos verified
        against a parent not yet changed, since the child inherits from it), then each of the child's kept
        changes carried to the parent: its value applied there (journaled, verified), where the parent still
        reads as the plan read it; a parent changed since is left alone, and said. Returns the kept changes,
        the child's replaced by the parent's."""
        self.remove()
        carried: list[Change] = []
        for change in kept:
            plan = on_parent.get(change.knob)
            if change.subject.name != self.name or plan is None:
                carried.append(change)
                continue
            subject = Subject("dataset", self.parent)
            now = plan.knob.access.read(subject)
            planned = plan.now[list(plan.subjects).index(subject)]
            changed = differing_views(planned, now, list(planned))
            if changed:
                self.record["left_alone"].append(
                    f"{change.knob} on {self.parent}: it reads {', '.join(f'{v}={now.get(v)}' for v in changed)}, "
                    f"not {', '.join(f'{v}={planned.get(v)}' for v in changed)} as when the session planned it")
                continue
            carried.append(self.changes.apply(plan.knob, subject, change.value))
            self.record["applied_to_parent"].append(f"{change.knob}={change.value}")
            self.record["applied_to_parent_at"] = _now()
        return carried

    def remove(self) -> list[Outcome]:
        """Undo what the session set on the child, newest first, then destroy it (compare-and-swap: only the
        child this session marked)."""
        if self.made is None or self.made.seq not in self.changes.open:
            return []
        mine = [c for seq, c in sorted(self.changes.open.items(), reverse=True)
                if c.subject.name == self.name and seq != self.made.seq]
        outcomes = [self.changes.undo(change) for change in mine]
        outcomes.append(self.changes.undo(self.made))
        if outcomes[-1].result in (UNDONE, ALREADY):
            self.record["destroyed_at"] = _now()
        self.record["removal"] = [outcome.describe() for outcome in outcomes]
        return outcomes

    def to_json(self) -> dict[str, Any]:
        """What the report says of the child; one an error or interruption destroyed (the session's undo of
        everything) is said destroyed too."""
        if self.made is not None and self.made.seq not in self.changes.open and not self.record["destroyed_at"]:
            try:
                gone = CHILD_DATASET.access.read(Subject("dataset", self.name))["exists"] == "no"
            except ActionFailed:
                gone = False
            self.record["destroyed_at"] = _now() if gone else None
        return dict(self.record)
