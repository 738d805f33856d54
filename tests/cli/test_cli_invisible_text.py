"""Labels and notes hold no control, line-separator or invisible format characters (usertext.py): every
entry refuses them with one line, and every output escapes them in text already stored.

Found by hand: a label with U+202E (right-to-left override) reversed itself and the text after it on the
run page; a zero-width space made two labels look alike; U+2028 broke a line."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import update

from conftest import DATA, cli_here
from stackbench.base.errors import UsageError
from stackbench.store import open_store, schema

CAPTURE = DATA / "fio" / "randread-psync.json"
# (character, what the one-line error calls it)
CHARACTERS = [
    ("\u202e", "U+202E (right-to-left override)"),
    ("\u2066", "U+2066 (left-to-right isolate)"),
    ("\u200b", "U+200B (zero width space)"),
    ("\u2028", "U+2028 (line separator)"),
    ("\u2029", "U+2029 (paragraph separator)"),
    ("\ufeff", "U+FEFF (zero width no-break space)"),
    ("\x1b", "U+001B (a control character)"),
    ("\x85", "U+0085 (a control character)"),
    ("\n", "U+000A (a control character)"),
]
RAW = [char for char, _ in CHARACTERS]


def _refused(done, says: str) -> None:  # noqa: ANN001 - conftest's Result
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("Error: ") and says in lines[0], lines
    assert not any(char in lines[0] for char in RAW)  # the error names the character, never prints it


# -- every entry refuses them ---------------------------------------------------------------------------

def _label_commands(tmp_path: Path) -> dict[str, list[str]]:
    """Every command that takes a label, with --label first (its check runs before anything else)."""
    target = str(tmp_path)
    return {
        "run": ["run", "--label", "{}", "-t", target, "--runs", "1"],
        "import": ["import", "--label", "{}", str(CAPTURE)],
        "ab": ["ab", "--label", "{}", "-t", target, "--a", "true", "--b", "true"],
        "synclat": ["synclat", "--label", "{}", target],
        "smallblocks": ["smallblocks", "--label", "{}", target],
        "audit": ["audit", "--label", "{}"],
    }


@pytest.mark.parametrize(("char", "named"), CHARACTERS)
@pytest.mark.parametrize("command", ["run", "import", "ab", "synclat", "smallblocks", "audit"])
def test_every_command_that_takes_a_label_refuses_them(tmp_path: Path, command: str, char: str, named: str) -> None:
    db = tmp_path / "r.db"
    args = [a.format(f"a{char}b") for a in _label_commands(tmp_path)[command]]
    _refused(cli_here(*args, "--db", f"sqlite:///{db}"), f"a label cannot contain {named}")
    assert not db.exists()  # refused before a store was opened, let alone a run started


def test_a_token_note_refuses_them(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    _refused(cli_here("token", "create", "--scope", "push", "--user", "alice", "--note", "lab\u202ebox", "--db", db),
             "the note cannot contain U+202E (right-to-left override)")


def test_the_stores_own_writes_refuse_them(tmp_path: Path) -> None:
    """The backstop under every entry: runs, scans, audits, share-link and token notes."""
    from datetime import datetime, timedelta, timezone

    from stackbench.store.accounts import Accounts
    from stackbench.store.tokens import Tokens
    from stored_runs import audit_document, scan_document

    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    accounts = Accounts(store)
    alice = accounts.add_account("alice", "h", admin=False).id
    run_id = store.create_run(source="imported", label="fine", target=None, plan_name="import", planned_cells=0,
                              facts={})
    moment = datetime.now(timezone.utc)
    document, findings = audit_document()
    writes = {
        "run": lambda bad: store.create_run(source="imported", label=bad, target=None, plan_name="import",
                                            planned_cells=0, facts={}),
        "scan": lambda bad: store.add_scan(scan_id="5" * 32, label=bad, created_at=moment, status="complete",
                                           document=scan_document()),
        "audit": lambda bad: store.add_audit(
            audit_id="6" * 32, label=bad, created_at=moment, subject_key=None, subject_name=None, source="x",
            source_detail=None, zfs_version=None, previous_id=None, facts={}, document=document, findings=findings),
        "share note": lambda bad: accounts.add_share_link(token_hash="t" * 64, kind="run", run_ids=[run_id],
                                                          owner=alice, note=bad, expires_at=moment + timedelta(days=1)),
        "token note": lambda bad: Tokens(store).add(token_hash="k" * 64, owner=alice, scope="push", note=bad,
                                                    expires_at=None),
    }
    for what, write in writes.items():
        for char, named in CHARACTERS:
            with pytest.raises(UsageError, match=re.escape(named)):
                write(f"x{char}y")
    assert [run.label for run, _ in store.list_runs()] == ["fine"]
    store.dispose()


# -- every output escapes them in what is already stored --------------------------------------------------

HOSTILE_LABEL = "base\u202eenil\u200b\u2028x\x1b[2J"  # as a store written before the rule could hold it
SHOWN_LABEL = "base\\u202eenil\\u200b\\u2028x\\x1b[2J"


@pytest.fixture
def old_store(tmp_path: Path) -> str:
    """The snapshot tests' store, with labels and a target written straight into the database as a store
    from before the rule (or edited by hand) may hold them."""
    from stored_runs import AUDIT_ID, SCAN_ID, build_store

    url = f"sqlite:///{tmp_path / 'old.db'}"
    build_store(url)
    store = open_store(url)
    with store.engine.begin() as connection:
        connection.execute(update(schema.runs).where(schema.runs.c.id == "1111aaaa" * 4)
                           .values(label=HOSTILE_LABEL, target="/tank/\u202ebench"))
        connection.execute(update(schema.runs).where(schema.runs.c.id == "2222bbbb" * 4).values(label="lz4\u2066x"))
        connection.execute(update(schema.scans).where(schema.scans.c.id == SCAN_ID).values(label="scan\u202e"))
        connection.execute(update(schema.audits).where(schema.audits.c.id == AUDIT_ID).values(label="audit\u202e"))
    store.dispose()
    return url


def _clean(text: str) -> None:
    assert not any(char in text for char in RAW if char != "\n"), repr(text)


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_runs_show_and_compare_escape_stored_labels(old_store: str, fmt: str) -> None:
    base, other = "1111aaaa" * 4, "2222bbbb" * 4
    for args in (["runs"], ["show", base], ["show", other], ["compare", base, other]):
        done = cli_here(*args, "--db", old_store, "--format", fmt)
        assert done.returncode == 0, (args, done.stderr)
        _clean(done.stdout + done.stderr)
        if fmt != "csv" or args == ["runs"]:  # CSV has no title: a run's label is in the runs list only
            assert "\\u202e" in done.stdout or "\\u2066" in done.stdout, (args, done.stdout)
    listed = cli_here("runs", "--db", old_store, "--format", fmt).stdout
    if fmt == "csv":
        assert SHOWN_LABEL in [cell for row in csv.reader(io.StringIO(listed)) for cell in row]
    elif fmt == "table":
        assert SHOWN_LABEL in listed.replace("\n", "") or "base\\u202eenil" in listed
    assert "scan\\u202e" in listed.replace("\\\\", "\\") and "audit\\u202e" in listed.replace("\\\\", "\\")


def test_json_keeps_the_stored_text_as_data(old_store: str) -> None:
    """JSON is for programs: it carries the label as stored (escaped as JSON escapes), not a display form."""
    done = cli_here("show", "1111aaaa" * 4, "--db", old_store, "--json")
    assert json.loads(done.stdout)["label"] == HOSTILE_LABEL


def test_reports_escape_stored_labels_in_html_markdown_and_xlsx(old_store: str, tmp_path: Path) -> None:
    base, other = "1111aaaa" * 4, "2222bbbb" * 4
    for suffix in ("html", "md", "xlsx"):
        output = tmp_path / f"report.{suffix}"
        done = cli_here("report", base, "--compare", base, other, "--keep-identifiers", "-o", str(output),
                        "--db", old_store)
        assert done.returncode == 0, done.stderr
        _clean(done.stdout + done.stderr)
        if suffix == "xlsx":
            with zipfile.ZipFile(output) as book:
                text = "".join(book.read(name).decode("utf-8") for name in book.namelist() if name.endswith(".xml"))
        else:
            text = output.read_text(encoding="utf-8")
        _clean(text)
        assert "u202e" in text, suffix  # shown as \u202e (Markdown doubles the backslash of its escape)
    chart = tmp_path / "chart.svg"
    assert cli_here("chart", base, other, "--kind", "compare", "-o", str(chart), "--db", old_store).returncode == 0
    _clean(chart.read_text(encoding="utf-8"))


def test_lines_the_cli_prints_escape_stored_labels(old_store: str) -> None:
    """Outside tables: `rm` lists what it deletes, label included, through the CLI's console
    (cli/app.UserTextConsole escapes what it prints)."""
    done = cli_here("rm", "1111aaaa" * 4, "--yes", "--db", old_store)
    assert done.returncode == 0, done.stderr
    _clean(done.stdout + done.stderr)
    assert SHOWN_LABEL in done.stdout, done.stdout
