#!/usr/bin/env python3
"""Are `slog`'s rankings true? An A/A study (the same device twice: no difference) and a known slowdown
(one device made 2x slower: ranked second, proven).

Two loop devices over files in /var/tmp (never a real device) stand for two log devices. A/A: `stackbench
slog L1 L1 --destroy-data` (the same target as two candidates) must name no best candidate: the goal is no
difference in at least 95 % of the trials. Slowdown: L2 is throttled with cgroup v1's blkio controller
(`blkio.throttle.write_iops_device` of a child cgroup of our own, the stackbench process and its fio in it)
so that fio's QD1 sync writes on it run at half the IOPS L1 gives, measured with fio right before; `stackbench
slog L1 L2` must name L1 best, proven better than L2. The throttle counts block requests, and an O_SYNC write
is a write and a flush, so the limit is calibrated against the IOPS fio measures through it.

Needs root and cgroup v1's blkio hierarchy at /sys/fs/cgroup/blkio. Everything made is removed at the end
(loop devices detached, files deleted, the cgroup removed). Prints the counts to paste into bench/RESULTS.md;
on a loaded machine the slowdown drowns in the noise: rerun on a quiet one.

    .venv/bin/python bench/slog_truth.py --trials 20
    .venv/bin/python bench/slog_truth.py --trials 2 --runs 3 --runtime 1   # a correctness check
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator
from contextlib import contextmanager

BLKIO = Path("/sys/fs/cgroup/blkio")


@contextmanager
def loop_devices(directory: Path, count: int, size: int) -> Iterator[list[str]]:
    """`count` loop devices over sparse files in `directory`, detached and deleted afterwards."""
    made: list[tuple[str, Path]] = []
    try:
        for index in range(count):
            backing = directory / f"slog-truth-{index}.img"
            with open(backing, "wb") as handle:
                handle.truncate(size)
            device = subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True,
                                    check=True).stdout.strip()
            made.append((device, backing))
        yield [device for device, _ in made]
    finally:
        for device, backing in made:
            subprocess.run(["losetup", "-d", device], capture_output=True)
            backing.unlink(missing_ok=True)


@contextmanager
def blkio_cgroup() -> Iterator[Path]:
    """A child cgroup of our own under the blkio hierarchy, removed afterwards (its processes have ended)."""
    if not (BLKIO / "blkio.throttle.write_iops_device").exists():
        raise SystemExit(f"no cgroup v1 blkio hierarchy at {BLKIO}: this bench needs it")
    group = BLKIO / f"stackbench-slog-truth-{os.getpid()}"
    group.mkdir()
    try:
        yield group
    finally:
        for rule in (group / "blkio.throttle.write_iops_device").read_text().split("\n"):
            if rule.strip():
                (group / "blkio.throttle.write_iops_device").write_text(f"{rule.split()[0]} 0\n")
        for attempt in range(100):  # after Ctrl-C the stackbench and fio in it may still be leaving
            try:
                group.rmdir()
                break
            except OSError:
                if attempt == 99:
                    raise
                time.sleep(0.1)


def device_number(device: str) -> str:
    return (Path("/sys/block") / Path(device).name / "dev").read_text().strip()


def in_group(group: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run `command` with its process (and so every child it starts) in `group`."""
    def enter() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))

    return subprocess.run(command, capture_output=True, text=True, preexec_fn=enter)


def fio_qd1_iops(group: Path, device: str, seconds: float) -> float:
    """4 KiB random O_SYNC writes at QD1 (slog's QD1 cell), measured by fio in the group."""
    done = in_group(group, ["fio", "--name=probe", f"--filename={device}", "--rw=randwrite", "--bs=4k", "--sync=1",
                            "--ioengine=posixaio", "--iodepth=1", "--size=64M", f"--runtime={seconds}",
                            "--time_based", "--output-format=json"])
    if done.returncode:
        raise SystemExit(f"fio failed on {device}: {done.stderr.strip()[-300:]}")
    return float(json.loads(done.stdout)["jobs"][0]["write"]["iops"])


