"""fio's socket directory on a host goes to that host's $TMPDIR when its sshd sets one (node1 of the rig,
tests/fleet_hosts.py, through sshd_config SetEnv), else to /tmp; either way it is a new 0700 directory,
removed when the run ends."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]


def _ours(directory: Path, tag: str) -> list[Path]:
    return [p for p in directory.glob(f"stackbench-fleet-*-{tag}") if p.is_dir()]


def test_the_socket_directory_is_made_in_the_hosts_tmpdir(fleet, db_url: str) -> None:
    node1 = fleet.host("node1")
    assert node1.tmpdir is not None
    process = subprocess.Popen(
        [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(fleet.names), "-t", str(node1.target),
         "--db", db_url, "--bs", "4k", "--qd", "1", "--rw", "randread", "--size", "8M", "--ramp", "0",
         "--runtime", "2s", "--runs", "1"],
        env={**os.environ, **fleet.env()}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    in_tmpdir: set[str] = set()
    modes: set[int] = set()
    in_tmp: set[str] = set()
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        for directory in _ours(node1.tmpdir, "h0"):
            try:
                modes.add(stat.S_IMODE(directory.stat().st_mode))
                if (directory / "fio.sock").exists():
                    in_tmpdir.add(directory.name)
            except FileNotFoundError:
                pass
        in_tmp |= {p.name for p in Path("/tmp").glob("stackbench-fleet-*")}
        time.sleep(0.05)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert len(in_tmpdir) == 1 and modes == {0o700}  # node1's fio socket was in its own TMPDIR, private
    run_tag = next(iter(in_tmpdir)).rsplit("-", 1)[0]  # stackbench-fleet-TAG: this run's (others may run)
    hosts_in_tmp = {name.rsplit("-", 1)[1] for name in in_tmp if name.startswith(run_tag + "-")}
    assert hosts_in_tmp == {"h1", "h2"}  # the others, without TMPDIR, in /tmp; node1's never
    assert list(node1.tmpdir.iterdir()) == []  # removed when the run ended
    assert list(Path("/tmp").glob(f"{run_tag}-*")) == []
