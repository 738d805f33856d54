"""Sliding-window rate limits counted in the results store (migration 0007).

`stackbench serve` limits failed logins and lookups that find nothing. Counting them in one process's
memory let each of N worker processes count alone (N times the limit) and forgot everything at a restart;
in the store every process of a server, and every server on one PostgreSQL database, sees one count. A
check is one indexed query; only a counted event (a failure, a miss) writes. Keys arrive already hashed
(the web layer hashes them with the server's key), so no address or account name is stored in the clear.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Callable

from sqlalchemy import bindparam, delete, func, insert, select

from stackbench.store import schema
from stackbench.store.accounts import now
from stackbench.store.database import guarded
from stackbench.store.repository import Store
from stackbench.store.rows import aware

PURGE_EVERY = 200  # events written between two deletions of the expired ones


# The check of every request that loads an object, built once per process with its values as parameters
# (as accounts._SESSION: building a statement and its cache key cost more than running it).
_IN_WINDOW = (
    select(func.count(), func.min(schema.rate_events.c.at))
    .where(schema.rate_events.c.scope == bindparam("scope"), schema.rate_events.c.key_hash == bindparam("key_hash"),
           schema.rate_events.c.at > bindparam("since"))
)


class RateEvents:
    """The `rate_events` table of a results store."""

    def __init__(self, store: Store, clock: Callable[[], datetime] = now) -> None:
        self.store = store
        self.engine = store.engine
        self.reader = store.reader  # reads outside a transaction on PostgreSQL (database._reader)
        self.where = store.where  # how `guarded` names the store in a one-line error
        self.clock = clock
        self._writes = 0

    def retry_after(self, scope: str, key_hash: str, limit: int, window_s: float) -> int | None:
        """Whole seconds until `key_hash` may try again in `scope`, or None if it may now: at most `limit`
        events within the last `window_s` seconds."""
        moment = self.clock()
        with self.reader.connect() as connection:
            count, oldest = connection.execute(
                _IN_WINDOW, {"scope": scope, "key_hash": key_hash, "since": moment - timedelta(seconds=window_s)}
            ).one()
        if count < limit:
            return None
        return max(1, math.ceil((aware(oldest) + timedelta(seconds=window_s) - moment).total_seconds()))

    def hit(self, scope: str, key_hash: str, keep_s: float) -> None:
        """Count one event; now and then drop the events older than `keep_s` (the longest window)."""
        events = schema.rate_events
        moment = self.clock()
        with self.engine.begin() as connection:
            connection.execute(insert(events).values(scope=scope, key_hash=key_hash, at=moment))
            self._writes += 1
            if self._writes % PURGE_EVERY == 1:
                connection.execute(delete(events).where(events.c.at <= moment - timedelta(seconds=keep_s)))

    def reset(self, scope: str, key_hash: str) -> None:
        events = schema.rate_events
        with self.engine.begin() as connection:
            connection.execute(delete(events).where(events.c.scope == scope, events.c.key_hash == key_hash))


for _name in ("retry_after", "hit", "reset"):  # a database failure is one line, as for every Store method
    setattr(RateEvents, _name, guarded(getattr(RateEvents, _name)))
