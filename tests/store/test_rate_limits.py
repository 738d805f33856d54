"""The rate-limit counts of `stackbench serve` in the store (store/rate_limits.py): a sliding window that
every process of a server shares. Two `Store` objects on one SQLite file stand for two worker processes
(each has its own engine and connections, as each worker has)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import func, select

from stackbench.store import open_store, schema
from stackbench.store.rate_limits import PURGE_EVERY, RateEvents


class Clock:
    def __init__(self) -> None:
        self.moment = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


def test_the_window_fills_refuses_and_empties_again(tmp_path: Path) -> None:
    clock = Clock()
    events = RateEvents(open_store(f"sqlite:///{tmp_path / 'r.db'}"), clock)
    for _ in range(3):
        assert events.retry_after("miss", "k", limit=3, window_s=60) is None
        events.hit("miss", "k", keep_s=60)
        clock.advance(10)
    # three events at t=0, 10, 20; now t=30: refused until the first leaves the window at t=60
    assert events.retry_after("miss", "k", limit=3, window_s=60) == 30
    assert events.retry_after("miss", "other key", limit=3, window_s=60) is None
    assert events.retry_after("login-account", "k", limit=3, window_s=60) is None  # scopes count apart
    clock.advance(30)
    assert events.retry_after("miss", "k", limit=3, window_s=60) is None
    events.hit("miss", "k", keep_s=60)
    assert events.retry_after("miss", "k", limit=3, window_s=60) == 10  # t=10 leaves at t=70, now t=60
    events.reset("miss", "k")
    assert events.retry_after("miss", "k", limit=3, window_s=60) is None


def test_two_processes_share_one_count(tmp_path: Path) -> None:
    """Worker A's misses count against worker B's answers: with per-process counting, each would allow
    the whole limit on its own."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    clock = Clock()
    worker_a, worker_b = RateEvents(open_store(url), clock), RateEvents(open_store(url), clock)
    for _ in range(2):
        worker_a.hit("miss", "k", keep_s=60)
    worker_b.hit("miss", "k", keep_s=60)
    assert worker_a.retry_after("miss", "k", limit=3, window_s=60) == 60
    assert worker_b.retry_after("miss", "k", limit=3, window_s=60) == 60


def test_expired_events_are_deleted(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    clock = Clock()
    events = RateEvents(store, clock)
    for _ in range(PURGE_EVERY):
        events.hit("miss", "k", keep_s=60)
    clock.advance(61)
    events.hit("miss", "k", keep_s=60)  # the write after PURGE_EVERY deletes what is past keep_s
    with store.engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(schema.rate_events)).scalar_one() == 1
