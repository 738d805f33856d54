"""Helpers for rules over the vdev tree."""

from __future__ import annotations

import re

from stackbench.audit.facts import Facts, Vdev


def failures_tolerated(vdev: Vdev) -> int:
    """How many disks a top-level vdev can lose: n-way mirror n-1, raidzN and draidN N, single disk 0."""
    if vdev.type == "mirror":
        return max(0, len(vdev.leaves) - 1)
    match = re.match(r"(?:raidz|draid)(\d)?", vdev.type)
    if match:
        return int(match[1] or 1)
    return 0


def data_vdevs(facts: Facts, pool: str) -> list[Vdev]:
    return [v for v in facts.vdevs.get(pool, []) if v.vdev_class == "normal"]


def class_vdevs(facts: Facts, pool: str, vclass: str) -> list[Vdev]:
    return [v for v in facts.vdevs.get(pool, []) if v.vdev_class == vclass]


def pool_of(dataset: str) -> str:
    return dataset.split("/", 1)[0]


def ashift_evidence(vdev: Vdev) -> str:
    return f"ashift={vdev.ashift} ({vdev.ashift_source})" if vdev.ashift is not None else "ashift unknown"


def vdev_subject(pool: str, vdev: Vdev) -> str:
    """How findings name a vdev: `tank vdev mirror-0`, `tank vdev /dev/vde1` (names may be paths)."""
    return f"{pool} vdev {vdev.name}"
