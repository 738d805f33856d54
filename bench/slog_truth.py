#!/usr/bin/env python3
"""Are `slog`'s rankings true? An A/A study (the same device twice: no difference) and a known slowdown
(one device slower for every write: ranked second, proven).

Loop devices over files in /var/tmp (never a real device) stand for log devices. A/A: `stackbench slog L1 L1
--destroy-data` (the same target as two candidates) must name no best candidate: the goal is no difference
in at least 95 % of the trials. Slowdown: `stackbench slog L1 L2` must name L1 best, proven better than L2.

slog ranks by the median latency of a QD1 sync write, so the slowdown planted must make every write slower,
as a slower log device does. The default plant (`--plant nested`): L2 is a loop device over a file on an
ext4 file system on a loop device over a file in /var/tmp, so each of its sync writes passes two loop devices
and two file systems' journals where L1's passes one of each. The older plant (`--plant throttle`: L2 in a
cgroup v1 blkio child throttled to half L1's block requests a second) halves L2's IOPS but not its median:
the throttle is a token bucket refilled per slice (100 ms on a rotational queue), so about 95 writes of 96
pass at full speed and one waits out the slice (bench/RESULTS.md). It is kept to show that.

Before counting a trial of the slowdown study the bench checks, from slog's own JSON, that the planted
slowdown reached slog's runs: L2's QD1 IOPS at most 1/1.5 of L1's (with the throttle, also that the
cgroup's throttle counted L2's writes: blkio.throttle.io_serviced). Each trial prints what slog's runs saw
(median, mean and IOPS ratios of L2 to L1), so a plant that misses slog shows at once.

Needs root (loop devices, a mount, a cgroup). Everything made is removed at the end (loop devices detached,
the file system unmounted, files deleted, the cgroup removed). Prints the counts to paste into
bench/RESULTS.md; on a loaded machine the slowdown drowns in the noise: rerun on a quiet one.

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
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

BLKIO = Path("/sys/fs/cgroup/blkio")
# The plant reached slog's runs when the slow candidate's QD1 IOPS in them are at most 1/REACHED of the fast
# one's: IOPS, not the median slog ranks, so that the check does not decide the outcome it gates.
REACHED = 1.5


def losetup(backing: Path) -> str:
    return subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True,
                          check=True).stdout.strip()


@contextmanager
def loop_device(backing: Path, size: int) -> Iterator[str]:
    """A loop device over a new file `backing`, written whole first (a sparse file's first writes allocate
    blocks, a journal commit each, and get faster as it fills: a slowdown that fades during the trials),
    detached and the file deleted afterwards."""
    chunk = b"\0" * 1024**2
    with open(backing, "wb") as handle:
        for _ in range(size // len(chunk)):
            handle.write(chunk)
        handle.flush()
        os.fsync(handle.fileno())
    device = None
    try:
        device = losetup(backing)
        yield device
    finally:
        if device:
            subprocess.run(["losetup", "-d", device], capture_output=True)
        backing.unlink(missing_ok=True)


@contextmanager
def nested_loop_device(work: Path, size: int) -> Iterator[str]:
    """A loop device over a file on ext4 on a loop device over a file in `work`: a sync write passes two loop
    devices and two journals, every write slower (not a throttle's occasional wait)."""
    mount = work / "nested-mnt"
    with loop_device(work / "slog-truth-base.img", 2 * size) as base:
        subprocess.run(["mkfs.ext4", "-q", "-F", base], capture_output=True, check=True)
        mount.mkdir()
        subprocess.run(["mount", base, str(mount)], capture_output=True, check=True)
        try:
            with loop_device(mount / "inner.img", size) as device:
                yield device
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)
            mount.rmdir()


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


def fio_qd1(group: Path, device: str, seconds: float) -> tuple[float, float]:
    """4 KiB random O_SYNC writes at QD1 (slog's QD1 cell), measured by fio in the group: IOPS and the
    median completion latency in µs (what slog ranks)."""
    done = in_group(group, ["fio", "--name=probe", f"--filename={device}", "--rw=randwrite", "--bs=4k", "--sync=1",
                            "--ioengine=posixaio", "--iodepth=1", "--size=64M", f"--runtime={seconds}",
                            "--time_based", "--output-format=json"])
    if done.returncode:
        raise SystemExit(f"fio failed on {device}: {done.stderr.strip()[-300:]}")
    write = json.loads(done.stdout)["jobs"][0]["write"]
    return float(write["iops"]), float(write["clat_ns"]["percentile"]["50.000000"]) / 1000


def throttle(group: Path, device: str, iops: int) -> None:
    (group / "blkio.throttle.write_iops_device").write_text(f"{device_number(device)} {iops}\n")


def serviced_writes(group: Path, device: str) -> int:
    """The write requests the group's throttle has counted on `device` (blkio.throttle.io_serviced)."""
    number = device_number(device)
    for line in (group / "blkio.throttle.io_serviced").read_text().splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] == number and fields[1] == "Write":
            return int(fields[2])
    return 0


