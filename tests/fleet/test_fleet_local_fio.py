"""This machine's fio is looked for while the hosts' sessions are already open (cli/fleet.py asks for it in
the background): without one, the run is one line naming the fix and every session is closed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]


def _agents(fleet) -> list[int]:
    """Our agents' python3 processes in the hosts' namespaces (each session runs one)."""
    return [pid for h in fleet.hosts for pid in h.processes("python3")]


def test_no_fio_here_is_one_line_and_closes_every_session(fleet, db_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(fleet.names), "-t", str(fleet.hosts[0].target),
         "--db", db_url, "--bs", "4k", "--qd", "1", "--rw", "randread", "--size", "8M", "--runtime", "1s"],
        env={**os.environ, **fleet.env(), "STACKBENCH_FIO": "/nonexistent/fio"}, capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: fio was not found (looked for '/nonexistent/fio'). Install fio (Debian/Ubuntu: apt-get install fio) "
        "or point STACKBENCH_FIO at the fio binary."]
    assert _agents(fleet) == []  # every session closed: no agent waits on any host
    assert [p for h in fleet.hosts for p in h.scratch.iterdir()] == []
