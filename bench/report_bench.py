"""Time to write a report of a 48-cell run (issue 13's target: under 3 s; issue 34's goal for HTML: 1 s),
against a peer measured in the same session.

Makes one real run with fio (default 6 block sizes x 4 queue depths x 2 patterns = 48 cells, 2 separate fio
runs of 2 s each per cell, so every cell has per-second samples; about 5 minutes), or takes a stored one
with --db and --run. Then times, each the median of --repeats separate processes:

- the peer: `stackbench show RUN --format markdown` of the same run (the same store read and tables);
- the floor of a report with charts: the peer plus what importing matplotlib costs (`python -c "import
  matplotlib.figure, ..."` less `python -c pass`), paid before the first chart is drawn;
- `stackbench report RUN -o FILE --force` in each format (html, md, xlsx), and the number of charts drawn,
  each with an empty chart directory (charts drawn);
- the HTML report again with the run's charts kept, as `run` leaves them (docs/reports.md, "Charts kept"),
  and what drawing them costs `run` once the run is stored;
- with --against SRC, each report drawn also by the code in SRC (another checkout's `src`, say the commit
  before a change: `git archive HEAD~1 src | tar -x -C /tmp/before`), its processes alternating with this
  code's, and the ratio of the two: a load that changes during the sitting weighs on both alike.

Each is given as its wall time and its CPU time (user + system of the process): on a loaded machine the
wall time grows with the load while the CPU time stays close to the quiet machine's, so compare CPU times
across sittings and wall times only on a quiet machine.

    python bench/report_bench.py                                   # a real 48-cell run in a temporary directory
    python bench/report_bench.py --bs 4k,64k --qd 1,4 --repeats 2  # small settings: 8 cells, to try it out
    python bench/report_bench.py --db results.db --run baseline    # a run you already have
    python bench/report_bench.py --db results.db --run baseline --against /tmp/before/src  # this code / that
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable


def stackbench(*args: str, source: str | None = None) -> subprocess.CompletedProcess[str]:
    return python("-m", "stackbench", *args, source=source)


def python(*args: str, source: str | None = None) -> subprocess.CompletedProcess[str]:
    """`args` run by this Python, with stackbench imported from `source` (a checkout's src) if given."""
    env = {**os.environ, "PYTHONPATH": source} if source else None
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"python {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
    return done


def cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


Program = Callable[..., subprocess.CompletedProcess[str]]


def timed(repeats: int, *args: str, program: Program = stackbench,
          ) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """The median wall time and the median CPU time of `repeats` processes, and the last one's output."""
    return alternated(repeats, [program], *args)[0]


def alternated(repeats: int, programs: list[Program], *args: str,
               ) -> list[tuple[float, float, subprocess.CompletedProcess[str]]]:
    """`timed` for each of `programs`, their processes taking turns (one of each, `repeats` times)."""
    walls: list[list[float]] = [[] for _ in programs]
    cpus: list[list[float]] = [[] for _ in programs]
    done: list[subprocess.CompletedProcess[str] | None] = [None for _ in programs]
    for _ in range(repeats):
        for index, program in enumerate(programs):
            started, cpu = time.perf_counter(), cpu_of_children()
            done[index] = program(*args)
            walls[index].append(time.perf_counter() - started)
            cpus[index].append(cpu_of_children() - cpu)
    return [(statistics.median(w), statistics.median(c), d)  # type: ignore[misc]
            for w, c, d in zip(walls, cpus, done)]


def in_empty_chart_directory(workdir: Path, run: Callable[..., subprocess.CompletedProcess[str]] = stackbench,
                             ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`run` (`stackbench`) with a chart directory of its own, empty, for each process: every chart is drawn."""
    def program(*args: str) -> subprocess.CompletedProcess[str]:
        saved = os.environ["XDG_CACHE_HOME"]
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="empty-cache-", dir=workdir)
        try:
            return run(*args)
        finally:
            os.environ["XDG_CACHE_HOME"] = saved

    return program


DRAW_AS_RUN_DOES = ("import sys; from stackbench.store import open_store; from stackbench.report.charts.files import "
                    "ChartFiles, default_directory; from stackbench.load.report_contents import store_report_charts; "
                    "store = open_store(sys.argv[1]); store_report_charts(store, store.get_run(sys.argv[2]).id, "
                    "ChartFiles(default_directory()))")
CHART_IMPORTS = "import matplotlib.figure, matplotlib.backends.backend_agg, matplotlib.backends.backend_svg"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bs", default="4k,8k,16k,64k,128k,1m", help="block sizes of the run (default 6)")
    parser.add_argument("--qd", default="1,4,16,32", help="queue depths (default 4)")
    parser.add_argument("--rw", default="randread,randwrite", help="patterns (default 2)")
    parser.add_argument("--runs", default="2", help="separate fio runs per cell (default 2)")
    parser.add_argument("--runtime", default="2", help="seconds per fio run (default 2: per-second samples)")
    parser.add_argument("--target", help="directory to measure (default: a temporary directory)")
    parser.add_argument("--db", help="an existing store (with --run): no run is made")
    parser.add_argument("--run", help="the stored run to report (with --db)")
    parser.add_argument("--repeats", type=int, default=5, help="processes per timing, median taken (default 5)")
    parser.add_argument("--against", metavar="SRC", help="also draw each report with the code in SRC (another "
                        "checkout's src directory), alternating, and print this code's time / that code's")
    options = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="report-bench-"))
    os.environ["XDG_CACHE_HOME"] = str(workdir / "kept-cache")  # the charts `run` draws, kept here
    try:
        if options.db and options.run:
            db, run = options.db, options.run
            made = "stored run"
        else:
            db = f"sqlite:///{workdir / 'results.db'}"
            target = Path(options.target) if options.target else workdir / "target"
            target.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            done = stackbench("run", "-t", str(target), "--bs", options.bs, "--qd", options.qd, "--rw", options.rw,
                              "--runs", options.runs, "--runtime", options.runtime, "--ramp", "0", "--size", "64M",
                              "--db", db, "--json")
            run = json.loads(done.stdout)["run_id"]
            made = f"real run made in {time.perf_counter() - started:.0f} s"
        shown = json.loads(stackbench("show", run, "--db", db, "--json").stdout)
        cells = len(shown["cells"])
        samples = sum(c["samples_n"] for c in shown["cells"])
        print(f"# {' '.join(sys.argv)}")
        print(f"run {run[:12]}: {cells} cells, {samples} per-second samples ({made}); median of {options.repeats} "
              "processes each")
        peer, peer_cpu, _ = timed(options.repeats, "show", run, "--db", db, "--format", "markdown")
        print(f"{'show RUN --format markdown (peer)':<36} {peer:6.3f} s   CPU {peer_cpu:6.3f} s")
        # The floor under a report with charts: the peer (Python, the CLI, the store's read, the tables) plus
        # the chart library's import, which a report pays before it draws anything.
        bare, bare_cpu, _ = timed(options.repeats, "-c", "pass", program=python)
        charts, charts_cpu, _ = timed(options.repeats, "-c", CHART_IMPORTS, program=python)
        print(f"{'python -c pass':<36} {bare:6.3f} s   CPU {bare_cpu:6.3f} s")
        print(f"{'python -c ' + repr(CHART_IMPORTS)[:24] + '...':<36} {charts:6.3f} s   CPU {charts_cpu:6.3f} s")
        print(f"{'floor: peer + chart imports':<36} {peer + charts - bare:6.3f} s   "
              f"CPU {peer_cpu + charts_cpu - bare_cpu:6.3f} s   (before a chart is drawn)")
        drawn_by, drawn_cpu, _ = timed(options.repeats, "-c", DRAW_AS_RUN_DOES, db, run,
                                       program=in_empty_chart_directory(workdir, python))
        print(f"{'charts drawn as `run` does, stored':<36} {drawn_by:6.3f} s   CPU {drawn_cpu:6.3f} s   "
              "(what a run's end adds, this process's start-up included)")
        python("-c", DRAW_AS_RUN_DOES, db, run)  # the run as `run` leaves it: its charts kept
        for fmt in ("html", "md", "xlsx", "html kept"):
            output = workdir / f"report.{fmt.split()[0]}"
            programs = [stackbench if fmt == "html kept" else in_empty_chart_directory(workdir)]
            if options.against and fmt != "html kept":
                programs.append(in_empty_chart_directory(workdir, functools.partial(stackbench,
                                                                                    source=options.against)))
            timings = alternated(options.repeats, programs, "report", run, "-o", str(output), "--force", "--db", db,
                                 "--json")
            seconds, cpu, done = timings[0]
            reply = json.loads(done.stdout)
            size = sum(Path(f).stat().st_size for f in reply["files"])
            verdict = "under" if seconds < 3 else "OVER"
            if fmt.startswith("html"):
                verdict += f" the 3 s target, {'met' if seconds <= 1 else 'MISSED'} the 1 s goal (issue 34)"
            else:
                verdict += " the 3 s target"
            name = "report RUN -o report.html, charts kept" if fmt == "html kept" else "report RUN -o report." + fmt
            print(f"{name:<36} {seconds:6.3f} s   CPU {cpu:6.3f} s   "
                  f"{seconds / peer:5.2f}x the peer   "
                  f"{verdict}   {size / 1024:,.0f} KiB, {reply['charts']} charts")
            if len(timings) > 1:
                before, before_cpu, _ = timings[1]
                print(f"{'  the same with --against':<36} {before:6.3f} s   CPU {before_cpu:6.3f} s   "
                      f"this code / that: wall {seconds / before:4.2f}x, CPU {cpu / before_cpu:4.2f}x")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
