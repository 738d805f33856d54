"""spawn.py: a signal that arrives while a child process is being started is delivered, not lost."""

from __future__ import annotations

import secrets
import subprocess
import sys
import textwrap
import time

import pytest

from child_processes import pids_written, still_running

from stackbench.base import spawn

# A SIGTERM sent from the at-fork hook lands in the middle of starting the child, like the fault test's
# SIGTERM that hit `fio` being started. Run in a separate interpreter: at-fork hooks cannot be removed.
STOP_ON_SIGTERM = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    from stackbench.base import spawn

    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop

    signal.signal(signal.SIGTERM, handler)
    """
)
SCRIPT = STOP_ON_SIGTERM + textwrap.dedent(
    """
    os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGTERM))
    start = spawn.popen if sys.argv[1] == "spawn" else subprocess.Popen
    child = None
    try:
        child = start(["sleep", sys.argv[2]])
        child.wait(timeout=1)
        print("lost")
    except Stop:
        print("delivered")
    except subprocess.TimeoutExpired:
        print("lost")
        child.kill()
    """
)


def _outcome(how: str, seconds: str = "30") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT, how, seconds], capture_output=True, text=True, timeout=60)


def test_plain_popen_loses_a_signal_raised_in_an_at_fork_hook() -> None:
    """The failure this module exists for, shown on this interpreter (if it ever stops happening, the
    module can go)."""
    done = _outcome("popen")
    assert done.stdout.strip() == "lost", done.stderr


def test_spawn_delivers_it_after_the_fork_and_leaves_no_child() -> None:
    seconds = f"30.{secrets.randbelow(10**9):09d}"  # its own: other tests (other xdist workers) sleep 30 too
    done = _outcome("spawn", seconds)
    assert done.stdout.strip() == "delivered", done.stderr
    assert "Traceback" not in done.stderr
    assert subprocess.run(["pgrep", "-f", f"^sleep {seconds}$"], capture_output=True).returncode == 1


def test_the_child_starts_with_the_callers_signal_mask() -> None:
    done = spawn.run(["grep", "^SigBlk", "/proc/self/status"], capture_output=True, text=True, check=True)
    assert int(done.stdout.split()[1], 16) == 0


def test_run_behaves_like_subprocess_run() -> None:
    done = spawn.run(["sh", "-c", "cat; echo err >&2; exit 3"], input="in", capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "in", "err\n")
    with pytest.raises(subprocess.CalledProcessError):
        spawn.run(["false"], check=True)
    with pytest.raises(subprocess.TimeoutExpired):
        spawn.run(["sleep", "5"], timeout=0.2)


DYING_PARENT = textwrap.dedent(
    """
    import signal, sys, time
    from stackbench.base import spawn

    child = spawn.popen(["sh", "-c", sys.argv[1]], death_signal=signal.SIGTERM)
    print(child.pid, flush=True)
    time.sleep(100)
    """
)


def test_a_child_asked_to_die_with_us_gets_its_signal_when_we_are_killed_outright(tmp_path) -> None:  # noqa: ANN001
    """SIGKILL runs no cleanup of ours: the kernel's parent-death signal is what reaches fio then."""
    heard, ready = tmp_path / "heard", tmp_path / "ready"
    parent = subprocess.Popen(
        [sys.executable, "-c", DYING_PARENT,
         f"trap 'echo TERM > {heard}; kill $!; exit 0' TERM; sleep 100 & echo > {ready}; wait"],
        stdout=subprocess.PIPE, text=True,
    )
    parent.stdout.readline()
    deadline = time.monotonic() + 10
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 5
    while not (heard.exists() and heard.read_text().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert heard.read_text() == "TERM\n"


GROUP_STARTED = STOP_ON_SIGTERM + textwrap.dedent(
    """
    # the signal comes while the child runs its first lines (it has started a grandchild by then)
    os.register_at_fork(after_in_parent=lambda: (time.sleep(1.0), os.kill(os.getpid(), signal.SIGTERM)))
    try:
        spawn.popen(["sh", "-c", "sleep 30 & echo $! > " + sys.argv[1] + "; wait"], start_new_session=True,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except Stop:
        print("delivered")
    """
)


def test_a_child_in_its_own_group_is_killed_with_what_it_started_when_a_held_signal_interrupts(tmp_path) -> None:  # noqa: ANN001
    started = tmp_path / "grandchild"
    done = subprocess.run([sys.executable, "-c", GROUP_STARTED, str(started)], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "delivered", done.stderr
    (grandchild,) = pids_written(started, 5)
    running = still_running([grandchild], 5)
    for pid in running:
        subprocess.run(["kill", "-9", str(pid)])
    assert running == []

