"""The charts of a page, drawn once and served as SVG images.

A page shows its charts as `<img src="…/chart.svg?n=N" alt="…">`, each fetched from a route that loads
its objects through `access.load` like the page itself. Images rather than inline SVG because
matplotlib's SVG carries a `<style>` element and style attributes, which the strict CSP
(`style-src 'self'`) refuses in a document; inside an image they are the image's own business and nothing
in it can run. Drawing costs a tenth of a second per chart, so the page draws its charts once and keeps
them in a small LRU cache keyed by what they show (the object ids, their labels, whether redacted); the
image route then only reads the cache, or draws again when the entry has been pushed out. With a chart
directory (`serve --chart-cache`, report/charts/files.py) the charts are also kept on disk, shared by the worker
processes and across restarts, and web/chart_warmer.py draws a run's charts there before anyone asks, so a
run page's first view reads a file. The cache is never consulted before the authorization check: its key is
built from objects already loaded. A report download (its charts drawn into an HTML document, a second or
two for a big run) is kept the same way (in memory only).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Callable, Generic, Hashable, Sequence, TypeVar

from stackbench.report.charts.files import Chart, ChartFiles, renderer

if TYPE_CHECKING:
    from stackbench.model.results import Run
    from stackbench.report.charts.figure import Figure
    from stackbench.store.repository import Store

CACHE_ENTRIES = 64
REPORT_ENTRIES = 8  # a 48-cell run's report is about 250 KiB

# matplotlib is not thread-safe, and uvicorn runs the sync routes in a thread pool: one lock for every
# drawing in the process, a page's charts and a report's alike.
_DRAWING = threading.Lock()

Made = TypeVar("Made")


def drawn_from(run: "Run", cells: int | None = None) -> tuple:
    """What a run's charts (and its report) depend on that can change, for a cache key: a relabelled run, or
    one still measuring (cells added, status changed), is drawn again. `cells`: the run's number of cells,
    for a run listed without them (Store.list_runs)."""
    return run.id, run.label, run.status, len(run.cells) if cells is None else cells


def run_charts_key(run: "Run", shared: bool, cells: int | None = None) -> tuple:
    """The key of a run page's charts (`shared`: drawn from the redacted copy a share link shows)."""
    return "run", drawn_from(run, cells), shared


def draw_run_charts(store: "Store", run: "Run") -> list["Figure"]:
    """A run page's charts as `stackbench report` draws them: from `run` with all its per-second samples
    (the timeline draws them; a page loads only some, see access.load) and its json+ latency buckets."""
    from stackbench.base.errors import StackbenchError
    from stackbench.report.charts import representative_cell, run_figures
    from stackbench.store.latency_bins import bins_where_stored

    whole = store.with_samples([run])[0]
    figures = run_figures(whole, bins=bins_where_stored(store, whole, [representative_cell(whole)]))
    if whole.plan_name == "synclat":
        from stackbench.report.charts import synclat_figures

        try:
            figures += synclat_figures([whole])
        except StackbenchError:
            pass  # no finished write size to draw: the table says what there is
    return figures



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
        self._put(key, made)
        return made

    def _put(self, key: Hashable, made: Made) -> None:
        with self._lock:
            self._made[key] = made
            self._made.move_to_end(key)
            while len(self._made) > self.entries:
                self._made.popitem(last=False)


class ChartCache(DrawnCache[list[Chart]]):
    """Pages' charts by key: in memory, then in `files` (when the server has a chart directory), else drawn
    (and kept in both)."""

    def __init__(self, entries: int = CACHE_ENTRIES, files: ChartFiles | None = None) -> None:
        super().__init__(entries)
        self.files = files

    def charts(self, key: Hashable, draw: Callable[[], Sequence["Figure"]]) -> list[Chart]:
        if self.files is None:
            return self.get(key, lambda: [Chart.of(figure) for figure in draw()])
        files, stored_key = self.files, (key, renderer())
        found = self._get(key)
        if found is None:
            found = files.read(stored_key)  # read without waiting for another page's drawing
            if found is not None:
                self._put(key, found)
        if found is not None:
            return found

        def drawn_once() -> list[Chart]:
            with files.drawing(stored_key):  # another worker process drawing it: wait, then read its file
                made = files.read(stored_key)
                if made is None:
                    made = [Chart.of(figure) for figure in draw()]
                    files.write(stored_key, made)
                return made

        return self.get(key, drawn_once)

    def stored(self, key: Hashable) -> bool:
        """Whether `key`'s charts are in memory or on disk (the warmer's question)."""
        return self._get(key) is not None or (self.files is not None and self.files.has((key, renderer())))
