"""SIGKILL mid-run (what a power cut or the OOM killer does): fio dies too, the next command cleans up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import run_cli


def _fio_processes_in(directory: str) -> list[str]:
    """fio processes working in the run's job directory (fio reads its job file from stdin: the directory is
    its working directory, which its job processes inherit, not an argument)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if "fio" in cmdline and (directory in cmdline or cwd.startswith(directory + "/")):
            found.append(cmdline)
    return found


def _start_run(scratch_dir: Path, db: Path, runs: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "stackbench", "run", "-t", str(scratch_dir), "--bs", "4k", "--rw", "randwrite",
         "--qd", "1", "--runs", str(runs), "--runtime", "2", "--ramp", "0", "--size", "16M", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.mark.slow
def test_sigkill_mid_run_then_the_next_command_marks_it_abandoned_and_cleans_up(tmp_path: Path, scratch_dir: Path) -> None:
    db = tmp_path / "r.db"
    process = _start_run(scratch_dir, db, 5)
    assert process.stderr.readline().startswith("Run ")
    assert "done" in process.stderr.readline()  # one fio run stored; the second is under way
    time.sleep(0.5)
    run_id = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)["runs"][0]["run_id"]
    workdirs = list(Path(tempfile.gettempdir()).glob(f"stackbench-run-{run_id[:12]}-*"))
    assert len(workdirs) == 1 and [p.name for p in scratch_dir.iterdir()]  # fio is writing its scratch file
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _fio_processes_in(str(workdirs[0])) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _fio_processes_in(str(workdirs[0])) == []  # fio died with its parent

    listed = run_cli("runs", "--db", str(db), "--json")
    assert listed.returncode == 0
    run = json.loads(listed.stdout)["runs"][0]
    assert run["status"] == "abandoned" and run["cells"] == 1
    assert f"run {run_id[:12]} was left running" in listed.stderr and "marked abandoned" in listed.stderr
    assert list(scratch_dir.iterdir()) == []
    assert not workdirs[0].exists()
    again = run_cli("runs", "--db", str(db))
    assert "abandoned" in again.stdout and "left running" not in again.stderr  # reported once


@pytest.mark.slow
def test_a_running_run_of_a_live_process_is_left_alone(tmp_path: Path, scratch_dir: Path) -> None:
    db = tmp_path / "r.db"
    process = _start_run(scratch_dir, db, 2)
    assert process.stderr.readline().startswith("Run ")
    listed = run_cli("runs", "--db", str(db), "--json")
    assert json.loads(listed.stdout)["runs"][0]["status"] == "running"
    process.communicate(timeout=60)
    assert process.returncode == 0
    assert json.loads(run_cli("runs", "--db", str(db), "--json").stdout)["runs"][0]["status"] == "complete"
