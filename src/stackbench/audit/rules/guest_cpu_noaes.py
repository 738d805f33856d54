"""GUEST-CPU-NOAES: the facts come from a VM (cpu flag `hypervisor`) whose CPU does not show `aes`.

The guest then has no AES-NI, so disk encryption (LUKS) and TLS in the guest fall back to software AES:
docs/method.md measured 266 MiB/s with cryptsetup in a kvm64 guest against 3152 MiB/s on the host. This is
KVM-CPU-NOAES seen from inside the guest, useful when the VM config is not at hand. The fix is on the host:
a CPU type that passes AES-NI through. If the host CPU itself has no AES-NI, no CPU type helps. The
`hypervisor` flag exists on x86 only; other architectures are not checked.

The fact is `Facts.aes_ni` (`audit.aes_ni`): state `hidden` when any processor lacks `aes` in a VM.
`stackbench crypto` evaluates this rule on the cpuinfo of the machine that ran the benchmark, so it and the
audit cannot disagree.
"""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


# What docs/method.md measured: the cost this rule's finding is about (`stackbench crypto` prints it as "Why").
MEASURED_COST = (
    "docs/method.md section 3: `cryptsetup benchmark` aes-xts 256-bit ran at 266 MiB/s in a Proxmox guest with CPU "
    "type kvm64 against 3152 MiB/s on its host (12x); with CPU type host the guest's LUKS volume went from "
    "3637 to 6308 IOPS at 4K random write and from 96 to 229 MB/s at 1M sequential write"
)
FIX = (
    "Give the VM a CPU type that passes AES through, on the host. Proxmox: `cpu: host` in "
    "/etc/pve/qemu-server/VMID.conf (`qm set VMID --cpu host`; one node or identical nodes), or `cpu: x86-64-v2-AES` "
    "(keeps live migration between different CPUs), or keep the type and add the flag: `cpu: kvm64,flags=+aes`; "
    "libvirt (`virsh edit NAME`): `<cpu mode='host-passthrough'/>` or host-model; plain QEMU: `-cpu host` or "
    "`-cpu kvm64,+aes`. Then stop and start the VM (a reboot inside the guest keeps the old CPU)"
)


def check(facts: Facts) -> Iterator[Finding]:
    aes = facts.aes_ni
    if aes is None or aes.state != "hidden":
        return
    model = f" ({aes.cpu_model})" if aes.cpu_model else ""
    yield RULE.finding(
        "this VM's CPU",
        f"/proc/cpuinfo flags include hypervisor (a VM) but not aes{model}",
        FIX,
        prove="inside the VM, before and after: stackbench crypto --cipher aes-xts-plain64 --key-size 512",
    )


def _cpuinfo(flags: str) -> str:
    return f"processor\t: 0\nmodel name\t: QEMU Virtual CPU version 2.5+\nflags\t\t: {flags}\n"


FAILING = ({"cpuinfo.txt": _cpuinfo("fpu pae sse sse2 pni hypervisor")},)  # QEMU's qemu64 in a VM
PASSING = (
    {"cpuinfo.txt": _cpuinfo("fpu pae sse sse2 pni aes hypervisor")},  # a VM that sees AES-NI
    {"cpuinfo.txt": _cpuinfo("fpu pae sse sse2 pni")},  # a host CPU without AES-NI: no CPU type can help
)


RULE = Rule(
    id="GUEST-CPU-NOAES",
    title="This VM's CPU hides AES-NI",
    checks="facts from a VM (cpu flag `hypervisor`) whose CPU lacks `aes` (also the verdict of `stackbench crypto`)",
    severity="warn",
    rationale="Encryption in the guest falls back to slow software AES.",
    fix="A host CPU type (cpu: host, x86-64-v2-AES, +aes; libvirt host-passthrough)",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_cpu",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
