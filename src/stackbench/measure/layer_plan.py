"""`layers --auto TARGET`: one run per layer of the discovered stack, each of them safe, the same plan at
every layer where it may write and its read cells where it may only read.

What is safe where (docs/stack.md, "What layers --auto measures"):
- a file system (the target's, or the one holding a loop device's backing file or a ZFS file vdev): the
  plan on a scratch file in that directory, created and removed as `run` does;
- a ZFS dataset: the plan on a scratch file in it; a zvol: the plan on a scratch zvol with the zvol's
  settings in the same pool (filled before its reads: a new zvol's holes read as zeros without I/O); a
  pool: the plan on a scratch dataset at the pool's root (its default settings);
- a thick LVM volume: the plan on a scratch LV from the volume group's free extents, when there are
  enough; otherwise, and for every other block device that holds data (disks, partitions, md, dm-crypt,
  loop devices, thin LVs): the plan's read cells only, O_DIRECT, with fio opening the device read-only and
  told to refuse writes (--readonly);
- anything else (a layer on the VM's host, what discovery could not read) is refused, saying why.
Scratch volumes are created just before their run and removed right after it, also after Ctrl-C; the
journal (scratch_volumes.py) removes them after a kill -9.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stackbench.base.errors import StackbenchError, UsageError
from stackbench.base.units import format_bytes
from stackbench.measure.safety import room_for
from stackbench.model.plan import Plan, Workload
from stackbench.stack.layer import Layer, Stack
from stackbench.stack.mapper import vg_free
from stackbench.stack.tools import Tools
from stackbench.stack.zfs import dataset_properties

READS = ("read", "randread")
BLOCK_KINDS = ("disk", "partition", "loop", "md", "dm", "dm-crypt", "lvm")
ZVOL_COPIED = ("volblocksize", "compression", "sync", "logbias", "primarycache", "secondarycache", "copies")
ZFS_MARGIN = 64 * 1024**2  # what a scratch zvol or dataset leaves free in the pool beyond its size


@dataclass(frozen=True)
class LayerStep:
    """One layer's run: how it is measured, where, which cells, and why that is safe (or why not)."""

    name: str  # `ext4 /srv`, `loop /dev/loop2`, `pool tank`: the layer's name in the layers table
    kind: str  # the layer's kind (stack/layer.KINDS)
    how: str  # scratch-file, read-device, scratch-dataset, scratch-zvol, scratch-lv, refused
    where: str | None  # the directory or device measured; for a scratch volume, where it is made
    cells: tuple[Workload, ...]
    why: str
    create: dict[str, Any] = field(default_factory=dict)  # a scratch volume's kind, pool or VG, size, settings

    @property
    def refused(self) -> bool:
        return self.how == "refused"

    def to_json(self) -> dict[str, Any]:
        return {"layer": self.name, "kind": self.kind, "how": self.how, "where": self.where,
                "cells": [w.key for w in self.cells], "why": self.why, "creates": self.create or None}


@dataclass(frozen=True)
class LayerPlan:
    stack: Stack
    plan: Plan
    steps: tuple[LayerStep, ...]  # top down, as the stack is

    def measured(self) -> list[LayerStep]:
        """The steps that run, bottom layer first (the order `layers` reads them in)."""
        return [step for step in reversed(self.steps) if not step.refused]

    def to_json(self) -> dict[str, Any]:
        return {"target": self.stack.target, "plan": self.plan.name, "stack": self.stack.to_json(),
                "steps": [step.to_json() for step in self.steps]}


def _reads(plan: Plan) -> tuple[Workload, ...]:
    return tuple(replace(w, direct=True) for w in plan.workloads if w.rw in READS)


@dataclass
class _Walk:
    """What walking down the stack carries: the directory a file system layer is measured in, the step
    names taken, and the tools (lvs, zfs) asked."""

    plan: Plan
    tools: Tools
    directory: str | None = None
    names: set[str] = field(default_factory=set)
    last_dataset: str | None = None

    def name(self, layer: Layer) -> str:
        base, number, name = layer.label(), 2, layer.label()
        while name in self.names:
            name, number = f"{base} #{number}", number + 1
        self.names.add(name)
        return name


