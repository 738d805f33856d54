"""Dead runs: a run whose stackbench was killed outright is cleaned up by the next command, and a cleanup
that fails never breaks the store.

The case that made every command exit 70: the dead run's scratch file sits where this process gets
EACCES (or EIO/EBADMSG on a damaged file system), so removing it raised, the run stayed `running`, and the
next command tried again. Now the run is marked abandoned with the reason and the command that finishes
the cleanup by hand, said once, and every command works; `rm` removes the run.

EACCES is real: a directory with mode 000, and, as root (whom permissions do not stop), the command run
without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (`setpriv --bounding-set`), which is what a root process
in a container without those capabilities is. EBADMSG cannot be had from a file system here on demand (it
takes a damaged one), so it is injected at the os call, in this process.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from conftest import DATA, cli_here, run_cli
from stackbench.measure.abandoned import WORKDIR_PREFIX, process_record
from stackbench.store import open_store
from stored_runs import build_store

DEAD_ID = "deadbeef" * 4


def _without_dac_override(argv: list[str]) -> list[str]:
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *argv] if os.geteuid() == 0 else argv


@pytest.fixture
def dead_run(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A store with the four stored runs and one run left `running` by a process that is gone, whose
    scratch file is in a directory this process cannot search; yields (database URL, scratch path)."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    build_store(url)
    locked = tmp_path / "locked"
    locked.mkdir()
    scratch = locked / "stackbench-dead.scratch"
    scratch.write_bytes(b"x" * 4096)
    workdir = tmp_path / f"{WORKDIR_PREFIX}deadbeefdead-1"
    workdir.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    record = {**process_record(workdir=workdir, scratch=str(scratch)), "pid": gone.pid, "start_ticks": 1}
    store = open_store(url)
    store.create_run(run_id=DEAD_ID, source="measured", label="dead", target=str(locked), plan_name="quick",
                     planned_cells=1, facts={"process": record})
    store.dispose()
    locked.chmod(0)
    try:
        yield url, scratch
    finally:
        locked.chmod(0o700)


def _stackbench(*args: str) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run(_without_dac_override([sys.executable, "-m", "stackbench", *args]), capture_output=True,
                          text=True, timeout=300)


def _commands(url: str, tmp_path: Path) -> dict[str, list[str]]:
    scratch = tmp_path / "target"
    scratch.mkdir(exist_ok=True)
    return {
        "runs": ["runs", "--db", url],
        "rm": ["rm", DEAD_ID[:12], "--force", "--yes", "--db", url],
        "import": ["import", str(DATA / "fio" / "clat-percentiles-off.json"), "--db", url],
        "run": ["run", "-t", str(scratch), "--bs", "4k", "--rw", "randread", "--qd", "1", "--runs", "1",
                "--runtime", "0.2", "--ramp", "0", "--size", "4M", "--db", url],
        "report": ["report", "baseline", "-o", str(tmp_path / "report.md"), "--db", url],
        "compare": ["compare", "baseline", "lz4", "--db", url],
    }


@pytest.mark.parametrize("command", ["runs", "rm", "import", "run", "report", "compare"])
@pytest.mark.slow
def test_a_dead_run_whose_scratch_gives_eacces_breaks_no_command(dead_run, tmp_path: Path, command: str) -> None:
    url, scratch = dead_run
    done = _stackbench(*_commands(url, tmp_path)[command])
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "was left running" in line]
    assert len(notes) == 1, done.stderr
    (note,) = notes
    assert f"run {DEAD_ID[:12]} was left running" in note and "marked abandoned" in note
    assert f"could not reach its scratch file {scratch} (Permission denied)" in note
    assert f"rm -f -- {shlex.quote(str(scratch))}" in note  # how to finish by hand
    again = _stackbench("runs", "--db", url, "--json")
    assert again.returncode == 0 and "left running" not in again.stderr  # said once
    listed = {run["run_id"]: run["status"] for run in json.loads(again.stdout)["runs"]}
    if command == "rm":
        assert DEAD_ID not in listed
    else:
        assert listed[DEAD_ID] == "abandoned"
        removed = _stackbench("rm", DEAD_ID[:12], "--yes", "--db", url)
        assert removed.returncode == 0, removed.stderr
        assert DEAD_ID not in {run["run_id"] for run in json.loads(run_cli("runs", "--db", url, "--json").stdout)["runs"]}


@pytest.mark.parametrize("error", [errno.EBADMSG, errno.EIO])
def test_a_damaged_file_system_under_a_dead_run_breaks_no_command(dead_run, monkeypatch, error: int) -> None:
    url, scratch = dead_run

    def damaged(call):  # noqa: ANN001, ANN202 - os.stat or os.lstat
        def fails_on_the_scratch(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            if os.fspath(path) == str(scratch):
                raise OSError(error, os.strerror(error), str(path))
            return call(path, *args, **kwargs)
        return fails_on_the_scratch

    monkeypatch.setattr(os, "lstat", damaged(os.lstat))
    monkeypatch.setattr(os, "stat", damaged(os.stat))
    done = cli_here("runs", "--db", url)
    assert done.returncode == 0, done.stderr
    assert f"could not reach its scratch file {scratch} ({os.strerror(error)})" in done.stderr
    assert cli_here("rm", DEAD_ID[:12], "--yes", "--db", url).returncode == 0