def slog(group: Path, db: str, candidates: list[str], args: argparse.Namespace) -> dict:
    done = in_group(group, [sys.executable, "-m", "stackbench", "slog", *candidates, "--destroy-data", "--runs",
                            str(args.runs), "--runtime", str(args.runtime), "--ramp", str(args.ramp), "--size", "64M",
                            "--db", db, "--json"])
    if done.returncode:
        raise SystemExit(f"stackbench slog failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def inside(result: dict, first: str, second: str) -> dict[str, float]:
    """What slog's own runs saw of `second` against `first` at QD1, 4 KiB: the median latency it ranks, the
    mean latency and the IOPS, each `second` / `first` (a slower second: latencies above 1, IOPS below)."""
    qd1 = {c["candidate"]: c["qd1"] for c in result["candidates"] if c["size_bytes"] == 4096 and c["qd1"]}
    a, b = qd1[first], qd1[second]
    return {"median": b["clat_median_us"] / a["clat_median_us"], "mean": b["clat_mean_us"] / a["clat_mean_us"],
            "iops": b["iops"] / a["iops"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20, help="trials of each study (default 20)")
    parser.add_argument("--runs", type=int, default=5, help="slog --runs (default 5, slog's own)")
    parser.add_argument("--runtime", type=float, default=2.0, help="slog --runtime (default 2 s)")
    parser.add_argument("--ramp", type=float, default=0.5, help="slog --ramp (default 0.5 s)")
    parser.add_argument("--plant", choices=("nested", "throttle"), default="nested",
                        help="the slowdown: a loop device nested over ext4 (every write slower; default) or a blkio "
                             "throttle to half the requests a second (IOPS halved, not the median: see the docstring)")
    parser.add_argument("--dir", default="/var/tmp", help="where the loop devices' files go (default /var/tmp)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root: loop devices, a mount and a blkio cgroup")

    work = Path(tempfile.mkdtemp(prefix="sb-slog-truth-", dir=args.dir))
    db = f"sqlite:///{work / 'bench.db'}"
    size = 128 * 1024**2  # slog writes 64 MiB of it
    try:
        with ExitStack() as stack:
            group = stack.enter_context(blkio_cgroup())
            fast = stack.enter_context(loop_device(work / "slog-truth-fast.img", size))
            slow = stack.enter_context(nested_loop_device(work, size) if args.plant == "nested"
                                       else loop_device(work / "slog-truth-slow.img", size))
            print(f"A/A: {fast} twice; slowdown: {fast} against {slow} ({args.plant}); {args.runs} runs of "
                  f"{args.runtime:g} s (+{args.ramp:g} s ramp) per candidate and depth")
            no_difference = sum(best is None for best, _ in trials("A/A", group, db, [fast, fast], args))
            native, native_p50 = fio_qd1(group, fast, 3.0)
            if args.plant == "throttle":
                probe_limit = max(2, int(native))
                throttle(group, slow, probe_limit)
                per_write = probe_limit / fio_qd1(group, slow, 3.0)[0]  # block requests per O_SYNC write
                throttle(group, slow, max(1, round(native / 2 * per_write)))
            slowed, slowed_p50 = fio_qd1(group, slow, 3.0)
            print(f"  fio before the trials: {fast} {native:,.0f} QD1 IOPS, median {native_p50:,.0f} µs; {slow} "
                  f"{slowed:,.0f} IOPS ({native / slowed:.2f}x fewer), median {slowed_p50:,.0f} µs "
                  f"({slowed_p50 / native_p50:.2f}x)")
            found = trials("slowdown", group, db, [fast, slow], args, slow=slow)
    finally:
        for path in work.iterdir():  # a mount point left mounted stays, and rmdir says so
            path.rmdir() if path.is_dir() else path.unlink()
        work.rmdir()
    reached = [best for best, ok in found if ok]
    right = sum(best == fast for best in reached)
    print()
    print(f"A/A: no difference in {no_difference} of {args.trials} trials ({no_difference / args.trials:.0%}; "
          "goal >= 95 %)")
    print(f"slowdown ({args.plant}): reached slog's runs (QD1 IOPS {REACHED:g}x or more lower) in {len(reached)} of "
          f"{args.trials} trials; ranked correctly (the fast device proven best) in {right} of {len(reached)}"
          + (f" ({right / len(reached):.0%})" if reached else ""))


def trials(study: str, group: Path, db: str, candidates: list[str], args: argparse.Namespace,
           slow: str | None = None) -> list[tuple[str | None, bool]]:
    """`--trials` shoot-outs of `candidates`, each printed with what slog's own runs saw of the second
    candidate against the first: the best candidate each named (None: none), and whether the planted
    slowdown reached slog's runs (always True for the A/A study)."""
    found = []
    names = [candidates[0], candidates[1] if candidates[1] != candidates[0] else f"{candidates[0]} #2"]
    for trial in range(1, args.trials + 1):
        before = serviced_writes(group, slow) if slow and args.plant == "throttle" else 0
        result = slog(group, db, candidates, args)
        ranking = result["rankings"][0]
        top = ranking["comparisons"][0] if ranking["comparisons"] else {}
        seen = inside(result, *names)
        ok = slow is None or seen["iops"] <= 1 / REACHED
        if slow and args.plant == "throttle":
            counted = serviced_writes(group, slow) - before
            ok = ok and counted > 0
            through = f", {counted:,} write requests through the throttle"
        else:
            through = ""
        mark = "" if ok else " — the slowdown did not reach slog's runs: not counted"
        print(f"  {study} {trial}: best {ranking['best']}, {_change(top)}; in slog's runs {names[1]} / {names[0]}: "
              f"median x{seen['median']:.2f}, mean x{seen['mean']:.2f}, IOPS x{seen['iops']:.2f}{through}{mark}",
              flush=True)
        found.append((ranking["best"], ok))
    return found


def _change(top: dict) -> str:
    if not top or top.get("latency_ratio") is None:
        return "no test"
    low, high = top["latency_ratio_ci"] or (None, None)
    shown = f" [{low - 1:+.1%}, {high - 1:+.1%}]" if low is not None else ""
    return f"{top['candidate']} vs {top['next']} {top['latency_ratio'] - 1:+.1%}{shown} p={top['p_holm']:.3f} {top['verdict']}"


if __name__ == "__main__":
    main()
