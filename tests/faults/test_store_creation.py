"""A store whose creation is interrupted (SIGKILL, SIGTERM) is never taken for someone else's database:
creation is one transaction (store/migrate.py), so a kill leaves no table or all of them, and what an
earlier stackbench left (it committed each table on its own) is recognised as ours and created anew.

Real kills of real processes: forked children killed at each statement of the creation (deterministic),
and `python -m stackbench runs` and a first `import` killed at random moments (the attack that found it:
3 of 30 trials were refused for good).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, event

from conftest import DATA, cli_here
from stackbench.store import Store
from stackbench.store.database import MIGRATIONS, head_revision

CAPTURE = DATA / "fio" / "randread-psync.json"
MIGRATING = "stackbench_migration"  # store/migrate.py MIGRATING


def _creation_statements(tmp_path: Path) -> int:
    seen = []

    def count(conn: Any, *_: Any) -> None:
        if conn.info.get(MIGRATING):
            seen.append(1)

    event.listen(Engine, "before_cursor_execute", count)
    try:
        Store(f"sqlite:///{tmp_path / 'counted.db'}").dispose()
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    return len(seen)


def _killed_at(db: Path, number: int, sig: signal.Signals) -> int:
    """Fork; the child creates a store at `db` and sends itself `sig` just before the creation's
    `number`-th statement (SIGTERM through the CLI's own handler, which raises Terminated there).
    Returns the child's wait status."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            from stackbench.cli.app import install_signal_handlers

            install_signal_handlers()
            counter = itertools.count(1)

            def kill_at(conn: Any, *_: Any) -> None:
                if conn.info.get(MIGRATING) and next(counter) == number:
                    os.kill(os.getpid(), sig)
                    time.sleep(5)  # SIGKILL ends us here; SIGTERM's exception was raised already

            event.listen(Engine, "before_cursor_execute", kill_at)
            Store(f"sqlite:///{db}")
        except BaseException:
            os._exit(130)
        os._exit(0)
    return os.waitpid(pid, 0)[1]


@pytest.mark.parametrize("sig", [signal.SIGKILL, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)],
                         ids=["SIGKILL", "SIGTERM"])
@pytest.mark.slow
def test_a_kill_at_every_statement_of_the_creation_leaves_a_store_that_opens(tmp_path: Path,
                                                                              sig: signal.Signals) -> None:
    """After a kill at any statement the file holds no table (the next open finds a new store); every
    tenth, and the last, is opened by the CLI too."""
    total = _creation_statements(tmp_path)
    assert total > 20
    for number in range(1, total + 1):
        db = tmp_path / f"killed-{number}.db"
        status = _killed_at(db, number, sig)
        if sig == signal.SIGKILL:
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (number, status)
        else:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 130, (number, status)
        if db.exists():
            with sqlite3.connect(db) as connection:  # as the next process finds it: no table, or the version
                tables = {row[0] for row in connection.execute("select name from sqlite_master where type='table'")}
            assert tables == set(), (number, sorted(tables))
        if number % 10 and number != total:
            continue
        listed = cli_here("runs", "--db", str(db), "--json")
        assert listed.returncode == 0, (number, listed.stderr)
        assert json.loads(listed.stdout)["runs"] == []


def _left_by_an_earlier_stackbench(db: Path) -> None:
    """What an interrupted creation by stackbench before store/migrate.py left: sqlite3 committed each
    CREATE TABLE on its own, so Alembic's version table and the first migration's tables exist, empty,
    without a version."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001_initial")
        connection.exec_driver_sql("DELETE FROM alembic_version")
    engine.dispose()


def test_what_an_earlier_interrupted_creation_left_is_created_anew(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _left_by_an_earlier_stackbench(db)
    done = cli_here("import", str(CAPTURE), "--db", str(db))
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as connection:
        assert connection.execute("select version_num from alembic_version").fetchall() == [(head_revision(),)]


def test_tables_named_like_ours_that_hold_rows_are_not_ours_to_clear(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _left_by_an_earlier_stackbench(db)
    with sqlite3.connect(db) as connection:
        connection.execute("insert into runs (id, status, source, created_at, facts, warnings, stackbench_version) "
                           "values ('x', 'complete', 'imported', '2024-01-01', '{}', '[]', '0')")
    before = db.read_bytes()
    done = cli_here("runs", "--db", str(db))
    assert done.returncode == 1
    line = done.stderr.strip()
    assert "tables named like stackbench's" in line and "not a store stackbench made" in line, line
    assert db.read_bytes() == before


def _signal_at_random(argv: list[str], db: Path, sig: signal.Signals, delay: float) -> int:
    """Start the command, wait for the store's file to appear (the creation has begun), then send `sig`
    `delay` seconds later."""
    process = subprocess.Popen([sys.executable, "-m", "stackbench", *argv, "--db", str(db)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not db.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(delay)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    assert "Traceback" not in stderr, stderr
    return process.returncode


@pytest.mark.slow
@pytest.mark.parametrize("command", [["runs"], ["import", str(CAPTURE)]], ids=["runs", "import"])
def test_kills_at_random_moments_of_a_first_command_never_brick_the_store(tmp_path: Path, command: list[str]) -> None:
    """SIGKILL and SIGTERM at random moments of a first command on a new store, from the moment its file
    appears (the creation, the import's commit, what follows): every store opens afterwards. The seed is in
    the failure message."""
    seed = random.randrange(1 << 30)
    chosen = random.Random(seed)
    caught = 0
    for trial in range(30):
        db = tmp_path / f"r{trial}.db"
        sig = chosen.choice([signal.SIGKILL, signal.SIGTERM])
        code = _signal_at_random(command, db, sig, chosen.uniform(0.0, 0.5))
        caught += code in (-signal.SIGKILL, 130) and db.exists()
        listed = cli_here("runs", "--db", str(db), "--json")
        assert listed.returncode == 0, (seed, trial, sig, listed.stderr)
        assert len(json.loads(listed.stdout)["runs"]) in (0, 1)
    assert caught, f"no trial was interrupted after the store file appeared (seed {seed}): the delays no longer fit"