def propose(stack: Stack, plan: Plan, tools: Tools | None = None) -> LayerPlan:
    """The runs `layers --auto` would make on this stack with this plan; refuses plans it cannot split."""
    if plan.size_from_target or plan.one_process:
        raise UsageError(f"layers --auto measures every layer with one plan, and {plan.name} is sized by its "
                         "target or measured in one fio process", "Use --preset quick or give --bs/--qd/--rw")
    walk = _Walk(plan, tools or Tools())
    steps = []
    for layer in stack.data_path():
        step = _step(layer, walk)
        if step is not None:
            steps.append(step)
    return LayerPlan(stack, plan, tuple(steps))


def _step(layer: Layer, walk: _Walk) -> LayerStep | None:
    if layer.kind in ("directory", "file"):
        walk.directory = layer.name if layer.kind == "directory" else os.path.dirname(layer.name)
        return None
    if layer.kind == "filesystem":
        return _scratch_file(layer, walk, read_only="ro" in str(layer.settings.get("mount_options", "")).split(","))
    if layer.kind == "zfs-dataset":
        walk.last_dataset = layer.name
        return _scratch_file(layer, walk, read_only=False)
    if layer.kind == "zvol":
        return _scratch_zvol(layer, walk)
    if layer.kind == "zfs-pool":
        return _scratch_dataset(layer, walk)
    if layer.kind == "zfs-vdev":
        return None  # a vdev is no device of its own: its leaves are measured
    if layer.kind == "lvm" and layer.settings.get("provisioning") == "thick":
        return _scratch_lv(layer, walk) or _read_device(layer, walk)
    if layer.kind in BLOCK_KINDS:
        return _read_device(layer, walk)
    why = ("it is on the VM's host: run `stackbench layers --auto` there, on the path or device it names"
           if layer.kind == "host-backing" else f"a {layer.kind} layer, which layers --auto does not measure")
    return LayerStep(walk.name(layer), layer.kind, "refused", None, (), why)


def _scratch_file(layer: Layer, walk: _Walk, *, read_only: bool) -> LayerStep:
    directory, name = walk.directory, walk.name(layer)
    walk.directory = None
    if directory is None:
        return LayerStep(name, layer.kind, "refused", None, (), "no directory of it is known to put a scratch file in")
    if read_only or not os.access(directory, os.W_OK | os.X_OK):
        return LayerStep(name, layer.kind, "refused", directory, (),
                         f"{directory} is not writable{' (mounted read-only)' if read_only else ''}, so no scratch "
                         "file can be made there")
    room, _ = room_for(Path(directory), destroy_data=False)
    if room is not None and room < walk.plan.size:
        return LayerStep(name, layer.kind, "refused", directory, (),
                         f"{directory} has room for {format_bytes(room)}, and the plan's file is "
                         f"{format_bytes(walk.plan.size)}")
    return LayerStep(name, layer.kind, "scratch-file", directory, walk.plan.workloads,
                     "a scratch file that the run creates there and removes after it, as `run` does")


