"""Start-up cost of the commands people run most, against the floor of the CLI's own framework.

Measures `stackbench --help`, `stackbench runs` and `stackbench show RUN` on a store of 1,000 runs, each the
median of 10 separate processes, and the floor measured in the same run: a Python process that imports only
typer, rich and sqlalchemy. Goal (issue 34): `runs` and `show` within 1.3x of that floor on a quiet machine,
1.5x under load. Each row also gives the processes' CPU time (user + system, the median): on a loaded
machine the wall time is mostly waiting for a core, and the CPU ratio is what a change of stackbench moves.

    python bench/startup_bench.py            # builds the 1,000-run store in a temporary directory first

The commands are timed round-robin (one process of each per round, an untimed warm-up round first), so a
change in the machine's load during the bench moves every row alike. The children run with Python's
bytecode cache on whatever the calling shell says: an installed stackbench has its modules compiled, and
PYTHONDONTWRITEBYTECODE in the environment would otherwise make every process compile stackbench's
sources again (about 0.1 s here) while the floor's libraries load from their caches.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CAPTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "fio" / "randread-psync.json"
REPEATS = 10


# The same framework doing the least a store command does: Typer parsing one option (Typer >= 0.2x builds
# its parameter coercion with pydantic at run time) and SQLAlchemy opening the SQLite store and reading one
# row. Not the goal's floor; shown so that what stackbench itself adds can be told from what its
# framework costs once it runs.
FRAMEWORK_AT_WORK = """
import sys, typer, rich.console, sqlalchemy
app = typer.Typer()
@app.command()
def show(db: str = typer.Option(...)) -> None:
    with sqlalchemy.create_engine("sqlite:///" + db).connect() as connection:
        rich.console.Console().print(connection.execute(sqlalchemy.text("SELECT count(*) FROM runs")).scalar())
app(["--db", sys.argv[1]])
"""


CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def run_once(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=CHILD_ENV)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-300:]}")
    return seconds, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def timed_round_robin(commands: dict[str, list[str]]) -> dict[str, tuple[float, float]]:
    """Median wall and CPU time of each command over REPEATS rounds, one process of each per round."""
    for argv in commands.values():
        run_once(argv)  # warm-up: writes the bytecode cache, loads the files into the page cache
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(REPEATS):
        for name, argv in commands.items():
            samples[name].append(run_once(argv))
    return {name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
            for name, values in samples.items()}


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="startup-bench-"))
    db = str(workdir / "runs.db")
    files = []
    for index in range(1000):
        copy = workdir / f"out-{index:04}.json"
        shutil.copyfile(CAPTURE, copy)
        files.append(str(copy))
    subprocess.run([sys.executable, "-m", "stackbench", "import", *files, "--db", db, "--json"],
                   check=True, capture_output=True)
    run_id = subprocess.run([sys.executable, "-m", "stackbench", "runs", "--db", db, "--json", "-n", "1"],
                            check=True, capture_output=True, text=True).stdout.split('"run_id": "')[1][:32]
    stackbench = [sys.executable, "-m", "stackbench"]
    medians = timed_round_robin({
        "floor": [sys.executable, "-c", "import typer, rich.console, sqlalchemy"],
        "at work": [sys.executable, "-c", FRAMEWORK_AT_WORK, db],
        "stackbench --help": [*stackbench, "--help"],
        "stackbench runs": [*stackbench, "runs", "--db", db],
        "stackbench show RUN": [*stackbench, "show", run_id, "--db", db],
    })
    floor, floor_cpu = medians.pop("floor")
    at_work, at_work_cpu = medians.pop("at work")
    import typer

    load = os.getloadavg()[0]
    print(f"# {' '.join(sys.argv)}: median of {REPEATS} rounds, one process of each command per round, "
          f"store of 1,000 runs; Typer {typer.__version__}; load average {load:.1f} at the end")
    print(f"floor (python importing typer, rich, sqlalchemy): {floor:.3f} s, CPU {floor_cpu:.3f} s")
    print(f"framework at work (one Typer option parsed, one SQLite query): {at_work:.3f} s   "
          f"{at_work / floor:.2f}x the floor   CPU {at_work_cpu / floor_cpu:.2f}x")
    for name, (seconds, cpu) in medians.items():
        goal = ""
        if name in ("stackbench runs", "stackbench show RUN"):
            limit = 1.3 if load < 1 else 1.5  # issue 34: quiet, and under load
            goal = f"   goal {limit}x ({'quiet' if load < 1 else 'under load'}): " + (
                "met" if seconds / floor <= limit else "MISSED")
        print(f"{name:<22} {seconds:.3f} s   {seconds / floor:.2f}x the floor   CPU {cpu / floor_cpu:.2f}x{goal}")
    shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
