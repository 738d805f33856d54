"""Orphaned processes: fio outliving the stackbench that started it (SIGKILL, the OOM killer).

fio runs each job in a process of its own that calls setsid, so it is in none of our process groups. When
fio's main process was killed outright, its job process kept writing to the target for the rest of its
runtime, or hung on a lock the main process held, until killed by hand. Real fio, real SIGKILL: no fio
process may survive, the target may not be written after the kill, and the next command says so and
cleans up. Processes are found here by their working directory, fio's job directory, independently of
the code under test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from child_processes import alive
from conftest import run_cli
from stackbench.store import open_store


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd").removesuffix(" (deleted)")
    except OSError:
        return ""


def _running_in(workdir: str) -> list[int]:
    """The running processes whose working directory is in the run's job directory: fio and its jobs."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _cwd(int(p)).startswith(workdir + "/")
            and alive(int(p))]


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _until(condition, seconds: float) -> bool:  # noqa: ANN001 - a callable
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


class Measuring:
    """A `stackbench run` whose fio is writing: the process, its run's record, fio's main and job processes."""

    def __init__(self, tmp_path: Path, scratch_dir: Path) -> None:
        self.db = tmp_path / "r.db"
        self.scratch_dir = scratch_dir
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stackbench", "run", "-t", str(scratch_dir), "--bs", "4k", "--rw", "randwrite",
             "--qd", "1", "--runs", "1", "--runtime", "60", "--ramp", "0", "--size", "16M", "--db", str(self.db)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        assert self.process.stderr.readline().startswith("Run ")  # its row is stored (do not race its migration)
        assert _until(lambda: self._record().get("fio"), 60), "fio did not start"
        self.record = self._record()
        self.workdir = self.record["workdir"]
        assert _until(lambda: len(_running_in(self.workdir)) == 2, 30)  # fio's main process and its one job
        self.main = next(p for p in _running_in(self.workdir) if _parent(p) == self.process.pid)
        self.job = next(p for p in _running_in(self.workdir) if p != self.main)
        self.scratch = Path(self.record["scratch"])
        assert _until(lambda: self.scratch.exists() and self.scratch.stat().st_size > 0, 30)

    def _record(self) -> dict:
        store = open_store(f"sqlite:///{self.db}")
        try:
            running = store.running_runs()
        finally:
            store.dispose()
        return running[0][1]["process"] if running else {}

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)

    def cleanup(self) -> None:
        """After the test, pass or fail: nothing of this run keeps running."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pid in _running_in(self.workdir):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def measuring(tmp_path: Path, scratch_dir: Path) -> Iterator[Measuring]:
    started: list[Measuring] = []

    def start() -> Measuring:
        started.append(Measuring(tmp_path, scratch_dir))
        return started[-1]

    yield start  # type: ignore[misc]
    for run in started:
        run.cleanup()


def _unchanged_for(path: Path, seconds: float) -> bool:
    before = path.stat()
    time.sleep(seconds)
    after = path.stat()
    return (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)


@pytest.mark.slow
def test_sigkill_of_stackbench_stops_fio_and_its_job_processes_at_once(measuring) -> None:
    run = measuring()
    run.kill()
    assert _until(lambda: _running_in(run.workdir) == [], 5), _running_in(run.workdir)  # not its 60 s runtime
    assert _unchanged_for(run.scratch, 2)  # nothing writes the target any more
    listed = run_cli("runs", "--db", str(run.db), "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["runs"][0]["status"] == "abandoned"
    assert "marked abandoned" in listed.stderr and not run.scratch.exists()


@pytest.mark.slow
@pytest.mark.parametrize("hung", [False, True], ids=["writing", "hung"])
def test_fio_job_processes_that_outlive_fio_are_killed_by_the_next_command(measuring, hung: bool) -> None:
    """fio's main process killed outright with stackbench (the OOM killer takes both): its job process, in
    a session of its own, goes on writing, or hangs in a futex wait on a lock the dead main process held
    (it does either, by the moment of the kill); SIGSTOP makes it the one that answers nothing but SIGKILL."""
    run = measuring()
    if hung:
        os.kill(run.job, signal.SIGSTOP)
    os.kill(run.main, signal.SIGKILL)
    run.kill()
    time.sleep(1)
    assert _running_in(run.workdir) == [run.job]  # what the next command has to deal with (writing, or hung)
    listed = run_cli("runs", "--db", str(run.db), "--json")
    assert listed.returncode == 0, listed.stderr
    assert _running_in(run.workdir) == []
    assert f"killed the 1 fio process it left running ({run.job})" in listed.stderr, listed.stderr
    assert json.loads(listed.stdout)["runs"][0]["status"] == "abandoned"
    assert not run.scratch.exists() and not Path(run.workdir).exists()
    again = run_cli("runs", "--db", str(run.db))
    assert again.returncode == 0 and "left running" not in again.stderr  # reported once


@pytest.mark.slow
def test_a_fio_that_does_not_stop_on_sigint_is_killed_with_its_job_processes(measuring) -> None:
    """SIGTERM to stackbench: fio gets SIGINT, and SIGKILL 5 s later; its job processes with it, or they
    would go on writing after stackbench has removed the scratch file and exited."""
    run = measuring()
    os.kill(run.main, signal.SIGSTOP)  # a fio main process that cannot answer
    run.process.send_signal(signal.SIGTERM)
    _, stderr = run.process.communicate(timeout=60)
    assert run.process.returncode == 130, stderr
    assert _until(lambda: _running_in(run.workdir) == [], 5), _running_in(run.workdir)
    assert not run.scratch.exists()
