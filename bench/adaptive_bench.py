#!/usr/bin/env python3
"""Adaptive stopping (--until-stable) against fixed-length cells, on a shortened blog matrix.

The practitioners' blog matrix ran 48 cells of 300 s (four hours). This benchmark takes a subset of its
cells and measures each twice in the same run: once fixed for --fixed-seconds (the reference; its
per-second samples give the reference median and 95 % CI), once adaptively (stop when the median's 95 % CI
is within ±5 %, capped at --cap). It reports, per cell and in total:
- the wall-time ratio adaptive / fixed, and adaptive / the 300 s per cell of the original method;
- whether the adaptive estimate lies inside the fixed run's CI;
- whether the adaptive cell reached ±5 %.

    .venv/bin/python bench/adaptive_bench.py --target /var/tmp --fixed-seconds 120 --cap 60
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CELLS = [("randread", "4k", "1"), ("randwrite", "4k", "4"), ("read", "1m", "4"), ("write", "1m", "4"),
         ("randwrite", "64k", "16"), ("randread", "64k", "8")]


def run(db: str, target: Path, rw: str, bs: str, qd: str, size: str, extra: list[str]) -> tuple[dict, float]:
    clock = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "stackbench", "run", "-t", str(target), "--rw", rw, "--bs", bs, "--qd", qd,
         "--size", size, "--db", db, "--json", *extra],
        capture_output=True, text=True, check=True,
    )
    return json.loads(done.stdout)["cells"][0], time.monotonic() - clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="/var/tmp")
    parser.add_argument("--fixed-seconds", type=float, default=120)
    parser.add_argument("--cap", type=float, default=60)
    parser.add_argument("--size", default="1G")
    parser.add_argument("--cells", type=int, default=len(CELLS))
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="sb-adaptive-", dir=args.target))
    db = f"sqlite:///{workdir / 'bench.db'}"
    total_fixed = total_adaptive = 0.0
    inside = stable = 0
    print(f"{'cell':<22} {'fixed median [95% CI]':>34} {'adaptive median ± CI':>26} {'s':>6} {'in CI':>6}")
    for rw, bs, qd in CELLS[: args.cells]:
        fixed, fixed_wall = run(db, workdir, rw, bs, qd, args.size, ["--fixed", "--runtime", f"{args.fixed_seconds:g}"])
        adaptive, adaptive_wall = run(db, workdir, rw, bs, qd, args.size, ["--until-stable", "--max-time", f"{args.cap:g}"])
        total_fixed += fixed_wall
        total_adaptive += adaptive_wall
        ok = fixed["iops_ci_low"] <= adaptive["iops_median"] <= fixed["iops_ci_high"]
        width = (adaptive["iops_ci_high"] - adaptive["iops_ci_low"]) / 2 / adaptive["iops_median"] if adaptive["iops_ci_low"] else float("inf")
        inside += ok
        stable += width <= 0.05 + 1e-9 or "stable" in adaptive["measurement"]["stop_reason"]
        print(f"{adaptive['pattern']:<22} {fixed['iops_median']:>12,.0f} [{fixed['iops_ci_low']:>9,.0f}, {fixed['iops_ci_high']:>9,.0f}]"
              f" {adaptive['iops_median']:>14,.0f} ± {width:5.1%} {adaptive['measurement']['seconds']:>6.1f} {'yes' if ok else 'NO':>6}"
              f"   ({adaptive['measurement']['stop_reason']})", flush=True)
    n = min(args.cells, len(CELLS))
    print()
    print(f"cells: {n}; fixed {args.fixed_seconds:g} s per cell; adaptive cap {args.cap:g} s, target ±5 %")
    print(f"wall time: fixed {total_fixed:.0f} s, adaptive {total_adaptive:.0f} s, ratio {total_adaptive / total_fixed:.3f}")
    print(f"against the method's 300 s cells ({n * 300} s): ratio {total_adaptive / (n * 300):.3f}")
    print(f"adaptive estimate inside the fixed run's 95 % CI: {inside}/{n}; reached ±5 %: {stable}/{n}")
    for leftover in workdir.iterdir():
        leftover.unlink()
    workdir.rmdir()


if __name__ == "__main__":
    main()
