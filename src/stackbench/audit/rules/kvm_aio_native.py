"""KVM-AIO-NATIVE: aio=native (libvirt io='native') with a cache mode other than none/directsync: QEMU
2.6 and later refuse to start the VM, because native AIO needs O_DIRECT."""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import disk_fix


def check(facts: Facts) -> Iterator[Finding]:
    for vm in facts.vms:
        for disk in vm.disks:
            if disk.aio == "native" and disk.cache not in ("none", "directsync"):
                yield RULE.finding(
                    f"{vm.name} {disk.key}", f"{disk.key}: aio=native with cache={disk.cache}",
                    disk_fix(vm, disk, f"virsh edit NAME: cache='none' or io='threads' on {disk.key}", cache="none"),
                )


def _vm(scsi0: str) -> dict[str, str]:
    return {"qemu-server/100.conf": f"memory: 4096\nscsihw: virtio-scsi-single\nscsi0: {scsi0}\n"}


FAILING = (_vm("local-zfs:vm-100-disk-0,aio=native,cache=writeback,iothread=1,size=32G"),)
PASSING = (_vm("local-zfs:vm-100-disk-0,aio=native,iothread=1,size=32G"),)  # cache=none: O_DIRECT


RULE = Rule(
    id="KVM-AIO-NATIVE",
    title="aio=native without O_DIRECT",
    severity="err",
    rationale="The VM will not start: native AIO needs cache=none or directsync.",
    fix="cache=none, or aio=io_uring/threads",
    source="https://github.com/proxmox/qemu-server/blob/master/src/PVE/QemuServer/Drive.pm",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
