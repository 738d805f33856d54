"""DS-SYNC-DISABLED: sync=disabled on a zvol (a VM disk): acknowledged fsyncs are lost on power failure."""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    for name in facts.zvols():
        if facts.dataset_prop(name, "sync") == "disabled":
            yield Finding(
                "DS-SYNC-DISABLED", "crit", name, "sync=disabled (zfs get)", f"zfs set sync=standard {name}",
                prove="stackbench slog /path/on/pool --pool-dataset /POOL/DATASET to see the cost of sync=standard",
            )


RULE = Rule(
    "DS-SYNC-DISABLED", "sync=disabled on VM storage", "crit",
    "Writes the guest flushed are acknowledged before they are on disk and are lost on power failure.",
    "zfs set sync=standard DATASET; add a SLOG if sync latency is the problem",
    "https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html#sync", check, doc=__doc__,
)
