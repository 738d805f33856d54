"""The synchronous-write latency sweep: Linux's missing `diskinfo -wS` (docs/method.md section 4).

For each write size, doubling from the device's logical sector size (O_DIRECT needs that alignment; 512 B
when nothing tells us) to 8 MiB, fio issues random O_DIRECT + O_DSYNC writes at queue depth 1 for `runtime`
seconds. The time per write is what a ZFS log device (SLOG) or a database's commit sees; Optane answers
4 KiB in about 15 µs, spinning disks in 8 to 15 ms.

The sweep is measured `runs` times, each run one fio process with a stonewalled job per size
(`Plan.one_process`): separate runs give every size an interval. fio 3.33 spends about 0.3 s between two
stonewalled jobs (plan.JOB_OVERHEAD_S), as much as a fio process of its own, so the runtime per size is
short (0.25 s) to keep 15 sizes x 3 runs near 25 s.
"""

from __future__ import annotations

from pathlib import Path

from stackbench.base.errors import UsageError
from stackbench.model.plan import Plan, Workload
from stackbench.probe.block import collect_target_facts
from stackbench.base.units import format_size, parse_size

MAX_SIZE = 8 * 1024**2
# Per size and run: 15 sizes x 3 runs x (0.25 s + fio's 0.3 s per job) = 25 s, under the 30 s goal on a
# device that answers in < 1 ms; FreeBSD's diskinfo -wS spends a few seconds on one pass.
DEFAULT_RUNTIME_S = 0.25
DEFAULT_RUNS = 3


def parse_sizes(spec: str) -> list[int]:
    """`512,4k..8m` -> [512, 4096, 8192, ..., 8388608]: comma-separated sizes and doubling ranges."""
    sizes: list[int] = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        if ".." in part:
            low_text, _, high_text = part.partition("..")
            low, high = parse_size(low_text, option="sizes"), parse_size(high_text, option="sizes")
            if low > high:
                raise UsageError(f"the range {part!r} runs backwards", "Write the small size first: 4k..8m")
            size = low
            while size <= high:
                sizes.append(size)
                size *= 2
        else:
            sizes.append(parse_size(part, option="sizes"))
    if not sizes:
        raise UsageError(f"--sizes {spec!r} names no size", "Use e.g. --sizes 4k..8m or --sizes 512,4k,64k")
    return sorted(set(sizes))


def default_start(target: Path) -> int:
    """The logical sector size of the disk under the target, else 512 B."""
    facts = collect_target_facts(target)
    sizes = [d.get("logical_sector_size") for d in facts.get("block_devices", []) if d.get("logical_sector_size")]
    return max(sizes) if sizes else 512


def synclat_plan(
    target: Path, *, sizes: list[int] | None, runtime: float = DEFAULT_RUNTIME_S, file_size: int,
    runs: int = DEFAULT_RUNS,
) -> Plan:
    start = default_start(target)
    chosen = sizes or parse_sizes(f"{start}..{MAX_SIZE}")
    misaligned = [s for s in chosen if s % start]
    if misaligned:
        raise UsageError(
            f"O_DIRECT writes must be multiples of the {start}-byte logical sector size; "
            f"{', '.join(format_size(s) for s in misaligned)} is not",
            f"Start --sizes at {start} or a multiple of it",
        )
    if max(chosen) > file_size:
        raise UsageError(
            f"the largest write ({format_size(max(chosen))}) exceeds --size {format_size(file_size)}",
            "Raise --size or lower --sizes",
        )
    workloads = tuple(
        Workload(
            rw="randwrite",
            bs=size,
            iodepth=1,
            sync=True,
            dsync=True,
            direct=True,
            size=file_size,
            runtime=runtime,
            ioengine="psync",
        )
        for size in chosen
    )
    return Plan(name="synclat", workloads=workloads, runs=runs, one_process=True)
