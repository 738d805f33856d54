"""Goals are checked against the runs they were set for (issue 33: every import of other cells grew rows of
n/a, and a goal set for one machine judged every other one's runs)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import DATA, cli_here


def _store(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for label in ("host", "usb"):
        done = cli_here("import", str(DATA / "fio" / "randread-psync.json"), "--label", label, "--db", db, "--json")
        assert done.returncode == 0, done.stderr
    return db


def _goals(db: str, run: str) -> list[dict]:
    done = cli_here("show", run, "--json", "--db", db)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["goals"]


def test_a_goal_for_every_run_says_nothing_of_a_run_without_its_cell(tmp_path: Path) -> None:
    db = _store(tmp_path)
    assert cli_here("goal", "add", "seq write 1M >= 117 MB/s", "--db", db).returncode == 0
    assert _goals(db, "host") == []
    shown = cli_here("show", "host", "--db", db)
    assert "Goals" not in shown.stdout and "n/a" not in shown.stdout


def test_a_goal_set_for_a_label_is_checked_against_those_runs_only(tmp_path: Path) -> None:
    db = _store(tmp_path)
    added = cli_here("goal", "add", "rnd read >= 1 IOPS", "--label", "host", "--db", db)
    assert added.returncode == 0 and "runs: labelled host" in added.stdout
    assert cli_here("goal", "add", "seq write 1M >= 117 MB/s", "--label", "host", "--db", db).returncode == 0
    assert [(g["goal"], g["status"]) for g in _goals(db, "host")] == [
        ("rnd read >= 1 IOPS", "pass"), ("seq write 1M >= 117 MB/s", "n/a")]  # set for it: it lacks the cell
    assert _goals(db, "usb") == []
    listed = json.loads(cli_here("goal", "list", "--json", "--db", db).stdout)["goals"]
    assert [(g["label"], g["plan"]) for g in listed] == [("host", None), ("host", None)]


def test_a_goal_set_for_a_plan_covers_the_plans_runs(tmp_path: Path) -> None:
    db = _store(tmp_path)  # imported runs are of the plan `import`
    assert cli_here("goal", "add", "rnd read >= 1 IOPS", "--plan", "import", "--db", db).returncode == 0
    assert cli_here("goal", "add", "rnd read >= 1 IOPS", "--plan", "blog", "--db", db).returncode == 0
    assert [g["status"] for g in _goals(db, "usb")] == ["pass"]
    bad = cli_here("goal", "add", "rnd read >= 1 IOPS", "--plan", " blog", "--db", db)
    assert bad.returncode == 2 and "a plan is a preset's name" in bad.stderr
