"""STACKBENCH_FLEET_TIMING: where a fleet run's wall time goes (fleet/timing.py), on the real namespace hosts
and, for the file handling, on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.fleet import timing
from stackbench.fleet.timing import ENV, Timeline, process_age

# one phase per step of a run, in the order a run goes through them
STEPS = ["startup", "sessions_open", "store_open", "local_fio", "checks_wait", "store_run", "forwards",
         "servers_start", "fio_client", "store_cell", "servers_stop", "cleanup_pass", "store_finish", "print"]
HOST_STEPS = {"answered_s", "ssh_s", "python_s", "fio_version_s", "target_check_s", "target_facts_s",
              "direct_io_s", "system_facts_s", "server_start_s", "server_stop_s"}


@pytest.mark.root
@pytest.mark.slow
def test_a_fleet_run_writes_its_phases_and_each_hosts_steps(fleet, db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "timing.json"
    done = subprocess.run(
        [sys.executable, "-m", "stackbench", "run", "--hosts", ",".join(fleet.names), "-t", str(fleet.hosts[0].target),
         "--db", db_url, "--bs", "4k", "--qd", "1", "--rw", "randread", "--size", "8M", "--ramp", "0",
         "--runtime", "1s", "--runs", "1", "--json"],
        env={**os.environ, **fleet.env(), ENV: str(path)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    document = json.loads(path.read_text())
    names = [p["name"] for p in document["phases"]]
    assert [n for n in STEPS if n in names] == STEPS  # every step, and they come in this order
    assert sorted(names, key=lambda n: STEPS.index(n)) == names
    assert all(p["seconds"] >= 0 for p in document["phases"])
    assert document["totals"]["fio_client"] >= 1.0  # fio's own 1 s run is inside it
    # the phases are the main thread's, one after the other: with the gaps they make up the whole run
    assert sum(document["totals"].values()) == pytest.approx(document["ended_s"], abs=0.01)
    assert set(document["hosts"]) == set(fleet.names)
    for name, steps in document["hosts"].items():
        assert set(steps) == HOST_STEPS, name
        assert 0 < steps["ssh_s"] < steps["answered_s"]
    assert not list(tmp_path.glob(".stackbench-timing-*"))  # written through a temporary file, renamed


def test_the_summary_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    line = Timeline("-")
    line.phases.append(("checks_wait", 1.0, 1.25))
    line.hosts["node1"] = {"ssh_s": 0.5, "note": "text is skipped"}
    line.write()
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("fleet timing: ") and "checks_wait 0.250 s" in err[0] and "unaccounted" in err[0]
    assert err[1] == "fleet timing: node1: ssh_s 0.500 s"


def test_an_unwritable_file_is_one_line_and_the_run_is_not_failed(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    Timeline(str(tmp_path / "missing" / "timing.json")).write()
    err = capsys.readouterr().err
    assert err.startswith(f"stackbench: cannot write {ENV}=") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_leaves_no_half_written_timing_file(tmpfs_mount, capsys: pytest.CaptureFixture[str]) -> None:
    """The temporary file is made (the directory is writable) but the document does not fit in it."""
    from conftest import fill

    mount = tmpfs_mount("64K")
    fill(mount)
    line = Timeline(str(mount / "timing.json"))
    line.hosts.update({f"node{i}": {"ssh_s": 0.5} for i in range(2000)})  # tens of kB of JSON
    line.write()
    err = capsys.readouterr().err
    assert err.startswith(f"stackbench: cannot write {ENV}=") and err.count("\n") == 1
    assert sorted(p.name for p in mount.iterdir()) == ["filler"]


def test_without_the_variable_nothing_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr(timing, "_timeline", None)
    monkeypatch.setattr(timing, "_checked", False)
    with timing.phase("store_open"):
        pass
    timing.host("node1", ssh_s=0.1)
    assert timing.timeline() is None and timing.since_start() is None


def test_the_process_age_counts_from_the_process_start() -> None:
    age = process_age()
    assert age is not None and 0 < age < 3600  # this test process started before the test, not at boot
