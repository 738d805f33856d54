"""Fixtures the tune tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A journal directory of the test's own (XDG_STATE_HOME under tmp_path): the tune journals' directory."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "stackbench" / "tune"
