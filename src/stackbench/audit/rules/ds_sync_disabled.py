"""DS-SYNC-DISABLED: sync=disabled on a zvol, or on a dataset that holds VM disks: writes the guest flushed
are acknowledged before they are on stable storage and are lost on power failure ("very dangerous",
zfsprops(7)). A database's fsync is lied to the same way."""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    zvols = set(facts.zvols())
    holders = {loc.dataset for _, _, loc in facts.vm_disks() if loc.dataset}  # zvols and ZFS file systems
    for name in sorted(zvols | holders):
        if facts.dataset_prop(name, "sync") == "disabled":
            what = "zvol" if name in zvols else "holds VM disks"
            yield RULE.finding(
                name, f"sync=disabled ({facts.dataset_source(name, 'sync')}), {what}",
                f"zfs set sync=standard {name}",
                prove=f"if sync latency was the reason, rank log devices first: stackbench slog /mnt/candidate1 "
                      f"/mnt/candidate2 --pool-dataset /{name.split('/')[0]}/slogtest",
            )


FAILING = (
    {"zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type  volume    -
        tank/vm-100-disk-0  sync  disabled  local
    """)},
)
PASSING = (
    {"zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type  volume    -
        tank/vm-100-disk-0  sync  standard  default
    """)},
)


RULE = Rule(
    id="DS-SYNC-DISABLED",
    title="sync=disabled on VM storage",
    checks="sync=disabled on a zvol or on a dataset holding VM disks",
    severity="crit",
    rationale="Writes the guest flushed are acknowledged before they are on disk and are lost on power failure.",
    fix="zfs set sync=standard DATASET; add a SLOG if sync latency is the problem",
    source="https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html#sync",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
