"""mount.commit: how often ext4's journal commits, in seconds (default 5, which mountinfo then omits).

Tradeoff (`--allow tradeoff`): a longer interval loses up to that many seconds of writes that were not fsynced
on a crash. The undo remounts with `commit=5` where the original was the default.
"""

from stackbench.tune import subjects
from stackbench.tune.access.mount import COMMIT
from stackbench.tune.knob import Cost, Example, Knob, Persistence, Safety, Scope, Subject, Undo, Values

DOC = __doc__
_MNT = Subject("mount", "/srv/data", {"source": "/dev/sdb1", "fs_type": "ext4"})


def persist(subject: Subject, value: str) -> str:
    return f"/etc/fstab: add commit={value} to the options of {subject.name}"


KNOB = Knob(
    id="mount.commit", title="Journal commit interval of the target's ext4 mount", scope=Scope.MOUNT, access=COMMIT,
    undo=Undo.REMOUNT_WITH, values=Values(("15", "30", "60"), ordinal=True, unit="s", special={"default": "5 s"}),
    safety=Safety.TRADEOFF, cost=Cost.REMOUNT, persistence=Persistence.VOLATILE, affects=("write",),
    subjects=subjects.mount(("ext4",)), source="https://docs.kernel.org/admin-guide/ext4.html", doc=DOC,
    persist=persist, settings=lambda value: [("mount:commit", value)],
    examples=(Example(_MNT, {"commit": "default"}, "30",
                      apply=("mount -o remount,commit=30 /dev/sdb1 /srv/data",),
                      undo=("mount -o remount,commit=5 /dev/sdb1 /srv/data",)),),
)
