"""Credentials never stored (SECURITY.md, "Secrets"): the scrubbing rules on realistic command lines, every
column of the store that can hold a user's words scrubbed on write whichever code writes it, and the
migration that scrubs what older versions stored (the SQLite file's bytes included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import JSON, String, create_engine, text

from stackbench.base.credentials import MASK, is_secret_name, scrub, scrub_argv, scrub_text
from stackbench.store import Store, schema
from stackbench.store.database import MIGRATIONS
from web import test_postgres

PLANT = "pl4nt3d-s3cret"

# (text as a user writes it, the text as stored): the password goes, what was run stays readable.
TEXTS = [
    (f"postgresql://alice:{PLANT}@db.lan/bench", "postgresql://alice:***@db.lan/bench"),
    (f"postgresql+psycopg://alice:{PLANT}@[::1]:5432/bench", "postgresql+psycopg://alice:***@[::1]:5432/bench"),
    (f"postgres://alice:p/{PLANT}@x@db.lan/bench", "postgres://alice:***@db.lan/bench"),  # '/' and '@' in it
    (f"postgresql://alice@db.lan/bench?sslmode=require&password={PLANT}&connect_timeout=5",
     "postgresql://alice@db.lan/bench?sslmode=require&password=***&connect_timeout=5"),
    (f"https://bench.example.org/?token={PLANT}#runs", "https://bench.example.org/?token=***#runs"),
    (f"host=db.lan user=alice password={PLANT} dbname=bench", "host=db.lan user=alice password=*** dbname=bench"),
    (f"PGPASSWORD='{PLANT} x' psql -h db.lan -c 'select 1'", "PGPASSWORD='***' psql -h db.lan -c 'select 1'"),
    (f"mysql --password {PLANT} -e 'set global x=1'", "mysql --password *** -e 'set global x=1'"),
    (f"mysql --password={PLANT} -e 'set global x=1'", "mysql --password=*** -e 'set global x=1'"),
    (f"curl -H 'Authorization: Bearer {PLANT}' https://pve:8006/api2/json",
     "curl -H 'Authorization: Bearer ***' https://pve:8006/api2/json"),
    (f'curl -H "X-Api-Key: {PLANT}" https://x', 'curl -H "X-Api-Key: ***" https://x'),
    (f"ssh root:{PLANT}@pve1 zfs set compression=lz4 tank/vm", "ssh root:***@pve1 zfs set compression=lz4 tank/vm"),
    (f"AWS_SECRET_ACCESS_KEY={PLANT} aws s3 cp s3://b/k .", "AWS_SECRET_ACCESS_KEY=*** aws s3 cp s3://b/k ."),
    (f"https://b.s3.amazonaws.com/k?X-Amz-Credential=AK%2F1&X-Amz-Signature={PLANT}&X-Amz-Expires=60",
     "https://b.s3.amazonaws.com/k?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Expires=60"),
    (f'{{"user": "alice", "password": "{PLANT}"}}', '{"user": "alice", "password": "***"}'),
    (f"scsi0: iscsi://alice%{PLANT}@10.0.0.5/iqn.2003-01.org:tank/0", "scsi0: iscsi://alice%***@10.0.0.5/iqn.2003-01.org:tank/0"),
    (f"stackbench push x --to https://bench -H sbt_{'A' * 43}", "stackbench push x --to https://bench -H sbt_***"),
]
# Text with no credential stays exactly as it is.
UNTOUCHED = [
    "zfs set compression=lz4 tank/vm", "rsync -a bob@host:/srv /backup", "nfs-server.lan:/export/vm",
    "https://pve:8006/api2/json", "http://[::1]:8080/runs", "stackbench run --token-file /etc/token -t /tank",
    "stackbench user add bob --password-stdin", "sync; echo 3 > /proc/sys/vm/drop_caches",
    "fio --name=x --filename=/tank/f --bs=4k --rw=randread", "postgresql://alice@db.lan/bench",
    "bypass=1 passes=3 author=bob keylocation=prompt",
]


@pytest.mark.parametrize("typed, stored", TEXTS)
def test_a_credential_in_any_text_is_masked_and_the_rest_kept(typed: str, stored: str) -> None:
    assert scrub_text(typed) == stored
    assert scrub_text(stored) == stored  # a fixed point: scrubbing again changes nothing


@pytest.mark.parametrize("typed", UNTOUCHED)
def test_text_without_a_credential_is_untouched(typed: str) -> None:
    assert scrub_text(typed) == typed


def test_a_command_line_loses_the_value_of_every_option_that_names_a_secret() -> None:
    argv = ["/usr/bin/stackbench", "run", "-t", "/tank", "--db", f"postgresql://a:{PLANT}@h/d", "--token", PLANT,
            "--api-key", PLANT, "--password-stdin", "--label", "lz4", "--push", f"https://h/?token={PLANT}",
            "--client-secret", "--label"]
    assert scrub_argv(argv) == [
        "/usr/bin/stackbench", "run", "-t", "/tank", "--db", "postgresql://a:***@h/d", "--token", MASK,
        "--api-key", MASK, "--password-stdin", "--label", "lz4", "--push", "https://h/?token=***",
        "--client-secret", "--label"]


def test_a_json_value_loses_the_strings_under_secret_keys_and_keeps_numbers_and_keys() -> None:
    facts = {"command": ["stackbench", "--db", f"sqlite:///x?password={PLANT}"],
             "http": {"http_pass": PLANT, "http_s3_key": PLANT, "port": 443, "passes": "3"},
             "ab": {"command": f"PGPASSWORD={PLANT} psql", "rounds": 5}}
    assert scrub(facts) == {"command": ["stackbench", "--db", "sqlite:///x?password=***"],
                            "http": {"http_pass": MASK, "http_s3_key": MASK, "port": 443, "passes": "3"},
                            "ab": {"command": "PGPASSWORD=*** psql", "rounds": 5}}


@pytest.mark.parametrize("name, secret", [
    ("password", True), ("PGPASSWORD", True), ("sslpassword", True), ("X-Amz-Signature", True), ("apiKey", True),
    ("api_key", True), ("client_secret", True), ("authToken", True), ("http_pass", True), ("session_id", True),
    ("token-file", False), ("password-stdin", False), ("PGPASSFILE", False), ("auth-method", False),
    ("author", False), ("bypass", False), ("passes", False), ("keylocation", False), ("compression", False),
])
def test_which_names_name_a_secret(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


# Columns of text or JSON that hold no user's words, and why. Every other one must scrub on write: a new
# column that can hold a command line, a path or a config's text is caught here until it does. Ids, hashes
# and the columns of a fixed set of values (status, visibility, ...) are internal (`_internal`).
NOT_SCRUBBED = {
    "runs.label": "a name the user gives a run to find it again, never a command line (as scans' and audits')",
    "scans.label": "as runs.label", "audits.label": "as runs.label", "tune_sessions.label": "as runs.label",
    "runs.plan_name": "a preset's name or `custom`",
    "runs.host": "the machine's host name, copied from the facts for the runs list",
    "runs.fs_type": "the target's file system type, copied from the facts for the runs list",
    "runs.device_model": "the model sysfs gives the target's disk, copied from the facts for the runs list",
    "run_facet_tallies.plan_name": "runs.plan_name, copied by the tallies' triggers (0016)",
    "run_facet_tallies.fs_type": "runs.fs_type, copied by the tallies' triggers (0016)",
    "run_facet_tallies.device_model": "runs.device_model, copied by the tallies' triggers (0016)",
    "cells.key": "a workload key built from numbers",
    "cells.pattern": "a workload's name built from numbers", "cells.host": "a fleet host, checked to be a name",
    "fio_outputs.fio_version": "fio's version string", "audits.zfs_version": "the version the facts say",
    "audits.subject_key": "`machine:` and a hash, or a VM's id",
    "fio_outputs.job_file": "the job file stackbench wrote from the plan; it names only the target path",
    "fio_outputs.raw_text": "fio's own output, kept verbatim so that it can be parsed again",
    "cells.workload": "the workload's numbers and fio options", "cells.result": "numbers parsed from fio's output",
    "cells.measurement": "how the cell was measured: numbers and reasons", "goals.text": "a goal as typed",
    "goals.spec": "the goal's numbers", "conditions.seconds": "numbers read from /proc, device and pool names", "accounts.name": "an account's name, checked to be a name",
    "sessions.csrf_secret": "the server's own key",
    "server_secrets.name": "the name of the server's key", "server_secrets.value": "the server's key, never shown",
    "share_links.note": "a note the owner types", "api_tokens.note": "a note the admin types",
}
# Scrubbing columns of tables made after 0009: scrubbed on write from their first row, so no migration
# scrubs them.
SCRUBBED_SINCE_CREATED = {"tune_sessions.target", "tune_sessions.document"}
_INTERNAL = frozenset({"id", "owner", "status", "source", "visibility", "kind", "scope", "severity",
                       "worst_severity", "rw", "direction", "rule", "stackbench_version"})


def _internal(name: str) -> bool:
    return name in _INTERNAL or name.endswith(("_id", "_hash"))


def test_every_column_that_can_hold_a_users_words_scrubs_on_write() -> None:
    from alembic.script import ScriptDirectory

    scrubbing = (schema.ScrubbedText, schema.ScrubbedJSON)
    unscrubbed = sorted(f"{table.name}.{column.name}" for table in schema.metadata.tables.values()
                        for column in table.columns
                        if isinstance(column.type, (String, JSON)) and not isinstance(column.type, scrubbing)
                        and not _internal(column.name))
    assert unscrubbed == sorted(NOT_SCRUBBED)
    # the migration that scrubbed the stores of older versions went over exactly the scrubbing columns
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    module = ScriptDirectory.from_config(config).get_revision("0009_scrub_credentials").module
    scrubbed = sorted(f"{table.name}.{column.name}" for table in schema.metadata.tables.values()
                      for column in table.columns if isinstance(column.type, scrubbing))
    assert scrubbed == sorted([f"{name}.{column}" for name, (_, columns) in module.SCRUBBED.items() for column in columns]
                              + list(SCRUBBED_SINCE_CREATED))


def _store_everything(store: Store) -> dict[str, str]:
    """A run (with a fio output), a scan and an audit whose user-given values hold the planted password, written
    through the store's own methods; their ids."""
    from datetime import datetime, timezone

    from stackbench.engine.fio_json import parse_fio_json
    from stackbench.load.importer import workload_of
    from stackbench.model.results import new_id
    from stackbench.store.repository import OutputRecord
    from stored_runs import audit_document, scan_document

    argv = ["stackbench", "run", "-t", "/tank", "--db", f"postgresql://alice:{PLANT}@db/bench"]
    run_id = store.create_run(source="measured", label="planted", target=f"/tank?token={PLANT}", plan_name="quick",
                              planned_cells=1, facts={"command": argv, "ab": {"command": f"PGPASSWORD={PLANT} true"}})
    raw = (Path(__file__).parent.parent / "data" / "fio" / "randread-psync.json").read_text()
    result = parse_fio_json(raw)
    store.add_measurement(run_id, [OutputRecord(raw, result.fio_version, command=["fio", f"--token={PLANT}"],
                                                source_name=f"/x?password={PLANT}")],
                          [])
    store.import_run(label="imported", facts={"imported_from": f"https://u:{PLANT}@h/out.json"},
                     output=OutputRecord(raw, result.fio_version),
                     cells=[(workload_of(d), d) for d in result.directions])
    scan = scan_document()
    scan["paths"] = [f"/srv?password={PLANT}"]
    scan_id = store.add_scan(scan_id=new_id(), label=None, created_at=datetime.now(timezone.utc), status="complete",
                             document=scan)
    document, findings = audit_document()
    findings = [{**f, "evidence": f"scsi0: iscsi://alice%{PLANT}@10.0.0.5/iqn"} for f in findings]
    audit_id = store.add_audit(audit_id=new_id(), label=None, created_at=datetime.now(timezone.utc), subject_key=None,
                               subject_name="pve1", source="capture", source_detail=f"--db sqlite:///x?token={PLANT}",
                               zfs_version=None, previous_id=None, facts={"password": PLANT}, document=document,
                               findings=findings)
    tune_id = new_id()
    store.add_tune_session(session_id=tune_id, label=None, status="completed", created_at=datetime.now(timezone.utc),
                           finished_at=None, document={"session": tune_id, "target": f"/srv?password={PLANT}",
                                                       "knobs": [], "argv": ["--db", f"postgresql://a:{PLANT}@h/d"]})
    return {"run": run_id, "scan": scan_id, "audit": audit_id, "tune": tune_id}


