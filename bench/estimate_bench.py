#!/usr/bin/env python3
"""How close `stackbench run`'s time estimate is to the time the run takes (issue 27).

For each of ten plans (presets and explicit cells, fixed and adaptive, small and larger files, a
cache-exhaustion write) this asks `stackbench run --dry-run --json` for the estimate, then runs the same
command for real and times it from start to exit (the interpreter's start-up included, as a user times
it). It prints, per plan, the estimate, its range, the actual wall time and the error; goal: within 10 %.

By default every plan gets a new store, so no estimate learns from an earlier run (a first-time user);
--shared-store uses one store for all plans, so later plans learn the per-run overhead, the spread of
cells measured before and the write rate (a user's second run on a target).

    PYTHONPATH=src .venv/bin/python bench/estimate_bench.py --target /var/tmp
    PYTHONPATH=src .venv/bin/python bench/estimate_bench.py --target /var/tmp --only 1,5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLANS: list[tuple[str, list[str]]] = [
    ("quick (fixed, 256 MiB)", ["--preset", "quick"]),
    ("quick, 1 GiB file", ["--preset", "quick", "--size", "1G"]),
    ("crystal, 2 s runs (adaptive)", ["--preset", "crystal", "--runtime", "2", "--ramp", "0.5", "--size", "256M"]),
    ("slog, 2 s runs (adaptive)", ["--preset", "slog", "--runtime", "2", "--size", "256M"]),
    ("cache-exhaustion 512 MiB", ["--preset", "cache-exhaustion", "--size", "512M"]),
    ("cache-exhaustion 2 GiB", ["--preset", "cache-exhaustion", "--size", "2G"]),
    ("4K QD1/32 rnd read/write x3", ["--bs", "4k", "--qd", "1,32", "--rw", "randread,randwrite", "--runs", "3",
                                     "--runtime", "2", "--size", "256M"]),
    ("4K/1M QD4 read, adaptive 3-8", ["--bs", "4k,1m", "--qd", "4", "--rw", "randread", "--until-stable", "--runs",
                                      "3", "--max-runs", "8", "--runtime", "1", "--size", "128M"]),
    ("blog 4K/1M at QD4 (adaptive)", ["--preset", "blog", "--qd", "4", "--bs", "4k,1m", "--runtime", "2", "--ramp",
                                      "0.5", "--size", "1G"]),
    ("64K QD8 seq write x2, 2 GiB", ["--bs", "64k", "--qd", "8", "--rw", "write", "--runs", "2", "--runtime", "3",
                                     "--size", "2G"]),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="/var/tmp", help="directory the runs' scratch files go in")
    parser.add_argument("--only", default="", help="comma-separated plan numbers (1-10) to run; default all")
    parser.add_argument("--shared-store", action="store_true", help="one store for all plans (estimates learn)")
    args = parser.parse_args()
    chosen = [int(n) for n in args.only.split(",") if n.strip()] or list(range(1, len(PLANS) + 1))

    workdir = Path(tempfile.mkdtemp(prefix="sb-estimate-", dir=args.target))
    scratch = workdir / "scratch"
    scratch.mkdir()
    command = [sys.executable, "-m", "stackbench", "run", "-t", str(scratch)]
    print(f"{'#':>2}  {'plan':<30} {'estimate':>9} {'range':>15} {'actual':>8} {'error':>7}", flush=True)
    errors = []
    try:
        for number in chosen:
            name, plan = PLANS[number - 1]
            db = workdir / ("shared.db" if args.shared_store else f"plan{number}.db")
            shown = subprocess.run([*command, *plan, "--db", str(db), "--dry-run", "--json"],
                                   capture_output=True, text=True, check=True)
            estimate = json.loads(shown.stdout)["estimate"]
            clock = time.monotonic()
            subprocess.run([*command, *plan, "--db", str(db), "--json"], capture_output=True, text=True, check=True,
                           env={**os.environ, "COLUMNS": "120"})
            actual = time.monotonic() - clock
            error = (estimate["seconds"] - actual) / actual
            errors.append(error)
            span = f"{estimate['low_seconds']:.0f}-{estimate['high_seconds']:.0f} s"
            print(f"{number:>2}  {name:<30} {estimate['seconds']:>7.1f} s {span:>15} {actual:>6.1f} s "
                  f"{error:>+6.1%}", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    within = sum(1 for e in errors if abs(e) <= 0.10)
    print(f"\nplans within 10 %: {within} of {len(errors)}; mean |error| {sum(map(abs, errors)) / len(errors):.1%}; "
          f"worst {max(errors, key=abs):+.1%} (negative: the run took longer than estimated)")


if __name__ == "__main__":
    main()
