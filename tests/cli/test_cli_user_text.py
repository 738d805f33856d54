"""User text is data: labels, paths and names that look like Rich markup print as they are; `rm` deletes runs.

Runs are made by importing real fio JSON captures (tests/data/fio), so no fio time is spent here.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import DATA, cli_here, run_cli

CAPTURE = DATA / "fio" / "randread-psync.json"
MARKUP = ["[/x]", "[bold red]loud[/]", "[link=http://x]y", "a\\[b]", "[/]"]


def _import(db: str, label: str) -> str:
    done = cli_here("import", str(CAPTURE), "--label", label, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["runs"][0]["run_id"]


def test_markup_like_labels_print_literally_in_runs_and_show(tmp_path: Path) -> None:
    """Each label was once read as Rich markup: `[/x]` crashed `runs` on every later call. `runs` runs as a
    user runs it; the ten `show`s run the same entry point in this process (an interpreter start each
    otherwise)."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    ids = {label: _import(db, label) for label in MARKUP}
    listed = run_cli("runs", "--db", db)
    assert listed.returncode == 0, listed.stderr
    for label, run_id in ids.items():
        assert label in listed.stdout, (label, listed.stdout)
        for ref in (run_id, label):
            shown = cli_here("show", ref, "--db", db)
            assert shown.returncode == 0 and label in shown.stdout, (label, shown.stderr)
            assert "Traceback" not in shown.stderr


def test_an_unknown_run_named_like_markup_is_a_literal_one_line_error(tmp_path: Path) -> None:
    done = cli_here("show", "[/x]", "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: no run, scan, audit or tune session with id or label '[/x]'. List what is stored with `stackbench runs`."
    ]


def test_a_markup_like_target_directory_runs_and_lists(tmp_path: Path) -> None:
    target = tmp_path / "[" / "x] [bold]d"  # the path reads "[/x] [bold]d"
    target.mkdir(parents=True)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = cli_here("run", "-t", str(target), "--bs", "4k", "--rw", "randread", "--qd", "1", "--runs", "1",
                   "--runtime", "1", "--ramp", "0", "--size", "8M", "--db", db, "--label", "[/x]")
    assert done.returncode == 0, done.stderr
    assert str(target) in done.stderr  # the "Run ...: file PATH" line
    listed = cli_here("runs", "--db", db)
    assert listed.returncode == 0 and "[/x]" in listed.stdout
    assert list(target.iterdir()) == []


def test_usage_errors_are_one_line_with_exit_2() -> None:
    for args in (["run", "--qd"], ["run", "-t", "/tmp", "--bogus"], ["nosuch"], ["run", "-t", "/tmp", "--jobs", "0"]):
        done = cli_here(*args)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and "--help" in lines[0], (args, lines)


def test_rm_deletes_runs_with_their_rows_after_yes(tmp_path: Path) -> None:
    db_file = tmp_path / "r.db"
    db = f"sqlite:///{db_file}"
    keep, gone = _import(db, "keep"), _import(db, "gone")
    done = cli_here("rm", "gone", "--db", db, "--yes")
    assert done.returncode == 0, done.stderr
    assert gone[:12] in done.stdout and "Deleted 1 run." in done.stdout
    with sqlite3.connect(db_file) as connection:
        assert [r[0] for r in connection.execute("select id from runs")] == [keep]
        for table in ("cells", "fio_outputs"):
            assert {r[0] for r in connection.execute(f"select run_id from {table}")} == {keep}
        orphans = connection.execute("select count(*) from samples where cell_id not in (select id from cells)")
        assert orphans.fetchone()[0] == 0


def test_rm_without_yes_and_without_a_terminal_deletes_nothing(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    run_id = _import(db, "x")
    done = run_cli("rm", run_id, "--db", db, input="y\n")
    assert done.returncode == 2 and "Pass --yes" in done.stderr
    assert cli_here("show", run_id, "--db", db).returncode == 0


def test_rm_with_one_unknown_name_deletes_none(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    run_id = _import(db, "x")
    done = cli_here("rm", run_id, "no-such-run", "--db", db, "--yes")
    assert done.returncode == 1 and "no-such-run" in done.stderr
    assert cli_here("show", run_id, "--db", db).returncode == 0


@pytest.mark.parametrize("label, why", [
    ("beef", "looks like a run id prefix"),
    ("20241", "looks like a run id prefix"),
    ("a\nb", "control characters"),
    (" padded", "leading or trailing blanks"),
    ("x" * 201, "at most 200 characters"),
])
def test_labels_that_could_be_shadowed_or_break_a_line_are_refused(tmp_path: Path, label: str, why: str) -> None:
    done = cli_here("import", str(CAPTURE), "--label", label, "--db", f"sqlite:///{tmp_path / 'r.db'}")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and why in lines[0]
    assert not (tmp_path / "r.db").exists()


def test_the_postgres_install_hint_keeps_its_brackets(tmp_path: Path) -> None:
    done = cli_here("runs", "--db", "nosuchdialect://user@host/db")
    assert done.returncode == 2  # a database stackbench does not store into: bad usage (README, exit status)
    assert "pip install 'stackbench[postgres]'" in done.stderr
