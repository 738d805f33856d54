"""`stackbench report TUNE_ID`: a stored tune session as a file, HTML or Markdown, holding what `show TUNE_ID`
prints (the summary and each knob's comparison, made again from the arms' runs), redacted like runs, its user
text escaped, written whole or not at all. The session is stored as `tune --apply --db` stores one, over the
synthetic runs of tests/stored_runs.py: a real session takes minutes of fio, and what is reported is the
stored document and runs, not the measuring."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import cli_here
from report.documents.shared import MARKUP, SCRIPT, artefacts, at_each_size
from stored_runs import build_store
from store.test_tune_sessions_store import session_document
from stackbench.model.results import new_id
from stackbench.report.documents.html import CSP
from stackbench.store import Store

BASELINE, LZ4 = "1111aaaa" * 4, "2222bbbb" * 4  # two runs of stored_runs.py
LABEL = f"{SCRIPT} {MARKUP}"
TARGET = "/home/alice-tune/<img src=x onerror=alert(2)> (ext4 on loop2)"
# a user knob's values (a TOML file's: any text) and the command it left set, which look like markup
FROM, TO = "<b>fast</b>", "a|b*[x](y)"
NOW_SET = "mydb-ctl --mode '<i>a|b</i>'"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(database URL, session id): a session whose knob compared baseline with lz4, and whose confirmation's
    runs were removed since, with a label, a target and a user knob's values that look like markup."""
    url = f"sqlite:///{tmp_path_factory.mktemp('tunes') / 'r.db'}"
    build_store(url)
    session_id = new_id()
    document = session_document(session_id)
    document["target"] = TARGET
    knob = document["knobs"][0]
    knob["compare"] = {**knob["compare"], "base": {"run_id": BASELINE}, "other": {"run_id": LZ4}}
    document["knobs"][1] |= {"knob": "mydb.mode", "from": FROM, "to": TO, "decision": "kept"}
    document["now_set"] = [*document["now_set"], NOW_SET]
    document["confirmation"] = {"rounds": 4, "decision": "kept", "why": "the kept set is better", "stop": "",
                                "compare": {**knob["compare"], "other": {"run_id": "f0f0" * 8}}}
    when = datetime(2026, 11, 27, 20, 0, tzinfo=timezone.utc)
    store = Store(url)
    store.add_tune_session(session_id=session_id, label=LABEL, status="completed", created_at=when,
                           finished_at=when + timedelta(seconds=76), document=document)
    store.dispose()
    return url, session_id


def _show(db: str, session_id: str) -> str:
    done = cli_here("show", session_id, "--format", "markdown", "--db", db)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_markdown_report_holds_what_show_prints(stored: tuple[str, str], tmp_path: Path) -> None:
    """With --keep-identifiers (nothing replaced), every line `show TUNE --format markdown` prints is in the
    report: the summary with its notes, and the knob's comparison; the confirmation's removed runs are said."""
    db, session_id = stored
    output = tmp_path / "tune.md"
    done = cli_here("report", session_id[:8], "-o", str(output), "--keep-identifiers", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tune_sessions"] == [session_id] and json.loads(done.stdout)["runs"] == []
    text = output.read_text()
    # a table's last note ends without Markdown's line break (two spaces) in the report: the lines as shown
    shown = [line.rstrip() for line in _show(db, session_id).splitlines() if line.strip()]
    assert len(shown) > 10 and [line for line in shown if line not in text] == []
    assert r"blockdev.read\_ahead\_kb" in text and "significantly better" in text
    assert "The comparison of the confirmation: its runs are no longer stored" in text
    assert list(tmp_path.iterdir()) == [output]  # no chart files beside it


def test_the_html_report_is_self_contained_and_its_user_text_is_text(stored: tuple[str, str], tmp_path: Path) -> None:
    db, session_id = stored
    output = tmp_path / "tune.html"
    done = cli_here("report", session_id, "-o", str(output), "--db", db)
    assert done.returncode == 0, done.stderr
    page = output.read_text()
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP.replace(chr(39), "&#39;")}">' in page
    assert re.findall(r"""(?:src|href|action)\s*=\s*["'](?!#)""", page) == []  # in-page anchors only
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and MARKUP in page  # the label, as typed
    assert "&lt;img src=x onerror=alert(2)&gt;" in page  # the target, as typed
    assert "&lt;b&gt;fast&lt;/b&gt; -&gt; a|b*[x](y)" in page and "<b>" not in page  # a user knob's values
    assert "mydb-ctl --mode &#39;&lt;i&gt;a|b&lt;/i&gt;&#39;" in page and "<i>" not in page
    assert "alice-tune" not in page and "/home/user-1/" in page  # redacted as a run's paths are
    assert page.count("<table>") == 2  # the summary and the knob's comparison
    assert "blockdev.read_ahead_kb" in page and f"stackbench tune --rollback {session_id}" in page


