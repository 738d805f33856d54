"""DS-SSB-SIZE: special_small_blocks at or above the recordsize sends all data to the special vdev; set
without any special vdev it does nothing."""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    for name in facts.filesystems():
        ssb = facts.dataset_prop(name, "special_small_blocks")
        record = facts.dataset_prop(name, "recordsize")
        if not ssb or not ssb.isdigit() or int(ssb) == 0:
            continue
        pool = name.split("/")[0]
        has_special = any(v.vdev_class == "special" for v in facts.vdevs.get(pool, []))
        if not has_special:
            yield Finding("DS-SSB-SIZE", "info", name, f"special_small_blocks={ssb} but {pool} has no special vdev",
                          f"zfs set special_small_blocks=0 {name}")
        elif record and record.isdigit() and int(ssb) >= int(record):
            yield Finding(
                "DS-SSB-SIZE", "warn", name, f"special_small_blocks={ssb} >= recordsize={record}",
                f"zfs set special_small_blocks=<below {record}> {name}",
                prove=f"stackbench smallblocks {facts.dataset_prop(name, 'mountpoint') or '/' + name} --recordsize {record} recommends a value from the file sizes",
            )


RULE = Rule(
    "DS-SSB-SIZE", "special_small_blocks at or above the recordsize", "warn",
    "Every block of the dataset then lands on the special vdev and fills it.",
    "Set special_small_blocks well below the recordsize; size it with stackbench smallblocks",
    "https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html#special_small_blocks", check, doc=__doc__,
)