def throttle(group: Path, device: str, iops: int) -> None:
    (group / "blkio.throttle.write_iops_device").write_text(f"{device_number(device)} {iops}\n")


def slog(group: Path, db: str, candidates: list[str], args: argparse.Namespace) -> dict:
    done = in_group(group, [sys.executable, "-m", "stackbench", "slog", *candidates, "--destroy-data", "--runs",
                            str(args.runs), "--runtime", str(args.runtime), "--ramp", str(args.ramp), "--size", "64M",
                            "--db", db, "--json"])
    if done.returncode:
        raise SystemExit(f"stackbench slog failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20, help="trials of each study (default 20)")
    parser.add_argument("--runs", type=int, default=5, help="slog --runs (default 5, slog's own)")
    parser.add_argument("--runtime", type=float, default=2.0, help="slog --runtime (default 2 s)")
    parser.add_argument("--ramp", type=float, default=0.5, help="slog --ramp (default 0.5 s)")
    parser.add_argument("--dir", default="/var/tmp", help="where the loop devices' files go (default /var/tmp)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root: loop devices and a blkio cgroup")

    work = Path(tempfile.mkdtemp(prefix="sb-slog-truth-", dir=args.dir))
    db = f"sqlite:///{work / 'bench.db'}"
    try:
        with loop_devices(work, 2, 256 * 1024**2) as (fast, slow), blkio_cgroup() as group:
            print(f"A/A: {fast} twice; slowdown: {fast} against {slow} throttled to half its QD1 IOPS; "
                  f"{args.runs} runs of {args.runtime:g} s (+{args.ramp:g} s ramp) per candidate and depth")
            no_difference = sum(best is None for best in trials("A/A", group, db, [fast, fast], args))
            native = fio_qd1_iops(group, fast, 3.0)
            probe_limit = max(2, int(native))
            throttle(group, slow, probe_limit)
            per_write = probe_limit / fio_qd1_iops(group, slow, 3.0)  # block requests per O_SYNC write
            throttle(group, slow, max(1, round(native / 2 * per_write)))
            slowed = fio_qd1_iops(group, slow, 3.0)
            print(f"  {fast}: {native:,.0f} QD1 IOPS; {slow} throttled: {slowed:,.0f} ({native / slowed:.2f}x slower, "
                  f"{per_write:.2f} block requests per write)")
            right = sum(best == fast for best in trials("2x", group, db, [fast, slow], args))
    finally:
        for path in work.iterdir():
            path.unlink()
        work.rmdir()
    print()
    print(f"A/A: no difference in {no_difference} of {args.trials} trials ({no_difference / args.trials:.0%}; "
          "goal >= 95 %)")
    print(f"2x slowdown: ranked correctly (the fast device proven best) in {right} of {args.trials} trials "
          f"({right / args.trials:.0%})")


def trials(study: str, group: Path, db: str, candidates: list[str], args: argparse.Namespace) -> list[str | None]:
    """`--trials` shoot-outs of `candidates`, each printed: the best candidate each named (None: none)."""
    found = []
    for trial in range(1, args.trials + 1):
        ranking = slog(group, db, candidates, args)["rankings"][0]
        top = ranking["comparisons"][0] if ranking["comparisons"] else {}
        print(f"  {study} {trial}: best {ranking['best']}, {_change(top)}", flush=True)
        found.append(ranking["best"])
    return found


def _change(top: dict) -> str:
    if not top or top.get("latency_ratio") is None:
        return "no test"
    low, high = top["latency_ratio_ci"] or (None, None)
    shown = f" [{low - 1:+.1%}, {high - 1:+.1%}]" if low is not None else ""
    return f"{top['candidate']} vs {top['next']} {top['latency_ratio'] - 1:+.1%}{shown} p={top['p_holm']:.3f} {top['verdict']}"


if __name__ == "__main__":
    main()
