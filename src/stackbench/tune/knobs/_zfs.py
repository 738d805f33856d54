"""What the ZFS dataset knobs share: their access, settings key, examples and child-dataset note."""

from __future__ import annotations

from typing import Callable

from stackbench.tune.access.zfs import ZfsProperty
from stackbench.tune.knob import Example, State, Subject

DATASET = Subject("dataset", "tank/vm")


def settings_of(prop: str) -> Callable[[str], list[tuple[str, str]]]:
    return lambda value: [(f"zfs:{prop}", value)]


def examples(prop: str, inherited: State, local: State, value: str) -> tuple[Example, ...]:
    """Two examples per property: an original that came by default or inheritance (undone with `zfs inherit`) and
    one set locally (undone with `zfs set` of the original value)."""
    return (
        Example(DATASET, inherited, value, apply=(f"zfs set {prop}={value} tank/vm",),
                undo=(f"zfs inherit {prop} tank/vm",),
                parse=((f"{inherited['value']}\t{inherited['source']}\n", inherited),)),
        Example(DATASET, local, value, apply=(f"zfs set {prop}={value} tank/vm",),
                undo=(f"zfs set {prop}={local['value']} tank/vm",)),
    )


def access(prop: str) -> ZfsProperty:
    return ZfsProperty(prop)
