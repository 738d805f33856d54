"""The charts of a page, drawn once and served as SVG images.

A page shows its charts as `<img src="…/chart.svg?n=N" alt="…">`, each fetched from a route that loads
its objects through `access.load` like the page itself. Images rather than inline SVG because
matplotlib's SVG carries a `<style>` element and style attributes, which the strict CSP
(`style-src 'self'`) refuses in a document; inside an image they are the image's own business and nothing
in it can run. Drawing costs a tenth of a second per chart, so the page draws its charts once and keeps
them in a small LRU cache keyed by what they show (the object ids, their labels, whether redacted); the
image route then only reads the cache, or draws again when the entry has been pushed out. The cache is
never consulted before the authorization check: its key is built from objects already loaded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Hashable, Sequence

if TYPE_CHECKING:
    from stackbench.report.charts.figure import Figure

CACHE_ENTRIES = 64


@dataclass(frozen=True)
class Chart:
    title: str
    alt: str
    svg: bytes


class ChartCache:
    """Pages' charts by key, the least recently used dropped first. Two locks: one guards the cache and
    is held only to look up or insert, so that a page whose charts are drawn already never waits; the
    other serialises drawing, because matplotlib is not thread-safe and uvicorn runs the sync routes in a
    thread pool."""

    def __init__(self, entries: int = CACHE_ENTRIES) -> None:
        self.entries = entries
        self._charts: OrderedDict[Hashable, list[Chart]] = OrderedDict()
        self._lock = threading.Lock()
        self._drawing = threading.Lock()

    def _get(self, key: Hashable) -> list[Chart] | None:
        with self._lock:
            found = self._charts.get(key)
            if found is not None:
                self._charts.move_to_end(key)
            return found

    def charts(self, key: Hashable, draw: Callable[[], Sequence["Figure"]]) -> list[Chart]:
        found = self._get(key)
        if found is not None:
            return found
        with self._drawing:
            found = self._get(key)  # drawn by another request while this one waited
            if found is not None:
                return found
            drawn = [_chart(figure) for figure in draw()]
        with self._lock:
            self._charts[key] = drawn
            while len(self._charts) > self.entries:
                self._charts.popitem(last=False)
        return drawn


def _chart(figure: "Figure") -> Chart:
    # the charts draw on matplotlib's object API (no pyplot state): the drawing is freed with the Figure
    return Chart(figure.title, figure.alt, figure.render("svg"))
