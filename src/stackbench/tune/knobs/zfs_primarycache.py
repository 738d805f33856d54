"""zfs.primarycache: what of the dataset the ARC caches (all, metadata). `metadata` frees the ARC for other
datasets and makes re-reads of this one go to the disks.
"""

from stackbench.tune import subjects
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values
from stackbench.tune.knobs._zfs import access, examples, settings_of

DOC = __doc__

KNOB = Knob(
    id="zfs.primarycache", title="ARC caching of the target's dataset", scope=Scope.DATASET,
    access=access("primarycache"), undo=Undo.ZFS_RESTORE_SOURCE, values=Values(("all", "metadata")),
    safety=Safety.SAFE, cost=Cost.INSTANT, persistence=Persistence.PERSISTENT, affects=("read",),
    subjects=subjects.dataset, source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html",
    doc=DOC, settings=settings_of("primarycache"),
    examples=examples("primarycache", {"value": "all", "source": "default"}, {"value": "all", "source": "local"},
                      "metadata"),
)
