"""DS-VBS-RAIDZ: a zvol on a raidz or draid pool with volblocksize at most twice the sector size
(2 x 2^ashift: 8K at ashift 12).

A block that small fills one or two data sectors, and raidz adds parity sectors per block plus padding to
a multiple of parity+1 sectors, so parity and padding approach a mirror's overhead while keeping raidz's
IOPS limits. One reported case: 8K zvols reserved 74.1G per 32G volume, 16K ones 37.1G (LINBIT). The
evidence shows the zvol's own refreservation/volsize ratio when it is thick-provisioned.

volblocksize is fixed at creation. The default is 16K since OpenZFS 2.2 (8K before; Proxmox's `blocksize`
is unset by default, so the ZFS default applies), so an untouched zvol on a 2.1 raidz pool has this
finding. 4K volblocksize avoids read-modify-write of 4K guest writes but makes this worse (knowledge base,
section 3).
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated, zpool_status
from stackbench.audit.facts import Facts
from stackbench.audit.prove import in_guest
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import ashift_evidence, data_vdevs, pool_of
from stackbench.audit.versions import default_volblocksize, label


def _space(facts, name):
    volsize, reserved = facts.dataset_prop(name, "volsize"), facts.dataset_prop(name, "refreservation")
    if volsize and reserved and volsize.isdigit() and reserved.isdigit() and int(volsize) > 0 and int(reserved) > 0:
        return f"; refreservation {int(reserved) / 1024**3:.2f}G for volsize {int(volsize) / 1024**3:.2f}G " \
               f"({int(reserved) / int(volsize):.2f}x)"
    return ""


def check(facts: Facts) -> Iterator[Finding]:
    for name in facts.zvols():
        size = facts.dataset_prop(name, "volblocksize") or ""
        parity = [v for v in data_vdevs(facts, pool_of(name))
                  if v.type.startswith(("raidz", "draid")) and v.ashift is not None]
        if not parity or not size.isdigit():
            continue
        ashift = max(v.ashift for v in parity)
        if int(size) > 2 * 2**ashift:
            continue
        source = facts.dataset_source(name, "volblocksize")
        default = default_volblocksize(facts.version)
        note = f", the default of {label(facts.version)}" if source == "default" and default == int(size) else ""
        vdevs = ", ".join(f"{v.name} {ashift_evidence(v)}" for v in parity)
        fix = (f"zfs create -V <size> -o volblocksize=16K (16K-64K) {pool_of(name)}/<new>, copy the disk and switch "
               "the VM to it (Proxmox: pvesm set <storage> --blocksize 16k, then move the disk); or keep VM disks "
               "on mirrors")
        yield RULE.finding(
            name,
            f"volblocksize={size} ({source}{note}) <= 2 x 2^{ashift} on {vdevs}{_space(facts, name)}", fix,
            prove=in_guest(RULE.id, "--bs 4k,64k --qd 4 --rw randwrite,randread",
                           "move the disk to a zvol with volblocksize=16K; compare zfs get used,refreservation too"),
        )


_RAIDZ_ASHIFT_12 = {
    "zpool-status.txt": zpool_status("""
        tank
          raidz1-0
            sda
            sdb
            sdc
    """),
    "zpool-get-vdevs.txt": tab_separated("""
        ## tank
        raidz1-0  ashift  12  -
    """),
}
FAILING = (
    {**_RAIDZ_ASHIFT_12, "zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type          volume  -
        tank/vm-100-disk-0  volblocksize  8192    default
    """)},
)
PASSING = (
    {**_RAIDZ_ASHIFT_12, "zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type          volume  -
        tank/vm-100-disk-0  volblocksize  16384   -
    """)},
)


RULE = Rule(
    id="DS-VBS-RAIDZ",
    title="Small volblocksize on raidz",
    checks="zvol on raidz/draid with volblocksize ≤ 2 × 2^ashift",
    severity="warn",
    rationale="Parity and padding per small block approach mirror overhead in space, with raidz's IOPS.",
    fix="Recreate the zvol with volblocksize 16K-64K, or use mirrors for VM disks",
    source="https://openzfs.github.io/openzfs-docs/Basic%20Concepts/Datasets/ZVOLs.html",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
