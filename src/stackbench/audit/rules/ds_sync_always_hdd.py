"""DS-SYNC-ALWAYS-HDD: sync=always on a pool of rotational disks without a log vdev: a large penalty on
writes (about 20 % in METHOD.md section 3)."""

from stackbench.audit.rule import Finding, Rule
from stackbench.audit.rules._pool import class_vdevs, data_vdevs, rotational


def check(facts):
    for name, props in facts.datasets.items():
        if props.get("sync", ("",))[0] != "always":
            continue
        pool = name.split("/")[0]
        leaves = [leaf for v in data_vdevs(facts, pool) for leaf in v.leaves]
        if leaves and all(rotational(facts, leaf) for leaf in leaves) and not class_vdevs(facts, pool, "logs"):
            yield Finding(
                "DS-SYNC-ALWAYS-HDD", "warn", name, "sync=always, rotational data disks, no log vdev",
                f"zfs set sync=standard {name}, or add a SLOG",
                prove=f"stackbench run -t /{name} --bs 4k --qd 4 --rw randwrite before and after, then stackbench compare",
            )


RULE = Rule(
    "DS-SYNC-ALWAYS-HDD", "sync=always on spinning disks without a SLOG", "warn",
    "Every write waits for the disks' cache flush.",
    "sync=standard, or add a SLOG",
    "https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html#sync", check, doc=__doc__,
)
