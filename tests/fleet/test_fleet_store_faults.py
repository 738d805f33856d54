"""The store fails in the middle of a fleet run (the disk under the SQLite file fills between cells, a real
tmpfs filled by a real file, as tests/faults/test_store_faults.py does for a local run): one error line
naming the fix and the recovery file, the fio run that could not be stored kept there, nothing left on any
host (fio server, forward, scratch file, socket directory), and the run not left `running`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import fill, run_cli
from stackbench.store import open_store

pytestmark = [pytest.mark.root, pytest.mark.slow]


def _server_socket_dirs(fleet) -> list[Path]:
    """The socket directories of the fio servers running on the rig's hosts (`--server=sock:DIR/fio.sock`)."""
    found = []
    for host in fleet.hosts:
        for pid in host.processes("fio"):
            for argument in Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0"):
                if argument.startswith("--server=sock:"):
                    found.append(Path(argument.removeprefix("--server=sock:")).parent)
    return found


def _left_on_hosts(fleet) -> list[str]:
    """fio processes, scratch files and socket directories still on any host, a moment after the end."""
    deadline = time.monotonic() + 10
    while True:
        left = [f"{h.name}: fio {pid}" for h in fleet.hosts for pid in h.processes("fio")]
        left += [f"{h.name}: {p}" for h in fleet.hosts for p in h.scratch.iterdir()]
        tmpdir = fleet.host("node1").tmpdir
        left += [str(p) for p in tmpdir.iterdir()] if tmpdir else []
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def test_a_store_that_fills_mid_run_is_one_line_and_leaves_nothing_on_any_host(fleet, tmp_path: Path, tmpfs_mount,
                                                                               request) -> None:
    mount = tmpfs_mount("4M")
    db = mount / "r.db"
    state = tmp_path / "state"
    assert run_cli("runs", "--db", str(db)).returncode == 0
    # This run's own ssh control directories land here, not in a /tmp that other runs on the machine share
    # (a short path: under a long $TMPDIR they would go to /tmp, tests/fleet/test_hosts.py).
    local_tmp = Path(tempfile.mkdtemp(prefix="sbt-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(local_tmp, ignore_errors=True))
    process = subprocess.Popen(
        [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(fleet.names), "-t", str(fleet.hosts[0].target),
         "--db", str(db), "--bs", "4k,8k,16k", "--qd", "1", "--rw", "randread", "--size", "8M", "--ramp", "0",
         "--runtime", "1s", "--runs", "1"],
        env={**os.environ, **fleet.env(), "XDG_STATE_HOME": str(state), "TMPDIR": str(local_tmp)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    store = open_store(f"sqlite:///{db}")
    filled, sockets, controls = False, [], []
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline and not filled:
        runs = store.list_runs()
        if runs and len(store.get_run(runs[0][0].id).cells) >= 4:  # the first cell is stored on every host
            fill(mount)  # before the second cell is stored
            filled = True
            sockets = _server_socket_dirs(fleet)  # this run's: other runs on the machine share /tmp
            controls = list(local_tmp.glob("stackbench-ssh-*"))
        time.sleep(0.05)
    assert filled and sockets and len(controls) == len(fleet.hosts), process.communicate(timeout=120)[1]
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    assert "is full" in errors[0] and "fio output is kept in" in errors[0], errors
    kept = sorted((state / "stackbench" / "recovery").iterdir())
    assert len(kept) == 1 and f"stackbench import {kept[0]}" in errors[0]
    # nothing on any host, nothing of ours left here (forwards, control sockets, socket directories)
    assert _left_on_hosts(fleet) == []
    assert subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout == ""
    assert [p for p in sockets if p.exists()] == []
    assert list(local_tmp.iterdir()) == []
    # once there is room again, the run is not `running`: the next command finds its process gone and says so
    (mount / "filler").unlink()
    listed = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)["runs"]
    # (abandoned: with the disk full, the run row could not be finished either; incomplete if it could)
    assert len(listed) == 1 and listed[0]["status"] in ("abandoned", "incomplete"), listed
    run = open_store(f"sqlite:///{db}").get_run(listed[0]["run_id"])
    assert {c.result.host for c in run.cells} == {*fleet.names, "(total)"}  # the first cell, kept
    imported = run_cli("import", str(kept[0]), "--db", str(tmp_path / "other.db"), "--json")
    assert imported.returncode == 0, imported.stderr
