"""GUEST-LVM (weak): the facts come from a VM whose block devices include LVM logical volumes (lsblk TYPE
`lvm`).

docs/method.md gained 5 % IOPS and 38 % MB/s after removing LVM in the guest, but it switched ext4 to ext3 in
the same step, and no primary source says LVM costs that much (knowledge base, section 3). So this is only
a prompt to measure the guest's own stack before changing it: a file system on the LV against one on a
plain partition of the same virtual disk.

Whether the facts come from a VM is `Facts.is_vm` (cpu flag `hypervisor`, or systemd-detect-virt).
Source: docs/method.md section 3 only, which is not public; the rule's URL documents the fact it reads (lsblk's
TYPE column), not a performance claim.
"""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def _why_vm(facts):
    return "cpu flag hypervisor in /proc/cpuinfo" if "hypervisor" in facts.cpu_flags else \
        f"systemd-detect-virt says {facts.virt}"


def check(facts: Facts) -> Iterator[Finding]:
    if not facts.is_vm:
        return
    volumes = [d for d in facts.block_devices.values() if d.type == "lvm"]
    if not volumes:
        return
    listed = ", ".join(f"{d.name}" + (f" on {d.parent}" if d.parent else "") +
                       (f" ({', '.join(d.mountpoints)})" if d.mountpoints else "") for d in volumes)
    run = "stackbench run -t {target} --preset blog --qd 4 --runtime 30 --runs 5 --label {label}"
    yield RULE.finding(
        "guest LVM",
        f"TYPE lvm in lsblk: {listed}; the facts come from a VM ({_why_vm(facts)})",
        "measure before changing anything: LVM's cost in a guest has no primary source and docs/method.md's "
        "gain was confounded with an ext4 to ext3 switch",
        prove="inside the VM: " + run.format(target="<directory on the LV>", label="guest-lvm") + "; "
              + run.format(target="<directory on a plain partition of the same disk>", label="guest-plain")
              + "; stackbench compare guest-lvm guest-plain",
    )


def _lsblk(vda2: str) -> str:
    """`lsblk -J -b -O` (shortened) of a guest disk whose second partition holds `vda2`."""
    return ('{"blockdevices": [{"name": "vda", "kname": "vda", "type": "disk", "children": ['
            '{"name": "vda1", "kname": "vda1", "type": "part", "mountpoints": ["/boot"]}, ' + vda2 + ']}]}\n')


_VM_CPU = "processor\t: 0\nflags\t\t: fpu sse2 aes hypervisor\n"
FAILING = (
    {"cpuinfo.txt": _VM_CPU, "lsblk.json": _lsblk(
        '{"name": "vda2", "kname": "vda2", "type": "part", "children": ['
        '{"name": "vg0-root", "kname": "dm-0", "type": "lvm", "mountpoints": ["/"]}]}')},
)
PASSING = (
    {"cpuinfo.txt": _VM_CPU, "lsblk.json": _lsblk('{"name": "vda2", "kname": "vda2", "type": "part", "mountpoints": ["/"]}')},
)


RULE = Rule(
    id="GUEST-LVM",
    title="LVM in the guest (measure before changing)",
    checks="facts from a VM with LVM volumes: only a prompt to measure, no primary source",
    severity="info",
    rationale="docs/method.md saw a gain without LVM, confounded with a file system change; no primary source.",
    fix="Measure a file system on the LV against one on a plain partition before changing",
    source="https://man7.org/linux/man-pages/man8/lsblk.8.html",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
