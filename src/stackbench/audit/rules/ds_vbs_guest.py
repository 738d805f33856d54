"""DS-VBS-GUEST: a zvol's volblocksize outside 8K-64K, the usual range for 4K guest file systems.

Default is 16K since OpenZFS 2.2 (8K before). Too large: small writes become read-modify-write; too small:
more metadata and, on raidz, more padding (DS-VBS-RAIDZ). 8K on 4Kn disks is two aligned sectors, not
"misaligned" (knowledge base, section 3). Test before changing: defaults are usually right."""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.prove import in_guest
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.versions import default_volblocksize, label


def check(facts: Facts) -> Iterator[Finding]:
    for name in facts.zvols():
        size = facts.dataset_prop(name, "volblocksize")
        if size and size.isdigit() and not 8192 <= int(size) <= 65536:
            default = default_volblocksize(facts.version)
            note = f"; the default of {label(facts.version)} is {default // 1024}K" if default else ""
            fix = "create a test zvol with -o volblocksize=16K, copy the disk, compare, then switch"
            yield RULE.finding(
                name, f"volblocksize={size}{note}", fix,
                prove=in_guest(RULE.id, "--bs 4k,64k --qd 4 --rw randwrite,randread", "move the disk to the new zvol"),
            )


FAILING = (
    {"zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type          volume  -
        tank/vm-100-disk-0  volblocksize  131072  -
    """)},
)
PASSING = (
    {"zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type          volume  -
        tank/vm-100-disk-0  volblocksize  16384   -
    """)},
)


RULE = Rule(
    id="DS-VBS-GUEST",
    title="volblocksize outside 8K-64K",
    checks="volblocksize outside 8K–64K",
    severity="info",
    rationale="Too large causes read-modify-write of small guest writes; too small adds metadata.",
    fix="Measure, then recreate with a volblocksize in 8K-64K",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#zvol-volblocksize",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
