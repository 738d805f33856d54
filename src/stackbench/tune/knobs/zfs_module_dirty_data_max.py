"""zfs.module.zfs_dirty_data_max: how much dirty data ZFS holds before it throttles writers (bytes; default 10 %
of RAM, at most 4 GiB). Candidates are half, twice and four times the current value, raced; a value the module
refuses is dropped by the reversibility check. Host-wide (lab guest only in tests).
"""

from stackbench.tune import subjects
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values
from stackbench.tune.knobs._zfs_module import access, example, persist, scaled, settings_of

DOC = __doc__
NAME = "zfs_dirty_data_max"

KNOB = Knob(
    id="zfs.module.zfs_dirty_data_max", title="ZFS dirty data limit", scope=Scope.POOL_MODULE, access=access(NAME),
    undo=Undo.SET_ORIGINAL, values=Values(("x0.5", "x2", "x4"), ordinal=True, unit="of the current bytes",
                                          derive=scaled(NAME, (0.5, 2, 4))),
    safety=Safety.SAFE, cost=Cost.INSTANT, persistence=Persistence.VOLATILE, affects=("write", "sync-write"),
    subjects=subjects.zfs_module, source="https://openzfs.github.io/openzfs-docs/man/master/4/zfs.4.html",
    doc=DOC, persist=persist(NAME), settings=settings_of(NAME),
    examples=example(NAME, "417775616", "835551232"),
)
