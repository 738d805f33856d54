"""What a knob is: a declared record, one module per knob under `knobs/` (as the audit's rules), read by the plan,
the reversibility check, the session and the rollback alike.

Why declared and not derived: the obvious undo of a setting is often wrong (docs/tune.md, "Undos that do not undo", measured on this
kernel): `mount -o remount,relatime` exits 0 and leaves `noatime`; `sysctl vm.dirty_bytes=0` is refused while
`vm.dirty_ratio=20` restores the original; a block queue's `nr_requests` changes when its scheduler does. So a knob
names every view its setting has (`Access.views`), and its undo is a strategy chosen by whoever wrote the knob
(`Undo`), never guessed from the apply. Every change is verified by reading all the views back.

A knob acts on subjects (`Subject`: a disk, a mount, a dataset, the host's sysctls) that `subjects.py` resolves
from the target; its value is text, as the kernel or the tool prints it (`128`, `lz4`, `bytes=268435456/67108864`),
compared after the access's normalisation.
"""

from __future__ import annotations

import enum
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

State = Mapping[str, str]  # view -> value as read (normalised): every coupled view of a setting


class Safety(str, enum.Enum):
    """What a change can cost besides speed (docs/tune.md, "Safety"): only `safe` knobs run without `--allow`."""

    SAFE = "safe"
    SEMANTIC = "semantic"  # changes what programs can observe (atime)
    TRADEOFF = "tradeoff"  # durability window or memory (commit=, vm.dirty_*, lazytime)
    RESTART = "restart"  # a VM's disk options: stop and start a named test VM
    FORBIDDEN = "forbidden"  # never a candidate, whatever the flags (listed with the reason)


class Cost(str, enum.Enum):
    INSTANT = "instant"
    NEW_WRITES = "new-writes"  # only data written afterwards: the scratch file is laid out again after each change
    REMOUNT = "remount"
    VM_RESTART = "vm-restart"


class Persistence(str, enum.Enum):
    VOLATILE = "volatile"  # gone at reboot (sysfs, sysctl, mount options): `--persist` prints how to keep it
    PERSISTENT = "persistent"  # stored with the data (ZFS properties), or in a VM's configuration


class Scope(str, enum.Enum):
    BLOCK_DEVICE = "block-device"
    MOUNT = "mount"
    DATASET = "dataset"
    POOL_MODULE = "pool-module"
    HOST_SYSCTL = "host-sysctl"
    VM_DISK = "vm-disk"
    USER = "user"


class Undo(str, enum.Enum):
    """How a change is undone, declared per knob (never derived from the apply)."""

    SET_ORIGINAL = "set-original"  # write every view's original value back, in the declared order
    ZFS_RESTORE_SOURCE = "zfs-restore-source"  # `zfs inherit` where the original came from default/inheritance
    WRITE_PRIMARY_VIEW = "write-primary-view"  # write only the view that held the setting (ratio, not bytes=0)
    REMOUNT_WITH = "remount-with"  # remount with the option set that really reaches the original state
    CUSTOM = "custom"  # the knob's own undo (a user knob's undo argv)


@dataclass(frozen=True)
class Subject:
    """What a knob acts on: `kind` and `name` (`block-device` `loop3`, `mount` `/mnt/x`, `dataset` `tank/vm`,
    `host` `sysctl`), with the details its access needs (a mount's file system type)."""

    kind: str
    name: str
    detail: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "detail": dict(self.detail)}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> "Subject":
        detail = {str(k): str(v) for k, v in (data.get("detail") or {}).items()}
        return Subject(str(data["kind"]), str(data["name"]), detail)


@dataclass(frozen=True)
class Action:
    """One step of a change: an argv run without a shell, or a value written to a kernel file (sysfs, /proc/sys)."""

    argv: tuple[str, ...] = ()
    path: str | None = None
    value: str | None = None

    def __post_init__(self) -> None:
        if bool(self.argv) == (self.path is not None):
            raise ValueError("an action is an argv or a kernel file write, exactly one of them")
        if self.path is not None and self.value is None:
            raise ValueError("a kernel file write needs a value")

    def shown(self) -> str:
        """The action as a person would type it: `zfs inherit compression tank/vm`, `echo 128 > /sys/...`."""
        if self.argv:
            return shlex.join(self.argv)
        return f"echo {shlex.quote(str(self.value))} > {shlex.quote(str(self.path))}"

    def to_json(self) -> dict[str, Any]:
        return {"argv": list(self.argv)} if self.argv else {"path": self.path, "value": self.value}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> "Action":
        if data.get("argv"):
            return Action(argv=tuple(str(a) for a in data["argv"]))
        return Action(path=str(data["path"]), value=str(data["value"]))


