"""Repeats, adaptive stopping, compare, layers and goals end to end with real fio runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from conftest import run_cli

MiB = 1024**2


def _run(db: str, target: Path, *extra: str, label: str | None = None) -> dict:
    args = ["run", "-t", str(target), "--bs", "4k", "--qd", "1", "--rw", "randwrite", "--size", "32M",
            "--db", db, "--json", *extra]
    if label:
        args += ["--label", label]
    made = run_cli(*args)
    assert made.returncode == 0, made.stderr
    return json.loads(made.stdout)


@pytest.fixture(scope="module")
def adaptive_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict, Path]:
    directory = tmp_path_factory.mktemp("stats")
    db = f"sqlite:///{directory / 'r.db'}"
    scratch = directory / "scratch"
    scratch.mkdir()
    return db, _run(db, scratch, "--until-stable", "--max-time", "15", label="base"), scratch


def test_adaptive_cells_store_their_samples_and_why_they_stopped(adaptive_run) -> None:
    _, data, _ = adaptive_run
    (cell,) = data["cells"]
    measurement = cell["measurement"]
    assert measurement["mode"] == "adaptive"
    assert measurement["stop_reason"].startswith(("stable", "time cap"))
    assert measurement["seconds"] <= 15 + 3
    assert cell["samples_n"] >= 10
    assert cell["iops_ci_low"] <= cell["iops_median"] <= cell["iops_ci_high"]


def test_repeat_runs_each_cell_n_times_and_pools_the_samples(tmp_path: Path, scratch_dir: Path) -> None:
    data = _run(f"sqlite:///{tmp_path / 'r.db'}", scratch_dir, "--repeat", "3", "--runtime", "3")
    (cell,) = data["cells"]
    assert cell["measurement"]["mode"] == "fixed" and cell["measurement"]["segments"] == 3
    assert cell["samples_n"] >= 3 * 2  # fio logs every whole second; the last partial one is dropped
    assert list(scratch_dir.iterdir()) == []


def test_a_real_run_compared_with_itself_is_never_significant(adaptive_run) -> None:
    db, data, _ = adaptive_run
    result = run_cli("compare", data["run_id"], "base", "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    comparison = json.loads(result.stdout)
    assert comparison["verdict"] == "no evidence"
    assert [row["significant"] for row in comparison["rows"]] == [False]
    assert comparison["rows"][0]["p_value"] == 1.0


def test_compare_exports_markdown_and_csv(adaptive_run) -> None:
    db, _, _ = adaptive_run
    markdown = run_cli("compare", "base", "base", "--db", db, "--format", "markdown")
    assert markdown.returncode == 0, markdown.stderr
    assert "| Pattern |" in markdown.stdout and "| 4K QD1 rnd write |" in markdown.stdout
    assert "Verdict: NO EVIDENCE" in markdown.stdout
    csv_out = run_cli("compare", "base", "base", "--db", db, "--format", "csv")
    assert csv_out.stdout.splitlines()[0].startswith("Pattern,")
    bad = run_cli("compare", "base", "base", "--db", db, "--format", "pdf")
    assert bad.returncode == 1 and "unknown --format" in bad.stderr


def test_compare_unknown_run_is_one_line_error(adaptive_run) -> None:
    db, _, _ = adaptive_run
    result = run_cli("compare", "base", "nosuchrun", "--db", db)
    assert result.returncode == 1
    assert "no run with id or label 'nosuchrun'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture
def ext4_loop(tmp_path: Path, blank_loop: Path) -> Iterator[Path]:
    """ext4 made by mkfs.ext4 on a real loop device, mounted."""
    mount_point = tmp_path / "ext4"
    mount_point.mkdir()
    subprocess.run(["mkfs.ext4", "-q", "-F", str(blank_loop)], check=True, capture_output=True)
    subprocess.run(["mount", str(blank_loop), str(mount_point)], check=True)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], capture_output=True)




def test_sync_writes_on_a_loop_ext4_against_tmpfs_are_significant_and_revert(
    tmp_path: Path, tmpfs_mount, ext4_loop: Path
) -> None:
    tmpfs_dir = tmpfs_mount("128M")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    _run(db, tmpfs_dir, "--until-stable", "--max-time", "15", label="tmpfs")
    _run(db, ext4_loop, "--sync", "--until-stable", "--max-time", "15", label="ext4-sync")
    refused = run_cli("compare", "tmpfs", "ext4-sync", "--db", db)
    assert refused.returncode == 1 and "--force" in refused.stderr and "sync" in refused.stderr
    result = run_cli("compare", "tmpfs", "ext4-sync", "--db", db, "--force", "--json")
    assert result.returncode == 0, result.stderr
    comparison = json.loads(result.stdout)
    assert comparison["verdict"] == "revert"
    (row,) = comparison["rows"]
    assert row["significant"] is True and row["verdict"] == "revert" and row["delta_pct"] < -5
    layers = run_cli("layers", "tmpfs", "ext4-sync", "--names", "ram,ext4+sync", "--db", db)
    assert layers.returncode == 0, layers.stderr
    assert "The biggest gap opens between ram and ext4+sync" in layers.stdout


def test_goals_are_checked_by_show_and_run(adaptive_run) -> None:
    db, data, scratch = adaptive_run
    added = run_cli("goal", "add", "4K rnd write >= 1 IOPS", "--db", db)
    assert added.returncode == 0, added.stderr
    run_cli("goal", "add", "p99 <= 1 ns", "--db", db)
    shown = run_cli("show", "base", "--db", db)
    assert "Goals" in shown.stdout and "PASS" in shown.stdout and "FAIL" in shown.stdout
    as_json = json.loads(run_cli("show", "base", "--db", db, "--json").stdout)
    assert [g["status"] for g in as_json["goals"]] == ["pass", "fail"]
    fresh = _run(db, scratch, "--runtime", "1")
    assert [g["status"] for g in fresh["goals"]] == ["pass", "fail"]
    listed = json.loads(run_cli("goal", "list", "--db", db, "--json").stdout)["goals"]
    removed = run_cli("goal", "rm", listed[1]["goal_id"][:8], "--db", db)
    assert removed.returncode == 0 and "p99 <= 1 ns" in removed.stdout
    assert len(json.loads(run_cli("goal", "list", "--db", db, "--json").stdout)["goals"]) == 1
    bad = run_cli("goal", "add", "make it fast", "--db", db)
    assert bad.returncode == 1 and "cannot read the goal" in bad.stderr
