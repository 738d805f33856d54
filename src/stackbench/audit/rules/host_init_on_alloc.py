"""HOST-INIT-ON-ALLOC: the kernel runs with init_on_alloc=1, which "can lower ARC throughput considerably"."""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    if facts.cmdline and "init_on_alloc=1" in facts.cmdline.split():
        yield Finding("HOST-INIT-ON-ALLOC", "info", "kernel", "init_on_alloc=1 in /proc/cmdline",
                      "add init_on_alloc=0 to the kernel command line if the security trade-off is acceptable")


RULE = Rule(
    "HOST-INIT-ON-ALLOC", "Kernel zeroes every allocation", "info",
    "Zeroing every page the ARC allocates costs memory bandwidth.",
    "init_on_alloc=0 on the kernel command line",
    "https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html", check, doc=__doc__,
)
