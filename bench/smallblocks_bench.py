#!/usr/bin/env python3
"""`stackbench smallblocks` against `du -s --apparent-size` and `gdu -npc`, warm and cold, on generated trees.

Two trees of --files files each (default 1,000,000; sizes spread over 1 B to 16 MiB as sparse files, 30 %
empty, so they take almost no space):
- flat: 1,000-file directories, 100 to a parent directory;
- wide-deep: half the files in 100,000-file directories at the bottom of 24-level chains, half in chains of
  40 nested directories that hold 25 files each (paths of 500 to 600 bytes).

Each round times, one after the other so that a change in the machine's load hits all alike, the whole
commands (Python's start-up included):
- stackbench smallblocks TREE --json   (with --stackbench-args, e.g. "--workers 4")
- du -s --apparent-size TREE
- gdu -npc TREE                          (skipped with a note if gdu is not installed)
warm (metadata cached: one untimed run of each first) and cold (needs root: `sync; echo 3 >
/proc/sys/vm/drop_caches` before every command, which empties the whole machine's page cache; nothing else
in this bench writes outside its trees). It prints the best and the median of the rounds and the ratios
peer time / stackbench time (above 1: stackbench is faster), and checks once per tree that stackbench's bins
equal those of the practitioners' pipeline (`find | xargs ls -l | awk`, docs/smallblocks.md). It also prints
how many readers each stackbench walk ended with (one per CPU unless the walk waited for the device).

Generating a tree of 1,000,000 files takes a few minutes, so the trees are kept between runs under
--dir/stackbench-smallblocks-bench/ with a marker file (.complete) written last; a tree without it is made
again. Remove them with --remove-trees (or rm -rf that directory).

    sudo apt-get install gdu hyperfine    # gdu is the peer; hyperfine is not needed by this script
    python bench/smallblocks_bench.py --files 1000000 --rounds 3
    python bench/smallblocks_bench.py --files 200000 --trees flat --modes warm   # a quick look
    python bench/smallblocks_bench.py --remove-trees

The stackbench command runs with the Python that runs this script (`python -m stackbench`), with
PYTHONPATH as the calling shell has it. Python reads its bytecode cache as the calling shell says: an
installed stackbench has its modules compiled, and PYTHONDONTWRITEBYTECODE in the environment of a source
checkout without __pycache__ makes every run compile stackbench's sources again (run the command once without
it first).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

PIPELINE = (
    "find . -type f -print0 | xargs -0 ls -l | awk '{ n=int(log($5)/log(2)); if (n<10) { n=10; } size[n]++ } "
    "END { for (i in size) printf(\"%d %d\\n\", i, size[i]) }' | sort -n"
)  # prints the exponent i instead of 2^i: mawk's %d clamps 2^i above 2^31 - 1; binning is unchanged
GENERATOR_VERSION = "2"  # part of the marker: a tree made by another version of generate() is made again
TREES = ("flat", "wide-deep")


def _new_file(directory: Path, name: str, rng: random.Random) -> None:
    fd = os.open(directory / name, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    try:
        if rng.random() >= 0.3:
            os.ftruncate(fd, int(2 ** rng.uniform(0, 24)))
    finally:
        os.close(fd)


def generate_flat(root: Path, files: int) -> None:
    """1,000-file directories, 100 to a parent: the layout of the issue-5 bench."""
    rng = random.Random(42)
    per_dir = 1000
    directory = root
    for index in range(files):
        if index % per_dir == 0:
            directory = root / f"{index // 100_000}" / f"{index // per_dir}"
            directory.mkdir(parents=True, exist_ok=True)
        _new_file(directory, f"f{index}", rng)


def generate_wide_deep(root: Path, files: int) -> None:
    """Half the files in 100,000-file directories 24 levels down, half in 40-level chains of 25 files each."""
    rng = random.Random(43)
    wide = files // 2
    for first in range(0, wide, 100_000):
        directory = root / f"wide{first // 100_000}"
        for level in range(24):
            directory = directory / f"level-{level:02d}-of-the-wide-part"
        directory.mkdir(parents=True)
        for index in range(first, min(wide, first + 100_000)):
            _new_file(directory, f"file-{index:07d}.dat", rng)
    index = wide
    chain = 0
    while index < files:
        directory = root / "deep" / f"chain{chain:05d}"
        for level in range(40):
            directory = directory / f"depth{level:02d}"
            directory.mkdir(parents=True)
            for _ in range(25):
                if index == files:
                    break
                _new_file(directory, f"f{index}", rng)
                index += 1
        chain += 1


def tree(base: Path, kind: str, files: int) -> Path:
    """The cached tree of `kind` with `files` files under `base`, generated first if it is not complete."""
    root = base / f"{kind}-{files}"
    marker = root / ".complete"
    stamp = f"{kind} {files} generator {GENERATOR_VERSION}\n"
    if marker.is_file() and marker.read_text() == stamp:
        print(f"{kind}: using the cached tree {root}", flush=True)
        return root / "tree"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    started = time.monotonic()
    (generate_flat if kind == "flat" else generate_wide_deep)(root / "tree", files)
    subprocess.run(["sync"], check=True)
    marker.write_text(stamp)
    print(f"{kind}: generated {files:,} files in {time.monotonic() - started:.0f} s under {root}", flush=True)
    return root / "tree"


def drop_caches() -> None:
    """The cold mode's one write outside the trees: the whole machine's page, dentry and inode caches."""
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def timed(command: list[str] | str, cwd: Path | None = None) -> tuple[float, str]:
    """Seconds and stdout of one whole command. Only the pipeline runs inside the tree (`find .`): the others
    run where the bench was started, so that a relative PYTHONPATH (PYTHONPATH=src in a checkout) still
    names the stackbench under test rather than whichever one is installed."""
    shell = isinstance(command, str)
    start = time.monotonic()
    done = subprocess.run(command, cwd=cwd, shell=shell, capture_output=True, text=True, check=True,
                          executable="/bin/bash" if shell else None)
    return time.monotonic() - start, done.stdout


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def check_bins(root: Path, stackbench_output: str) -> bool:
    """stackbench's bins (from one of the timed runs) equal the practitioners' pipeline's, run once."""
    ours = {int(k): v["count"] for k, v in json.loads(stackbench_output)["bins"].items()}
    _, pipeline = timed(PIPELINE, root)
    theirs = {1 << int(i): int(n) for i, n in (line.split() for line in pipeline.splitlines())}
    return ours == theirs


