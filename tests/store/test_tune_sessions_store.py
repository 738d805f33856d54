"""Tune sessions in the results store (migration 0015_tune_sessions), on SQLite and on a real PostgreSQL
server: the upgrade of a store that already holds runs and the way back, the round trip of a session's
document, the lookup by id, prefix and label across kinds, the listing, `rm`, and who may see one on a
server (the same visibility rule as runs, scans and audits)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from stackbench.base.errors import StoreError
from stackbench.model.results import new_id
from stackbench.store import Store
from stackbench.store.database_url import database_url
from conftest import alembic
from stored_runs import build_store

WHEN = datetime(2026, 11, 27, 20, 0, tzinfo=timezone.utc)


def session_document(session_id: str, *, decision: str = "kept") -> dict:
    """A session's JSON as `tune --json` prints it, cut to what the store reads (knobs, target) and a compare
    naming its runs."""
    return {"session": session_id, "status": "completed", "error": None, "created_at": WHEN.isoformat(),
            "finished_at": (WHEN + timedelta(seconds=76)).isoformat(), "journal": f"/state/{session_id}.jsonl",
            "target": "/mnt/bench (ext4 on loop2)", "calibration": None, "confirmation": None,
            "knobs": [{"knob": "blockdev.read_ahead_kb", "subjects": ["loop2"], "from": "0", "to": "128",
                       "decision": decision, "why": "significantly better", "rounds": 4, "orders": ["AB", "BA"] * 2,
                       "stop": "decided at look 1 of 4 (round 4) at alpha 0.0125",
                       "compare": {"base": {"run_id": "a" * 32}, "other": {"run_id": "b" * 32}, "alpha": 0.0125,
                                   "min_effect_pct": 5.0, "verdict": "keep"}},
                      {"knob": "blockdev.scheduler", "subjects": ["loop2"], "from": "none", "to": "mq-deadline",
                       "decision": "undone", "why": "compare says same", "rounds": 6, "orders": [], "stop": ""}],
            "now_set": ["echo 128 > /sys/block/loop2/queue/read_ahead_kb"], "persist": [],
            "undo": f"stackbench tune --rollback {session_id}"}


def _tables(url: str) -> set[str]:
    engine = create_engine(database_url(url))
    with engine.connect() as connection:
        tables = set(inspect(connection).get_table_names())
    engine.dispose()
    return tables


def _migrates_and_goes_back(url: str) -> None:
    build_store(url)  # six runs, a scan and an audit, at the head
    alembic(url, "downgrade", "0014_runs_device_model")
    assert "tune_sessions" not in _tables(url) and "runs" in _tables(url)
    alembic(url, "upgrade", "head")
    assert "tune_sessions" in _tables(url)
    store = Store(url)
    session_id = new_id()
    store.add_tune_session(session_id=session_id, label="ra", status="completed", created_at=WHEN,
                           finished_at=WHEN + timedelta(seconds=76), document=session_document(session_id))
    assert store.get_tune_session(session_id[:6]).document == session_document(session_id)
    assert len(store.list_runs()) == 6  # the runs stored before are all there
    store.dispose()


def test_0015_adds_tune_sessions_and_goes_back(tmp_path: Path) -> None:
    _migrates_and_goes_back(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_0015_on_postgresql(pg_database: str) -> None:
    _migrates_and_goes_back(pg_database)


def _round_trip(url: str) -> None:
    store = Store(url)
    first, second = new_id(), new_id()
    store.add_tune_session(session_id=first, label="ra", status="completed", created_at=WHEN,
                           finished_at=WHEN + timedelta(seconds=76), document=session_document(first))
    store.add_tune_session(session_id=second, label=None, status="interrupted", created_at=WHEN + timedelta(hours=1),
                           finished_at=None, document=session_document(second, decision="undone"))
    stored = store.get_tune_session(first)
    assert (stored.id, stored.label, stored.status, stored.created_at, stored.finished_at) == (
        first, "ra", "completed", WHEN, WHEN + timedelta(seconds=76))
    assert (stored.target, stored.knobs, stored.kept) == ("/mnt/bench (ext4 on loop2)", 2, 1)
    assert stored.document == session_document(first)
    assert store.get_tune_session("ra").id == first  # by label, as a run
    assert store.resolve_any(second[:8]) == ("tune", second)  # by prefix, among every kind
    listed = store.list_tune_sessions()
    assert [(s.id, s.status, s.kept, s.document) for s in listed] == [(second, "interrupted", 0, None),
                                                                      (first, "completed", 1, None)]
    assert [s.id for s in store.list_tune_sessions(limit=1)] == [second]
    assert [s.id for s in store.list_tune_sessions(label="ra")] == [first]
    with pytest.raises(StoreError, match="unknown tune session status"):
        store.add_tune_session(session_id=new_id(), label=None, status="running", created_at=WHEN, finished_at=None,
                               document=session_document("x"))
    assert store.delete_stored(tunes=[first]) == 1
    with pytest.raises(StoreError, match="no tune session with id or label"):
        store.get_tune_session(first)
    store.dispose()


def test_a_session_is_stored_and_read_back_whole(tmp_path: Path) -> None:
    _round_trip(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_a_session_round_trip_on_postgresql(pg_database: str) -> None:
    _round_trip(pg_database)


def test_a_tune_session_is_seen_as_runs_are_and_claimed_with_them(tmp_path: Path) -> None:
    """Stored by the CLI, it has no owner: admins see it, other accounts do not, until it is claimed; made
    team-visible, every account sees it (store/accounts.py's one rule)."""
    from stackbench.store.accounts import Accounts, Viewer

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    session_id = new_id()
    store.add_tune_session(session_id=session_id, label=None, status="failed", created_at=WHEN, finished_at=WHEN,
                           document=session_document(session_id))
    accounts = Accounts(store)
    assert ("tune", session_id) in accounts.unowned_items()
    bob = accounts.add_account("bob", "not-a-real-hash", admin=False)
    admin, carol = Viewer("root", True), Viewer("carol", False)
    assert accounts.access(admin, "tune", session_id) == (None, "private")
    assert accounts.access(carol, "tune", session_id) is None
    assert accounts.claim_items(bob.id, [store.resolve_any(session_id[:8])]) == 1
    assert accounts.access(admin, "tune", session_id) is None  # private means private
    accounts.set_visibility(session_id, "team", kind="tune")
    assert accounts.access(carol, "tune", session_id) == (bob.id, "team")
    assert accounts.remove_account("bob")[1]["tune"] == 1
    store.dispose()
