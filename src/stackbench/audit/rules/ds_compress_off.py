"""DS-COMPRESS-OFF: compression=off on VM storage (zvols, and file systems below the pool's root). LZ4
is cheap and usually a net win (about 10 % in docs/method.md); `on` (= lz4) is the default since OpenZFS
2.2.0, `off` before, so on 2.1 an untouched pool has this finding. New writes only."""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.prove import BLOG_QD4, ab, in_guest, mountpoint
from stackbench.audit.rule import Finding, Rule
from stackbench.audit.versions import default_compression, label


def check(facts: Facts) -> Iterator[Finding]:
    for name, props in facts.datasets.items():
        value, source = props.get("compression", ("", ""))
        kind = props.get("type", ("",))[0]
        if value != "off" or kind not in ("volume", "filesystem") or "/" not in name:
            continue
        note = f", the default of {label(facts.version)}" if source == "default" and default_compression(facts.version) == "off" else ""
        fix = f"zfs set compression=lz4 {name}"
        prove = in_guest(RULE.id, BLOG_QD4, fix) if kind == "volume" else ab(
            RULE.id, mountpoint(facts, name), BLOG_QD4, fix)
        yield RULE.finding(name, f"compression=off ({source}{note})", fix, prove=prove)


FAILING = (
    {"zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type         volume  -
        tank/vm-100-disk-0  compression  off     local
    """)},
)
PASSING = (
    {"zfs-get-Hp-all.txt": tab_separated("""
        tank/vm-100-disk-0  type         volume  -
        tank/vm-100-disk-0  compression  lz4     local
    """)},
)


RULE = Rule(
    id="DS-COMPRESS-OFF",
    title="Compression off on VM storage",
    checks="compression=off on a dataset or zvol (the default before 2.2)",
    severity="info",
    rationale="LZ4 costs little CPU and usually saves I/O; new writes only.",
    fix="zfs set compression=lz4 DATASET",
    source="https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#lz4-compression",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
