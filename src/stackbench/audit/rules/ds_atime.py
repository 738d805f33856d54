"""DS-ATIME: a file system with atime=on and relatime=off: every read of an image file writes metadata.

Zvols have no atime. relatime defaults to on since OpenZFS 2.2.0.
"""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    for name in facts.filesystems():
        if facts.dataset_prop(name, "atime") == "on" and facts.dataset_prop(name, "relatime") == "off":
            yield Finding(
                "DS-ATIME", "info", name, "atime=on, relatime=off (zfs get)", f"zfs set atime=off {name}",
                prove=f"stackbench run -t /{name} --bs 4k --qd 4 --rw randread before and after, then stackbench compare",
            )


RULE = Rule(
    "DS-ATIME", "atime updates on a dataset holding image files", "info",
    "Every read updates the access time: a metadata write per read.",
    "zfs set atime=off DATASET (image datasets)",
    "https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#atime-updates",
    check, doc=__doc__,
)
