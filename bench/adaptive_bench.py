#!/usr/bin/env python3
"""Adaptive mode (--until-stable) against a fixed number of separate runs, on cells of the blog matrix.

The unit is a separate fio run (docs/statistics.md): adaptive mode adds runs, not seconds, until the 95 %
interval of the geometric mean across runs is within --ci-target, up to --max-runs. For each cell this
benchmark measures, in the same invocation:
- the reference: a fixed --ref-runs separate runs (its geometric mean and 95 % interval across runs);
- adaptive: the blog preset's adaptive settings (5 runs at least, 10 at most, ±5 %), given explicitly
  because a single cell otherwise takes the quick preset's.
It prints, per cell and in total: whether the adaptive estimate lies inside the reference's interval,
whether the adaptive cell reached the target (or said it could not), and the fio wall time of each mode,
also against the 300 s per cell of the practitioners' original method.

    .venv/bin/python bench/adaptive_bench.py --target /dev/shm
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CELLS = [("randread", "4k", "1"), ("randwrite", "4k", "4"), ("read", "1m", "4"), ("write", "1m", "4"),
         ("randwrite", "64k", "16"), ("randread", "64k", "8")]


def measure(db: str, target: Path, rw: str, bs: str, qd: str, args: argparse.Namespace,
            extra: list[str]) -> tuple[dict, float]:
    """One `stackbench run` of one cell; its JSON cell and the wall time it took."""
    clock = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "stackbench", "run", "-t", str(target), "--rw", rw, "--bs", bs, "--qd", qd,
         "--size", args.size, "--ramp", args.ramp, "--runtime", args.runtime, "--db", db, "--json", *extra],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        sys.exit(f"stackbench run failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)["cells"][0], time.monotonic() - clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="/dev/shm", help="directory for the scratch files")
    parser.add_argument("--ref-runs", type=int, default=10, help="separate runs of the fixed reference")
    parser.add_argument("--ramp", default="2", help="seconds of ramp per fio run (blog preset: 2)")
    parser.add_argument("--runtime", default="8", help="measured seconds per fio run (blog preset: 8)")
    parser.add_argument("--size", default="1G")
    parser.add_argument("--cells", type=int, default=len(CELLS))
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="sb-adaptive-", dir=args.target))
    db = f"sqlite:///{workdir / 'bench.db'}"
    per_run = float(args.ramp) + float(args.runtime)
    total_fixed = total_adaptive = 0.0
    inside = reached = 0
    cells = CELLS[: args.cells]
    print(f"fio run: {args.ramp} s ramp + {args.runtime} s measured; reference {args.ref_runs} runs; "
          "adaptive 5-10 runs to ±5 %")
    print(f"{'cell':<20} {'reference IOPS [95% CI]':>34} {'adaptive IOPS ± CI':>24} {'runs':>5} {'wall s':>7} "
          f"{'in CI':>6}")
    try:
        for rw, bs, qd in cells:
            fixed, fixed_wall = measure(db, workdir, rw, bs, qd, args, ["--fixed", "--runs", str(args.ref_runs)])
            adaptive, adaptive_wall = measure(db, workdir, rw, bs, qd, args,
                                              ["--until-stable", "--runs", "5", "--max-runs", "10"])
            total_fixed += fixed_wall
            total_adaptive += adaptive_wall
            ref, got = fixed["runs"], adaptive["runs"]
            ok = ref["iops_ci_low"] <= got["iops"] <= ref["iops_ci_high"]
            half = (got["iops_ci_high"] - got["iops_ci_low"]) / 2 / got["iops"]
            inside += ok
            reached += half <= 0.05 + 1e-9
            reason = (adaptive.get("measurement") or {}).get("stop_reason", "")
            print(f"{adaptive['pattern']:<20} {ref['iops']:>12,.0f} [{ref['iops_ci_low']:>9,.0f}, "
                  f"{ref['iops_ci_high']:>9,.0f}] {got['iops']:>14,.0f} ± {half:5.1%} {got['n']:>5} "
                  f"{adaptive_wall:>7.1f} {'yes' if ok else 'NO':>6}   ({reason})", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    n = len(cells)
    print()
    print(f"cells: {n}; reference {args.ref_runs} runs of {per_run:g} s; adaptive target ±5 %, 5-10 runs")
    print(f"wall time: reference {total_fixed:.0f} s, adaptive {total_adaptive:.0f} s, "
          f"ratio {total_adaptive / total_fixed:.3f}")
    print(f"against the method's 300 s cells ({n * 300} s): ratio {total_adaptive / (n * 300):.3f}")
    print(f"adaptive estimate inside the reference's 95 % CI: {inside}/{n}; reached ±5 %: {reached}/{n}")


if __name__ == "__main__":
    main()
