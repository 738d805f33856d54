"""The runs list's search reads a substring index (migration 0018): SQLite's FTS5 trigram table `run_search`,
PostgreSQL's GIN trigram index `ix_runs_search`, so that a search does not read every visible run for its
facets and again for its page (bench/RESULTS.md, "The finder at 10,000 runs"). The index only narrows the
runs the LIKE is checked on: what a search finds must be exactly what the LIKE alone finds, for searches
shorter than a trigram (which the index cannot answer), for text FTS5's query syntax or LIKE would read as
operators (which is data here), and for case beyond ASCII (FTS5 folds it, SQLite's LIKE does not). The
index is kept by triggers (SQLite) through every path that stores, relabels or deletes a run."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, insert, select, text, update

from stackbench.store import schema
from stackbench.store.accounts import Accounts, RunFilter, Viewer, now
from store.run_steps import accounts_of, down_and_up
from web import test_postgres

pg_database = test_postgres.pg_database

# (label, target, host): text that FTS5's query syntax (quotes, *, ^, :, parentheses, AND/OR/NOT/NEAR) or
# LIKE (%, _, the escape /) would read as operators, case beyond ASCII, and parts shorter than a trigram
RUNS = [("Baseline-EXT4", "/dev/sdb", "db01"), ('say "hi"', "pool/data", "db02"), ("50%_mix", "a*b^c", "DB03"),
        ("x:y (z)", "NEAR(a b)", "host-AND-OR"), ("back\\slash/2", None, None), ("Éclair éclair", "straße", "ÉTÉ"),
        (None, "tab\there", "émoji 🚀 disk"), ("NOT this", "-- ;", "'quoted'")]
SEARCHES = ["a", "é", "É", "%", "_", "/", '"', "hi", "ab", "db0", "DB0", '"hi"', 'say "', "a*b", "^c", "x:y",
            "(z)", "NEAR(", "AND", "-and-", "NOT t", "50%_", "0%_m", "\\sl", "/2", "ÉCL", "écl", "clair", "STRASSE",
            "straße", "ÉTÉ", "été", "🚀 d", "tab\th", "-- ;", "'quo", "zzz", "e-ext4", "/dev/s"]
ALPHABET = "aAbB éÉ\"'*^:()%_/\\-ND0"


def like_any_case(haystack: str | None, needle: str) -> bool:
    """SQLite's LIKE as the search uses it: a substring, in any ASCII case (other letters as they are)."""
    fold = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
    return haystack is not None and needle.translate(fold) in haystack.translate(fold)


def _store_runs(accounts: Accounts) -> tuple[str, dict[str, tuple]]:
    owner = accounts.add_account("alice", "h", admin=False).id
    ids = {}
    for label, target, host in RUNS:
        run_id = accounts.store.create_run(source="measured", label=label, target=target, plan_name="quick",
                                           planned_cells=1, facts={"system": {"hostname": host}} if host else {})
        ids[run_id] = (label, target, host)
    accounts.claim(owner, list(ids))
    return owner, ids


def _found(accounts: Accounts, viewer: Viewer, search: str) -> set[str]:
    rows, total = accounts.visible_runs(viewer, RunFilter(search=search), offset=0, limit=10_000, whole=False)
    facets, counted = accounts.run_facets(viewer, RunFilter(search=search))
    assert total == counted == len(rows) == sum(count for _, count in facets["status"]), search
    return {run.id for run, *_ in rows}


def _expected(ids: dict[str, tuple], search: str) -> set[str]:
    return {run_id for run_id, texts in ids.items() if any(like_any_case(t, search) for t in texts)}


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    url = f"sqlite:///{tmp_path_factory.mktemp('search') / 'r.db'}"
    with accounts_of(url) as accounts:
        owner, ids = _store_runs(accounts)
        yield accounts, Viewer(owner, False), ids