def test_a_damaged_session_is_one_line_and_nothing_is_written(stored: tuple[str, str], tmp_path: Path) -> None:
    db, _ = stored
    store = Store(db)
    damaged = store.add_tune_session(session_id=new_id(), label=None, status="failed",
                                     created_at=datetime.now(timezone.utc), finished_at=None,
                                     document={"target": "/mnt/x"})  # no knobs
    store.dispose()
    done = cli_here("report", damaged, "-o", str(tmp_path / "x.html"), "--db", db)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and f"stackbench rm {damaged[:12]}" in lines[0], done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_markdown_report_escapes_user_text(stored: tuple[str, str], tmp_path: Path) -> None:
    """The label and target in the session's heading, a user knob's values and the command it left set in the
    table and notes: each reads as typed, never a tag, a link, emphasis or a broken table."""
    db, session_id = stored
    output = tmp_path / "tune.md"
    done = cli_here("report", session_id, "-o", str(output), "--db", db)
    assert done.returncode == 0, done.stderr
    text = output.read_text()
    assert r"\<script\>alert(1)\</script\> \[bold\]x\[/\]" in text  # the label, in the heading
    assert r"/home/user-1/\<img src=x onerror=alert(2)\>" in text and "alice-tune" not in text
    assert r"\<b\>fast\</b\> -\> a\|b\*\[x\](y)" in text  # in the summary's row: one cell
    assert r"mydb-ctl --mode '\<i\>a\|b\</i\>'" in text
    row = next(line for line in text.splitlines() if line.startswith("| mydb.mode"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 8  # 7 columns: the escaped | splits none
    assert "<b>" not in text and "<i>" not in text and "<script>" not in text


def test_the_workbook_has_a_tune_sheet(stored: tuple[str, str], tmp_path: Path) -> None:
    from openpyxl import load_workbook

    db, session_id = stored
    output = tmp_path / "tune.xlsx"
    done = cli_here("report", session_id, "-o", str(output), "--db", db)
    assert done.returncode == 0, done.stderr
    book = load_workbook(io.BytesIO(output.read_bytes()))
    assert "Tune 1" in book.sheetnames
    values = [str(cell.value) for row in book["Tune 1"].iter_rows() for cell in row if cell.value is not None]
    assert any("blockdev.read_ahead_kb" in v for v in values) and any(f"{FROM} -> {TO}" == v for v in values)
    assert not any("alice-tune" in v for v in values)


@pytest.mark.slow
def test_in_a_browser_the_report_fetches_nothing_fits_a_phone_and_passes_axe(stored: tuple[str, str],
                                                                              tmp_path: Path) -> None:
    """As the run report is checked (test_html.py), in Debian's chromium: no request but the document, no
    sideways scrolling on a phone; and axe-core's accessibility rules, as the web's pages are checked
    (tests/web/test_browser_walk.py)."""
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import sync_playwright

    db, session_id = stored
    path = tmp_path / "tune.html"
    assert cli_here("report", session_id, "-o", str(path), "--db", db).returncode == 0
    found = {}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            for name, page in at_each_size(browser, path):
                page.screenshot(path=str(artefacts() / f"report-tune-{name}.png"), full_page=True)
                result = Axe().run(page)
                if result.violations_count:
                    found[name] = result.generate_report()
        finally:
            browser.close()
    assert found == {}


def test_runs_and_a_session_share_one_report(stored: tuple[str, str], tmp_path: Path) -> None:
    """The arguments name runs and sessions alike, in one list: each is found as what it is, the run shown as a
    run (its cells and facts), the session as `show` prints it; the session's arms are not shown as runs."""
    db, session_id = stored
    output = tmp_path / "both.md"
    done = cli_here("report", session_id, BASELINE[:8], "-o", str(output), "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["runs"] == [BASELINE] and reply["tune_sessions"] == [session_id]
    text = output.read_text()
    assert f"Run id {BASELINE}" in text and f"Run id {LZ4}" not in text  # the arm runs only in the tables
    assert "## Tune session " in text and r"blockdev.read\_ahead\_kb" in text
