"""Sliding-window counters for login failures and for lookups that find nothing.

In-process: each server process counts on its own (docs/server.md says so; run one process, or put a
limiter in the reverse proxy in front of several).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque


class SlidingWindow:
    """At most `limit` events per key within `window_s` seconds."""

    MAX_KEYS = 100_000  # past this, keys whose events have all expired are dropped

    def __init__(self, limit: int, window_s: float, clock=time.monotonic) -> None:  # noqa: ANN001
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._events: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, key: str) -> int | None:
        """Whole seconds until `key` may try again, or None if it may now."""
        with self._lock:
            events = self._live(key)
            if len(events) < self.limit:
                return None
            return max(1, math.ceil(events[0] + self.window_s - self.clock()))

    def hit(self, key: str) -> None:
        with self._lock:
            if len(self._events) >= self.MAX_KEYS:
                for stale in [k for k in self._events if not self._live(k)]:
                    del self._events[stale]
            self._live(key).append(self.clock())

    def reset(self, key: str) -> None:
        with self._lock:
            self._events.pop(key, None)

    def _live(self, key: str) -> deque[float]:
        events = self._events.setdefault(key, deque())
        cutoff = self.clock() - self.window_s
        while events and events[0] <= cutoff:
            events.popleft()
        return events