def _found_by_scanning(accounts: Accounts, viewer: Viewer, search: str) -> set[str]:
    """What the search finds without the index, as before migration 0018."""
    accounts._has_search_index = False
    try:
        return _found(accounts, viewer, search)
    finally:
        accounts._has_search_index = None


@pytest.mark.parametrize("search", SEARCHES)
def test_a_search_finds_what_the_like_alone_finds_on_sqlite(searched, search: str) -> None:  # noqa: ANN001
    accounts, viewer, ids = searched
    assert _found(accounts, viewer, search) == _expected(ids, search) == _found_by_scanning(accounts, viewer, search)


@pytest.mark.parametrize("search", ["\x00", "\x00cla", "cl\x00air", 'é"\x00'])
def test_a_search_holding_a_nul_finds_what_it_found_before(searched, search: str) -> None:  # noqa: ANN001
    """FTS5 would read a NUL as the end of its query: such a search scans, and finds what it did."""
    accounts, viewer, _ = searched
    assert _found(accounts, viewer, search) == _found_by_scanning(accounts, viewer, search)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(search=st.text(ALPHABET, min_size=1, max_size=6).filter(str.strip))
def test_any_search_finds_what_the_like_alone_finds(searched, search: str) -> None:  # noqa: ANN001
    accounts, viewer, ids = searched
    assert _found(accounts, viewer, search) == _expected(ids, search)


def _statements(accounts: Accounts, search: str) -> list[tuple[str, object]]:
    sent: list[tuple[str, object]] = []

    def record(connection, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        sent.append((statement, parameters))

    event.listen(accounts.reader, "before_cursor_execute", record)
    try:
        owner = accounts.list_accounts()[0].id
        accounts.run_facets(Viewer(owner, False), RunFilter(search=search))
        accounts.visible_runs(Viewer(owner, False), RunFilter(search=search), offset=0, limit=50, whole=False)
    finally:
        event.remove(accounts.reader, "before_cursor_execute", record)
    return [(s, p) for s, p in sent if "LIKE" in s]


def test_a_search_of_three_characters_reads_the_trigram_index_on_sqlite(searched) -> None:  # noqa: ANN001
    """SQLite's own plan of the facets' and the page's statements: the runs come from `run_search`, looked up
    by their id, not from a scan of every visible run; a search of two characters scans, as before."""
    accounts = searched[0]
    with accounts.reader.connect() as connection:
        for search, indexed in (("clair", True), ("ab", False)):
            sent = _statements(accounts, search)
            assert len(sent) == 2
            for statement, parameters in sent:
                plan = [row[-1] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)]
                assert any("run_search VIRTUAL TABLE" in step for step in plan) == indexed, plan
                if indexed:
                    assert not [step for step in plan if step.startswith("SCAN runs")], plan


def _index_rows(accounts: Accounts) -> list[tuple]:
    with accounts.reader.connect() as connection:
        return sorted(tuple(row) for row in connection.execute(text("SELECT run_id, label, target, host FROM run_search")))


def _runs_rows(accounts: Accounts) -> list[tuple]:
    runs = schema.runs
    with accounts.reader.connect() as connection:
        return sorted(tuple(row) for row in connection.execute(select(runs.c.id, runs.c.label, runs.c.target, runs.c.host)))


def test_the_index_follows_every_run_stored_relabelled_or_deleted(tmp_path: Path) -> None:
    """The triggers keep one row per run with its label, target and host: after runs are stored (through the
    store and by a plain INSERT), relabelled and deleted, the index holds exactly the runs' texts, and a
    search finds a relabelled run by its new label only."""
    with accounts_of(f"sqlite:///{tmp_path / 'r.db'}") as accounts:
        owner, ids = _store_runs(accounts)
        first, second, *_ = ids
        with accounts.store.engine.begin() as connection:
            connection.execute(update(schema.runs).where(schema.runs.c.id == first).values(label="renamed-one"))
            row = connection.execute(select(schema.runs).where(schema.runs.c.id == second)).mappings().one()
            connection.execute(insert(schema.runs).values({**row, "id": "f" * 32, "label": "copied-two"}))
        accounts.store.delete_runs([second])
        assert _index_rows(accounts) == _runs_rows(accounts)
        viewer = Viewer(owner, False)
        assert _found(accounts, viewer, "renamed") == {first}
        assert _found(accounts, viewer, "Baseline") == set()
        assert _found(accounts, viewer, 'say "') == set()  # deleted (its copy has another label)
        assert _found(accounts, viewer, "copied") == {"f" * 32}


