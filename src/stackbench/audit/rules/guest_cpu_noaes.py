"""GUEST-CPU-NOAES: the facts come from a VM (cpu flag `hypervisor`) whose CPU does not show `aes`.

The guest then has no AES-NI, so disk encryption (LUKS) and TLS in the guest fall back to software AES:
docs/method.md measured 266 MiB/s with cryptsetup in a kvm64 guest against 3152 MiB/s on the host. This is
KVM-CPU-NOAES seen from inside the guest, useful when the VM config is not at hand. The fix is on the host:
a CPU type that passes AES-NI through. If the host CPU itself has no AES-NI, no CPU type helps. The
`hypervisor` flag exists on x86 only; other architectures are not checked.
"""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    if "hypervisor" not in facts.cpu_flags or "aes" in facts.cpu_flags:
        return
    yield RULE.finding(
        "this VM's CPU",
        "/proc/cpuinfo flags include hypervisor (a VM) but not aes",
        "on the host: qm set VMID --cpu host (one node or identical nodes) or --cpu x86-64-v2-AES (or flags=+aes); "
        "libvirt: virsh edit NAME: <cpu mode='host-passthrough'/> or host-model; then restart the VM",
        prove="inside the VM, before and after: stackbench crypto --cipher aes-xts-plain64 --key-size 512",
    )


RULE = Rule(
    id="GUEST-CPU-NOAES",
    title="This VM's CPU hides AES-NI",
    severity="warn",
    rationale="Encryption in the guest falls back to slow software AES.",
    fix="A host CPU type (cpu: host, x86-64-v2-AES, +aes; libvirt host-passthrough)",
    source="https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_cpu",
    check=check,
    doc=__doc__,
)
