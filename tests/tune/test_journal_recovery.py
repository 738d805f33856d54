"""The journal restores what a tune session changed when its process is killed outright (kill -9), on the next
stackbench start, and leaves alone a value someone else changed since. Real processes, a real kill, a real
kernel setting: the read-ahead of a loop device each test creates (never a host-wide setting)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from stackbench.base import processes

SRC = str(Path(__file__).resolve().parents[2] / "src")

CHANGER = """
import sys, time
from stackbench.measure.tune_journal import Journal
from stackbench.measure.tune_changes import Changes
from stackbench.tune.knob import Subject
from stackbench.tune.knobs import BY_ID
changes = Changes(Journal.create(sys.argv[1], {"target": "test"}))
changes.apply(BY_ID["blockdev.read_ahead_kb"], Subject("block-device", sys.argv[2]), sys.argv[3])
print("applied", flush=True)
time.sleep(600)
"""


# A session that records its scratch file and fio in its journal, starts a real fio on that file in a session
# of its own (as fio's job processes outlive a killed stackbench: abandoned.py), changes a setting and waits
# to be killed: "applied" and fio's pid once fio holds the file open.
SCRATCHED = """
import os, shutil, subprocess, sys, time
from stackbench.base import processes
from stackbench.measure.tune_journal import Journal
from stackbench.measure.tune_changes import Changes
from stackbench.tune.knob import Subject
from stackbench.tune.knobs import BY_ID
session, device, value, scratch = sys.argv[1:5]
fio = shutil.which("fio")
changes = Changes(Journal.create(session, {"target": "test", "scratch": scratch, "fio_path": fio, "uid": os.geteuid()}))
stray = subprocess.Popen([fio, "--name=stray", "--filename=" + scratch, "--size=1M", "--rw=read", "--time_based",
                          "--runtime=120"], start_new_session=True, stdout=subprocess.DEVNULL)
deadline = time.monotonic() + 30
while not any(scratch in processes.open_files(pid) for pid in [stray.pid, *processes.children_of(stray.pid)]):
    assert time.monotonic() < deadline and stray.poll() is None, "fio never opened the scratch file"
    time.sleep(0.02)
changes.apply(BY_ID["blockdev.read_ahead_kb"], Subject("block-device", device), value)
print("applied", stray.pid, flush=True)
time.sleep(600)
"""


def read_ahead(device: Path) -> str:
    return Path(f"/sys/block/{device.name}/queue/read_ahead_kb").read_text().strip()


def set_read_ahead(device: Path, value: str) -> None:
    Path(f"/sys/block/{device.name}/queue/read_ahead_kb").write_text(value)


def changed_then_killed(tmp_path: Path, device: Path, value: str, env: dict[str, str]) -> Path:
    """Start a process that changes the device's read-ahead through the journal and waits; kill -9 it once the
    change is made. The journal it leaves."""
    child = subprocess.Popen([sys.executable, "-c", CHANGER, "s1", device.name, value], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, **env, "PYTHONPATH": SRC})
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "applied"
        assert read_ahead(device) == value
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    return tmp_path / "state" / "stackbench" / "tune" / "s1.jsonl"


@pytest.fixture
def state_env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_STATE_HOME": str(tmp_path / "state")}


def test_the_next_stackbench_command_restores_what_a_killed_session_changed(tmp_path, blank_loop, state_env) -> None:
    set_read_ahead(blank_loop, "0")
    journal = changed_then_killed(tmp_path, blank_loop, "4096", state_env)
    assert read_ahead(blank_loop) == "4096"  # the kill left it changed
    done = run_cli("runs", "--db", str(tmp_path / "s.db"), env=state_env)
    assert done.returncode == 0
    assert read_ahead(blank_loop) == "0"
    assert "blockdev.read_ahead_kb on " + blank_loop.name + " set back to read_ahead_kb=0" in " ".join(done.stderr.split())
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [r["t"] for r in records] == ["session", "snapshot", "intent", "applied", "undone", "closed"]
    again = run_cli("runs", "--db", str(tmp_path / "s.db"), env=state_env)  # closed: never undone twice
    assert again.returncode == 0 and "tune" not in again.stderr and read_ahead(blank_loop) == "0"


def test_a_value_changed_by_someone_else_after_the_kill_is_left_alone_and_named(tmp_path, blank_loop, state_env) -> None:
    set_read_ahead(blank_loop, "0")
    changed_then_killed(tmp_path, blank_loop, "4096", state_env)
    set_read_ahead(blank_loop, "512")
    done = run_cli("runs", "--db", str(tmp_path / "s.db"), env=state_env)
    assert read_ahead(blank_loop) == "512"
    assert "left alone: it reads read_ahead_kb=512" in " ".join(done.stderr.split())


def test_a_kill_between_the_intent_and_the_change_leaves_nothing_to_undo(tmp_path, blank_loop, state_env) -> None:
    """The injected crash point right after the intent is durable: the setting was never changed, and the
    recovery says so instead of writing anything."""
    set_read_ahead(blank_loop, "0")
    child = subprocess.run([sys.executable, "-c", CHANGER, "s1", blank_loop.name, "4096"], capture_output=True,
                           text=True, env={**os.environ, **state_env, "PYTHONPATH": SRC,
                                           "STACKBENCH_TUNE_CRASH_AT": "after-intent:1"}, timeout=60)
    assert child.returncode == -signal.SIGKILL and read_ahead(blank_loop) == "0"
    done = run_cli("runs", "--db", str(tmp_path / "s.db"), env=state_env)
    assert "already held its original value (read_ahead_kb=0)" in " ".join(done.stderr.split())
    assert read_ahead(blank_loop) == "0"


def test_a_live_session_is_not_rolled_back_by_another_command(tmp_path, blank_loop, state_env) -> None:
    set_read_ahead(blank_loop, "0")
    child = subprocess.Popen([sys.executable, "-c", CHANGER, "s1", blank_loop.name, "4096"], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, **state_env, "PYTHONPATH": SRC})
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "applied"
        run_cli("runs", "--db", str(tmp_path / "s.db"), env=state_env)
        assert read_ahead(blank_loop) == "4096"  # its process holds the journal's lock
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    run_cli("runs", "--db", str(tmp_path / "s.db"), env=state_env)
    assert read_ahead(blank_loop) == "0"


def test_a_torn_last_line_is_ignored(tmp_path: Path) -> None:
    from stackbench.measure.tune_journal import Journal, replay

    journal = Journal.create("t1", {}, directory=tmp_path)
    journal.close()
    with open(journal.path, "a") as handle:
        handle.write('{"v":1,"t":"intent","seq":1,"kn')
    assert replay(journal.path).open == () and replay(journal.path).header["id"] == "t1"


def test_a_damaged_journal_is_named_and_the_others_are_still_recovered(tmp_path, blank_loop, state_env) -> None:
    """A record tune never wrote (an intent without its fields) once made every stackbench command fail with
    a KeyError; now it is one warning, the command runs, and a dead session's journal beside it is restored."""
    set_read_ahead(blank_loop, "0")
    journal = changed_then_killed(tmp_path, blank_loop, "4096", state_env)
    (journal.parent / "0-damaged.jsonl").write_text('{"v":1,"t":"session","id":"x"}\n{"v":1,"t":"intent","seq":1}\n')
    done = run_cli("runs", "--db", str(tmp_path / "s.db"), env=state_env)
    assert done.returncode == 0, done.stderr
    assert "0-damaged.jsonl holds a record that is not one tune writes" in " ".join(done.stderr.split())
    assert read_ahead(blank_loop) == "0"