def test_the_migration_indexes_the_runs_already_stored_and_goes_back(tmp_path: Path) -> None:
    """A store at 0017 that holds runs gets them indexed when it moves to 0018, and 0018 goes back."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with accounts_of(url) as accounts:
        owner, ids = _store_runs(accounts)
    down_and_up(url, "0017_runs_label_order", "run_search", "run_search%")
    with accounts_of(url) as accounts:
        assert _index_rows(accounts) == _runs_rows(accounts)
        assert _found(accounts, Viewer(owner, False), "clair") == _expected(ids, "clair")


@pytest.mark.postgres
def test_a_search_reads_the_trigram_index_on_postgresql(pg_database: str) -> None:
    """PostgreSQL's plan of the facets' statement for a search among 3,000 runs (vacuumed and analyzed, as
    autovacuum leaves a store in use; each with a kilobyte and a half of facts, as a measured run's are, so
    that the table is as large as a store's and a scan costs what it does there) reads `ix_runs_search`, not every
    run; what it finds is the ILIKE's (ASCII here: PostgreSQL folds other letters by its locale)."""
    with accounts_of(pg_database) as accounts:
        owner = accounts.add_account("alice", "h", admin=False).id
        rows = [{"id": f"{n:032x}", "label": f"bench-{n}", "status": "complete", "source": "measured",
                 "created_at": now(), "target": f"/dev/sd{n % 7}", "plan_name": "quick", "facts": {"pad": "x" * 1500},
                 "warnings": [], "stackbench_version": "0", "owner": owner, "visibility": "private",
                 "host": f"Host-{n % 13}"} for n in range(3000)]
        with accounts.store.engine.begin() as connection:
            connection.execute(insert(schema.runs), rows)
        with accounts.store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE runs"))  # the GIN index's pending entries merged
        viewer = Viewer(owner, False)
        for search in ("BENCH-77", "host-1", "%", "_", "7_", "sd6", "/dev/sd"):
            expected = {row["id"] for row in rows
                        if any(like_any_case(row[k], search) for k in ("label", "target", "host"))}
            assert _found(accounts, viewer, search) == expected, search
        [(statement, parameters), _] = _statements(accounts, "BENCH-77")
        with accounts.reader.connect() as connection:
            plan = "\n".join(row[0] for row in connection.exec_driver_sql(f"EXPLAIN {statement}", parameters))
        assert "ix_runs_search" in plan and "Seq Scan on runs" not in plan, plan


@pytest.mark.postgres
def test_a_search_page_is_never_prepared_on_postgresql(pg_database: str) -> None:
    """psycopg prepares a statement after its fifth execution on a connection, and PostgreSQL's plan cache may
    then plan it once for any values: a search's page so planned walks `ix_runs_listing` checking the ILIKE on
    every run instead of reading `ix_runs_search` (store/database.py, `_planned_per_execution`). After a
    dozen searches on one connection the page's statement is still not prepared (planned for each search's
    value), while the facets' statement of the same searches is (its generic plan reads the index)."""
    with accounts_of(pg_database) as accounts:
        owner, _ = _store_runs(accounts)
        viewer = Viewer(owner, False)
        for search in ("clair", "db0", "zzz") * 4:
            _found(accounts, viewer, search)
        with accounts.reader.connect() as connection:
            prepared = [row[0] for row in connection.execute(text("SELECT statement FROM pg_prepared_statements"))]
    searches = [statement for statement in prepared if "ILIKE" in statement]
    assert searches and all("LIMIT" not in statement for statement in searches), prepared
