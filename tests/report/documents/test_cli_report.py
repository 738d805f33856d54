"""`stackbench report` as a user meets it: the format from -o, the default file name, refusing to overwrite,
and one clear line with a non-zero exit for every bad input, nothing written. Runs are imported from a real
fio capture (tests/data/fio), so no fio time is spent here. The commands run in process through the real
entry point (conftest.cli_here): parsing, the one-line error handler and the exit codes are the CLI's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook

from conftest import DATA, Result, cli_here
from report.documents.shared import MARKUP, SCRIPT

CAPTURE = DATA / "fio" / "randread-psync.json"
FORMULA = "=1+1"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('cli') / 'r.db'}"
    for label in (f"{SCRIPT} {MARKUP}", FORMULA):
        done = cli_here("import", str(CAPTURE), "--label", label, "--db", url)
        assert done.returncode == 0, done.stderr
    return url


def _one_line_error(done: Result, code: int, *words: str) -> None:
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    assert all(word in lines[0] for word in words), lines[0]
    assert "Traceback" not in done.stderr


def test_html_escapes_labels_and_the_json_reply_names_the_file(db: str, tmp_path: Path) -> None:
    output = tmp_path / "r.html"
    done = cli_here("report", f"{SCRIPT} {MARKUP}", "-o", str(output), "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["format"] == "html" and reply["files"] == [str(output)] and reply["redacted"] is True
    page = output.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; [bold]x[/]" in page and "<script" not in page.lower()
    assert "stackbench import" in page  # how an imported run came into the store


def test_text_that_looks_like_a_formula_stays_text_in_xlsx(db: str, tmp_path: Path) -> None:
    output = tmp_path / "r.xlsx"
    done = cli_here("report", FORMULA, "-o", str(output), "--db", db)
    assert done.returncode == 0, done.stderr
    book = load_workbook(output)
    assert book.sheetnames == ["Report", FORMULA]
    labels = [cell for row in book["Report"].iter_rows() for cell in row if cell.value == FORMULA]
    assert labels and all(cell.data_type == "s" for cell in labels)
    assert book[FORMULA]["A1"].value == f"Run {FORMULA}"


def test_the_format_follows_the_suffix_and_the_default_name_the_run(db: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = cli_here("report", FORMULA, "-f", "markdown", "--db", db)
    assert done.returncode == 0, done.stderr
    [written] = [path for path in tmp_path.iterdir() if path.suffix != ".png"]  # PNGs: the charts, if any
    assert written.name.startswith("stackbench-report-") and written.suffix == ".md"
    assert written.read_text().startswith(f"# stackbench report: {FORMULA}\n")


def test_an_existing_file_is_kept_unless_force(db: str, tmp_path: Path) -> None:
    output = tmp_path / "notes.md"
    output.write_text("my notes\n")
    _one_line_error(cli_here("report", FORMULA, "-o", str(output), "--db", db), 1, str(output), "--force")
    assert output.read_text() == "my notes\n"
    done = cli_here("report", FORMULA, "-o", str(output), "--db", db, "--force")
    assert done.returncode == 0, done.stderr
    assert output.read_text().startswith("# stackbench report")
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("notes-")] == ["notes.md"]  # and its charts


@pytest.mark.parametrize("args, code, words", [
    (["nosuch"], 1, ["no run or tune session with id or label 'nosuch'", "stackbench runs"]),
    ([FORMULA, "--compare", FORMULA, "missing"], 1, ["'missing'"]),
    ([FORMULA, "--format", "pdf"], 2, ["pdf", "html, md, xlsx"]),
    ([FORMULA, "-o", "{tmp}/r.pdf"], 2, [".pdf", "--format"]),
    ([FORMULA, "-o", "{tmp}/missing/r.html"], 1, ["does not exist"]),
    ([FORMULA, "-o", "/proc/r.html"], 1, ["cannot write /proc/r.html"]),
    ([FORMULA, "-o", "{tmp}"], 2, ["directory"]),
    ([], 2, ["at least one run"]),
    ([FORMULA, "--names", "a,b"], 2, ["--layers"]),
    ([FORMULA, "--layers", FORMULA], 2, ["at least two runs"]),
])
def test_bad_input_is_one_line_and_writes_nothing(db: str, tmp_path: Path, args: list[str], code: int,
                                                   words: list[str]) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    _one_line_error(cli_here("report", *args, "--db", db), code, *words)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("label, taken, expected", [
    ("baseline", [], "baseline"),
    ("a/b\\c?d*e:f[g]h", [], "a b c d e f g h"),
    ("'quoted'", [], "quoted"),
    ("x" * 40, [], "x" * 31),
    ("History", [], "History run"),
    ("Report", ["Report"], "Report (2)"),
    ("y" * 40, ["y" * 31, "y" * 27 + " (2)"], "y" * 27 + " (3)"),
    ("[]", [], "Run"),
])
def test_sheet_names_are_valid_and_unique(label: str, taken: list[str], expected: str) -> None:
    from stackbench.report.documents.xlsx import sheet_name

    assert sheet_name(label, taken) == expected
    assert len(expected) <= 31
