"""ZFS dataset properties and the throwaway child dataset a session measures on.

A property has two views: its value and its source (`default`, `local`, `inherited from tank`, `received`). The
undo restores both (`Undo.ZFS_RESTORE_SOURCE`): `zfs inherit` where the original came by default or inheritance,
`zfs set` where it was set locally, `zfs inherit -S` where it was received. `zfs set compression=off` would give
the original value with the source `local`, so a later change of the parent would no longer reach the dataset:
the obvious undo (`Undo.SET_ORIGINAL`, kept for the test that shows the check catching it) is wrong.
Values are read parsable (`zfs get -Hp`: recordsize 131072, not 128K).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackbench.tune import actions
from stackbench.tune.actions import ActionFailed
from stackbench.tune.knob import Action, State, Subject, Undo, argv

CHILD_PREFIX = ".stackbench-tune-"
MARK = "stackbench:session"  # the user property that says which session made a child
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]*$")


def checked_name(name: str) -> str:
    """A dataset name as `zfs list` prints it; anything else never reaches an argv."""
    if not _NAME.match(name) or "//" in name or name.endswith("/"):
        raise ActionFailed(f"{name!r} is not a ZFS dataset name", "Check the target's dataset")
    return name


def parse_get(text: str) -> dict[str, str]:
    """`zfs get -Hp -o value,source P DS` -> {value, source}."""
    line = text.strip("\n").split("\n")[0]
    value, _, source = line.partition("\t")
    return {"value": value.strip(), "source": source.strip()}


@dataclass(frozen=True)
class ZfsProperty:
    prop: str
    views: tuple[str, ...] = ("value", "source")
    undo_strategies: frozenset[Undo] = frozenset({Undo.ZFS_RESTORE_SOURCE, Undo.SET_ORIGINAL})

    def read(self, subject: Subject) -> dict[str, str]:
        text = actions.output_of(["zfs", "get", "-Hp", "-o", "value,source", self.prop, checked_name(subject.name)])
        return parse_get(text)

    def parse_output(self, subject: Subject, text: str) -> dict[str, str]:
        return parse_get(text)

    def apply(self, subject: Subject, value: str, original: State) -> list[Action]:
        return [argv("zfs", "set", f"{self.prop}={value}", checked_name(subject.name))]

    def undo(self, strategy: Undo, subject: Subject, original: State) -> list[Action]:
        name = checked_name(subject.name)
        source = original["source"]
        if strategy is Undo.SET_ORIGINAL:
            return [argv("zfs", "set", f"{self.prop}={original['value']}", name)]
        if strategy is not Undo.ZFS_RESTORE_SOURCE:
            raise ValueError(f"ZFS properties are not undone by {strategy.value}")
        if source == "local":
            return [argv("zfs", "set", f"{self.prop}={original['value']}", name)]
        if source == "received":
            return [argv("zfs", "inherit", "-S", self.prop, name)]
        if source == "default" or source.startswith("inherited"):
            return [argv("zfs", "inherit", self.prop, name)]
        raise ActionFailed(f"the {self.prop} of {name} has the source {source!r}, which tune cannot restore",
                           "Leave this property out (--skip)")

    def expected(self, subject: Subject, value: str, original: State) -> dict[str, str]:
        return {"value": value, "source": "local"}

    def value_of(self, state: State) -> str:
        return state["value"]

    def offered(self, subject: Subject, state: State) -> tuple[str, ...] | None:
        return None


@dataclass(frozen=True)
class ChildDataset:
    """The session's throwaway child dataset, as two views: whether it exists (`yes`/`no`) and the session that
    made it (the user property `stackbench:session`, `-` where none is set). Its value is that session's id:
    `zfs create -o stackbench:session=ID` makes and marks it in one step, so no instant exists where it is
    there unmarked. The undo (`zfs destroy`, never recursive: a child someone put a snapshot or a dataset in
    is left, named) runs only where both views still read what tune set (tune_changes.undo_change's
    compare-and-swap): a dataset of that name without the mark, or with another session's, is someone else's
    and is never destroyed. Its name always ends in `/.stackbench-tune-...`, so it can name nothing else."""

    views: tuple[str, ...] = ("exists", "mark")
    undo_strategies: frozenset[Undo] = frozenset({Undo.CUSTOM})

    def read(self, subject: Subject) -> dict[str, str]:
        name = self._name(subject)
        listed = actions.output_of(["zfs", "list", "-H", "-o", f"name,{MARK}", "-t", "filesystem", "-d", "1",
                                    name.rsplit("/", 1)[0]])
        return self.parse_output(subject, listed)

    def parse_output(self, subject: Subject, text: str) -> dict[str, str]:
        for line in text.split("\n"):
            found, _, mark = line.partition("\t")
            if found == subject.name:
                return {"exists": "yes", "mark": mark.strip() or "-"}
        return {"exists": "no", "mark": "-"}

    def _name(self, subject: Subject) -> str:
        name = checked_name(subject.name)
        if "/" not in name or not name.rsplit("/", 1)[1].startswith(CHILD_PREFIX):
            raise ActionFailed(f"{name} is not a child dataset made by tune", "This is a bug: report it")
        return name

    def apply(self, subject: Subject, value: str, original: State) -> list[Action]:
        return [argv("zfs", "create", "-o", f"{MARK}={checked_mark(value)}", self._name(subject))]

    def undo(self, strategy: Undo, subject: Subject, original: State) -> list[Action]:
        return [argv("zfs", "destroy", self._name(subject))]

    def expected(self, subject: Subject, value: str, original: State) -> dict[str, str]:
        return {"exists": "yes", "mark": value}

    def value_of(self, state: State) -> str:
        return state["mark"]

    def offered(self, subject: Subject, state: State) -> tuple[str, ...] | None:
        return None


def checked_mark(value: str) -> str:
    """A session id (hex): the only value the mark is ever set to."""
    if not re.fullmatch(r"[0-9a-f]{8,64}", value):
        raise ActionFailed(f"{value!r} is not a tune session id", "This is a bug: report it")
    return value
