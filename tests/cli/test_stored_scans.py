"""Stored smallblocks scans (`smallblocks --db`): a real scan of a real tree into a real SQLite store, shown
again byte for byte, listed by `runs` as a scan, removed by `rm`; bad input stores nothing."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest

from conftest import cli_here, run_cli
from stackbench.base.errors import StoreError
from stackbench.report.formats import FORMATS
from stackbench.scan.document import histogram_from_json, scan_from_json
from stackbench.store import Store


def _tree(root: Path) -> Path:
    for index, size in enumerate([0, 100, 1500, 3000, 70_000, 200_000, 5_000_000]):
        directory = root / f"d{index % 3}"
        directory.mkdir(parents=True, exist_ok=True)
        with open(directory / f"f{index}", "wb") as handle:
            handle.truncate(size)
    return root


@pytest.mark.slow
def test_a_stored_scan_is_shown_again_byte_for_byte_in_every_format(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    tree = _tree(tmp_path / "tree")
    for fmt in FORMATS:
        done = run_cli("smallblocks", str(tree), "--special-size", "1M", "--recordsize", "64K", "--db", db,
                       "--label", f"scan-{fmt}", "-f", fmt)
        assert done.returncode == 0, done.stderr
        again = cli_here("show", f"scan-{fmt}", "--db", db, "-f", fmt)
        assert again.returncode == 0, again.stderr
        assert again.stdout == done.stdout, fmt
        assert ("Stored as scan" in done.stderr) == (fmt != "json")
    listed = json.loads(cli_here("runs", "--db", db, "--json").stdout)
    assert listed["runs"] == [] and len(listed["scans"]) == len(FORMATS)
    scan = listed["scans"][0]
    assert scan["files"] == 7 and scan["paths"] == [str(tree)] and scan["status"] == "complete"
    document = Store(db).get_scan(scan["scan_id"]).document
    assert document["settings"] == {"recordsize_bytes": 65536, "special_size_bytes": 1024**2,
                                    "metadata_share_pct": 0.3, "one_file_system": False, "workers": None}
    # below the 64K recordsize the largest value is 32K: 4,600 bytes of small files + 15,823 bytes of metadata
    # (0.3 % of 5,274,600) fit in 75 % of 1 MiB
    assert document["recommendation"]["special_small_blocks"] == 32768 and document["recommendation"]["fits"]
    table = run_cli("runs", "--db", db, "--kind", "scan", env={"COLUMNS": "200"})
    assert re.search(r"│ scan +│ .*│ scan-json +│ complete +│ +7 files │ smallblocks │", table.stdout), table.stdout


def test_the_json_document_holds_what_reproduces_the_scan(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    tree = _tree(tmp_path / "tree")
    done = run_cli("smallblocks", str(tree), "-x", "--workers", "2", "--db", db, "--json")
    data = json.loads(done.stdout)
    assert len(data["scan_id"]) == 32 and data["paths"] == [str(tree)] and data["label"] is None
    assert data["settings"]["one_file_system"] is True and data["settings"]["workers"] == 2
    assert data["stackbench_version"] and data["created_at"].endswith("+00:00")
    result, rec, table = scan_from_json(data)
    assert result.histogram.files == data["files"] == 7 and rec.to_json() == data["recommendation"]
    assert [e.special_small_blocks for e in table] == [e["special_small_blocks"] for e in data["special_usage"]]
    # STACKBENCH_DB is `run`'s store; a scan is stored only with --db
    elsewhere = tmp_path / "env.db"
    without = json.loads(run_cli("smallblocks", str(tree), "--json", env={"STACKBENCH_DB": str(elsewhere)}).stdout)
    assert without["scan_id"] is None and without["bins"] == data["bins"] and not elsewhere.exists()


@pytest.mark.slow
def test_bad_input_stores_nothing_and_says_so_in_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    missing = run_cli("smallblocks", str(tmp_path / "nowhere"), "--db", db)
    assert missing.returncode == 1 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    labelled = run_cli("smallblocks", str(tmp_path), "--label", "x")
    assert labelled.returncode != 0 and "--db" in labelled.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    bad_db = run_cli("smallblocks", str(tmp_path), "--db", str(blocker / "sub" / "r.db"))
    assert bad_db.returncode == 1 and "database directory" in bad_db.stderr and bad_db.stdout == ""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    special = run_cli("smallblocks", str(fifo), "--db", db)
    assert special.returncode == 1 and "neither a directory nor a regular file" in special.stderr
    assert Store(db).list_scans() == []
    unknown = cli_here("show", "0123abcd", "--db", db)
    assert unknown.returncode == 1 and "no run, scan, audit or tune session" in unknown.stderr


@pytest.mark.slow
def test_rm_removes_a_scan_and_a_damaged_scan_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    tree = _tree(tmp_path / "tree")
    ids = [json.loads(run_cli("smallblocks", str(tree), "--db", str(db), "--json").stdout)["scan_id"] for _ in range(2)]
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE scans SET document = json_remove(document, '$.bins') WHERE id = ?", (ids[0],))
    shown = cli_here("show", ids[0], "--db", str(db))
    assert shown.returncode == 1 and shown.stdout == "" and "Traceback" not in shown.stderr
    assert shown.stderr.strip().splitlines() == [
        f"Error: the stored scan {ids[0][:12]} is damaged and cannot be shown (no 'bins' in the stored scan). "
        f"Delete it with `stackbench rm {ids[0][:12]} --yes` and scan again."
    ]
    removed = cli_here("rm", ids[0][:10], "--db", str(db), "--yes")
    assert removed.returncode == 0 and "Deleted 1 scan." in removed.stdout
    assert [s.id for s in Store(str(db)).list_scans()] == [ids[1]]


@pytest.mark.parametrize("document, why", [
    ({"bins": {"1000": {"count": 1, "bytes": 5}}}, "power of two"),
    ({"bins": {"1024": {"count": -1, "bytes": 5}}}, "negative"),
    ({"bins": {"1024": {"count": "1", "bytes": 5}}}, "not int"),
    ({"bins": {"1024": {"count": 1, "bytes": 5}}, "files": 2, "bytes": 5}, "do not add up"),
    ([], "no 'bins'"),
])
def test_a_stored_scan_document_that_is_not_a_scan_is_refused(document: object, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        scan_from_json(document)


def test_a_histogram_read_back_equals_the_one_written() -> None:
    from stackbench.scan.histogram import SizeHistogram

    histogram = SizeHistogram()
    for size in (0, 1, 1024, 5000, 10**9):
        histogram.add(size)
    assert histogram_from_json(json.loads(json.dumps(histogram.to_json()))) == histogram


def test_store_error_is_what_a_damaged_scan_raises_in_show(tmp_path: Path) -> None:
    """`show_scan` turns the document's ValueError into the store's one-line error."""
    from stackbench.cli.smallblocks import show_scan
    from stackbench.store.repository import StoredScan
    from datetime import datetime, timezone

    stored = StoredScan("ab" * 16, None, "complete", datetime.now(timezone.utc), ["/x"], 0, 0, 0.0, 0.0, {"bins": 3})
    with pytest.raises(StoreError, match="damaged"):
        show_scan(stored, "table")