def bench_tree(root: Path, kind: str, files: int, commands: dict[str, list[str]], modes: list[str],
               rounds: int) -> None:
    results: dict[tuple[str, str], list[float]] = {}
    readers: dict[str, list[int]] = {}  # stackbench's readers at the end of each timed walk, per mode
    output = ""
    for name, command in commands.items():  # warm everything once, untimed
        _, stdout = timed(command)
        output = stdout if name == "stackbench" else output
    print(f"{kind}: bins identical to the pipeline: {'yes' if check_bins(root, output) else 'NO'}", flush=True)
    for mode in modes:
        print(f"{kind} {mode}: load average before {load()}", flush=True)
        for _ in range(rounds):
            for name, command in commands.items():
                if mode == "cold":
                    drop_caches()
                seconds, stdout = timed(command)
                results.setdefault((name, mode), []).append(seconds)
                if name == "stackbench":
                    readers.setdefault(mode, []).append(json.loads(stdout)["workers"])
        print(f"{kind} {mode}: load average after {load()}", flush=True)
    print(f"{'tree':<10} {'mode':<5} {'command':<11} {'best s':>7} {'median s':>9} {'files/s (best)':>15} "
          f"{'ratio best':>11} {'ratio median':>13}")
    for mode in modes:
        ours = results[("stackbench", mode)]
        for name in commands:
            times = results[(name, mode)]
            best, median = min(times), statistics.median(times)
            ratio_best = best / min(ours)
            ratio_median = median / statistics.median(ours)
            print(f"{kind:<10} {mode:<5} {name:<11} {best:>7.2f} {median:>9.2f} {files / best:>15,.0f} "
                  f"{ratio_best:>10.2f}x {ratio_median:>12.2f}x")
    for mode in modes:
        ours = results[("stackbench", mode)]
        peers = ", ".join(f"{min(results[(name, mode)]) / min(ours):.2f}x {name}'s speed"
                          for name in commands if name != "stackbench")
        print(f"{kind} {mode}: stackbench runs at {peers} (best of {rounds}; above 1 = stackbench faster); "
              f"its readers at the end of each walk: {', '.join(map(str, readers[mode]))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/var/tmp", help="where the trees are kept (default /var/tmp)")
    parser.add_argument("--files", type=int, default=1_000_000, help="files in each tree (default 1,000,000)")
    parser.add_argument("--trees", default=",".join(TREES), help="comma-separated: flat, wide-deep")
    parser.add_argument("--modes", default="warm,cold", help="comma-separated: warm, cold (cold needs root)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stackbench-args", default="", help='more smallblocks options, e.g. "--workers 4"')
    parser.add_argument("--remove-trees", action="store_true", help="remove the cached trees and exit")
    args = parser.parse_args()
    base = Path(args.dir) / "stackbench-smallblocks-bench"
    if args.remove_trees:
        shutil.rmtree(base, ignore_errors=True)
        print(f"removed {base}")
        return
    kinds = [kind for kind in args.trees.split(",") if kind]
    modes = [mode for mode in args.modes.split(",") if mode]
    if not set(kinds) <= set(TREES) or not set(modes) <= {"warm", "cold"}:
        parser.error("--trees takes flat and wide-deep, --modes warm and cold")
    if "cold" in modes and os.geteuid() != 0:
        print("cold mode needs root (to drop the page cache): measuring warm only", flush=True)
        modes = [mode for mode in modes if mode != "cold"]
    print(f"load average at the start: {load()} ({os.cpu_count()} CPUs)", flush=True)
    _, where = timed([sys.executable, "-c", "import stackbench; print(stackbench.__version__, stackbench.__file__)"])
    print(f"stackbench under test: {where.strip()}", flush=True)
    for kind in kinds:
        root = tree(base, kind, args.files)
        commands = {
            "stackbench": [sys.executable, "-m", "stackbench", "smallblocks", str(root), "--json",
                           *shlex.split(args.stackbench_args)],
            "du": ["du", "-s", "--apparent-size", str(root)],
        }
        if shutil.which("gdu"):
            commands["gdu"] = ["gdu", "-npc", str(root)]
        else:
            print("gdu is not installed (apt-get install gdu): comparing with du only", flush=True)
        bench_tree(root, kind, args.files, commands, modes, args.rounds)
    print(f"The trees stay under {base} for the next run: remove them with "
          f"`python {sys.argv[0]} --dir {args.dir} --remove-trees`.")


if __name__ == "__main__":
    main()
