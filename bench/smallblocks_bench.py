#!/usr/bin/env python3
"""`stackbench smallblocks` against the practitioners' pipeline and `du`, on a generated tree.

Generates a tree of --files files (default 1,000,000; sizes spread over 0 B to 16 MiB as sparse files, 30 %
empty) in 1,000-file directories, then times, warm (metadata cached) and cold (page cache dropped before
each command; needs root), each of:
- stackbench smallblocks DIR --json (whole command, Python start-up included)
- find . -type f -print0 | xargs -0 ls -l | awk '...' | sort -n (docs/method.md section 5)
- du -s --apparent-size DIR
and prints files/s and the ratios. It also checks that stackbench's bins equal the pipeline's.

    .venv/bin/python bench/smallblocks_bench.py --dir /var/tmp --files 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PIPELINE = (
    "find . -type f -print0 | xargs -0 ls -l | awk '{ n=int(log($5)/log(2)); if (n<10) { n=10; } size[n]++ } "
    "END { for (i in size) printf(\"%d %d\\n\", i, size[i]) }' | sort -n"
)  # prints the exponent i instead of 2^i: mawk's %d clamps 2^i above 2^31 - 1; binning is unchanged


def generate(root: Path, files: int) -> None:
    rng = random.Random(42)
    per_dir = 1000
    for index in range(files):
        if index % per_dir == 0:
            directory = root / f"{index // 100_000}" / f"{index // per_dir}"
            directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / f"f{index}", os.O_CREAT | os.O_WRONLY, 0o644)
        if rng.random() >= 0.3:
            os.ftruncate(fd, int(2 ** rng.uniform(0, 24)))
        os.close(fd)


def drop_caches() -> None:
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def timed(command: list[str] | str, cwd: Path, shell: bool = False) -> tuple[float, str]:
    start = time.monotonic()
    done = subprocess.run(command, cwd=cwd, shell=shell, capture_output=True, text=True, check=True,
                          executable="/bin/bash" if shell else None)
    return time.monotonic() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cold_possible = os.geteuid() == 0
    work = Path(tempfile.mkdtemp(prefix="sb-smallblocks-", dir=args.dir))
    try:
        root = work / "tree"
        start = time.monotonic()
        generate(root, args.files)
        print(f"generated {args.files:,} files in {time.monotonic() - start:.0f} s under {root}", flush=True)
        commands = {
            "stackbench": ([sys.executable, "-m", "stackbench", "smallblocks", str(root), "--json"], False),
            "pipeline": (PIPELINE, True),
            "du": (["du", "-s", "--apparent-size", str(root)], False),
        }
        results: dict[tuple[str, str], list[float]] = {}
        outputs: dict[str, str] = {}
        modes = ["warm", "cold"] if cold_possible else ["warm"]
        timed(["du", "-s", str(root)], root)  # warm everything once
        for mode in modes:
            for _ in range(args.rounds):
                for name, (command, shell) in commands.items():  # alternating, so drift hits all alike
                    if mode == "cold":
                        drop_caches()
                    seconds, stdout = timed(command, root, shell)
                    results.setdefault((name, mode), []).append(seconds)
                    outputs[name] = stdout
        ours = {int(k): v["count"] for k, v in json.loads(outputs["stackbench"])["bins"].items()}
        theirs = {1 << int(i): int(n) for i, n in (line.split() for line in outputs["pipeline"].splitlines())}
        print(f"bins identical to the pipeline: {'yes' if ours == theirs else 'NO'}")
        print(f"{'mode':<6} {'command':<11} {'best s':>8} {'files/s':>12} {'vs stackbench':>14}")
        for mode in modes:
            best = {name: min(results[(name, mode)]) for name in commands}
            for name in commands:
                ratio = best[name] / best["stackbench"]
                print(f"{mode:<6} {name:<11} {best[name]:>8.2f} {args.files / best[name]:>12,.0f} {ratio:>13.2f}x")
            print(f"{mode}: stackbench is {best['pipeline'] / best['stackbench']:.1f}x the pipeline's speed and "
                  f"{best['du'] / best['stackbench']:.2f}x du's (above 1 = faster)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
