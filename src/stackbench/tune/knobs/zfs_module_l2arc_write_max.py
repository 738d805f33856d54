"""zfs.module.l2arc_write_max: how many bytes ZFS writes to a cache device per feed interval (default 8 MiB),
raised to fill a fast cache device sooner. Answers L2ARC-WRITE-MAX. Host-wide (lab guest only in tests).
"""

from stackbench.base.units import format_size
from stackbench.tune import subjects
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values
from stackbench.tune.knobs._zfs_module import access, example, persist, settings_of

DOC = __doc__
NAME = "l2arc_write_max"

KNOB = Knob(
    id="zfs.module.l2arc_write_max", title="L2ARC feed size per interval", scope=Scope.POOL_MODULE,
    access=access(NAME), undo=Undo.SET_ORIGINAL,
    values=Values(("33554432", "67108864", "134217728"), ordinal=True, unit="bytes",
                  label=lambda value: format_size(int(value))),
    safety=Safety.SAFE, cost=Cost.INSTANT, persistence=Persistence.VOLATILE, affects=("read",),
    subjects=subjects.zfs_module, source="https://openzfs.github.io/openzfs-docs/man/master/4/zfs.4.html",
    doc=DOC, audit_rules=("L2ARC-WRITE-MAX",), persist=persist(NAME), settings=settings_of(NAME),
    examples=example(NAME, "8388608", "67108864"),
)
