"""The agent's fio server ends whole when its lifeline closes: the server, its per-connection backend and
the job process, which fio moves to a session of its own (so stopping one process group is not enough),
and the scratch file goes with them. Run here without ssh: the agent reads the same stdin either way."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackbench.fleet.agent import BOOTSTRAP
from stackbench.fleet.ssh import answer_in, payload

pytestmark = pytest.mark.slow


def _processes(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def test_closing_stdin_stops_every_fio_process_and_removes_the_scratch(fio_path: str, tmp_path: Path) -> None:
    socket_dir = tmp_path / "stackbench-fleet-test-h0"
    scratch = tmp_path / "stackbench-x-h0.scratch"
    agent = subprocess.Popen([sys.executable, "-c", BOOTSTRAP], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    agent.stdin.write(payload("serve", {"socket_dir": str(socket_dir), "fio_path": fio_path,
                                        "scratch": [str(scratch)]}))
    agent.stdin.flush()
    assert "ready" in answer_in(agent.stdout.readline().decode())
    job = tmp_path / "job.fio"
    job.write_text(f"[x]\nioengine=psync\nfilename={scratch}\nsize=8m\ntime_based=1\nruntime=30s\nrw=randread\n")
    client = subprocess.Popen([fio_path, f"--client=sock:{socket_dir}/fio.sock", str(job)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mark = f"--server=sock:{socket_dir}/fio.sock"
    deadline = time.monotonic() + 20
    while (len(_processes(mark)) < 3 or not scratch.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_processes(mark)) >= 3 and scratch.exists()  # server, backend and job are running
    agent.stdin.close()
    agent.wait(timeout=20)
    client.wait(timeout=20)
    assert _processes(mark) == []
    assert not scratch.exists() and not socket_dir.exists()
