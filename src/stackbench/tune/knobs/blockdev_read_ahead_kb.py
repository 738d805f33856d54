"""blockdev.read_ahead_kb: how far the kernel reads ahead of a sequential buffered reader on the device the file
system sits on (a loop, dm or whole disk; for ZFS, which reads ahead itself, the pool's disks).

`0` turns read-ahead off, which makes a 4K sequential buffered read issue one 4K request at a time (measured
here: +353 % [+194, +600] for 0 -> 128 on a loop device under load, docs/tune.md, "Worked example"). Candidates are
raced. The default is never assumed: a configured loop device reads 2560 where an unconfigured one reads 128.
"""

from stackbench.tune import subjects
from stackbench.tune.knobs._blockdev import udev_rule
from stackbench.tune.access.kernel import KernelFiles, KernelView
from stackbench.tune.knob import Cost, Example, Knob, Persistence, Safety, Scope, Subject, Undo, Values

DOC = __doc__
ACCESS = KernelFiles((KernelView("read_ahead_kb", "/sys/block/{name}/queue/read_ahead_kb"),))
_LOOP = Subject("block-device", "loop3")

KNOB = Knob(
    id="blockdev.read_ahead_kb", title="Read-ahead of the device under the file system", scope=Scope.BLOCK_DEVICE,
    access=ACCESS, undo=Undo.SET_ORIGINAL,
    values=Values(("128", "512", "2048", "8192"), ordinal=True, unit="KiB", special={"0": "read-ahead off"}),
    safety=Safety.SAFE, cost=Cost.INSTANT, persistence=Persistence.VOLATILE, affects=("read",),
    subjects=subjects.fs_device, source="https://docs.kernel.org/block/queue-sysfs.html", doc=DOC,
    persist=udev_rule("queue/read_ahead_kb"), audit_rules=("BLK-READAHEAD-OFF",),
    examples=(Example(_LOOP, {"read_ahead_kb": "0"}, "128",
                      apply=("echo 128 > /sys/block/loop3/queue/read_ahead_kb",),
                      undo=("echo 0 > /sys/block/loop3/queue/read_ahead_kb",)),),
)
