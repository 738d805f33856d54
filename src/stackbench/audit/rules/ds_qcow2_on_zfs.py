"""DS-QCOW2-ON-ZFS (disputed): a qcow2 image on a ZFS file system, copy-on-write on top of copy-on-write.

Where: a Proxmox disk on a directory storage whose path lies on a ZFS mount, a libvirt `<driver
type='qcow2'>` disk whose `<source file>` does, or a .qcow2 file the probe found on a ZFS file system.

Why it is only a warning and disputed (knowledge base, section 3): the OpenZFS docs advise zvols or raw
files "to avoid unnecessary overhead", and Proxmox says raw may be "up to 10% faster"; but Jim Salter
measured 50.5 MB/s on a zvol against 45.8 MB/s on qcow2 and asked whether the gap matters, and a 2025
article (quoted second-hand, FreeBSD) found raw *files* 2-6x faster than zvols and fully allocated qcow2
close to raw. Zvols have problems of their own (openzfs#4265). So the finding asks the user to measure on
their own machine (the prove command) before converting; qcow2 features (snapshots in the file, thin
images on plain directories) may be worth the cost.
"""

from __future__ import annotations

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.prove import BLOG_QD4, in_guest
from stackbench.audit.rule import DiskDetail, Finding, Rule
from stackbench.audit.rules._disks import ImageOnZfs, images_on_zfs


MEASURE = "measure first (disputed: results differ by machine); if raw wins: "


def _convert(image: ImageOnZfs) -> str:
    raw = image.path[: -len(".qcow2")] + ".raw" if image.path.endswith(".qcow2") else image.path + ".raw"
    if image.vm and image.disk:
        return image.vm.fix(f"qm disk move VMID {image.disk.key} <zfspool or directory storage> --format raw",
                            f"qemu-img convert -p -O raw {image.path} {raw} (VM off), then virsh edit NAME: "
                            f"<driver type='raw'/> and <source file='{raw}'/> on {image.disk.key}")
    return f"qemu-img convert -p -O raw {image.path} {raw} (VM off), then point the VM at the raw file"


def _evidence(image: ImageOnZfs) -> str:
    return f"qcow2 image {image.path} on ZFS file system {image.dataset} ({image.origin})"


def check(facts: Facts) -> Iterator[Finding]:
    """One finding per VM (each disk is its own `qm disk move`: Proxmox moves one disk per command), then one
    per image the probe found that no VM config names."""
    qcow2 = [image for image in images_on_zfs(facts) if image.format == "qcow2"]
    by_vm: dict[int, list[ImageOnZfs]] = {}
    for image in qcow2:
        if image.vm is not None:
            by_vm.setdefault(id(image.vm), []).append(image)
    for images in by_vm.values():
        converts = [_convert(image) for image in images]
        details = [DiskDetail(image.disk.key, RULE.severity, _evidence(image), MEASURE + convert)
                   for image, convert in zip(images, converts) if image.disk]
        convert = "; ".join(converts)
        yield RULE.vm_finding(images[0].vm.name, details, MEASURE + convert,
                              prove=in_guest(RULE.id, BLOG_QD4, convert))
    for image in qcow2:
        if image.vm is None:
            convert = _convert(image)
            yield RULE.finding(image.subject, _evidence(image), MEASURE + convert,
                               prove=in_guest(RULE.id, BLOG_QD4, convert))


_IMAGE_DATASET = tab_separated("""
    tank/images  type        filesystem    -
    tank/images  mountpoint  /tank/images  default
""")
FAILING = (
    # found by the probe on a ZFS file system
    {"zfs-get-Hp-all.txt": _IMAGE_DATASET, "image-files.txt": tab_separated("10737418240  /tank/images/web.qcow2")},
    # a Proxmox disk on a directory storage whose path is on ZFS
    {"zfs-get-Hp-all.txt": _IMAGE_DATASET,
     "pve/storage.cfg": "dir: tank-images\n\tpath /tank/images\n\tcontent images\n",
     "qemu-server/102.conf": "memory: 2048\nscsi0: tank-images:102/vm-102-disk-0.qcow2,size=32G\n"},
)
PASSING = (
    {"zfs-get-Hp-all.txt": _IMAGE_DATASET, "image-files.txt": tab_separated("10737418240  /tank/images/web.raw")},
)


RULE = Rule(
    id="DS-QCOW2-ON-ZFS",
    title="qcow2 image on a ZFS dataset",
    checks="qcow2 image on a ZFS file system (Proxmox dir storage, libvirt file, or found by the probe)",
    severity="warn",
    rationale="Two copy-on-write layers; OpenZFS advises zvols or raw files, but measured costs vary: measure first.",
    fix="Measure, then qemu-img convert -O raw to a zvol or raw file if raw is faster",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#virtual-machines",
    check=check,
    status="disputed",
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
