"""The journal restores what a tune session changed when its process is killed outright (kill -9), on the next
stackbench start, and leaves alone a value someone else changed since. Real processes, a real kill, a real
kernel setting: the read-ahead of a loop device each test creates (never a host-wide setting)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

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
