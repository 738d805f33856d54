"""KVM-CPU-NOAES: the VM's CPU type hides AES-NI (absent `cpu`, i.e. kvm64, or kvm64/qemu64/x86-64-v2
without +aes). LUKS in the guest then ran at 266 MiB/s against 3152 on the host (METHOD.md)."""

from stackbench.audit.rule import Finding, Rule

HIDING = ("kvm64", "qemu64", "x86-64-v2", "kvm32", "qemu32")


def check(facts):
    for vm, config in facts.vm_configs.items():
        cpu = config.get("cpu")
        cputype = (cpu or "kvm64").split(",")[0].replace("cputype=", "")
        if cputype in HIDING and "+aes" not in (cpu or ""):
            yield Finding(
                "KVM-CPU-NOAES", "warn", vm, f"cpu: {cpu or '(absent: kvm64)'}",
                "qm set VMID --cpu host (or x86-64-v2-AES)",
                prove="cryptsetup benchmark -c aes-xts-plain64 inside the guest before and after",
            )


RULE = Rule(
    "KVM-CPU-NOAES", "Guest CPU type hides AES-NI", "warn",
    "Disk encryption in the guest falls back to slow software AES.",
    "cpu: host, x86-64-v2-AES or flags=+aes",
    "https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_cpu", check, doc=__doc__,
)
