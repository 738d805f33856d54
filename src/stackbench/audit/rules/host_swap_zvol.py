"""HOST-SWAP-ZVOL: swap on a zvol (a /proc/swaps device that is /dev/zvol/..., a zd* device, or a device
stacked on one, such as dm-crypt on a zvol).

Swapping happens when memory is short, and writing to a zvol needs memory (ZFS allocates while it
writes), so swap on a zvol can deadlock under memory pressure (openzfs#7734); Proxmox says swap on a zvol
"may generate some troubles". docs/method.md put its VMs' swap on a separate sync=always zvol pool, which is a
different thing (the guests' swap inside their disks). Info, per the knowledge base (section 3): it works
until it does not. The zvol's dataset is named when the facts' device links include /dev/zvol/.
"""

import re
from typing import Iterator

from stackbench.audit.facts import Facts
from stackbench.audit.rule import Finding, Rule

ZD = re.compile(r"^zd\d+(p\d+)?$")


def _zvol_of(facts, device):
    """(the zd device or link, the zvol dataset if known) when `device` is or sits on a zvol, else None."""
    if device.startswith("/dev/zvol/"):
        return device, device[len("/dev/zvol/"):]
    name = facts.links.get(device, device).rsplit("/", 1)[-1]
    for _ in range(8):
        if ZD.match(name):
            disk = re.sub(r"p\d+$", "", name)
            datasets = [link[len("/dev/zvol/"):] for link, target in facts.links.items()
                        if link.startswith("/dev/zvol/") and target.rsplit("/", 1)[-1] == disk]
            return f"/dev/{name}", datasets[0] if datasets else None
        parent = facts.block_devices.get(name)
        if parent is None or not parent.parent:
            return None
        name = parent.parent
    return None


def check(facts: Facts) -> Iterator[Finding]:
    for device in facts.swaps or []:
        found = _zvol_of(facts, device)
        if found is None:
            continue
        zd, dataset = found
        via = "" if zd == device else f" (on {zd})"
        what = f"zvol {dataset}" if dataset else "a zvol (zd device)"
        yield RULE.finding(
            device,
            f"{device} in /proc/swaps is {what}{via}",
            f"swapoff {device}; remove it from /etc/fstab; use a swap partition (or zram) outside ZFS",
        )


_HEADER = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
FAILING = ({"swaps.txt": _HEADER + "/dev/zd0                                partition\t2097148\t\t0\t\t-2\n"},)
PASSING = ({"swaps.txt": _HEADER + "/dev/sda2                               partition\t2097148\t\t0\t\t-2\n"},)


RULE = Rule(
    id="HOST-SWAP-ZVOL",
    title="Swap on a zvol",
    checks="swap on a zvol (/dev/zvol/..., zd*, or a device stacked on one)",
    severity="info",
    rationale="Writing to a zvol needs memory, so swap on a zvol can deadlock under memory pressure.",
    fix="Swap on a plain partition or zram, not on a zvol",
    source="https://openzfs.github.io/openzfs-docs/Basic%20Concepts/Datasets/ZVOLs.html",
    check=check,
    doc=__doc__,
    failing=FAILING,
    passing=PASSING,
)
