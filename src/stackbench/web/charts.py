"""The charts of a page, drawn once and served as SVG images.

A page shows its charts as `<img src="…/chart.svg?n=N" alt="…">`, each fetched from a route that loads
its objects through `access.load` like the page itself. Images rather than inline SVG because
matplotlib's SVG carries a `<style>` element and style attributes, which the strict CSP
(`style-src 'self'`) refuses in a document; inside an image they are the image's own business and nothing
in it can run. Drawing costs a tenth of a second per chart, so the page draws its charts once and keeps
them in a small LRU cache keyed by what they show (the object ids, their labels, whether redacted); the
image route then only reads the cache, or draws again when the entry has been pushed out. The cache is
never consulted before the authorization check: its key is built from objects already loaded. A report
download (its charts drawn into an HTML document, a second or two for a big run) is kept the same way.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Generic, Hashable, Sequence, TypeVar

if TYPE_CHECKING:
    from stackbench.model.results import Run
    from stackbench.report.charts.figure import Figure

CACHE_ENTRIES = 64
REPORT_ENTRIES = 8  # a 48-cell run's report is about 250 KiB

# matplotlib is not thread-safe, and uvicorn runs the sync routes in a thread pool: one lock for every
# drawing in the process, a page's charts and a report's alike.
_DRAWING = threading.Lock()

Made = TypeVar("Made")


def drawn_from(run: "Run") -> tuple:
    """What a run's charts (and its report) depend on that can change, for a cache key: a relabelled run, or
    one still measuring (cells added, status changed), is drawn again."""
    return run.id, run.label, run.status, len(run.cells)


@dataclass(frozen=True)
class Chart:
    title: str
    alt: str
    svg: bytes


class DrawnCache(Generic[Made]):
    """What was drawn, by key, the least recently used dropped first. Its own lock is held only to look up
    or insert, so that a request whose drawing is cached never waits for another request's drawing, which
    holds the process's drawing lock."""

    def __init__(self, entries: int = CACHE_ENTRIES) -> None:
        self.entries = entries
        self._made: OrderedDict[Hashable, Made] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._made)

    def _get(self, key: Hashable) -> Made | None:
        with self._lock:
            found = self._made.get(key)
            if found is not None:
                self._made.move_to_end(key)
            return found

    def get(self, key: Hashable, make: Callable[[], Made]) -> Made:
        found = self._get(key)
        if found is not None:
            return found
        with _DRAWING:
            found = self._get(key)  # drawn by another request while this one waited
            if found is not None:
                return found
            made = make()
        with self._lock:
            self._made[key] = made
            while len(self._made) > self.entries:
                self._made.popitem(last=False)
        return made


class ChartCache(DrawnCache[list[Chart]]):
    """Pages' charts by key."""

    def charts(self, key: Hashable, draw: Callable[[], Sequence["Figure"]]) -> list[Chart]:
        return self.get(key, lambda: [_chart(figure) for figure in draw()])


def _chart(figure: "Figure") -> Chart:
    # the charts draw on matplotlib's object API (no pyplot state): the drawing is freed with the Figure
    return Chart(figure.title, figure.alt, figure.render("svg"))
