"""BLK-READAHEAD-OFF: a disk's read-ahead is switched off (`read_ahead_kb` 0).

With no read-ahead, a buffered sequential read reaches the device one page at a time, each waiting for the
one before: measured on this project's build machine, a 4K sequential buffered read from an ext4 loop device
with `read_ahead_kb` 0 runs several times slower than with the kernel's default (docs/tune.md, the worked
example). O_DIRECT reads and ZFS (which reads ahead itself) do not use it, so the finding is a warning, not an
error. Someone sets 0 by hand or a udev rule does (a database vendor's advice for random reads); the kernel's
default is 128 KiB, and `stackbench tune` proves a value on the machine before keeping it.
"""

from typing import Iterator

from stackbench.audit.examples import tab_separated
from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule


def check(facts: Facts) -> Iterator[Finding]:
    for disk, queue in sorted(facts.block_queue.items()):
        if queue.get("read_ahead_kb") != "0":
            continue
        where = next((point for source, point, _ in facts.mounts if source == f"/dev/{disk}"), "DIR")
        yield RULE.finding(
            disk, f"/sys/block/{disk}/queue/read_ahead_kb = 0 (block queue)",
            f"echo 128 > /sys/block/{disk}/queue/read_ahead_kb (the kernel's default), then keep it with a udev "
            "rule (stackbench tune --persist)",
            prove=f"stackbench tune -t {where} --knob blockdev.read_ahead_kb=128 --rw read --bs 4k --qd 1 "
                  "--buffered --apply",
        )


FAILING = (
    {"sys-block-queue.txt": tab_separated("""
        /sys/block/sdb/queue/rotational     1
        /sys/block/sdb/queue/read_ahead_kb  0
    """)},
)
PASSING = (
    {"sys-block-queue.txt": tab_separated("""
        /sys/block/sdb/queue/rotational     1
        /sys/block/sdb/queue/read_ahead_kb  128
    """)},
    # an older capture without read_ahead_kb: unknown is not 0
    {"sys-block-queue.txt": tab_separated("""
        /sys/block/sdb/queue/rotational     1
    """)},
)


RULE = Rule(
    id="BLK-READAHEAD-OFF",
    title="Read-ahead switched off on a disk",
    checks="read_ahead_kb = 0 on a block device",
    severity="warn",
    rationale="Without read-ahead a buffered sequential read waits for the device one page at a time.",
    fix="Set read_ahead_kb back to 128 (the kernel's default) and prove a larger value with stackbench tune",
    source="https://docs.kernel.org/admin-guide/abi-stable.html#abi-sys-block-disk-queue",
    check=check,
    doc=__doc__ or "",
    failing=FAILING,
    passing=PASSING,
)
