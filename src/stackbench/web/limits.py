"""The server's rate limits: failed logins per account and per address, lookups that find nothing per
address, each a sliding window counted in the store (store/rate_limits.py), so that every worker process
of a server sees one count and a restart forgets nothing."""

from __future__ import annotations

from typing import Callable

from stackbench.store.rate_limits import RateEvents


class SlidingWindow:
    """At most `limit` events per key within `window_s` seconds. Keys are hashed with the server's key
    (`digest`) before they reach the store; `keep_s` is the longest window of any scope, after which an
    event may be deleted."""

    def __init__(self, events: RateEvents, scope: str, limit: int, window_s: float, digest: Callable[[str], str],
                 keep_s: float) -> None:
        self.events, self.scope, self.limit, self.window_s = events, scope, limit, window_s
        self.digest, self.keep_s = digest, max(keep_s, window_s)

    def retry_after(self, key: str) -> int | None:
        """Whole seconds until `key` may try again, or None if it may now."""
        return self.events.retry_after(self.scope, self.digest(key), self.limit, self.window_s)

    def hit(self, key: str) -> None:
        self.events.hit(self.scope, self.digest(key), self.keep_s)

    def reset(self, key: str) -> None:
        self.events.reset(self.scope, self.digest(key))
