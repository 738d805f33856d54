"""Fixtures the tune tests share."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A journal directory of the test's own (XDG_STATE_HOME under tmp_path): the tune journals' directory."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "stackbench" / "tune"


@pytest.fixture
def planted(ext4_loop: Path) -> Path:
    """A directory on a loop device whose read-ahead is switched off and whose ext4 is remounted with strict
    access times: two findings of the audit's, BLK-READAHEAD-OFF and MNT-STRICTATIME."""
    from tune.test_tune_session import read_ahead_file

    read_ahead_file(ext4_loop).write_text("0")
    subprocess.run(["mount", "-o", "remount,strictatime", str(ext4_loop)], check=True)
    directory = ext4_loop / "bench"
    directory.mkdir()
    return directory
