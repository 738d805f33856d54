"""`stackbench ab`'s commands, as a real `python -m stackbench ab` process runs them: a timeout that ends
what the command started, a background child that is no timeout, and Ctrl-C or SIGTERM while a command
runs: the command's whole group is stopped and the message says which command was interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from child_processes import alive, pids_written, still_running

CELL = ["--bs", "4k", "--qd", "1", "--rw", "randread", "--size", "4M", "--runtime", "0.3", "--ramp", "0"]


@pytest.fixture
def ab(tmp_path: Path, scratch_dir: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start `stackbench ab` on the cell; afterwards (a failed test included) kill what is left of it and of
    the children its commands wrote to `tmp_path/children`."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "stackbench", "ab", "-t", str(scratch_dir), *CELL, "--db", str(tmp_path / "r.db"),
             *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()
        process.communicate()
    children = tmp_path / "children"
    for pid in [int(line) for line in children.read_text().split()] if children.exists() else []:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def _error(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, stderr
    return errors[0]


@pytest.mark.parametrize("sig, cause", [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")])
@pytest.mark.slow
def test_a_signal_while_b_runs_stops_b_and_what_it_started_and_says_b_was_interrupted(
    ab, tmp_path: Path, scratch_dir: Path, sig: signal.Signals, cause: str
) -> None:
    children = tmp_path / "children"
    b = f"sleep 100 & echo $! > {children}; wait"
    process = ab("--a", "true", "--b", b)
    pids = pids_written(children)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    line = _error(stderr)
    assert f"{cause} stopped the ab session: --b ({b}) was started and interrupted: its state is unknown; the " \
           "last command applied before it was --a (true)" in line, line
    assert still_running(pids) == []
    assert list(scratch_dir.iterdir()) == []


def test_a_signal_while_fio_measures_names_the_last_command_applied(ab, tmp_path: Path, scratch_dir: Path) -> None:
    applied = tmp_path / "applied"
    process = ab("--a", f"echo a > {applied}", "--b", "true", "--runtime", "30")
    deadline = time.monotonic() + 60
    while not list(scratch_dir.glob("stackbench-*.scratch")) and time.monotonic() < deadline:  # fio measures A
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    line = _error(stderr)
    assert f"Ctrl-C stopped the ab session: the last command applied was --a (echo a > {applied});" in line, line


@pytest.mark.slow
def test_a_command_still_running_at_its_timeout_is_stopped_with_its_children(
    ab, tmp_path: Path, scratch_dir: Path
) -> None:
    """A shell that ignores SIGTERM, with a child that ignores it too: it never ends by itself."""
    children = tmp_path / "children"
    b = f"trap '' TERM INT; (trap '' TERM INT; while :; do sleep 0.1; done) & echo $! > {children}; wait"
    process = ab("--a", "true", "--b", b, "--command-timeout", "2")
    pids = pids_written(children)
    started = time.monotonic()
    _, stderr = process.communicate(timeout=60)
    took = time.monotonic() - started
    assert process.returncode == 1, stderr
    line = _error(stderr)
    assert "the --b command did not finish within 2 s and was stopped with everything it started in its process " \
           "group: its state is unknown (the last command applied was --a (true))" in line, line
    assert took < 15, took
    assert still_running(pids) == []
    assert list(scratch_dir.iterdir()) == []


@pytest.mark.slow
def test_a_command_that_leaves_a_background_child_holding_stdout_has_succeeded(
    ab, tmp_path: Path, scratch_dir: Path
) -> None:
    """`sleep 30 &` keeps the command's stdout open for 30 s: it used to be reported as a timeout."""
    children = tmp_path / "children"
    process = ab("--a", f"sleep 30 & echo $! >> {children}", "--b", "true", "--rounds", "2",
                  "--command-timeout", "5", "--json")
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert '"verdict"' in stdout
    assert len(pids_written(children)) == 2  # one per round: each --a ended when its shell did
