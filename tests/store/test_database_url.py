"""`--db` mistakes, as a user makes them: each is one line naming the fix with the README's exit code (2 for a
value that cannot name a store, 1 for a driver that is not installed), never exit 70 or a store in memory
that keeps nothing; a password in the URL is never printed back."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from conftest import cli_here

SECRET = "hunter2-db"


def _refused(db: str, code: int, *words: str, where: Path | None = None) -> str:
    """`stackbench runs --db DB` run in `where`: exit `code`, one line that says `words`, nothing created."""
    before = set(where.iterdir()) if where else set()
    cwd = os.getcwd()
    if where:
        os.chdir(where)
    try:
        done = cli_here("runs", "--db", db)
    finally:
        os.chdir(cwd)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code, (db, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("Error: ") and done.stdout == "", (db, done.stderr)
    for word in words:
        assert word in lines[0], (db, lines[0])
    assert SECRET not in done.stderr and "Traceback" not in done.stderr
    if where:
        assert set(where.iterdir()) == before, "a refused --db left something behind"
    return lines[0]


@pytest.mark.parametrize("db", ["sqlite://", "sqlite:///", "sqlite:///:memory:", ":memory:",
                                "sqlite:///file::memory:?uri=true", "sqlite:///x.db?mode=memory&uri=true"])
def test_an_in_memory_database_is_refused_since_it_would_keep_nothing(db: str, tmp_path: Path) -> None:
    _refused(db, 2, "in-memory", "keeps nothing", "sqlite:///PATH", where=tmp_path)


@pytest.mark.parametrize("scheme", ["foo", "mysql", "http"])
def test_a_database_stackbench_does_not_store_into_is_refused(scheme: str, tmp_path: Path) -> None:
    _refused(f"{scheme}://alice:{SECRET}@db.lan/bench", 2, "SQLite or PostgreSQL", f"not {scheme}",
             "postgresql://USER@HOST/DB", where=tmp_path)


@pytest.mark.parametrize("db, what", [
    (f"postgresql://alice:{SECRET}@db.lan:port/bench", "host and port that cannot be read"),
    (f"postgresql://alice:{SECRET}@[::1/bench", "host and port that cannot be read"),
    (f"postgresql://alice:{SECRET}@[bad/bench", "host that is neither"),
    ("a b://x", "not a database URL"),
    ("://x", "not a database URL"),
    ("sqlite:/results.db", "neither a file path nor a URL"),
    ("postgresql:bench", "neither a file path nor a URL"),
    ("sqlite:///r.db?timeout=soon", "parameter its driver cannot use"),
    (f"postgresql://alice:{SECRET}@db.lan/bench?port=x", "parameter its driver cannot use"),
    ("postgresql+nosuchdriver://db.lan/bench", "driver SQLAlchemy does not know"),
])
def test_a_malformed_url_is_bad_usage_not_a_bug(db: str, what: str, tmp_path: Path) -> None:
    _refused(db, 2, what, "sqlite:///PATH", where=tmp_path)


def test_a_driver_that_is_not_installed_says_how_to_install_it(tmp_path: Path) -> None:
    if importlib.util.find_spec("psycopg2") is not None:
        pytest.skip("psycopg2 is installed here")
    line = _refused(f"postgresql+psycopg2://alice:{SECRET}@db.lan/bench", 1, "psycopg2", "is not installed",
                    "pip install", where=tmp_path)
    assert "alice:***@db.lan" in line


@pytest.mark.parametrize("form", ["{}", "sqlite:///{}", "{}/"])
def test_a_directory_is_refused_with_a_file_name_in_it(form: str, tmp_path: Path) -> None:
    directory = tmp_path / "results"
    directory.mkdir()
    _refused(form.format(directory), 2, "is a directory", str(directory / "results.db"))
    assert list(directory.iterdir()) == []
