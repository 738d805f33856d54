"""KVM-CACHE: a VM disk with cache=writeback/writethrough (double caching over the ARC) or unsafe (guest
flushes ignored). Proxmox's default when `cache` is absent is none. METHOD.md: virtio-scsi with
cache=writeback gave 124 IOPS where cache=none on virtio-blk gave 3256."""

from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._vm import disks


def check(facts):
    for vm, config in facts.vm_configs.items():
        for key, volume, options in disks(config):
            mode = options.get("cache")
            if mode in ("writeback", "writethrough", "unsafe"):
                yield Finding(
                    "KVM-CACHE", "crit" if mode == "unsafe" else "warn", f"{vm} {key}",
                    f"{key}: {volume},cache={mode}", f"remove cache={mode} from {key} (default none)",
                    prove="stackbench run -t /mnt/in-guest --preset blog --qd 4 inside the guest before and after, "
                          "then stackbench compare",
                )


RULE = Rule(
    "KVM-CACHE", "VM disk cache mode other than none", "warn",
    "Host page cache on top of the ARC caches twice; unsafe ignores the guest's flushes.",
    "cache=none (remove the option)",
    "https://pve.proxmox.com/pve-docs/chapter-qm.html#qm_hard_disk_cache", check, doc=__doc__,
)
