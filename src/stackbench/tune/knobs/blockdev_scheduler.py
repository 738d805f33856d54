"""blockdev.scheduler: the I/O scheduler of the disks under the target (none, mq-deadline, kyber, bfq: those the
device offers).

Coupled view: the kernel resets `nr_requests` when the scheduler changes (measured here on a loop device:
none 128 -> mq-deadline 256 -> none 128, a value of 64 set before was lost), so the knob reads both and its undo
writes the scheduler and then the original `nr_requests` back. Candidates are raced.
"""

from stackbench.tune import subjects
from stackbench.tune.knobs._blockdev import udev_rule
from stackbench.tune.access.kernel import KernelFiles, KernelView, active_choice
from stackbench.tune.knob import Cost, Example, Knob, Persistence, Safety, Scope, Subject, Undo, Values

DOC = __doc__
ACCESS = KernelFiles(
    (KernelView("scheduler", "/sys/block/{name}/queue/scheduler", active_choice),
     KernelView("nr_requests", "/sys/block/{name}/queue/nr_requests")),
    offered_from="scheduler",
)
_SDA = Subject("block-device", "sda")

KNOB = Knob(
    id="blockdev.scheduler", title="I/O scheduler of the disks under the target", scope=Scope.BLOCK_DEVICE,
    access=ACCESS, undo=Undo.SET_ORIGINAL, values=Values(("none", "mq-deadline", "kyber", "bfq")),
    safety=Safety.SAFE, cost=Cost.INSTANT, persistence=Persistence.VOLATILE, affects=("read", "write", "sync-write"),
    subjects=subjects.disks, source="https://docs.kernel.org/block/switching-sched.html", doc=DOC,
    persist=udev_rule("queue/scheduler"),
    examples=(Example(_SDA, {"scheduler": "mq-deadline", "nr_requests": "64"}, "none",
                      apply=("echo none > /sys/block/sda/queue/scheduler",),
                      undo=("echo mq-deadline > /sys/block/sda/queue/scheduler",
                            "echo 64 > /sys/block/sda/queue/nr_requests"),
                      parse=(("[mq-deadline] none kyber bfq", {"scheduler": "mq-deadline"}),)),),
)
