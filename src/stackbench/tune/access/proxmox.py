"""A Proxmox VM disk's cache, aio and iothread options: one compound setting (aio=native needs cache=none or
directsync: KVM-AIO-NATIVE), changed with `qm set` and made effective by stopping and starting the VM.

Only a test VM named with `--vm` is touched (restart class: `--allow restart` and `--yes`). The views are the
three options as `qm config` shows them (`default` where the line leaves one out) and the rest of the disk's
line, which every `qm set` writes back unchanged. This access is tested by command generation only (no Proxmox
host here: docs/tune.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackbench.tune import actions
from stackbench.tune.actions import ActionFailed
from stackbench.tune.knob import Action, State, Subject, Undo, argv

OPTIONS = ("cache", "aio", "iothread")
_VMID = re.compile(r"^[0-9]{2,9}$")
_DISK = re.compile(r"^(scsi|virtio|sata|ide)[0-9]{1,2}$")


def split_subject(subject: Subject) -> tuple[str, str]:
    vmid, _, disk = subject.name.partition(":")
    if not _VMID.match(vmid) or not _DISK.match(disk):
        raise ActionFailed(f"{subject.name!r} is not a Proxmox VM disk (VMID:scsi0)", "Give --vm 100:scsi0")
    return vmid, disk


def parse_disk(config: str, disk: str) -> dict[str, str]:
    """The disk's line of `qm config` as views: cache, aio, iothread (or `default`) and `rest`, the volume with
    every other option in its order."""
    for line in config.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == disk:
            parts = [part.strip() for part in value.strip().split(",") if part.strip()]
            views = {option: "default" for option in OPTIONS}
            rest = []
            for part in parts:
                name, sep, setting = part.partition("=")
                if sep and name in OPTIONS:
                    views[name] = setting
                else:
                    rest.append(part)
            views["rest"] = ",".join(rest)
            return views
    raise ActionFailed(f"the VM has no disk {disk}", "Name one of its disks: --vm VMID:scsi0")


def disk_value(views: State) -> str:
    return ",".join(f"{option}={views[option]}" for option in OPTIONS)


def parse_value(value: str) -> dict[str, str]:
    views = {option: "default" for option in OPTIONS}
    for part in value.split(","):
        name, _, setting = part.partition("=")
        if name in OPTIONS:
            views[name] = setting
    return views


@dataclass(frozen=True)
class ProxmoxDisk:
    views: tuple[str, ...] = (*OPTIONS, "rest")
    undo_strategies: frozenset[Undo] = frozenset({Undo.SET_ORIGINAL})

    def read(self, subject: Subject) -> dict[str, str]:
        vmid, disk = split_subject(subject)
        return parse_disk(actions.output_of(["qm", "config", vmid]), disk)

    def parse_output(self, subject: Subject, text: str) -> dict[str, str]:
        return parse_disk(text, split_subject(subject)[1])

    def _set(self, subject: Subject, views: State) -> list[Action]:
        vmid, disk = split_subject(subject)
        spec = ",".join([views["rest"], *(f"{o}={views[o]}" for o in OPTIONS if views[o] != "default")])
        return [argv("qm", "set", vmid, f"--{disk}", spec), argv("qm", "stop", vmid), argv("qm", "start", vmid)]

    def apply(self, subject: Subject, value: str, original: State) -> list[Action]:
        return self._set(subject, {**original, **parse_value(value)})

    def undo(self, strategy: Undo, subject: Subject, original: State) -> list[Action]:
        if strategy is not Undo.SET_ORIGINAL:
            raise ValueError(f"a VM disk is not undone by {strategy.value}")
        return self._set(subject, original)

    def expected(self, subject: Subject, value: str, original: State) -> dict[str, str]:
        return {**parse_value(value), "rest": original["rest"]}

    def value_of(self, state: State) -> str:
        return disk_value(state)

    def offered(self, subject: Subject, state: State) -> tuple[str, ...] | None:
        return None
