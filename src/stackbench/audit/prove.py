"""The measurement that would prove a finding's performance claim on the user's own machine.

docs/method.md: change one thing, measure before and after with the same workload, keep the change only if it
helps. So a finding with a performance claim carries the exact A/B commands: a labelled run, the fix, the
same run again, and `stackbench compare`. Targets are scratch files in a directory (never a device with
data); for a zvol the run belongs inside the guest that uses it.
"""

from __future__ import annotations

from stackbench.audit.facts import Facts

GUEST_DIR = "/mnt/scratch"  # a directory inside the VM on the disk in question


def mountpoint(facts: Facts, dataset: str) -> str:
    """Where to put the scratch file for a dataset: its mount point if known, else /<dataset>."""
    point = facts.dataset_prop(dataset, "mountpoint")
    return point if point and point.startswith("/") else f"/{dataset}"


def ab(rule_id: str, target: str, workload: str, change: str, where: str = "") -> str:
    """`run before; change; run after; compare` with labels named after the rule."""
    label = rule_id.lower()
    run = f"stackbench run -t {target} {workload} --runs 5"
    prefix = f"{where}: " if where else ""
    return (f"{prefix}{run} --label {label}-before; {change}; {run} --label {label}-after; "
            f"stackbench compare {label}-before {label}-after")


def in_guest(rule_id: str, workload: str, change: str) -> str:
    return ab(rule_id, GUEST_DIR, workload, change, where="inside the VM")


SYNC_4K = "--bs 4k --qd 1,4 --rw randwrite --sync"
RAND_4K_WRITE = "--bs 4k --qd 4 --rw randwrite"
BLOG_QD4 = "--preset blog --qd 4 --runtime 30"
