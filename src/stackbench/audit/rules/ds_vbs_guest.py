"""DS-VBS-GUEST: a zvol's volblocksize outside 8K-64K, the usual range for 4K guest file systems.

Default is 16K since OpenZFS 2.2 (8K before). Too large: small writes become read-modify-write; too small:
more metadata. Test before changing (METHOD: defaults are usually right)."""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    for name in facts.zvols():
        size = facts.dataset_prop(name, "volblocksize")
        if size and size.isdigit() and not 8192 <= int(size) <= 65536:
            yield Finding(
                "DS-VBS-GUEST", "info", name, f"volblocksize={size}",
                "test, then recreate the zvol with -o volblocksize=16K",
                prove="stackbench run inside the guest on both zvols, then stackbench compare",
            )


RULE = Rule(
    "DS-VBS-GUEST", "volblocksize outside 8K-64K", "info",
    "Too large causes read-modify-write of small guest writes; too small adds metadata.",
    "Measure, then recreate with a volblocksize in 8K-64K",
    "https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#zvol-volblocksize",
    check, doc=__doc__,
)
