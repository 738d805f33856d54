"""KVM-AIO-NATIVE: aio=native with a cache mode other than none/directsync: QEMU >= 2.6 refuses to start
without O_DIRECT."""

from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._vm import disks


def check(facts):
    for vm, config in facts.vm_configs.items():
        for key, volume, options in disks(config):
            if options.get("aio") == "native" and options.get("cache", "none") not in ("none", "directsync"):
                yield Finding("KVM-AIO-NATIVE", "err", f"{vm} {key}", f"{key}: aio=native,cache={options['cache']}",
                              f"remove cache= from {key}, or use aio=io_uring")


RULE = Rule(
    "KVM-AIO-NATIVE", "aio=native without O_DIRECT", "err",
    "The VM will not start: native AIO needs cache=none or directsync.",
    "cache=none, or aio=io_uring/threads",
    "https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk", check, doc=__doc__,
)
