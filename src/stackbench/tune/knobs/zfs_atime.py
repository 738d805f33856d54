"""zfs.atime: whether reads update access times on the dataset (on, off).

Semantic (`--allow semantic`): programs that read access times see none (harmless on a dataset that holds VM
images, which is why DS-ATIME flags it there). Answers DS-ATIME.
"""

from stackbench.tune import subjects
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values
from stackbench.tune.knobs._zfs import access, examples, settings_of

DOC = __doc__

KNOB = Knob(
    id="zfs.atime", title="Access-time updates of the target's dataset", scope=Scope.DATASET,
    access=access("atime"), undo=Undo.ZFS_RESTORE_SOURCE, values=Values(("off", "on")),
    safety=Safety.SEMANTIC, cost=Cost.INSTANT, persistence=Persistence.PERSISTENT, affects=("read", "metadata"),
    subjects=subjects.dataset, source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html",
    doc=DOC, audit_rules=("DS-ATIME",), settings=settings_of("atime"),
    examples=examples("atime", {"value": "on", "source": "default"}, {"value": "on", "source": "local"}, "off"),
)