def test_a_rollback_after_a_kill_stops_its_fio_and_removes_its_scratch_file(tmp_path, blank_loop,
                                                                           state_env) -> None:
    """`tune --rollback` opens no store, so the store's clean-up of dead runs never ran: a killed session's
    scratch file stayed, and the fio it had started kept it open, until some later command opened that store.
    The rollback stops the fio that holds the file the journal names and removes that file, and nothing
    beside it."""
    set_read_ahead(blank_loop, "0")
    bench = tmp_path / "bench"
    bench.mkdir()
    scratch, other = bench / "stackbench-s1.scratch", bench / "data.bin"
    other.write_bytes(b"someone's data")
    child = subprocess.Popen([sys.executable, "-c", SCRATCHED, "s1", blank_loop.name, "4096", str(scratch)],
                             stdout=subprocess.PIPE, text=True, env={**os.environ, **state_env, "PYTHONPATH": SRC})
    fio = None
    try:
        assert child.stdout is not None
        said, fio_pid = child.stdout.readline().split()
        assert said == "applied"
        fio = int(fio_pid)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert processes.alive(fio) and scratch.exists()  # the kill left both
        done = run_cli("tune", "--rollback", "s1", env=state_env)
        assert done.returncode == 0, done.stderr
        assert read_ahead(blank_loop) == "0" and not scratch.exists() and other.read_bytes() == b"someone's data"
        assert processes.wait_gone([fio], 10) == []
        assert [pid for pid in processes.pids() if str(scratch) in processes.open_files(pid)] == []
        said = " ".join(done.stderr.split())
        assert f"removed its scratch file {scratch}" in said and "killed the 1 fio process" in said
    finally:
        child.kill()
        child.wait()
        # the fio this test started, and its job process, which calls setsid: whichever still has the file open
        for pid in [fio] if fio is not None else []:
            processes.end(pid, lambda p: processes.executable(p) == os.path.realpath(shutil.which("fio") or ""))
        for pid in processes.pids():
            processes.end(pid, lambda p: str(scratch) in processes.open_files(p))


def test_a_closed_journal_never_removes_what_is_at_its_scratch_path_now(tmp_path: Path) -> None:
    """A session that ended removed its own scratch file; a file at that path later is someone else's, and a
    rollback of the session (its kept changes) leaves it."""
    from stackbench.measure.tune_changes import rollback
    from stackbench.measure.tune_journal import Journal

    scratch = tmp_path / "new-file"
    journal = Journal.create("t1", {"target": str(scratch), "scratch": str(scratch)}, directory=tmp_path / "j")
    journal.append({"t": "closed", "how": "completed", "left_applied": []})
    scratch.write_bytes(b"a later run's file")
    try:
        done = rollback(journal, kept=True, how="rolled back by tune --rollback")
    finally:
        journal.close()
    assert done.cleanup == () and scratch.read_bytes() == b"a later run's file"
