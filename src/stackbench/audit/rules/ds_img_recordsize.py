"""DS-IMG-RECORDSIZE: raw or qcow2 image files on a file system with recordsize 128K (the default) or more.

A guest writes 4K-64K blocks; each write into a 128K record that is not cached makes ZFS read the record,
change part of it and write it whole (read-modify-write), and checksums and compression work on the whole
record. The OpenZFS tuning docs advise a dedicated dataset for images with a smaller recordsize: 16K-64K,
with 64K matching qcow2's default cluster size. The knowledge base names 128K; larger records (1M) only
make partial writes costlier, so they are reported too.

recordsize applies to files written after the change, so images must be copied (or moved to a new
dataset) to benefit; the stackbench scratch files of the prove command are new files and see the change
at once. Zvols have volblocksize instead (DS-VBS-*).
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.prove import ab, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._disks import images_on_zfs
from stackbench.audit.rules._pool import pool_of

LIMIT = 131072


SHOWN = 4


def check(facts: Facts) -> Iterator[Finding]:
    by_dataset = {}
    for image in images_on_zfs(facts):
        if image.format in ("raw", "qcow2"):
            by_dataset.setdefault(image.dataset, []).append(image)
    for dataset, images in by_dataset.items():
        record = facts.dataset_prop(dataset, "recordsize") or ""
        if not record.isdigit() or int(record) < LIMIT:
            continue
        change = f"zfs set recordsize=64K {dataset}"
        listed = ", ".join(f"{i.format} {i.path}" + (f" ({i.origin})" if i.vm else "") for i in images[:SHOWN])
        more = f", and {len(images) - SHOWN} more" if len(images) > SHOWN else ""
        if any(i.vm is None for i in images):
            more += "; files without a VM were found by the probe (image-files.txt)"
        yield RULE.finding(
            dataset,
            f"recordsize={record} ({facts.dataset_source(dataset, 'recordsize')}) on {dataset}, which holds "
            f"{listed}{more}",
            f"zfs create -o recordsize=64K {pool_of(dataset)}/<images> (16K-64K) and move the images there, "
            f"or {change} and copy each image (applies to newly written files only)",
            prove=ab(RULE.id, mountpoint(facts, dataset), "--bs 4k,64k --qd 4 --rw randwrite", change),
        )


_RAW_IMAGE = tab_separated("10737418240  /tank/images/web.raw")
FAILING = (
    {"image-files.txt": _RAW_IMAGE, "zfs-get-Hp-all.txt": tab_separated("""
        tank/images  type        filesystem    -
        tank/images  mountpoint  /tank/images  default
        tank/images  recordsize  131072        default
    """)},
)
PASSING = (
    {"image-files.txt": _RAW_IMAGE, "zfs-get-Hp-all.txt": tab_separated("""
        tank/images  type        filesystem    -
        tank/images  mountpoint  /tank/images  default
        tank/images  recordsize  65536         local
    """)},
)


RULE = Rule(
    id="DS-IMG-RECORDSIZE",
    title="VM image files on a dataset with 128K records",
    checks="raw or qcow2 image files on a file system with recordsize ≥ 128K",
    severity="info",
    rationale="Guest writes smaller than a record make ZFS read, modify and rewrite whole records.",
    fix="A dedicated dataset with recordsize 16K-64K for image files",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#virtual-machines",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
