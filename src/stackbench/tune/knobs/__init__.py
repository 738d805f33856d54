"""The knob catalogue: one module per knob exposing `KNOB` (and its `DOC`), registered by name in `MODULES`, as the
audit's rules are. Ids are never reused. tests/tune/test_knob_registry.py checks every record (views, undo,
values, safety, examples) and that no candidate is forbidden (forbidden.py).
"""

from __future__ import annotations

import importlib

from stackbench.tune.access.zfs import ChildDataset
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values

MODULES = (
    "blockdev_read_ahead_kb", "blockdev_scheduler", "blockdev_nr_requests",
    "mount_atime", "mount_lazytime", "mount_commit",
    "vm_dirty",
    "zfs_compression", "zfs_atime", "zfs_recordsize", "zfs_logbias", "zfs_primarycache",
    "zfs_module_dirty_data_max", "zfs_module_l2arc_write_max", "zfs_module_arc_max",
    "kvm_disk",
)

REGISTRY: tuple[Knob, ...] = tuple(importlib.import_module(f"{__name__}.{name}").KNOB for name in MODULES)
BY_ID: dict[str, Knob] = {knob.id: knob for knob in REGISTRY}

# Not a catalogue knob: the throwaway child dataset a session measures ZFS knobs on, journaled like a change so
# that a rollback destroys it.
CHILD_DATASET = Knob(
    id="tune.child-dataset", title="The session's throwaway child dataset", scope=Scope.DATASET,
    access=ChildDataset(), undo=Undo.CUSTOM, values=Values(()), safety=Safety.SAFE, cost=Cost.INSTANT,
    persistence=Persistence.PERSISTENT, affects=(), subjects=lambda info: "internal", source="", doc="",
)
INTERNAL: dict[str, Knob] = {CHILD_DATASET.id: CHILD_DATASET}


def lookup(knob_id: str, extra: dict[str, Knob] | None = None) -> Knob | None:
    """A knob by id: the catalogue, tune's internal ones, then `extra` (a session's user knobs)."""
    return BY_ID.get(knob_id) or INTERNAL.get(knob_id) or (extra or {}).get(knob_id)
