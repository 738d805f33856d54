"""zfs.recordsize: the dataset's largest block (16K to 1M), raced.

New writes only: files keep the record size they were written with; a session lays its scratch file out again
after every change, and the report says to rewrite or copy existing images to benefit. Sizes above 128K need the
pool's large_blocks feature; a size the pool refuses is dropped by the reversibility check. Answers
DS-IMG-RECORDSIZE.
"""

from stackbench.base.units import format_size
from stackbench.tune import subjects
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values
from stackbench.tune.knobs._zfs import access, examples, settings_of

DOC = __doc__
SIZES = tuple(str(2**power * 1024) for power in range(4, 11))  # 16K .. 1M

KNOB = Knob(
    id="zfs.recordsize", title="Record size of the target's dataset", scope=Scope.DATASET,
    access=access("recordsize"), undo=Undo.ZFS_RESTORE_SOURCE,
    values=Values(SIZES, ordinal=True, unit="bytes", label=lambda value: format_size(int(value))),
    safety=Safety.SAFE, cost=Cost.NEW_WRITES, persistence=Persistence.PERSISTENT, affects=("read", "write"),
    subjects=subjects.dataset, source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html",
    doc=DOC, audit_rules=("DS-IMG-RECORDSIZE",), settings=settings_of("recordsize"),
    note="only files written afterwards get the new record size: rewrite or copy existing images to benefit",
    examples=examples("recordsize", {"value": "131072", "source": "default"}, {"value": "65536", "source": "local"},
                      "16384"),
)
