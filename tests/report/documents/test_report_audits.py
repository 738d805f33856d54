"""`stackbench report --audit`: stored audits in a report, with what was fixed since the audit before, in
every document format, redacted like the runs. On the real OpenZFS 2.3.2 capture in tests/data, given a host
name (the lab guest has none) so that the test can see it replaced."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import DATA, cli_here

PROBE_23 = DATA / "zfs" / "openzfs-2.3.2-probe"
HOST = "pve-basement-07"


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A store with two audits of one machine: the second after `zfs set sync=standard` on one zvol."""
    directory = tmp_path_factory.mktemp("audits")
    capture = directory / "facts"
    shutil.copytree(PROBE_23, capture)
    probe = json.loads((capture / "probe.json").read_text())
    (capture / "probe.json").write_text(json.dumps(probe | {"host": HOST}))
    db = f"sqlite:///{directory / 'r.db'}"
    assert cli_here("audit", "--from", str(capture), "--db", db, "--label", "before").returncode == 3
    gets = capture / "zfs-get-Hp-all.txt"
    text, count = re.subn(r"(?m)^tank/vm-100-disk-0\tsync\t[^\t]*\t[^\t\n]*$",
                          "tank/vm-100-disk-0\tsync\tstandard\tdefault", gets.read_text())
    assert count == 1
    gets.write_text(text)
    assert cli_here("audit", "--from", str(capture), "--db", db, "--label", "after").returncode == 3
    return db, str(directory)


def test_html_and_markdown_show_the_findings_and_what_was_fixed(audited: tuple[str, str], tmp_path: Path) -> None:
    db, _ = audited
    for suffix in ("html", "md"):
        out = tmp_path / f"audit.{suffix}"
        done = cli_here("report", "--audit", "after", "-o", str(out), "--db", db)
        assert done.returncode == 0, done.stderr
        text = out.read_text()
        assert "DS-SYNC-DISABLED" in text and "tank/vm-100-disk-0" in text and "fixed" in text
        assert "Audit after" in text
        assert HOST not in text and "host-1" in text  # the subject's host name is redacted


def test_the_workbook_has_an_audit_sheet(audited: tuple[str, str], tmp_path: Path) -> None:
    from openpyxl import load_workbook

    db, _ = audited
    out = tmp_path / "audit.xlsx"
    assert cli_here("report", "--audit", "after", "--audit", "before", "-o", str(out), "--db", db).returncode == 0
    book = load_workbook(io.BytesIO(out.read_bytes()))
    assert {"Audit 1", "Audit 2"} <= set(book.sheetnames)
    values = [str(cell.value) for row in book["Audit 1"].iter_rows() for cell in row if cell.value is not None]
    assert any("DS-SYNC-DISABLED" in v for v in values) and not any(HOST in v for v in values)


def test_an_unknown_audit_is_one_line_and_nothing_is_written(audited: tuple[str, str], tmp_path: Path) -> None:
    db, _ = audited
    done = cli_here("report", "--audit", "nosuchaudit", "-o", str(tmp_path / "x.html"), "--db", db)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert list(tmp_path.iterdir()) == []
