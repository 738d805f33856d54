"""DS-SSB-SIZE: special_small_blocks at or above the block size sends all data to the special vdev; set
without any special vdev it does nothing.

File systems are compared with their recordsize. From OpenZFS 2.4 special_small_blocks also applies to
zvols, which are compared with their volblocksize; before 2.4 zvols ignore it, so they are not checked
(`versions.special_small_blocks_covers_zvols`). 2.4 also compares a block's *compressed* size with the
threshold, so even a value below the block size can pull most compressible data onto the special vdev:
the evidence says so on 2.4+. Size it from the file sizes (docs/method.md section 5, `stackbench smallblocks`).
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs, pool_of
from stackbench.audit.versions import label, special_small_blocks_covers_zvols


def _checked(facts):
    """(dataset, the block-size property it is compared with) for every dataset the setting applies to."""
    yield from ((name, "recordsize") for name in facts.filesystems())
    if special_small_blocks_covers_zvols(facts.version):
        yield from ((name, "volblocksize") for name in facts.zvols())


def check(facts: Facts) -> Iterator[Finding]:
    compressed = special_small_blocks_covers_zvols(facts.version)
    for name, block_prop in _checked(facts):
        ssb = facts.dataset_prop(name, "special_small_blocks")
        block = facts.dataset_prop(name, block_prop)
        if not ssb or not ssb.isdigit() or int(ssb) == 0:
            continue
        pool = pool_of(name)
        source = facts.dataset_source(name, "special_small_blocks")
        if not class_vdevs(facts, pool, "special"):
            if facts.vdevs.get(pool):
                yield RULE.finding(name,
                                   f"special_small_blocks={ssb} ({source}) but {pool} has no special vdev (zpool status)",
                                   f"zfs set special_small_blocks=0 {name}", severity="info")
        elif block and block.isdigit() and int(ssb) >= int(block):
            note = f"; {label(facts.version)} compares compressed block sizes" if compressed else ""
            what = "zvol, " if block_prop == "volblocksize" else ""
            prove = None if block_prop == "volblocksize" else (
                f"stackbench smallblocks {facts.dataset_prop(name, 'mountpoint') or '/' + name} --recordsize {block} "
                "recommends a value from the file sizes")
            yield RULE.finding(
                name,
                f"{what}special_small_blocks={ssb} ({source}) >= {block_prop}={block}{note}",
                f"zfs set special_small_blocks=<well below {block}> {name}", prove=prove,
            )


_WITH_SPECIAL = zpool_status("""
    tank
      mirror-0
        sda
        sdb
    special
      mirror-1
        nvme0n1
        nvme1n1
""")


def _images(special_small_blocks: int) -> str:
    return tab_separated(f"""
        tank/images  type                  filesystem              -
        tank/images  recordsize            131072                  default
        tank/images  special_small_blocks  {special_small_blocks}  local
    """)


FAILING = (
    {"zpool-status.txt": _WITH_SPECIAL, "zfs-get-Hp-all.txt": _images(131072)},
    # info: set on a pool without a special vdev, where it does nothing
    {"zpool-status.txt": zpool_status("""
        tank
          mirror-0
            sda
            sdb
    """), "zfs-get-Hp-all.txt": _images(32768)},
)
PASSING = ({"zpool-status.txt": _WITH_SPECIAL, "zfs-get-Hp-all.txt": _images(32768)},)


RULE = Rule(
    id="DS-SSB-SIZE",
    title="special_small_blocks at or above the block size",
    checks="special_small_blocks ≥ recordsize (and ≥ volblocksize on zvols from 2.4), or set without a special vdev",
    severity="warn",
    rationale="Every block of the dataset then lands on the special vdev and fills it.",
    fix="Set special_small_blocks well below the recordsize (volblocksize for zvols on 2.4+); size it with "
        "stackbench smallblocks",
    source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html#special_small_blocks",
    check=check,
    doc=__doc__,
    other_severities=frozenset({"info"}),  # set without a special vdev: it does nothing, nothing is lost
    failing=FAILING,
    passing=PASSING,
)
