from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pg_server import postgres_server  # noqa: E402

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def pg_url():
    with postgres_server() as url:
        yield url


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'results.db'}"


@pytest.fixture
def scratch_dir(tmp_path: Path) -> Path:
    """A directory on a real disk-backed file system (not tmpfs) for fio runs."""
    path = tmp_path / "scratch"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def fio_path() -> str:
    path = shutil.which("fio")
    if path is None:
        pytest.fail("fio is not installed: run scripts/test, which installs it (apt-get install fio)")
    return path


def run_cli(*args: str, env: dict[str, str] | None = None, input: str | None = None, timeout: float = 300):
    """Run the real `stackbench` entry point in a subprocess (as a user would)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "stackbench", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=input,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli
