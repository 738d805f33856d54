"""What `stackbench runs` and `show` load and how they collect garbage: their start-up against the floor of
typer, rich and sqlalchemy (issue 34; bench/startup_bench.py measures it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import DATA, cli_here


def _stored(tmp_path: Path) -> tuple[str, str]:
    db = str(tmp_path / "r.db")
    done = cli_here("import", str(DATA / "fio" / "randread-psync.json"), "--label", "one", "--db", db)
    assert done.returncode == 0, done.stderr
    return db, "one"


def test_show_of_a_plain_run_loads_no_fleet_analysis_and_no_cleanup(tmp_path: Path) -> None:
    """A run of one machine needs no spread between hosts (analysis/fleet.py and with it compare), and a
    store with no run still marked running needs no cleanup of dead runs (measure/abandoned.py)."""
    db, label = _stored(tmp_path)
    for argv in (["show", label], ["runs"]):
        loaded = subprocess.run([sys.executable, "-X", "importtime", "-m", "stackbench", *argv, "--db", db],
                                capture_output=True, text=True)
        assert loaded.returncode == 0, loaded.stderr
        assert "stackbench.store.schema" in loaded.stderr  # the list is real
        for module in ("stackbench.analysis.fleet", "stackbench.analysis.compare", "stackbench.measure.abandoned",
                       "stackbench.base.processes"):
            assert f" {module}\n" not in loaded.stderr, (argv, module)


def test_the_command_runs_with_the_start_ups_objects_frozen(tmp_path: Path) -> None:
    """The modules load without garbage collection, and the command then runs with it on but never scanning
    them again (gc.freeze): collections during start-up cost a sixth of `runs`' CPU time."""
    db, _ = _stored(tmp_path)
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('frozen', gc.get_freeze_count(), 'enabled', gc.isenabled(), file=sys.stderr))\n"
             f"sys.argv = ['stackbench', 'runs', '--db', {db!r}]\n"
             "from stackbench.__main__ import entry\n"
             "entry()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    words = done.stderr.split()
    assert words[words.index("enabled") + 1] == "True"
    assert int(words[words.index("frozen") + 1]) > 10_000  # typer, rich and the command's modules
