"""kvm.disk: a Proxmox test VM's disk cache, aio and iothread options as one compound knob of valid tuples
(aio=native only with cache=none or directsync: KVM-AIO-NATIVE; cache=unsafe never: forbidden).

Restart class: `qm set` then `qm stop` and `qm start` of the VM named with `--vm VMID:DISK`, which must be a test
VM (`--allow restart --yes`). The session measures from inside that VM's storage path as the user's plan says;
tune only changes and restores the VM's configuration. Tested by command generation (no Proxmox host here).
Answers KVM-CACHE, KVM-AIO-NATIVE, KVM-IOTHREAD-MISSING and KVM-IOTHREAD-IGNORED.
"""

from stackbench.tune import subjects
from stackbench.tune.access.proxmox import ProxmoxDisk, parse_value
from stackbench.tune.knob import Cost, Example, Knob, Persistence, Safety, Scope, Subject, Undo, Values

DOC = __doc__
TUPLES = (
    "cache=none,aio=io_uring,iothread=1",
    "cache=none,aio=native,iothread=1",
    "cache=directsync,aio=native,iothread=1",
    "cache=writeback,aio=io_uring,iothread=1",
    "cache=none,aio=threads,iothread=1",
)
_VM = Subject("vm-disk", "100:scsi0")
_ORIGINAL = {"cache": "writeback", "aio": "default", "iothread": "default", "rest": "local-zfs:vm-100-disk-0,size=32G"}


def settings(value: str) -> list[tuple[str, str]]:
    return [(f"vm-disk:{name}", setting) for name, setting in parse_value(value).items()]


KNOB = Knob(
    id="kvm.disk", title="Cache, aio and iothread of a test VM's disk", scope=Scope.VM_DISK, access=ProxmoxDisk(),
    undo=Undo.SET_ORIGINAL, values=Values(TUPLES), safety=Safety.RESTART, cost=Cost.VM_RESTART,
    persistence=Persistence.PERSISTENT, affects=("read", "write", "sync-write"), subjects=subjects.vm_disk,
    source="https://pve.proxmox.com/wiki/Performance_Tweaks", doc=DOC,
    audit_rules=("KVM-CACHE", "KVM-AIO-NATIVE", "KVM-IOTHREAD-MISSING", "KVM-IOTHREAD-IGNORED"), settings=settings,
    examples=(Example(_VM, _ORIGINAL, "cache=none,aio=native,iothread=1",
                      apply=("qm set 100 --scsi0 local-zfs:vm-100-disk-0,size=32G,cache=none,aio=native,iothread=1",
                             "qm stop 100", "qm start 100"),
                      undo=("qm set 100 --scsi0 local-zfs:vm-100-disk-0,size=32G,cache=writeback",
                            "qm stop 100", "qm start 100"),
                      parse=(("boot: order=scsi0\nscsi0: local-zfs:vm-100-disk-0,cache=writeback,size=32G\n",
                              _ORIGINAL),)),),
)
