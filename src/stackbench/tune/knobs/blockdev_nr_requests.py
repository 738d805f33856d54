"""blockdev.nr_requests: how many requests the block layer queues per disk before a submitter waits.

The largest value a disk accepts depends on its scheduler and hardware queue depth; a candidate the kernel
refuses (EINVAL) is dropped by the reversibility check with the kernel's word, never guessed away beforehand.
"""

from stackbench.tune import subjects
from stackbench.tune.knobs._blockdev import udev_rule
from stackbench.tune.access.kernel import KernelFiles, KernelView
from stackbench.tune.knob import Cost, Example, Knob, Persistence, Safety, Scope, Subject, Undo, Values

DOC = __doc__
ACCESS = KernelFiles((KernelView("nr_requests", "/sys/block/{name}/queue/nr_requests"),))

KNOB = Knob(
    id="blockdev.nr_requests", title="Request queue size of the disks under the target", scope=Scope.BLOCK_DEVICE,
    access=ACCESS, undo=Undo.SET_ORIGINAL, values=Values(("32", "64", "128", "256", "1024"), ordinal=True),
    safety=Safety.SAFE, cost=Cost.INSTANT, persistence=Persistence.VOLATILE, affects=("read", "write", "sync-write"),
    subjects=subjects.disks, source="https://docs.kernel.org/block/queue-sysfs.html", doc=DOC,
    persist=udev_rule("queue/nr_requests"),
    examples=(Example(Subject("block-device", "nvme0n1"), {"nr_requests": "1023"}, "256",
                      apply=("echo 256 > /sys/block/nvme0n1/queue/nr_requests",),
                      undo=("echo 1023 > /sys/block/nvme0n1/queue/nr_requests",)),),
)
