"""mount.lazytime: keep inode time updates in memory and write them with the next other change of the inode, a
sync, or after 24 hours (ext4, xfs).

Tradeoff (`--allow tradeoff`): after a crash, timestamps can be up to a day old.
"""

from stackbench.tune import subjects
from stackbench.tune.access.mount import LAZYTIME
from stackbench.tune.knob import Cost, Example, Knob, Persistence, Safety, Scope, Subject, Undo, Values

DOC = __doc__
_MNT = Subject("mount", "/srv/data", {"source": "/dev/sdb1", "fs_type": "xfs"})


def persist(subject: Subject, value: str) -> str:
    return f"/etc/fstab: add {'lazytime' if value == 'on' else 'nolazytime'} to the options of {subject.name}"


KNOB = Knob(
    id="mount.lazytime", title="Lazy inode time updates of the target's mount", scope=Scope.MOUNT, access=LAZYTIME,
    undo=Undo.REMOUNT_WITH, values=Values(("on", "off")), safety=Safety.TRADEOFF, cost=Cost.REMOUNT,
    persistence=Persistence.VOLATILE, affects=("write", "metadata"), subjects=subjects.mount(("ext4", "xfs")),
    source="https://man7.org/linux/man-pages/man8/mount.8.html", doc=DOC, persist=persist,
    settings=lambda value: [("mount:lazytime", value)],
    examples=(Example(_MNT, {"lazytime": "off"}, "on",
                      apply=("mount -o remount,lazytime /dev/sdb1 /srv/data",),
                      undo=("mount -o remount,nolazytime /dev/sdb1 /srv/data",)),),
)