def write(path: str, value: str) -> Action:
    return Action(path=path, value=value)


def argv(*words: str) -> Action:
    return Action(argv=tuple(words))


class Access(Protocol):
    """How one kind of setting is read and changed. `read` returns every view; `apply` the actions that set a
    value; `undo` those that bring the original back by a declared strategy; `expected` the views that must read
    so after `apply` (a subset: writing a scheduler also changes nr_requests, to a value the kernel chooses)."""

    views: tuple[str, ...]
    undo_strategies: frozenset[Undo]

    def read(self, subject: Subject) -> dict[str, str]: ...
    def apply(self, subject: Subject, value: str, original: State) -> list[Action]: ...
    def undo(self, strategy: Undo, subject: Subject, original: State) -> list[Action]: ...
    def expected(self, subject: Subject, value: str, original: State) -> dict[str, str]: ...
    def value_of(self, state: State) -> str: ...
    def offered(self, subject: Subject, state: State) -> tuple[str, ...] | None: ...
    def parse_output(self, subject: Subject, text: str) -> dict[str, str]: ...


@dataclass(frozen=True)
class Values:
    """A knob's candidate values: `choices` in order (an ordinal grid is raced in that order); `special` values
    have a meaning besides their number (`0`: read-ahead off). `derive` computes candidates from the subject's
    original state (a share of RAM); then `choices` only describes them."""

    choices: tuple[str, ...]
    ordinal: bool = False
    unit: str = ""
    special: Mapping[str, str] = field(default_factory=dict)
    derive: Callable[[Subject, State], tuple[str, ...]] | None = None
    label: Callable[[str], str] | None = None  # how a value is shown (131072 -> 128K)

    def candidates(self, subject: Subject, original: State) -> tuple[str, ...]:
        """The values tried on a subject in state `original`: the derived ones where the knob derives them."""
        return self.derive(subject, original) if self.derive else self.choices

    def shown(self, value: str) -> str:
        try:
            return self.label(value) if self.label else value
        except (ValueError, KeyError):
            return value

    def describe(self) -> str:
        shown = ", ".join(self.shown(c) for c in self.choices) + (f" {self.unit}" if self.unit else "")
        if self.special:
            shown += " (" + "; ".join(f"{k}: {v}" for k, v in self.special.items()) + ")"
        return shown


@dataclass(frozen=True)
class Example:
    """A knob's behaviour on a given state, checked by tests/tune/test_knob_examples.py: the commands shown for
    applying `value` to a subject in state `original`, and for undoing it; `parse` pairs a tool's raw output
    with the state read from it (`Access.parse_output`)."""

    subject: Subject
    original: Mapping[str, str]
    value: str
    apply: tuple[str, ...]
    undo: tuple[str, ...]
    parse: tuple[tuple[str, Mapping[str, str]], ...] = ()


@dataclass(frozen=True)
class Knob:
    """One declared knob (docs/tune.md, "Knobs"). `settings` maps a value to the settings of
    model/unsafe_settings.py it sets, so the forbidden list is checked on every candidate; `persist` says how a
    volatile value is made to survive a reboot; `subjects` resolves what it acts on for a target (subjects.py)."""

    id: str
    title: str
    scope: Scope
    access: Access
    undo: Undo
    values: Values
    safety: Safety
    cost: Cost
    persistence: Persistence
    affects: tuple[str, ...]  # read, write, sync-write, metadata: the cells it can move
    subjects: Callable[[Any], "list[Subject] | str"]  # subjects.py: what it acts on, or why it does not apply
    source: str
    doc: str
    audit_rules: tuple[str, ...] = ()
    settings: Callable[[str], list[tuple[str, str]]] | None = None
    persist: Callable[[Subject, str], str] | None = None
    examples: tuple[Example, ...] = ()
    note: str = ""  # said in the report when the knob is tried (recordsize: "only new writes")

    def setting_values(self, value: str) -> list[tuple[str, str]]:
        return self.settings(value) if self.settings else []

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "scope": self.scope.value, "undo": self.undo.value,
            "views": list(self.access.views), "values": list(self.values.choices), "ordinal": self.values.ordinal,
            "unit": self.values.unit, "special": dict(self.values.special), "safety": self.safety.value,
            "cost": self.cost.value, "persistence": self.persistence.value, "affects": list(self.affects),
            "audit_rules": list(self.audit_rules), "source": self.source, "note": self.note,
        }


def differing_views(before: State, after: State, views: Sequence[str]) -> list[str]:
    """The views (of `views`) whose value differs between two states: what a verify names when it fails."""
    return [view for view in views if before.get(view) != after.get(view)]
