"""KVM-AIO-NATIVE: aio=native (libvirt io='native') with a cache mode other than none/directsync: QEMU
2.6 and later refuse to start the VM, because native AIO needs O_DIRECT."""

from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import disk_fix


def check(facts):
    for vm in facts.vms:
        for disk in vm.disks:
            if disk.aio == "native" and disk.cache not in ("none", "directsync"):
                yield Finding(
                    "KVM-AIO-NATIVE", "err", f"{vm.name} {disk.key}", f"{disk.key}: aio=native with cache={disk.cache}",
                    disk_fix(vm, disk, f"virsh edit NAME: cache='none' or io='threads' on {disk.key}", cache="none"),
                )


RULE = Rule(
    "KVM-AIO-NATIVE", "aio=native without O_DIRECT", "err",
    "The VM will not start: native AIO needs cache=none or directsync.",
    "cache=none, or aio=io_uring/threads",
    "https://github.com/proxmox/qemu-server/blob/master/src/PVE/QemuServer/Drive.pm", check, doc=__doc__,
)
