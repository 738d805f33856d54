"""`--format csv` is for a spreadsheet: every cell of a numeric column is empty or one plain number
(`float()` reads it, '.' is the decimal point, no thousands separator, no unit, sign, "±", "x" or
bracket), and no cell anywhere is a number formatted for reading ("3,008", "1.2 ms", "24.8x", "0.00%").

Checked on every command's CSV: the snapshots of test_report_snapshots.py (show, show --per-run, runs,
compare, layers, show of a scan and of an audit, goal list, slog, user list, crypto), and, for the commands without one, the real CLI on stored inputs
(crypto on saved `cryptsetup benchmark` outputs, slog on imported diskinfo sweeps, token list on a
store's tokens); synclat's CSV is checked on a real fio run in tests/cli/test_cli_sync_writes.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import cli_here
from plain_csv import not_plain, tables

SNAPSHOTS = Path(__file__).parent / "snapshots"
DATA = Path(__file__).parent.parent / "data"

# Per CSV snapshot, the columns that hold words (names, verdicts, times, prose); every other column is
# numeric. None: a snapshot of words only (an audit's findings).
TEXT_COLUMNS: dict[str, set[str] | None] = {
    "show": {"Pattern", "note"},
    "runs": {"ID", "Created (UTC)", "Label", "Status", "Plan", "Target", "Kind"},
    "compare": {"Pattern", "verdict", "weak", "safety", "note"},
    "layers": {"Pattern", "host/vm proven", "vm/vm+luks proven", "note"},
    "show-scan": set(),
    "show-audit": None,
    "show-per-run": {"Pattern", "run"},  # run: a number, or `all` on the cell's own row
    "goal-list": None,
    "slog": {"Candidate", "vs next", "Verdict"},
    "user-list": None,
    "crypto": {"cipher"},
}
def test_every_csv_snapshot_is_declared() -> None:
    assert {path.stem for path in SNAPSHOTS.glob("*.csv")} == set(TEXT_COLUMNS)


@pytest.mark.parametrize("name", TEXT_COLUMNS)
def test_every_numeric_cell_of_a_csv_snapshot_is_a_plain_number(name: str) -> None:
    text = (SNAPSHOTS / f"{name}.csv").read_text(encoding="utf-8")
    assert tables(text), "an empty snapshot checks nothing"
    assert not_plain(text, TEXT_COLUMNS[name]) == []


def test_the_check_finds_what_a_display_table_writes() -> None:
    """The CSV compare and layers wrote before they had tables of their own fails the check, cell by cell."""
    compare = ('Pattern,A: baseline IOPS,vs A,weight,verdict\n'
               '4K QD4 rnd write,"3,008 ± 1.1%","+19.9% [+18.5%, +21.4%] (p<0.001 n=5+5)",1,keep\n')
    layers = 'Pattern,host IOPS,host→vm\n4K,"3,008",24.8x\n1M,410,-\n'
    assert not_plain(compare, {"Pattern", "verdict"}) == [
        "A: baseline IOPS: '3,008 ± 1.1%'", "vs A: '+19.9% [+18.5%, +21.4%] (p<0.001 n=5+5)'"]
    assert not_plain(layers, {"Pattern"}) == ["host IOPS: '3,008'", "host→vm: '24.8x'", "host→vm: '-'"]
    assert not_plain("bin,files\n1K,\"1,234\"\n", set()) == ["bin: '1K'", "files: '1,234'"]
    assert not_plain("Value,Pattern\n1e3,1.2 ms\n", {"Pattern"}) == [
        "Value: '1e3'", "Pattern: '1.2 ms' (a formatted number in a text column)"]


@pytest.mark.parametrize("guest", ["guest-kvm64", "guest-max-no-serpent-twofish"])
def test_crypto_csv_is_plain_mib_per_second(guest: str) -> None:
    """cryptsetup's saved output, ciphers the kernel lacks (N/A on the terminal) among them: empty cells."""
    done = cli_here("crypto", "--from", str(DATA / "cryptsetup" / guest / "benchmark.stdout"), "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert not_plain(done.stdout, {"cipher"}) == []
    (header, *rows), = tables(done.stdout)
    assert header == ["cipher", "key (bits)", "encryption (MiB/s)", "decryption (MiB/s)"] and rows
    if guest == "guest-max-no-serpent-twofish":
        assert ["serpent-xts", "512", "", ""] in rows


def test_slog_csv_is_plain_numbers_in_the_order_of_its_ranking(tmp_path: Path) -> None:
    """Two imported diskinfo sweeps (real `diskinfo -wS` outputs) ranked by `slog --run`."""
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for name in ("hdd-512-start", "optane-4k-start"):
        made = cli_here("import", str(DATA / "diskinfo" / f"{name}.txt"), "--label", name, "--db", db)
        assert made.returncode == 0, made.stderr
    done = cli_here("slog", "--run", "hdd-512-start", "--run", "optane-4k-start", "--db", db, "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert not_plain(done.stdout, {"Candidate", "vs next", "Verdict"}) == []
    (header, *rows), = tables(done.stdout)
    assert header[:3] == ["Candidate", "QD1 IOPS", "QD1 median clat us"]
    assert [row[0] for row in rows] == ["optane-4k-start", "hdd-512-start"]
    # diskinfo's 512 B QD1 line: 11 ms per write on the HDD, tens of microseconds on the Optane.
    mean = header.index("QD1 mean clat us")
    assert float(rows[1][mean]) > 1000 > float(rows[0][mean]) > 0
    # one value each (no separate runs): no interval, no test, and the verdict says so
    for column in ("QD1 median CI low us", "vs next %", "vs next p", "vs next"):
        assert [row[header.index(column)] for row in rows] == ["", ""]
    assert [row[header.index("runs")] for row in rows] == ["1", "1"]


def test_token_list_csv_has_dates_or_empty_cells(tmp_path: Path) -> None:
    """A token that never expires and was never used: "never" and "-" on the terminal, empty in CSV."""
    from stackbench.store import open_store
    from stackbench.store.accounts import Accounts
    from stackbench.store.tokens import Tokens

    db = f"sqlite:///{tmp_path / 'r.db'}"
    store = open_store(db)
    alice = Accounts(store).add_account("alice", "not a real hash", admin=False)
    Tokens(store).add(token_hash="h1", owner=alice.id, scope="push", note="laptop, 1,000 runs", expires_at=None)
    Tokens(store).add(token_hash="h2", owner=alice.id, scope="metrics", note="",
                      expires_at=datetime.now(timezone.utc) + timedelta(days=30))
    done = cli_here("token", "list", "--db", db, "--format", "csv")
    assert done.returncode == 0, done.stderr
    (header, *rows), = tables(done.stdout)
    dates = {"Created (UTC)", "Expires (UTC)", "Last used (UTC)", "Revoked (UTC)"}
    for row in rows:
        for column, value in zip(header, row):
            if column in dates and value:
                datetime.strptime(value, "%Y-%m-%d %H:%M")
    by_note = {row[3]: row for row in rows}
    assert by_note["laptop, 1,000 runs"][5:] == ["", "", ""]
    assert by_note[""][5] != "" and by_note[""][6:] == ["", ""]
    table = cli_here("token", "list", "--db", db)
    assert "never" in table.stdout  # the terminal says it in words


def test_an_untested_compare_row_has_its_change_and_empty_interval_and_p(tmp_path: Path) -> None:
    """One run a side, and an import's single summary: the terminal's `(untested)` rows."""
    from stackbench.store import open_store
    from stored_runs import store_run
    from synthetic import cell, run

    db = f"sqlite:///{tmp_path / 'r.db'}"
    store = open_store(db)
    for label, one_run, summary in (("one", 1000.0, 5000.0), ("two", 1200.0, 4000.0)):
        store_run(store, run([cell(runs=[one_run]), cell(rw="randread", qd=1, iops=summary)], label=label,
                             run_id=label[0] * 32))
    done = cli_here("compare", "one", "two", "--db", db, "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert not_plain(done.stdout, {"Pattern", "verdict", "weak", "safety"}) == []
    (header, *rows), = tables(done.stdout)
    by_pattern = {row[0]: dict(zip(header, row)) for row in rows}
    runs = by_pattern["4K QD4 rnd write"]
    assert (runs["A: one IOPS"], runs["B: two IOPS"], runs["change %"]) == ("1000.0", "1200.0", "20.00")
    assert (runs["change CI low %"], runs["change CI high %"], runs["p"]) == ("", "", "")
    assert (runs["runs A"], runs["runs B"], runs["verdict"]) == ("1", "1", "no evidence")
    summary = by_pattern["4K QD1 rnd read"]
    assert (summary["change %"], summary["p"], summary["runs A"]) == ("-20.00", "", "")
