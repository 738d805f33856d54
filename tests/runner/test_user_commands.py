"""user_commands.py: a user's shell command ends when its shell exits; at a timeout or an interruption its
whole process group is ended; nothing it holds open (stdout) can make stackbench wait. Real /bin/sh."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from child_processes import alive, pids_written, still_running

from stackbench.base import user_commands


def test_a_command_that_starts_a_background_child_and_exits_0_has_succeeded_at_once(tmp_path: Path) -> None:
    """The child keeps the command's stdout open: with pipes, waiting for their end was a timeout."""
    pid_file = tmp_path / "child"
    started = time.monotonic()
    done = user_commands.run(f"sleep 60 & echo $! > {pid_file}", timeout=5)
    took = time.monotonic() - started
    (child,) = pids_written(pid_file)
    try:
        assert done.ok and not done.timed_out and took < 3, (done, took)
        assert alive(child)  # what the command started in the background is the user's: left running
    finally:
        os.kill(child, signal.SIGKILL)


def test_the_timeout_ends_the_whole_group_without_waiting_for_a_child_that_holds_stdout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    started = time.monotonic()
    done = user_commands.run(f"sleep 30 & echo $! > {pid_file}; echo $$ >> {pid_file}; sleep 60", timeout=2)
    took = time.monotonic() - started
    assert done.timed_out and done.exit_code is None and not done.ok
    assert took < 2 + user_commands.GRACE_S, took  # not the 30 s the child holds stdout open
    assert still_running(pids_written(pid_file)) == []


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    """The command that never ended: a shell loop that ignores SIGTERM and SIGINT hung `ab` forever."""
    pid_file = tmp_path / "pids"
    started = time.monotonic()
    done = user_commands.run(
        f"trap '' TERM INT; (trap '' TERM INT; while :; do sleep 0.1; done) & echo $! > {pid_file}; wait",
        timeout=1, grace=1,
    )
    took = time.monotonic() - started
    assert done.timed_out and took < 5, took
    assert still_running(pids_written(pid_file)) == []


def test_the_exit_status_of_the_command_decides_and_its_last_words_are_kept() -> None:
    done = user_commands.run("echo first; echo 'no such pool' >&2; exit 3", timeout=10)
    assert (done.exit_code, done.ok, done.said) == (3, False, "no such pool")
    assert user_commands.run("echo all fine", timeout=10).said == "all fine"
    assert user_commands.run("true", timeout=10).ok


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_an_interruption_ends_the_group_with_the_same_signal_and_is_raised_again(tmp_path: Path, sig) -> None:
    """SIGTERM is raised as `Terminated` by the runner's handler, as in a real run."""
    from stackbench.measure.runner import signals_as_interrupt

    pid_file = tmp_path / "pids"
    seen = tmp_path / "seen"
    command = f"trap 'echo got > {seen}; exit 1' {sig.name[3:]}; sleep 100 & echo $! > {pid_file}; wait"
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), sig))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt), signals_as_interrupt():
            user_commands.run(command, timeout=30)
    finally:
        timer.cancel()
    assert seen.read_text() == "got\n"  # the shell heard the signal stackbench got, not a harder one
    assert still_running(pids_written(pid_file)) == []  # `sleep 100` ignores SIGINT (a background job): killed


def test_an_argv_runs_without_a_shell_and_its_output_is_kept_when_asked(tmp_path: Path) -> None:
    """tune's reads and changes are argv lists: a word with shell syntax reaches the program as it is, never
    a shell, and a knob's read gets the program's stdout."""
    marker = tmp_path / "made"
    done = user_commands.run_argv(["/bin/echo", f"$(touch {marker})", "; x"], timeout=10, output=True)
    assert done.ok and done.output == f"$(touch {marker}) ; x\n" and not marker.exists()
    assert user_commands.run_argv(["/bin/echo", "quiet"], timeout=10).output == ""
    assert user_commands.run_argv(["/bin/false"], timeout=10).exit_code == 1
