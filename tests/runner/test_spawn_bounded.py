"""spawn.run's `max_output`: a child that writes more than the caller will hold is killed and said to be,
whatever it writes to; within the bound it behaves as `communicate` (large input written while output is
read, the timeout kept); fleet/ssh.py's `call` turns a flood from a host into a one-line failure with the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.base import spawn

FLOOD = "import sys; [sys.stdout.write('x' * 65536) for _ in range(10**5)]"  # about 6.5 GB unless stopped


def test_a_child_writing_past_the_bound_is_stopped_and_killed() -> None:
    with pytest.raises(spawn.OutputTooLarge) as raised:
        spawn.run([sys.executable, "-c", FLOOD], capture_output=True, max_output=2**20, timeout=60)
    assert raised.value.limit == 2**20


def test_the_bound_counts_stderr_too() -> None:
    with pytest.raises(spawn.OutputTooLarge):
        spawn.run([sys.executable, "-c", FLOOD.replace("stdout", "stderr")], capture_output=True, max_output=2**20,
                  timeout=60)


def test_within_the_bound_input_and_output_are_whole() -> None:
    """3 MiB in (more than a pipe holds, so the writes must wait for the reads), 3 MiB back and a line on stderr."""
    data = os.urandom(3 * 2**20)
    done = spawn.run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read()); "
                      "sys.stderr.write('done\\n')"], input=data, capture_output=True, max_output=4 * 2**20, timeout=60)
    assert done.returncode == 0 and done.stdout == data and done.stderr == b"done\n"


def test_the_timeout_holds_in_the_bounded_reader() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        spawn.run([sys.executable, "-c", "import time; time.sleep(30)"], capture_output=True, max_output=2**20,
                  timeout=0.5)


def test_a_host_that_floods_its_answer_is_one_line_with_the_fix(tmp_path: Path) -> None:
    """The `ssh` here is a script that ignores its arguments and floods stdout: a fake for a broken or hostile
    host, which a real sshd on this machine would not be (it runs our agent)."""
    from stackbench.fleet.ssh import AgentFailed, Ssh

    fake = tmp_path / "ssh"
    fake.write_text(f"#!{sys.executable}\n{FLOOD}\n")
    fake.chmod(0o755)
    with pytest.raises(AgentFailed) as raised:
        Ssh(binary=str(fake), max_answer_bytes=2**20).call("db01", "cleanup", {}, timeout=60)
    failure = raised.value.failure
    assert failure.host == "db01" and "answered more than 1 MiB" in failure.what and failure.fix