def test_nothing_written_through_the_store_keeps_a_credential_not_even_in_the_files_bytes(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = Store(str(path))
    ids = _store_everything(store)
    stored = store.get_run(ids["run"])
    assert stored.facts["command"][-1] == "postgresql://alice:***@db/bench" and stored.target == "/tank?token=***"
    assert store.fio_outputs(ids["run"])[0]["command"] == ["fio", "--token=***"]
    assert store.get_audit(ids["audit"]).findings[0]["evidence"] == "scsi0: iscsi://alice%***@10.0.0.5/iqn"
    tune = store.get_tune_session(ids["tune"])
    assert tune.target == "/srv?password=***" and tune.document["argv"][-1] == "postgresql://a:***@h/d"
    store.dispose()
    for file in tmp_path.iterdir():  # the database, and a journal if one were left
        assert PLANT.encode() not in file.read_bytes(), file


def test_a_pushed_run_is_scrubbed_by_the_server_that_stores_it(tmp_path: Path) -> None:
    """A client of an older version pushes its command line as it stored it: the server's store, through
    the same columns, keeps none of its credentials."""
    from stackbench.store.uploads import add_uploaded_run, run_document

    source = Store(str(tmp_path / "source.db"))
    run_id = _store_everything(source)["run"]
    document = run_document(source, run_id)
    document["run"]["facts"]["command"] = ["stackbench", "--db", f"postgresql://alice:{PLANT}@db/bench"]
    document["fio_outputs"][0]["command"] = ["fio", "--password", PLANT]
    server = Store(str(tmp_path / "server.db"))
    add_uploaded_run(server, "someone", document)
    assert PLANT not in json.dumps(run_document(server, run_id))
    server.dispose()
    assert PLANT.encode() not in (tmp_path / "server.db").read_bytes()


def test_the_migration_scrubs_what_older_versions_stored_and_leaves_no_trace_in_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows written at 0008 (before scrubbing) as an older stackbench wrote them, then the upgrade, on an
    SQLite whose `secure_delete` is off as most builds have it (Debian's has it on)."""
    from stackbench.store import database

    pragmas = database._sqlite_pragmas

    def insecure(connection, record) -> None:  # noqa: ANN001
        pragmas(connection, record)
        connection.execute("PRAGMA secure_delete = OFF")

    monkeypatch.setattr(database, "_sqlite_pragmas", insecure)
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    Store(url).dispose()
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = create_engine(url)
    command_line = json.dumps(["stackbench", "run", "--db", f"postgresql://alice:{PLANT}@db/bench"])
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0008_run_tallies")
        connection.execute(text(
            "INSERT INTO runs (id, status, source, created_at, facts, warnings, stackbench_version, visibility, target) "
            "VALUES ('r1', 'complete', 'measured', '2026-01-01', :facts, '[]', '0.1', 'private', '/tank'), "
            "('r2', 'complete', 'measured', '2026-01-01', :clean, '[]', '0.1', 'private', '/tank')"),
            {"facts": json.dumps({"command": json.loads(command_line), "ab": {"command": f"PGPASSWORD={PLANT} true"}}),
             "clean": json.dumps({"command": ["stackbench", "run", "-t", "/tank"]})})
        connection.execute(text("INSERT INTO fio_outputs (id, run_id, seq, command, raw_text) "
                                "VALUES ('o1', 'r1', 0, :command, 'raw')"), {"command": command_line})
        connection.execute(text(
            "INSERT INTO audits (id, created_at, source, findings_count, facts, document, stackbench_version, visibility) "
            "VALUES ('a1', '2026-01-01', 'capture', 1, '{}', :document, '0.1', 'private')"),
            {"document": json.dumps({"evidence": f"iscsi://u%{PLANT}@h/iqn"})})
        connection.execute(text(
            "INSERT INTO audit_findings (audit_id, idx, rule, severity, subject, disks, evidence, fix) "
            "VALUES ('a1', 0, 'R', 'high', 's', '[]', :evidence, 'fix')"), {"evidence": f"password={PLANT}"})
    engine.dispose()
    assert PLANT.encode() in path.read_bytes()
    store = Store(url)  # upgrades to head
    assert store.get_run("r1").facts == {"command": ["stackbench", "run", "--db", "postgresql://alice:***@db/bench"],
                                         "ab": {"command": "PGPASSWORD=*** true"}}
    assert store.get_run("r2").facts == {"command": ["stackbench", "run", "-t", "/tank"]}
    assert store.fio_outputs("r1")[0]["command"] == ["stackbench", "run", "--db", "postgresql://alice:***@db/bench"]
    assert store.get_audit("a1").findings[0]["evidence"] == "password=***"
    store.dispose()
    assert PLANT.encode() not in path.read_bytes()  # overwritten in the file, not left in its free pages


pg_database = test_postgres.pg_database  # a database of its own on the test PostgreSQL server


@pytest.mark.postgres
def test_the_migration_scrubs_a_postgresql_store_too(pg_database: str) -> None:
    from stackbench.store.database_url import database_url

    Store(pg_database).dispose()
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = create_engine(database_url(pg_database))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0008_run_tallies")
        connection.execute(text(
            "INSERT INTO runs (id, status, source, created_at, facts, warnings, stackbench_version, visibility) "
            "VALUES ('r1', 'complete', 'measured', now(), CAST(:facts AS JSON), CAST('[]' AS JSON), '0.1', 'private')"),
            {"facts": json.dumps({"command": ["stackbench", "--db", f"postgresql://a:{PLANT}@h/d"]})})
    engine.dispose()
    store = Store(pg_database)
    try:
        assert store.get_run("r1").facts == {"command": ["stackbench", "--db", "postgresql://a:***@h/d"]}
    finally:
        store.dispose()
