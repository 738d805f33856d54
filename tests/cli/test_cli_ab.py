"""`stackbench ab` end to end with real commands: the rounds' order stored and shown, and a verdict bought
with safety marked as such in every format of `ab` and of `compare` of its arms."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import cli_here
from plain_csv import not_plain, tables


def ext4_loop_device(mount_point: Path) -> str:
    """The kernel name of the block device mounted at `mount_point` (loop3)."""
    source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", str(mount_point)], capture_output=True, text=True,
                            check=True).stdout.strip()
    return Path(source).name


def _barrier(mount_point: Path) -> str:
    """The file system's barrier option as the kernel lists it (ext4 shows `nobarrier` when it is off)."""
    options = subprocess.run(["findmnt", "-n", "-o", "OPTIONS", str(mount_point)], capture_output=True, text=True,
                             check=True).stdout
    return "off" if "nobarrier" in options.split(",") or "barrier=0" in options else "on"


@pytest.mark.slow
def test_ab_with_barrier_off_in_b_marks_its_verdict_less_safe_in_every_format(tmp_path: Path, ext4_loop: Path) -> None:
    """Real remounts of a loop-device ext4 (the target itself): A turns write barriers on, B off. Whatever
    fio measures, B is the less safe arm, and every output says so; the session ends in A, barriers on."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    log = tmp_path / "applied.log"
    on = f"mount -o remount,barrier=1 {ext4_loop} && echo A >> {log}"
    off = f"mount -o remount,barrier=0 {ext4_loop} && echo B >> {log}"
    made = cli_here("ab", "-t", str(ext4_loop), "--a", on, "--b", off, "--rounds", "2", "--bs", "4k", "--qd", "1",
                    "--rw", "randwrite", "--size", "8M", "--runtime", "1", "--ramp", "0", "--label", "bar", "--db", db,
                    "--json")
    assert made.returncode == 0, made.stderr
    assert log.read_text().split() == ["A", "B", "B", "A"] and _barrier(ext4_loop) == "on"
    data = json.loads(made.stdout)
    assert data["ab"]["orders"] == ["AB", "BA"] and data["order_effect"]["orders"] == ["AB", "BA"]
    assert data["safety"]["less_safe"] == "B" and data["safety"]["differences"][0]["id"] == "mount-nobarrier"
    marking = data["safety"]["marking"]  # its first words follow the measured verdict; the risk does not
    assert marking.startswith("B is") and "without write barriers" in marking and "B: mount -o remount,barrier=0" in marking
    assert "LESS_SAFE" in [w["code"] for w in data["warnings"]]
    loop = ext4_loop_device(ext4_loop)  # what each layer did in both arms: the loop device under the target
    assert [row["pattern"] for row in data["layers"]] == ["4K QD1 rnd write"]
    assert all(loop in [layer["device"] for layer in data["layers"][0][arm]["layers"]] for arm in ("a", "b"))

    table = cli_here("compare", "bar-a", "bar-b", "--db", db)
    assert table.returncode == 0, table.stderr
    text = " ".join(table.stdout.split())
    assert "Safety: B is" in text and "without write barriers" in text and "Round order: AB BA" in text
    assert "Warning: B is" in " ".join(table.stderr.split())
    markdown = cli_here("compare", "bar-a", "bar-b", "--db", db, "--format", "markdown").stdout
    assert "Safety: B is" in markdown and "barrier=0" in markdown
    csv_text = cli_here("compare", "bar-a", "bar-b", "--db", db, "--format", "csv").stdout
    (header, *rows), = tables(csv_text)
    column = header.index("safety")
    assert all(row[column].startswith("B is") for row in rows)
    assert not_plain(csv_text, {"Pattern", "verdict", "weak", "safety", "note"}) == []

    shown = cli_here("show", "bar-b", "--db", db)
    assert "ab arm B, rounds AB BA" in " ".join(shown.stdout.split())
    facts = json.loads(cli_here("show", "bar-b", "--db", db, "--json").stdout)["facts"]["ab"]
    assert facts["orders"] == ["AB", "BA"] and facts["command"] == off


@pytest.mark.slow
def test_ab_of_safe_commands_is_not_marked_and_an_odd_count_is_raised(tmp_path: Path, scratch_dir: Path) -> None:
    """`echo barrier=0` sets nothing: no marking. --rounds 3 runs 4 rounds, and says so in table mode."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    made = cli_here("ab", "-t", str(scratch_dir), "--a", "true", "--b", "echo barrier=0 sync=disabled", "--rounds", "3",
                    "--bs", "4k", "--qd", "1", "--rw", "randwrite", "--size", "8M", "--runtime", "1", "--ramp", "0",
                    "--label", "plain", "--db", db)
    assert made.returncode == 0, made.stderr
    assert "Safety:" not in made.stdout and "Round order: AB BA AB BA" in " ".join(made.stdout.split())
    assert made.stdout.index("Round order") < made.stdout.index("Layers during each cell, A and B")
    stderr = " ".join(made.stderr.split())
    assert "Note: 4 rounds, not 3" in stderr and "The system is now in configuration A (true)" in stderr
