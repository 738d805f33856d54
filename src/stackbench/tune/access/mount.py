"""Mount options of an ext4 or xfs file system, changed with `mount -o remount` and read from /proc/self/mountinfo.

Two places hold them: the per-mount options (`noatime`, `relatime`, `nodiratime`) and the superblock's
(`lazytime`, `commit=N`); a knob reads the views it changes from the right one. The option words that reach a
state are declared (`reach`), because the obvious ones do not always: measured on this kernel (6.18,
util-linux 2.38.1, ext4), `mount -o remount,relatime MOUNTPOINT` after `noatime` exits 0 and leaves `noatime`
(mount(8) merges the options in effect, and `noatime` wins); `remount,atime,relatime` reaches `relatime`, and
so does a remount that names the device too. The remount names both, and the words that reach the value, so
neither merge can keep an option. `remount,commit=5` reaches the default, which mountinfo then omits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from stackbench.tune.actions import ActionFailed
from stackbench.tune.knob import Action, State, Subject, Undo, argv

MOUNTINFO = "/proc/self/mountinfo"


def _unescape(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def mount_entry(point: str, text: str | None = None) -> tuple[str, list[str], list[str]]:
    """(source, per-mount options, superblock options) of the file system mounted last at `point`."""
    if text is None:
        try:
            text = Path(MOUNTINFO).read_text()
        except OSError as error:
            raise ActionFailed(f"cannot read {MOUNTINFO}: {error.strerror}", "Check /proc") from None
    found = None
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 6 and len(tail) >= 3 and _unescape(fields[4]) == point:
            found = (_unescape(tail[1]), fields[5].split(","), tail[2].split(","))
    if found is None:
        raise ActionFailed(f"nothing is mounted at {point}", "Mount the file system again, or check the target")
    return found


def atime_views(per_mount: list[str], superblock: list[str]) -> dict[str, str]:
    atime = "noatime" if "noatime" in per_mount else "relatime" if "relatime" in per_mount else "strictatime"
    return {"atime": atime, "diratime": "nodiratime" if "nodiratime" in per_mount else "diratime"}


def lazytime_views(per_mount: list[str], superblock: list[str]) -> dict[str, str]:
    return {"lazytime": "on" if "lazytime" in superblock else "off"}


def commit_views(per_mount: list[str], superblock: list[str]) -> dict[str, str]:
    value = next((option.split("=", 1)[1] for option in superblock if option.startswith("commit=")), "default")
    return {"commit": value}


@dataclass(frozen=True)
class MountOption:
    """One mount option family: `views_of` reads its views from the two option lists, `reach` gives the option
    words that reach a value (`relatime` -> `atime,relatime`), and `view` is the view that shows the value."""

    views: tuple[str, ...]
    view: str
    views_of: Callable[[list[str], list[str]], dict[str, str]]
    reach: Callable[[str], str]
    undo_strategies: frozenset[Undo] = frozenset({Undo.REMOUNT_WITH, Undo.SET_ORIGINAL})

    def read(self, subject: Subject) -> dict[str, str]:
        _, per_mount, superblock = mount_entry(subject.name)
        return self.views_of(per_mount, superblock)

    def parse_output(self, subject: Subject, text: str) -> dict[str, str]:
        """The views of `subject`'s mount in a mountinfo text."""
        _, per_mount, superblock = mount_entry(subject.name, text)
        return self.views_of(per_mount, superblock)

    def _remount(self, subject: Subject, options: str) -> Action:
        source = subject.detail.get("source") or mount_entry(subject.name)[0]
        return argv("mount", "-o", f"remount,{options}", source, subject.name)

    def apply(self, subject: Subject, value: str, original: State) -> list[Action]:
        return [self._remount(subject, self.reach(value))]

    def undo(self, strategy: Undo, subject: Subject, original: State) -> list[Action]:
        value = original[self.view]
        if strategy is Undo.REMOUNT_WITH:
            return [self._remount(subject, self.reach(value))]
        if strategy is Undo.SET_ORIGINAL:  # the obvious undo: the original's own word (wrong for atime)
            return [self._remount(subject, "commit=5" if value == "default" else value)]
        raise ValueError(f"mount options are not undone by {strategy.value}")

    def expected(self, subject: Subject, value: str, original: State) -> dict[str, str]:
        return {self.view: value}

    def value_of(self, state: State) -> str:
        return state[self.view]

    def offered(self, subject: Subject, state: State) -> tuple[str, ...] | None:
        return None


ATIME_REACH = {"noatime": "noatime", "relatime": "atime,relatime", "strictatime": "atime,strictatime"}


def reach_atime(value: str) -> str:
    return ATIME_REACH[value]


def reach_lazytime(value: str) -> str:
    return "lazytime" if value == "on" else "nolazytime"


def reach_commit(value: str) -> str:
    return "commit=5" if value == "default" else f"commit={int(value)}"


ATIME = MountOption(("atime", "diratime"), "atime", atime_views, reach_atime)
LAZYTIME = MountOption(("lazytime",), "lazytime", lazytime_views, reach_lazytime)
COMMIT = MountOption(("commit",), "commit", commit_views, reach_commit)
