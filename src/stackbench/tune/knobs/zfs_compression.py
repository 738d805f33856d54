"""zfs.compression: the dataset's compression (off, lz4, zstd-1).

New writes only: a session lays its scratch file out again after every change, and the report says that data
already on the dataset keeps its compression until it is rewritten. Answers DS-COMPRESS-OFF.
"""

from stackbench.tune import subjects
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values
from stackbench.tune.knobs._zfs import access, examples, settings_of

DOC = __doc__

KNOB = Knob(
    id="zfs.compression", title="Compression of the target's dataset", scope=Scope.DATASET,
    access=access("compression"), undo=Undo.ZFS_RESTORE_SOURCE, values=Values(("off", "lz4", "zstd-1")),
    safety=Safety.SAFE, cost=Cost.NEW_WRITES, persistence=Persistence.PERSISTENT, affects=("read", "write"),
    subjects=subjects.dataset, source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html",
    doc=DOC, audit_rules=("DS-COMPRESS-OFF",), settings=settings_of("compression"),
    note="only data written afterwards is compressed: rewrite existing files to benefit",
    examples=examples("compression", {"value": "off", "source": "inherited from tank"},
                      {"value": "off", "source": "local"}, "lz4"),
)
