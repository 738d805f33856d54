"""L2ARC-HDR: a pool has a cache vdev (L2ARC) and the ARC spends more than 10 % of its size on L2ARC
headers (arcstats l2_hdr_size / size).

Every block in the L2ARC needs a header in the ARC, in RAM; a large L2ARC on a host short of RAM pushes
data out of the faster ARC to keep the index of the slower one, and can make things slower (OpenZFS
caching docs; zfs(4) l2arc_meta_percent is the module's own limit on these headers). The 10 %
threshold is a heuristic (knowledge base, section 3). The cache is present when zpool status has a
`cache` class or arcstats l2_size is above zero.
"""

from typing import Iterator

from stackbench.audit.examples import kstat, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.prove import ab, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs

MIB = 1024**2
SHARE = 0.10


def check(facts: Facts) -> Iterator[Finding]:
    hdr, size = facts.arcstats.get("l2_hdr_size"), facts.arcstats.get("size")
    if hdr is None or not size or hdr <= SHARE * size:
        return
    caches = [(pool, vdev) for pool in facts.vdevs for vdev in class_vdevs(facts, pool, "cache")]
    if not caches and not facts.arcstats.get("l2_size"):
        return
    where = ", ".join(f"{pool} cache {vdev.name}" for pool, vdev in caches) or \
        f"l2_size {facts.arcstats['l2_size'] / MIB:.0f} MiB (arcstats)"
    pool, vdev = caches[0] if caches else (next(iter(facts.vdevs), "POOL"), None)
    change = f"zpool remove {pool} {vdev.name if vdev else '<cache device>'}"
    yield RULE.finding(
        "L2ARC",
        f"l2_hdr_size {hdr / MIB:.0f} MiB = {hdr / size:.0%} of ARC size {size / MIB:.0f} MiB (arcstats; "
        f"threshold {SHARE:.0%}); {where}",
        f"a smaller cache device, more RAM, or zfs set secondarycache=metadata {pool}; a cache vdev can be removed "
        f"and re-added at any time ({change})",
        prove=ab(RULE.id, mountpoint(facts, pool), "--bs 4k,64k --qd 4 --rw randread",
                 f"{change} (zpool add {pool} cache <device> restores it)"),
    )


_POOL_WITH_CACHE = zpool_status("""
    tank
      mirror-0
        sda
        sdb
    cache
      nvme0n1
""")
FAILING = ({"zpool-status.txt": _POOL_WITH_CACHE, "arcstats.txt": kstat(size=1024 * MIB, l2_hdr_size=200 * MIB)},)
PASSING = ({"zpool-status.txt": _POOL_WITH_CACHE, "arcstats.txt": kstat(size=1024 * MIB, l2_hdr_size=20 * MIB)},)


RULE = Rule(
    id="L2ARC-HDR",
    title="L2ARC headers crowd the ARC",
    checks="cache vdev and arcstats l2_hdr_size > 10 % of the ARC size (heuristic)",
    severity="warn",
    rationale="Every L2ARC block needs an ARC header in RAM; on a RAM-starved host an L2ARC can slow things down.",
    fix="A smaller L2ARC, more RAM, or secondarycache=metadata",
    source="https://openzfs.github.io/openzfs-docs/Basic%20Concepts/Pool%20Structure/Caching.html",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
