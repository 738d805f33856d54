"""zfs.logbias: whether synchronous writes go through the intent log for low latency (latency) or straight to the
pool for throughput (throughput). Moves synchronous-write cells only.
"""

from stackbench.tune import subjects
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values
from stackbench.tune.knobs._zfs import access, examples, settings_of

DOC = __doc__

KNOB = Knob(
    id="zfs.logbias", title="Intent-log bias of the target's dataset", scope=Scope.DATASET,
    access=access("logbias"), undo=Undo.ZFS_RESTORE_SOURCE, values=Values(("latency", "throughput")),
    safety=Safety.SAFE, cost=Cost.INSTANT, persistence=Persistence.PERSISTENT, affects=("sync-write",),
    subjects=subjects.dataset, source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html",
    doc=DOC, settings=settings_of("logbias"),
    examples=examples("logbias", {"value": "latency", "source": "default"}, {"value": "latency", "source": "local"},
                      "throughput"),
)
