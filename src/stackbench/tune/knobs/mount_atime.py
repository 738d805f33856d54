"""mount.atime: whether reads update access times on an ext4 or xfs mount (relatime, noatime).

Semantic (`--allow semantic`): with noatime a program that reads access times (mail readers, tmpwatch, backup
tools that skip untouched files) sees none. The undo remounts with the words that reach the original
(`atime,relatime`): measured here, `remount,relatime` after `noatime` exits 0 and changes nothing.
"""

from stackbench.tune import subjects
from stackbench.tune.access.mount import ATIME
from stackbench.tune.knob import Cost, Example, Knob, Persistence, Safety, Scope, Subject, Undo, Values

DOC = __doc__
_MNT = Subject("mount", "/srv/data", {"source": "/dev/sdb1", "fs_type": "ext4"})


def persist(subject: Subject, value: str) -> str:
    return f"/etc/fstab: add {value} to the options of {subject.name}"


KNOB = Knob(
    id="mount.atime", title="Access-time updates of the target's mount", scope=Scope.MOUNT, access=ATIME,
    undo=Undo.REMOUNT_WITH, values=Values(("relatime", "noatime")), safety=Safety.SEMANTIC, cost=Cost.REMOUNT,
    persistence=Persistence.VOLATILE, affects=("read", "metadata"), subjects=subjects.mount(("ext4", "ext3", "xfs")),
    source="https://man7.org/linux/man-pages/man8/mount.8.html", doc=DOC, persist=persist,
    audit_rules=("MNT-STRICTATIME",),
    settings=lambda value: [("mount:atime", value)],
    examples=(Example(_MNT, {"atime": "relatime", "diratime": "diratime"}, "noatime",
                      apply=("mount -o remount,noatime /dev/sdb1 /srv/data",),
                      undo=("mount -o remount,atime,relatime /dev/sdb1 /srv/data",)),),
)
