"""Time to draw a run's charts: every figure of `run_figures` for a 48-cell run, rendered as SVG and PNG.

Target (issue 13): all of run_figures for a 48-cell run under 3 s in total. Each measurement is a fresh
process (as `stackbench chart` and `stackbench report` run), so it includes importing matplotlib; the peer,
measured in the same run on the same store, is `stackbench show RUN --format csv`, the cheapest command that
reads the whole run. The ratio says what the charts cost over reading the run at all.

    python bench/chart_bench.py            # 48 cells: 4K/16K/64K/1M x QD1/4/16 x 4 patterns, ~2 minutes of fio
    python bench/chart_bench.py --small    # 8 cells, to check that the bench works

The runs are real fio runs (1 s each, one run per cell, a 16 MiB file) in a temporary directory ($TMPDIR or
--dir; on a disk, not tmpfs), removed afterwards.

Measured here (2 cores shared with other work, load average 2-4), a 48-cell run: build 0.62 s, SVG 1.04 s,
PNG 1.00 s, charts in total 2.66 s (target met); the whole process 4.33 s against `show --format csv` 1.05 s
(4.1x). Under heavier load (average about 4) the code before its last speed-up took 5.95 s. The lead
records the numbers of a quiet machine in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 3
DRAW = """
import sys, time
started = time.perf_counter()
from stackbench.store import open_store
from stackbench.store.latency_bins import cell_bins
from stackbench.report.charts import representative_cell, run_figures
store = open_store(sys.argv[1])
run = store.get_run(sys.argv[2])
loaded = time.perf_counter()
cell = representative_cell(run)
figures = run_figures(run, bins={cell.id: cell_bins(store, run, cell)})
drawn = time.perf_counter()
svg = sum(len(f.render("svg")) for f in figures)
svg_done = time.perf_counter()
png = sum(len(f.render("png")) for f in figures)
done = time.perf_counter()
print(len(figures), len(run.cells), loaded - started, drawn - loaded, svg_done - drawn, done - svg_done)
"""


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def timed(argv: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env())
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed: {done.stderr[-400:]}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="8 cells instead of 48")
    parser.add_argument("--dir", type=Path, help="where to make the run (default $TMPDIR; a disk, not tmpfs)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="chart-bench-", dir=args.dir))
    try:
        db = f"sqlite:///{work / 'results.db'}"
        (work / "scratch").mkdir()
        matrix = (["--bs", "4k,1m", "--qd", "1,16", "--rw", "randread,write"] if args.small else
                  ["--bs", "4k,16k,64k,1m", "--qd", "1,4,16", "--rw", "randread,randwrite,read,write"])
        _, out = timed([sys.executable, "-m", "stackbench", "run", "-t", str(work / "scratch"), *matrix, "--runs", "1",
                        "--runtime", "1", "--ramp", "0", "--size", "16M", "--db", db, "--json"])
        run_id = json.loads(out)["run_id"]
        draws, peers, parts = [], [], []
        for _ in range(REPEATS):
            elapsed, out = timed([sys.executable, "-c", DRAW, db, run_id])
            draws.append(elapsed)
            parts.append(out.split())
            peers.append(timed([sys.executable, "-m", "stackbench", "show", run_id, "--format", "csv", "--db", db])[0])
        figures, cells = parts[0][0], parts[0][1]
        draw, peer = statistics.median(draws), statistics.median(peers)
        load, build, svg, png = (statistics.median(float(p[i]) for p in parts) for i in (2, 3, 4, 5))
        charts = build + svg + png
        print(f"run_figures of a {cells}-cell run: {figures} figures (medians of {REPEATS} fresh processes)")
        print(f"  build the figures (matplotlib import included) {build:.2f} s, render all as SVG {svg:.2f} s, "
              f"then as PNG {png:.2f} s")
        verdict = "met" if charts < 3 else "NOT met"
        print(f"  charts in total (build + SVG + PNG): {charts:.2f} s; target < 3 s: {verdict}")
        print(f"  whole process (interpreter start, imports, loading the run from the store {load:.2f} s, charts): "
              f"{draw:.2f} s")
        print(f"  peer `stackbench show RUN --format csv` (whole process): {peer:.2f} s; ratio {draw / peer:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
