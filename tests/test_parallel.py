"""The suite under pytest-xdist (`scripts/test -n 2 -m "not slow"`): tests that share a machine-wide rig (the
lab guests, the fleet's network namespaces) run on one worker, so the rig is set up once and never twice at
the same time, and a test file runs whole on one worker, its module fixtures made once (tests/conftest.py).

A throwaway suite of its own runs under two real workers with this suite's hooks; its `guest` and
`fleet_rig` fixtures stand in for the real rigs (a qemu boot takes minutes) and note which worker set them up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

CONFTEST = f"""
import importlib.util, json, os, sys
import pytest

spec = importlib.util.spec_from_file_location("suite_conftest", {str(TESTS / "conftest.py")!r})
suite = sys.modules["suite_conftest"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)
pytest_configure = suite.pytest_configure
pytest_collection_modifyitems = suite.pytest_collection_modifyitems
pytest_configure_node = suite.pytest_configure_node
pytest_xdist_make_scheduler = suite.pytest_xdist_make_scheduler


def _note(rig):
    with open(os.environ["NOTES"], "a") as notes:
        notes.write(json.dumps([rig, os.environ.get("PYTEST_XDIST_WORKER")]) + "\\n")


@pytest.fixture(scope="session")
def guest():
    _note("guest")


@pytest.fixture(scope="session")
def fleet_rig():
    _note("fleet_rig")


@pytest.fixture
def fleet(fleet_rig):
    pass
"""

RIGS_FILE = """
import time
import pytest


@pytest.mark.parametrize("n", range(6))
def test_on_the_guest(guest, n):
    time.sleep(0.05)


@pytest.mark.parametrize("n", range(6))
def test_on_the_fleet(fleet, n):
    time.sleep(0.05)
"""

PLAIN_FILE = """
import os, json, time
import pytest


@pytest.fixture(scope="module")
def made_once():
    with open(os.environ["NOTES"], "a") as notes:
        notes.write(json.dumps([__name__, os.environ.get("PYTEST_XDIST_WORKER")]) + "\\n")


@pytest.mark.parametrize("n", range(5))
def test_plain(made_once, n):
    time.sleep(0.05)
"""


@pytest.mark.slow
def test_the_tests_of_each_shared_rig_run_on_one_worker_and_set_it_up_once(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    (suite / "test_rigs.py").write_text(RIGS_FILE)
    for name in ("test_plain_a.py", "test_plain_b.py", "test_plain_c.py", "test_plain_d.py"):
        (suite / name).write_text(PLAIN_FILE)
    notes = tmp_path / "notes.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", "-q", str(suite), "--rootdir",
         str(suite), "-c", os.devnull],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env={**os.environ, "NOTES": str(notes)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "32 passed" in done.stdout, done.stdout
    seen = [tuple(json.loads(line)) for line in notes.read_text().splitlines()]
    made = sorted(what for what, _ in seen)
    # each rig set up once (all of its tests on the worker that set it up), each file's module fixture once
    assert made == ["fleet_rig", "guest", "test_plain_a", "test_plain_b", "test_plain_c", "test_plain_d"], seen
    assert len({worker for what, worker in seen if what.startswith("test_plain")}) == 2  # spread: xdist ran
