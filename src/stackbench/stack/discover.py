"""Discovering the stack under a path or a device: the file, its file system, and each layer under it down
to the disks, a loop device's backing file and a ZFS file vdev followed into their own stacks.

Read-only and without root for everything sysfs and the mount table say; the settings only the volume
managers' commands print (a dm-crypt cipher, an LVM segment type, a vdev's ashift before OpenZFS 2.2) need
root, and say so in the layer's notes when they are missing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from stackbench.base.errors import StackbenchError
from stackbench.probe.block import device_name_of
from stackbench.probe.system import collect_system_facts
from stackbench.stack.devices import VIRTUAL_TRANSPORTS, block_layer
from stackbench.stack.layer import Layer, Stack
from stackbench.stack.mounts import Mount, mount_of, mountinfo
from stackbench.stack.tools import Tools

if TYPE_CHECKING:
    from stackbench.audit.facts import Facts

# ZFS and the host's facts are read with the audit's parsers, imported only where the stack has them (the
# lab guests start a Python for each capture under emulation, where every import costs).
IN_A_VM = "a disk of this VM: what backs it is on the host (see `stack --host-facts`)"

MAX_DEPTH = 40  # layers on one path down: a loop device over a file on a loop device ... ends here
NO_DEVICE = {"tmpfs": "memory", "ramfs": "memory", "devtmpfs": "memory", "proc": "the kernel", "sysfs": "the kernel",
             "overlay": "the directories in its options", "nfs": "a network server", "nfs4": "a network server",
             "cifs": "a network server", "smb3": "a network server", "ceph": "a Ceph cluster",
             "fuse": "a user-space program", "9p": "the VM host", "virtiofs": "the VM host"}


class Discovery:
    """One discovery: the commands it ran (each once), the mount table read once, and how deep it is, so a
    chain that comes back to itself ends with a note instead of a RecursionError."""

    def __init__(self, tools: Tools | None = None) -> None:
        self.tools = tools or Tools()
        self.mounts: list[Mount] = mountinfo()
        self.depth = 0

    def _guard(self, name: str) -> Layer | None:
        if self.depth >= MAX_DEPTH:
            return Layer("unknown", name, notes=[f"more than {MAX_DEPTH} layers deep: not followed further"])
        return None

    def path(self, path: str) -> Layer:
        """A file or directory and the file system that holds it (a device node: the device's layer)."""
        stopped = self._guard(path)
        if stopped:
            return stopped
        try:
            st = os.stat(path)
        except OSError as error:
            return Layer("unknown", path, notes=[f"cannot stat it: {error.strerror or error}"])
        if stat.S_ISBLK(st.st_mode):
            name = device_name_of(st.st_rdev)
            return self.block(name) if name else Layer("unknown", path, notes=["a device sysfs does not know"])
        self.depth += 1
        try:
            kind = "directory" if stat.S_ISDIR(st.st_mode) else "file"
            settings = {"size_bytes": st.st_size} if kind == "file" else {}
            return Layer(kind, os.path.abspath(path), settings, children=[self.filesystem(path, st.st_dev)])
        finally:
            self.depth -= 1

    def filesystem(self, path: str, dev: int) -> Layer:
        mount = mount_of(path, dev, self.mounts)
        if mount is None:
            return Layer("unknown", path, notes=["no mount in /proc/self/mountinfo holds it"])
        if mount.fs_type == "zfs":
            from stackbench.stack.zfs import dataset_layer

            layer = dataset_layer(mount.source, None, self, self.tools)
            layer.settings["mount_options"] = mount.options
            return layer
        settings: dict[str, Any] = {"fs_type": mount.fs_type, "mount_point": mount.point, "source": mount.source,
                                    "mount_options": mount.options, "super_options": mount.super_options}
        if mount.root != "/":
            settings["mounted_root"] = mount.root
        try:
            settings["block_size"] = os.statvfs(mount.point).f_bsize
        except OSError:
            pass
        layer = Layer("filesystem", mount.point, settings)
        name = device_name_of(os.makedev(mount.major, mount.minor)) if mount.major else None
        if name is None and mount.source.startswith("/dev/"):  # btrfs: an anonymous device, a real source
            try:
                name = device_name_of(os.stat(mount.source).st_rdev)
            except OSError:
                name = None
        if name is not None:
            layer.children = [self.block(name)]
        else:
            base = mount.fs_type.split(".", 1)[0]
            layer.notes.append(f"no block device: {mount.fs_type} keeps its data in "
                               f"{NO_DEVICE.get(base, 'something that is not a local block device')}")
        return layer

    def block(self, name: str) -> Layer:
        stopped = self._guard(f"/dev/{name}")
        if stopped:
            return stopped
        self.depth += 1
        try:
            return block_layer(name, self, self.tools)
        finally:
            self.depth -= 1

    def zvol(self, dataset: str, device: str | None) -> Layer:
        from stackbench.stack.zfs import dataset_layer

        self.depth += 1
        try:
            return dataset_layer(dataset, device, self, self.tools)
        finally:
            self.depth -= 1


_ASK = "ask"  # discover() finds out whether this is a VM itself


def discover(target: Path | str, *, host_facts: Facts | None = None, vm: str | None = None,
             tools: Tools | None = None, virtualization: str | None = _ASK) -> Stack:
    """The stack under `target` (a path or a block device); StackbenchError when it does not exist. With
    `host_facts` (a VM's host, captured there), each virtual disk gets what it is on the host.
    `virtualization`: systemd-detect-virt's answer when the caller has it (a run's system facts)."""
    text = str(target)
    if not os.path.lexists(text):
        raise StackbenchError(f"{text} does not exist", "Name a file, directory or block device that exists")
    root = Discovery(tools).path(text)
    if virtualization == _ASK:
        virtualization = collect_system_facts().get("virtualization")
    if host_facts is not None:
        from stackbench.stack.vm import attach_host

        attach_host(root, host_facts, vm)
    elif virtualization not in (None, "none"):
        for _depth, layer in root.walk():
            if layer.kind == "disk" and layer.settings.get("transport") in VIRTUAL_TRANSPORTS:
                layer.notes.append(IN_A_VM)
    return Stack(text, root, virtualization)


def stack_facts(target: Path | str, *, virtualization: str | None = _ASK) -> dict[str, Any]:
    """`facts.stack` of a run: the stack under its target (the directory, for a new file), or why it could
    not be discovered; never raises, since a run must not fail for a fact."""
    path = Path(target)
    try:
        return discover(path if os.path.lexists(path) else path.parent, virtualization=virtualization).to_json()
    except Exception as error:  # noqa: BLE001 - a fact that cannot be had is recorded, the run goes on
        return {"version": None, "target": str(target), "error": f"{type(error).__name__}: {error}"}
