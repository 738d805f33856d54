"""KVM-CPU-NOAES: the VM's CPU model hides AES-NI: Proxmox without `cpu` (kvm64) or kvm64/qemu64/
x86-64-v2 without +aes; libvirt without <cpu> (QEMU's qemu64) or a custom model lacking aes. LUKS in the
guest then ran at 266 MiB/s against 3152 on the host (docs/method.md section 3).

AES-NI is x86's: an Arm, POWER, s390x, RISC-V or LoongArch guest (libvirt `<os><type arch>`, or the
emulator's name) has its own crypto extension, which belongs to its CPU model and is not judged here, so
such a guest is never told its CPU hides AES-NI. A libvirt domain that names no architecture runs as the
host's; it is judged as x86 and the evidence says so."""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    for vm in facts.vms:
        if not vm.aes_visible:
            written = vm.cpu if vm.cpu else f"(absent: {vm.cpu_model})"
            assumed = "; the domain names no architecture, x86 assumed" if vm.arch is None else ""
            yield RULE.finding(
                vm.name, f"cpu: {written}{assumed}",
                vm.fix("qm set VMID --cpu host (one node or identical nodes) or --cpu x86-64-v2-AES",
                       "virsh edit NAME: <cpu mode='host-passthrough'/> or host-model"),
                prove="inside the VM, before and after: stackbench crypto --cipher aes-xts-plain64 --key-size 512",
                vm=vm.name,
            )


_DISK = "scsihw: virtio-scsi-single\nscsi0: local-zfs:vm-100-disk-0,iothread=1,size=32G\n"
FAILING = (
    {"qemu-server/100.conf": "cores: 4\nmemory: 4096\n" + _DISK},  # no cpu: Proxmox's old default kvm64
    {"qemu-server/100.conf": "cores: 4\ncpu: x86-64-v2\nmemory: 4096\n" + _DISK},
)
PASSING = (
    {"qemu-server/100.conf": "cores: 4\ncpu: host\nmemory: 4096\n" + _DISK},
    # an Arm guest without <cpu>: AES-NI is not its question
    {"libvirt/arm.xml": "<domain type='kvm'><name>arm</name><os><type arch='aarch64' machine='virt'>hvm</type></os>"
                        "<devices></devices></domain>\n"},
    {"qemu-server/100.conf": "cores: 4\ncpu: kvm64,flags=+aes\nmemory: 4096\n" + _DISK},
)


RULE = Rule(
    id="KVM-CPU-NOAES",
    title="Guest CPU type hides AES-NI",
    checks="x86 VM CPU type hides AES-NI (kvm64 default, qemu64, x86-64-v2 without +aes; libvirt without `<cpu>`); "
           "other architectures are not judged",
    severity="warn",
    rationale="Disk encryption in the guest falls back to slow software AES.",
    fix="cpu: host, x86-64-v2-AES or flags=+aes; libvirt host-passthrough",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_cpu",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
