"""Broken stores: every failure is one line with the fix, and nothing already measured is lost.

Real SQLite files on real (small, real) tmpfs mounts; a real second process holds the write lock.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DATA, cli_here, fill as _fill, run_cli

CAPTURE = DATA / "fio" / "randread-psync.json"


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: ") and "Traceback" not in stderr
    return lines[0]


def test_a_garbage_file_is_not_a_database_and_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "garbage.db"
    content = os.urandom(8192)
    db.write_bytes(content)
    done = cli_here("runs", "--db", str(db))
    assert done.returncode == 1
    assert "is not an SQLite database" in _one_error_line(done.stderr)
    assert db.read_bytes() == content


def test_stackbench_never_adds_its_tables_to_someone_elses_database(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as connection:
        connection.execute("create table invoices (id integer primary key, total real)")
    done = cli_here("import", str(CAPTURE), "--db", str(db))
    assert done.returncode == 1
    line = _one_error_line(done.stderr)
    assert "other tables (invoices)" in line and "Pass a new file" in line
    with sqlite3.connect(db) as connection:
        assert [r[0] for r in connection.execute("select name from sqlite_master where type='table'")] == ["invoices"]


def test_a_store_from_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    assert cli_here("import", str(CAPTURE), "--db", str(db)).returncode == 0
    with sqlite3.connect(db) as connection:
        connection.execute("update alembic_version set version_num = 'f00dfeedbeef'")
    before = db.read_bytes()
    done = cli_here("runs", "--db", str(db))
    assert done.returncode == 1
    line = _one_error_line(done.stderr)
    assert "written by a newer stackbench (schema revision f00dfeedbeef)" in line and "Upgrade" in line
    assert db.read_bytes() == before


def test_empty_db_is_an_error_not_the_default(tmp_path: Path) -> None:
    done = run_cli("runs", "--db", "", env={"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")})
    assert done.returncode == 2
    assert "--db (or STACKBENCH_DB) is empty" in _one_error_line(done.stderr)
    assert not (tmp_path / "data").exists()


def test_a_read_only_store_still_reads_and_refuses_writes_in_one_line(tmp_path: Path, tmpfs_mount) -> None:
    mount = tmpfs_mount("8M")
    db = mount / "r.db"
    # A process of its own: the remount needs every writer to have exited (an in-process store keeps its file open).
    assert run_cli("import", str(CAPTURE), "--label", "old", "--db", str(db)).returncode == 0
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
    listed = cli_here("runs", "--db", str(db))
    assert listed.returncode == 0 and "old" in listed.stdout, listed.stderr
    done = cli_here("import", str(CAPTURE), "--db", str(db))
    assert done.returncode == 1
    assert "is read-only" in _one_error_line(done.stderr)


@pytest.mark.slow
def test_a_write_lock_held_by_another_process_is_one_line_after_waiting(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    assert cli_here("runs", "--db", str(db)).returncode == 0  # creates the schema
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys, time\n"
         f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
         "c.execute('begin exclusive')\nprint('locked', flush=True)\ntime.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        done = cli_here("import", str(CAPTURE), "--db", str(db))
        assert done.returncode == 1
        line = _one_error_line(done.stderr)
        assert "is locked by another process" in line
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()
    assert json.loads(cli_here("runs", "--db", str(db), "--json").stdout)["runs"] == []


def test_a_full_disk_under_the_store_stores_nothing_half(tmp_path: Path, tmpfs_mount) -> None:
    mount = tmpfs_mount("2M")
    db = mount / "r.db"
    assert cli_here("runs", "--db", str(db)).returncode == 0
    _fill(mount)
    done = cli_here("import", str(CAPTURE), "--db", str(db))
    assert done.returncode == 1
    assert "is full" in _one_error_line(done.stderr)
    (mount / "filler").unlink()
    assert json.loads(cli_here("runs", "--db", str(db), "--json").stdout)["runs"] == []


def test_an_audit_the_full_store_cannot_take_is_still_shown_then_one_error_line(tmp_path: Path, tmpfs_mount) -> None:
    """audit/service.keep: the document is printed without an id (nothing holds it), then the store's error."""
    mount = tmpfs_mount("2M")
    db = mount / "r.db"
    assert cli_here("runs", "--db", str(db)).returncode == 0
    _fill(mount)
    done = cli_here("audit", "--from", str(DATA / "zfs" / "openzfs-2.3.2-probe"), "--db", str(db), "--json")
    assert done.returncode == 1
    assert "is full" in _one_error_line(done.stderr)
    document = json.loads(done.stdout)
    assert document["audit_id"] is None and document["findings"]
    (mount / "filler").unlink()
    assert json.loads(cli_here("runs", "--db", str(db), "--json").stdout)["audits"] == []


def test_a_measured_run_the_full_store_cannot_take_is_kept_in_a_recovery_file(
    tmp_path: Path, tmpfs_mount, scratch_dir: Path
) -> None:
    """The disk under the DB fills while fio measures: the fio output goes to a recovery file named in the
    error, and `stackbench import` of that file stores it."""
    mount = tmpfs_mount("2M")
    db = mount / "r.db"
    state = tmp_path / "state"
    env = {**os.environ, "XDG_STATE_HOME": str(state), "PYTHONUNBUFFERED": "1"}
    assert cli_here("runs", "--db", str(db)).returncode == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "stackbench", "run", "-t", str(scratch_dir), "--bs", "4k", "--rw", "randwrite",
         "--qd", "1", "--runs", "1", "--runtime", "1", "--ramp", "0", "--size", "16M", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    first = process.stderr.readline()
    assert first.startswith("Run "), first
    deadline = time.monotonic() + 60
    while not list(scratch_dir.glob("stackbench-*.scratch")) and time.monotonic() < deadline:  # fio measures
        time.sleep(0.01)
    _fill(mount)
    _, rest = process.communicate(timeout=120)
    assert process.returncode == 1
    last = rest.strip().splitlines()[-1]
    assert "is full" in last and "fio output is kept in" in last, last
    kept = sorted((state / "stackbench" / "recovery").iterdir())
    assert len(kept) == 1 and str(kept[0]) in last and f"stackbench import {kept[0]}" in last
    assert list(scratch_dir.iterdir()) == []
    other = tmp_path / "other.db"
    imported = cli_here("import", str(kept[0]), "--db", str(other), "--json")
    assert imported.returncode == 0, imported.stderr
    cells = json.loads(imported.stdout)["runs"][0]["cells"]
    assert cells[0]["rw"] == "randwrite" and cells[0]["iops"] > 0
