"""Runs too noisy to tell, in every format of every command that shows them.

The issue's example: one cell measured at 9,120, 15,327 and 1,000,000 IOPS on a busy 2-core machine printed
`-100%/+211506333543310%`, "sd 1571% between runs" and a layer factor of "20.53 ± 44.78 x". Here the same
runs go through `show`, `compare`, `layers` (table, Markdown, CSV, JSON) and `report` (HTML, Markdown,
xlsx): every one says "too noisy to tell" with the runs' range, none prints an astronomical number, and the
JSON keeps the raw bounds. The commands run in process through the real entry point (conftest.cli_here).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from openpyxl import load_workbook

from conftest import cli_here
from stored_runs import store_run
from stackbench.store import open_store
from synthetic import cell, run

NOISY = [9120.0, 15327.0, 1_000_000.0]
STEADY = [1000.0, 1040.0, 970.0, 1010.0, 985.0]
MODERATE = [1000.0, 1150.0, 900.0, 1100.0, 950.0]  # 11 % between runs: a 3 % change is no evidence
# A percentage or a ± with four digits or more, a "-100%/+..." interval, a factor written with a ± after it.
ASTRONOMICAL = re.compile(r"\d{4,}(\.\d+)?\s?%|-100%/|± ?\d{4,}|\d+\.\d+ ± \d+\.\d+ x")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('noisy') / 'r.db'}"
    store = open_store(url)
    for run_id, label, factor, change in (("7" * 32, "raw", 1.0, 1.0), ("8" * 32, "ext4", 1 / 2.9, 1.03)):
        cells = [cell(qd=1, runs=[v * factor for v in NOISY]), cell(rw="randread", runs=STEADY),
                 cell(rw="write", bs=1024**2, runs=[v * change for v in MODERATE])]
        store_run(store, run(cells, label=label, run_id=run_id,
                             facts={"fio_version": "fio-3.33", "target": {"fs_type": "ext4"}}))
    store.dispose()
    return url


COMMANDS = {
    "show": ["show", "raw"],
    "compare": ["compare", "raw", "ext4"],
    "layers": ["layers", "raw", "ext4"],
}


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
@pytest.mark.parametrize("command", COMMANDS)
def test_text_formats_say_too_noisy_to_tell_with_the_runs_range(db: str, command: str, fmt: str) -> None:
    done = cli_here(*COMMANDS[command], "--format", fmt, "--db", db)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # a terminal table wraps; the words are what counts
    assert "too noisy to tell" in text
    plain = fmt == "csv"  # Markdown is what the terminal shows, with units (issue 33)
    assert ("9120" if plain else "9,120") in text and ("1000000" if plain else "1,000,000") in text
    assert not ASTRONOMICAL.search(done.stdout + done.stderr), ASTRONOMICAL.search(done.stdout + done.stderr)


def test_json_keeps_the_raw_bounds_and_says_too_noisy(db: str) -> None:
    shown = json.loads(cli_here("show", "raw", "--json", "--db", db).stdout)
    runs = shown["cells"][0]["runs"]
    assert runs["too_noisy"] is True and runs["iops_range"] == [9120.0, 1_000_000.0]
    assert runs["iops_ci_high"] / runs["iops_ci_low"] > 1000  # the bounds themselves, unrounded
    compared = json.loads(cli_here("compare", "raw", "ext4", "--json", "--db", db).stdout)
    row = compared["rows"][0]
    assert row["too_noisy"] is True and row["delta_ci_pct"][1] > 1000 and row["verdict"] == "no evidence"
    layers = json.loads(cli_here("layers", "raw", "ext4", "--json", "--db", db).stdout)
    gap = layers["rows"][0]["gaps"][0]
    assert gap["too_noisy"] is True and gap["proven"] is False and gap["ci"][1] / gap["ci"][0] > 1000
    assert layers["biggest_gap"] is None and layers["largest_unproven_gap"]["pattern"] == "4K QD1 rnd write"


def test_layers_name_no_gap_and_say_what_would_decide(db: str) -> None:
    done = cli_here("layers", "raw", "ext4", "--db", db)
    text = " ".join(done.stdout.split())
    assert "No gap proven" in text and "biggest gap" not in text
    assert re.search(r"rerun each layer with `stackbench run --runs \d+`|`stackbench run --runs \d+` at each layer", text)


def test_a_no_evidence_row_shows_its_interval(db: str) -> None:
    """`compare` once hid the interval of a row that is not significant (`~ (p=0.6 n=5+5)`)."""
    done = cli_here("compare", "raw", "ext4", "--db", db)
    (row,) = [line for line in done.stdout.splitlines() if "1M QD4 seq write" in line]
    assert "no evidence" in row
    assert re.search(r"~ \+3\.0% \[-\d+\.\d%, \+\d+\.\d%\]", row)


@pytest.mark.parametrize("suffix", ["html", "md", "xlsx"])
def test_report_documents_say_too_noisy_to_tell(db: str, tmp_path: Path, suffix: str) -> None:
    output = tmp_path / f"r.{suffix}"
    done = cli_here("report", "raw", "ext4", "--compare", "raw", "ext4", "--layers", "raw,ext4", "-o", str(output),
                    "--db", db, "--keep-identifiers")
    assert done.returncode == 0, done.stderr
    if suffix == "xlsx":
        book = load_workbook(output)
        values = [str(c.value) for ws in book.worksheets for row in ws.iter_rows() for c in row if c.value is not None]
        text = " ".join(values)
    else:
        text = output.read_text(encoding="utf-8")
    assert "too noisy to tell" in text and "No gap proven" in text
    assert not ASTRONOMICAL.search(text), ASTRONOMICAL.search(text)
