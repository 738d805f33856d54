#!/usr/bin/env python3
"""How long a synchronous-write sweep takes: `stackbench synclat` (15 sizes x 3 runs) against its peers.

The goal (issue 34, "Fast where users wait"): a sweep of 15 write sizes with 3 interleaved runs each in at
most 30 s on a device that answers in under 1 ms; FreeBSD's `diskinfo -wS` takes a few seconds for one
pass. stackbench runs each pass of the sweep as one fio process (a stonewalled job per size), so the peers
measured in the same run are:

- raw fio on the very job file stackbench stored for a pass, run as many times as stackbench ran passes:
  what stackbench adds on top of fio (interpreter start, probes, store writes, parsing);
- a shell loop of one fio per size, as people script it today (`for bs in ...; do fio ...; done`), once
  per pass: what one process per pass saves.

Each round runs the three in turn (the order rotated every round, so drift hits them alike) on the same
target directory, and prints the wall times and the ratios stackbench / peer; the medians over the rounds
are the result. Timings on a loaded machine are distorted: rerun on a quiet one for bench/RESULTS.md.

    .venv/bin/python bench/sync_sweep_bench.py --target /var/tmp --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stackbench.store import Store
from stackbench.measure.synclat import DEFAULT_RUNS, DEFAULT_RUNTIME_S, parse_sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="/var/tmp", help="directory for the scratch files (a disk, not tmpfs)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="512..8m", help="synclat --sizes (default: 15 sizes)")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    parser.add_argument("--runtime", type=float, default=DEFAULT_RUNTIME_S)
    parser.add_argument("--size", default="256M")
    args = parser.parse_args()

    sizes = parse_sizes(args.sizes)
    workdir = Path(tempfile.mkdtemp(prefix="sb-syncsweep-", dir=args.target))
    db = f"sqlite:///{workdir / 'bench.db'}"
    scratch = workdir / "peer.scratch"
    job_text: str | None = None
    times: dict[str, list[float]] = {"stackbench": [], "raw fio": [], "shell loop": []}

    def stackbench() -> float:
        nonlocal job_text
        clock = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "stackbench", "synclat", str(workdir), "--sizes", args.sizes, "--runs",
             str(args.runs), "--runtime", str(args.runtime), "--size", args.size, "--db", db, "--json"],
            capture_output=True, text=True, check=True,
        )
        wall = time.monotonic() - clock
        run = json.loads(done.stdout)
        assert [row["size_bytes"] for row in run["synclat"]] == sizes
        assert all(row["runs"] == args.runs for row in run["synclat"])
        stored = Store(db).fio_outputs(run["run_id"])[0]["job_file"]
        job_text = "\n".join(f"filename={scratch}" if line.startswith("filename=") else line
                             for line in stored.splitlines()) + "\n"
        return wall

    def raw_fio() -> float:
        assert job_text is not None
        job = workdir / "sweep.fio"
        job.write_text(job_text)
        clock = time.monotonic()
        for _ in range(args.runs):
            subprocess.run(["fio", "--output-format=json+", "--eta=never", str(job)], cwd=workdir,
                           capture_output=True, check=True)
        return time.monotonic() - clock

    def shell_loop() -> float:
        loop = (f"for bs in {' '.join(str(s) for s in sizes)}; do fio --name=sync --filename={shlex.quote(str(scratch))} "
                f"--rw=randwrite --bs=$bs --direct=1 --sync=dsync --ioengine=psync --iodepth=1 --size={args.size} "
                f"--runtime={int(args.runtime * 1000)}ms --time_based --output-format=json >/dev/null || exit 1; done")
        clock = time.monotonic()
        for _ in range(args.runs):
            subprocess.run(["bash", "-c", loop], check=True)
        return time.monotonic() - clock

    sides = [("stackbench", stackbench), ("raw fio", raw_fio), ("shell loop", shell_loop)]
    print(f"{len(sizes)} sizes x {args.runs} runs, {args.runtime:g} s each, on {workdir}")
    try:
        stackbench()  # a first pass lays the files out and gives the job file; not counted
        for index in range(args.rounds):
            order = sides[index % 3:] + sides[:index % 3]
            for name, measure in order:
                times[name].append(measure())
            print(f"round {index + 1}: " + ", ".join(f"{name} {times[name][-1]:.1f} s" for name, _ in sides))
    finally:
        for path in workdir.iterdir():
            path.unlink()
        workdir.rmdir()
    median = {name: statistics.median(values) for name, values in times.items()}
    print()
    print(f"stackbench synclat: median {median['stackbench']:.1f} s (goal <= 30 s for 15 sizes x 3 runs)")
    for peer in ("raw fio", "shell loop"):
        ratios = [s / p for s, p in zip(times["stackbench"], times[peer])]
        print(f"vs {peer}: median {median[peer]:.1f} s, ratio stackbench/{peer} {statistics.median(ratios):.2f} "
              f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