def _read_device(layer: Layer, walk: _Walk) -> LayerStep:
    name, cells = walk.name(layer), _reads(walk.plan)
    size = layer.settings.get("size_bytes")
    if not cells:
        return LayerStep(name, layer.kind, "refused", layer.name, (),
                         f"{layer.name} holds data, so it is only read, and the plan has no read cells (read, randread)")
    if not isinstance(size, int) or size < max(w.bs for w in cells):
        return LayerStep(name, layer.kind, "refused", layer.name, (), f"the size of {layer.name} is unknown or too small")
    unopened = _opens(layer.name)
    if unopened:
        return LayerStep(name, layer.kind, "refused", layer.name, (), unopened)
    if size < walk.plan.size:
        cells = tuple(replace(w, size=size // max(w.bs for w in cells) * max(w.bs for w in cells)) for w in cells)
    return LayerStep(name, layer.kind, "read-device", layer.name, cells,
                     f"its read cells only, O_DIRECT: fio opens {layer.name} read-only and refuses writes (--readonly)")


def _opens(device: str) -> str | None:
    """Why `device` cannot be opened for reading (None: it can): a sandbox's device rules or missing
    permissions refuse it here rather than in the middle of the layers' runs."""
    try:
        fd = os.open(device, os.O_RDONLY | os.O_DIRECT | os.O_CLOEXEC)
    except OSError as error:
        return f"{device} cannot be opened for reading here ({error.strerror or error})"
    os.close(fd)
    return None


def _scratch_dataset(layer: Layer, walk: _Walk) -> LayerStep | None:
    if walk.last_dataset == layer.name:
        return None  # the dataset measured above is the pool's root: the same layer
    name = walk.name(layer)
    refused = _zfs_room(layer.name, walk)
    if refused:
        return LayerStep(name, layer.kind, "refused", layer.name, (), refused)
    return LayerStep(name, layer.kind, "scratch-dataset", layer.name, walk.plan.workloads,
                     f"a new dataset {layer.name}/stackbench-scratch-ID with the pool's own settings, made for this "
                     "run and destroyed after it", {"kind": "zfs-dataset", "pool": layer.name})


def _scratch_zvol(layer: Layer, walk: _Walk) -> LayerStep:
    name, pool = walk.name(layer), layer.zfs.get("pool", layer.name.split("/", 1)[0])
    refused = _zfs_room(pool, walk)
    if refused:
        return LayerStep(name, layer.kind, "refused", layer.name, (), refused)
    copied = {key: str(layer.settings[key]) for key in ZVOL_COPIED if key in layer.settings}
    return LayerStep(name, layer.kind, "scratch-zvol", pool, walk.plan.workloads,
                     f"a new zvol in {pool} with {layer.name}'s settings ({', '.join(sorted(copied)) or 'none known'}), "
                     "filled before it is read, made for this run and destroyed after it",
                     {"kind": "zvol", "pool": pool, "size": walk.plan.size, "properties": copied})


def _zfs_room(pool: str, walk: _Walk) -> str | None:
    """Why no scratch dataset or zvol can be made in `pool` (None: it can)."""
    if os.geteuid() != 0:
        return "creating a scratch dataset or zvol needs root (zfs create)"
    settings, why = dataset_properties(walk.tools, pool)
    free = settings.get("available")
    if not isinstance(free, int):
        return f"the pool's free space is unknown ({why or 'zfs get available'})"
    if free < walk.plan.size + ZFS_MARGIN:
        return f"{pool} has {format_bytes(free)} available, too little for {format_bytes(walk.plan.size)} and a margin"
    return None


def _scratch_lv(layer: Layer, walk: _Walk) -> LayerStep | None:
    """A scratch LV from free extents; None when there are not enough (the LV is then only read)."""
    vg = layer.settings.get("vg")
    if not isinstance(vg, str) or os.geteuid() != 0:
        return None
    free, extent, _ = vg_free(walk.tools, vg)
    if free is None or extent is None or free < walk.plan.size + extent:
        return None
    size = -(-walk.plan.size // extent) * extent
    return LayerStep(walk.name(layer), layer.kind, "scratch-lv", vg, walk.plan.workloads,
                     f"a new LV of {format_bytes(size)} from {vg}'s free extents ({format_bytes(free)} free), "
                     "signatures wiped, made for this run and removed after it", {"kind": "lvm", "vg": vg, "size": size})


def require_runnable(layer_plan: LayerPlan) -> list[LayerStep]:
    """The steps to run, bottom first; a StackbenchError when fewer than two layers can be measured."""
    steps = layer_plan.measured()
    if len(steps) < 2:
        raise StackbenchError(
            f"only {len(steps)} layer{'s' if len(steps) != 1 else ''} of {layer_plan.stack.target} can be measured "
            "safely, and finding the layer needs two or more",
            "See why each layer was refused with `stackbench layers --auto TARGET` (without --run)")
    return steps
