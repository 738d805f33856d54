"""What the ZFS module-parameter knobs share: a file under /sys/module/zfs/parameters, set and restored as it
was read, persisted in /etc/modprobe.d. Host-wide: tested only in the lab guest."""

from __future__ import annotations

import os
from typing import Callable

from stackbench.tune.access.kernel import KernelFiles, KernelView
from stackbench.tune.knob import Example, State, Subject

MODULE = Subject("zfs-module", "zfs")
PARAMETERS = "/sys/module/zfs/parameters/"


def access(name: str) -> KernelFiles:
    return KernelFiles((KernelView(name, PARAMETERS + name),))


def persist(name: str) -> Callable[[Subject, str], str]:
    return lambda subject, value: f"/etc/modprobe.d/zfs.conf: options zfs {name}={value}"


def settings_of(name: str) -> Callable[[str], list[tuple[str, str]]]:
    return lambda value: [(f"zfs-param:{name}", value)]


def example(name: str, original: str, value: str) -> tuple[Example, ...]:
    return (Example(MODULE, {name: original}, value, apply=(f"echo {value} > {PARAMETERS}{name}",),
                    undo=(f"echo {original} > {PARAMETERS}{name}",)),)


def ram_bytes() -> int:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def scaled(name: str, factors: tuple[float, ...]) -> Callable[[Subject, State], tuple[str, ...]]:
    """Candidates as multiples of the original value (an original of 0, the module's default, gives none)."""
    def derive(subject: Subject, original: State) -> tuple[str, ...]:
        base = int(original[name])
        return tuple(str(int(base * factor)) for factor in factors) if base > 0 else ()

    return derive


def shares_of_ram(shares: tuple[float, ...]) -> Callable[[Subject, State], tuple[str, ...]]:
    def derive(subject: Subject, original: State) -> tuple[str, ...]:
        return tuple(str(int(ram_bytes() * share)) for share in shares)

    return derive
