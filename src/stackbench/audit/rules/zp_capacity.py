"""ZP-CAPACITY: pool capacity at or above 90 %: allocation switches to best-fit and IOPS drop."""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    for pool, props in facts.pools.items():
        value = props.get("capacity", "").rstrip("%")
        if value.isdigit() and int(value) >= 90:
            yield Finding("ZP-CAPACITY", "warn", pool, f"capacity={value}%", "free space or add vdevs")


RULE = Rule(
    "ZP-CAPACITY", "Pool nearly full", "warn",
    "Metaslabs under 4 % free switch to best-fit allocation, which is CPU-heavy and cuts IOPS.",
    "Free space or grow the pool",
    "https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#free-space",
    check, doc=__doc__,
)
