"""HOST-NVME-LBA: an NVMe namespace formatted with 512-byte logical blocks although the drive offers a
4096-byte LBA format.

The 512-byte format is kept for compatibility; most drives rate the 4K format "Better" or "Best" (nvme id-ns
-H, "Relative Performance"), and a 4K format lets ZFS use ashift 12 without emulation. Reformatting
(`nvme format --lbaf=N`) destroys every byte on the namespace, so it belongs before the pool is created;
the evidence says when the namespace already holds a pool.

The format in use comes from `nvme id-ns -H` ("(in use)"); when that line is missing, the logical sector
size from lsblk (LOG-SEC) or the block queue. Of the 4096-byte formats the one without metadata is
suggested: formats with metadata need end-to-end protection support.
"""

from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.prove import RAND_4K_WRITE, ab
from stackbench.audit.rule import Finding, Rule


def _logical(facts, namespace):
    formats = facts.nvme_formats.get(namespace, [])
    in_use = next((f for f in formats if f.in_use), None)
    if in_use is not None:
        return in_use.data_size, f"LBA format {in_use.index} (in use): {in_use.data_size} bytes (nvme id-ns -H)"
    device = facts.block_devices.get(namespace)
    if device is not None and device.logical_sector:
        return device.logical_sector, f"logical sector {device.logical_sector} bytes (lsblk LOG-SEC)"
    value = facts.block_queue.get(namespace, {}).get("logical_block_size", "")
    if value.isdigit():
        return int(value), f"logical_block_size {value} (block queue)"
    return None, ""


def _pools_on(facts, namespace):
    return sorted({pool for pool, vdevs in facts.vdevs.items() for vdev in vdevs for leaf in vdev.leaves
                   if facts.disk_of(leaf) == namespace})


def check(facts: Facts) -> Iterator[Finding]:
    for namespace, formats in sorted(facts.nvme_formats.items()):
        size, source = _logical(facts, namespace)
        wider = sorted((f for f in formats if f.data_size == 4096), key=lambda f: (f.metadata_size, f.index))
        if size != 512 or not wider:
            continue
        best = wider[0]
        pools = _pools_on(facts, namespace)
        holds = f"; it holds pool {', '.join(pools)}" if pools else ""
        change = f"nvme format /dev/{namespace} --lbaf={best.index}"
        fix = (f"{change} before a pool is created on it (destroys all data on the namespace, and on drives that "
               "format all namespaces at once, on the others too)"
               + (f"; for {', '.join(pools)} only when the pool is rebuilt from a backup" if pools else ""))
        yield RULE.finding(
            f"/dev/{namespace}",
            f"{source}; LBA format {best.index} offers 4096 bytes (metadata {best.metadata_size}){holds}", fix,
            prove=ab(RULE.id, f"/mnt/{namespace}-scratch", RAND_4K_WRITE,
                     f"{change}, recreate the scratch file system and mount it again",
                     where=f"on a scratch file system on the empty {namespace}"),
        )


def _id_ns(in_use: int) -> str:
    """`nvme id-ns -H` of a namespace offering 512 (format 0) and 4096 bytes (format 1), `in_use` marked."""
    return "## /dev/nvme0n1\n" + "".join(
        f"LBA Format  {index} : Metadata Size: 0   bytes - Data Size: {size} bytes - Relative Performance: "
        f"{performance}{' (in use)' if index == in_use else ''}\n"
        for index, (size, performance) in enumerate([(512, "0x2 Good"), (4096, "0 Best")]))


FAILING = ({"nvme-id-ns.txt": _id_ns(in_use=0)},)
PASSING = ({"nvme-id-ns.txt": _id_ns(in_use=1)},)


RULE = Rule(
    id="HOST-NVME-LBA",
    title="NVMe namespace formatted with 512-byte blocks",
    checks="NVMe namespace formatted with 512-byte blocks that offers a 4096-byte LBA format",
    severity="info",
    rationale="The drive offers a 4096-byte LBA format, which is usually faster; reformatting destroys data.",
    fix="nvme format --lbaf=<4K format> before the pool is created",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Hardware.html#nvme-low-level-formatting",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
