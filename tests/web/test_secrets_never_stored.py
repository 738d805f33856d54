"""A password planted in every argument of the commands that store something (`run`, `ab`, `import`,
`smallblocks`, `audit`, and `report` and `push` that read them) is found nowhere afterwards: not in the
local PostgreSQL store (every column of every table), not in what `push` sends, not in `show` or `runs`
in any format, not in `report`'s files, not in the server's SQLite file, and not on the server's pages
(the run page, a share link's page and report, the report download, /metrics). The local store is a real
PostgreSQL database whose URL carries the password twice (trust authentication ignores it)."""

from __future__ import annotations

import json
import re
import secrets
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from conftest import DATA, cli_here
from web import test_postgres
from web.site import SHARED, Template, csrf_of
from web.test_api import auth, make_token

pg_database = test_postgres.pg_database  # a database of its own on the test PostgreSQL server

PLANT = "pl4nt-" + secrets.token_hex(6)


def _clean(where: str, data: str | bytes) -> None:
    found = PLANT.encode() in data if isinstance(data, bytes) else PLANT in data
    assert not found, f"the planted password is in {where}"


@pytest.mark.postgres
@pytest.mark.slow
def test_a_password_planted_in_every_argument_is_stored_sent_shown_and_served_nowhere(
        pg_database: str, template: Template, scratch_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    db = pg_database.replace("://postgres@", f"://postgres:{PLANT}@") + f"?password={PLANT}&application_name=sb"
    measure = ["-t", str(scratch_dir), "--bs", "4k", "--qd", "1", "--rw", "randread", "--runtime", "1",
               "--size", "4M", "--db", db]
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "f").write_bytes(b"x" * 5000)
    with template.site(SHARED) as web:
        monkeypatch.setenv("STACKBENCH_TOKEN", make_token(web, "alice", "push"))
        stored = [
            cli_here("run", *measure, "--runs", "2", "--label", "planted-run", "--push", web.base),
            cli_here("ab", *measure, "--rounds", "2", "--label", "planted-ab", "--a", f"PGPASSWORD={PLANT} true",
                     "--b", f": https://bob:{PLANT}@db.lan/x?token={PLANT}",
                     "--prepare", f": --password {PLANT} -H 'Authorization: Bearer {PLANT}'"),
            cli_here("import", str(DATA / "fio" / "randread-psync.json"), "--label", "planted-import", "--db", db),
            cli_here("smallblocks", str(tmp_path / "files"), "--label", "planted-scan", "--db", db),
            cli_here("audit", "--from", str(DATA / "zfs" / "openzfs-2.3.2-probe"), "--label", "planted-audit",
                     "--db", db),
        ]
        for done in stored:
            assert done.returncode in (0, 3), done.stderr  # audit: 3 for findings
            _clean("a command's output", done.stdout + done.stderr)
        pushed = cli_here("push", "planted-ab-a", "planted-ab-b", "planted-import", "--to", web.base, "--db", db,
                          "--json")
        assert pushed.returncode == 0, pushed.stderr
        _clean("push's output", pushed.stdout + pushed.stderr)

        # the local store: every column of every table, as text
        engine = create_engine(db.replace("postgresql://", "postgresql+psycopg://", 1))
        with engine.connect() as connection:
            for table in inspect(connection).get_table_names():
                for row in connection.execute(text(f'SELECT t::text FROM "{table}" t')).scalars():
                    _clean(f"the store's table {table}", row)
        engine.dispose()
        from stackbench.store import open_store
        from stackbench.store.uploads import run_document

        local = open_store(db)
        runs = {run.label: run.id for run, _ in local.list_runs()}
        assert set(runs) == {"planted-run", "planted-ab-a", "planted-ab-b", "planted-import"}
        for run_id in runs.values():
            _clean("a pushed document", json.dumps(run_document(local, run_id)))
        assert any("***" in a for a in local.get_run("planted-run").facts["command"])  # masked, not dropped
        local.dispose()

        # show and runs in every format, for runs, the scan and the audit
        from stackbench.report.formats import FORMATS

        for fmt in FORMATS:
            for ref in [*runs, "planted-scan", "planted-audit"]:
                shown = cli_here("show", ref, "--db", db, "--format", fmt)
                assert shown.returncode == 0, shown.stderr
                _clean(f"show {ref} --format {fmt}", shown.stdout + shown.stderr)
            listed = cli_here("runs", "--db", db, "--format", fmt)  # runs, scans and audits
            assert listed.returncode == 0 and "planted-audit" in listed.stdout, listed.stderr
            _clean(f"runs --format {fmt}", listed.stdout + listed.stderr)

        # report's files, with identifiers kept (redaction must not be what hides a password)
        for suffix in ("html", "md", "xlsx"):
            output = tmp_path / f"report.{suffix}"
            made = cli_here("report", *runs, "--audit", "planted-audit", "-o", str(output), "--keep-identifiers",
                            "--db", db)
            assert made.returncode == 0, made.stderr
            _clean("report's output", made.stdout + made.stderr)
            for path in tmp_path.glob("report*"):
                if path.suffix == ".xlsx":
                    with zipfile.ZipFile(path) as book:
                        for member in book.namelist():
                            _clean(f"{path.name}:{member}", book.read(member))
                elif path.is_file():
                    _clean(path.name, path.read_bytes())

        # the server: its SQLite file, and the pages of the pushed runs
        alice = web.login("alice")
        for run_id in runs.values():
            for path in (f"/runs/{run_id}", f"/runs/{run_id}/report.html"):
                page = alice.get(path)
                assert page.status_code == 200, path
                _clean(path, page.text)
        shared = alice.post(f"/runs/{runs['planted-ab-a']}/shares",
                            data={"csrf": csrf_of(alice, f"/runs/{runs['planted-ab-a']}"), "days": "7", "note": "x"})
        assert shared.status_code == 201
        link = re.search(r'value="(http[^"]+)"', shared.text).group(1).removeprefix(web.base)
        stranger = web.client()
        for path in (link, f"{link}/report.html"):
            page = stranger.get(path)
            assert page.status_code == 200, path
            _clean(f"the share link's {path}", page.text)
        metrics = stranger.get("/metrics", headers=auth(make_token(web, "alice", "metrics")))
        assert metrics.status_code == 200
        _clean("/metrics", metrics.text)
        server_file = Path(web.store.url.removeprefix("sqlite:///"))
        for file in server_file.parent.glob(server_file.name + "*"):
            _clean(f"the server's {file.name}", file.read_bytes())
