"""Runs' charts drawn before anyone asks: a server thread that draws the charts of the newest stored runs
into the chart directory (report/charts/files.py), so that a run page's first view reads them instead of
drawing them (issue 34: the first view took p50 336 ms, p95 534 ms, drawing).

It looks at the newest `Settings.warm_runs` runs when the server starts, again every `warm_interval_s`
(runs stored by the CLI meanwhile: `run`, `import`), and at once when a run is pushed (`wake`). It draws
through the page's own cache (`ChartCache.charts`), so a page asking for the same run meanwhile waits for
that one drawing rather than making a second, and the worker processes of `serve --workers N` each run one
but draw each run once (the chart directory's per-entry lock: the second finds the file). Drawing holds the
process's drawing lock and the interpreter's: pages whose charts are kept are answered meanwhile, a little
slower. A run that cannot be drawn is skipped (its page will say why when asked); the thread never ends the
server.
"""

from __future__ import annotations

import logging
import threading

from stackbench.web.charts import ChartCache, draw_run_charts, run_charts_key
from stackbench.store.repository import Store

log = logging.getLogger("stackbench.web")


class ChartWarmer:
    def __init__(self, store: Store, charts: ChartCache, runs: int, interval_s: float) -> None:
        self.store, self.charts, self.runs, self.interval_s = store, charts, runs, interval_s
        self._wake, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._loop, name="chart-warmer", daemon=True)
        self.drawn = 0  # runs drawn so far (tests, the bench)
        self._failed: set[tuple] = set()  # keys not drawn: not tried again until the run changes
        self.idle = threading.Event()  # set while every run looked at is drawn

    def start(self) -> "ChartWarmer":
        self._thread.start()
        return self

    def wake(self) -> None:
        """A run was stored: look now rather than at the next interval."""
        self.idle.clear()
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self.sweep()
            except Exception:  # noqa: BLE001 - a store that went away, a bug: logged, tried again later
                log.exception("drawing the newest runs' charts failed")
            if not self._wake.is_set():
                self.idle.set()
            self._wake.wait(self.interval_s)

    def sweep(self) -> None:
        """Draw the charts of the newest runs that have none kept."""
        from stackbench.base.errors import StackbenchError

        for listed, cells in self.store.list_runs(limit=self.runs):
            if self._stop.is_set():
                return
            key = run_charts_key(listed, shared=False, cells=cells)
            if key in self._failed or self.charts.stored(key):
                continue
            try:
                run = self.store.run_by_id(listed.id)
            except (StackbenchError, IndexError):
                continue  # deleted meanwhile
            if run_charts_key(run, shared=False) != key:
                continue  # changed meanwhile: the next sweep sees it as it is
            try:
                self.charts.charts(key, lambda: draw_run_charts(self.store, run))
            except StackbenchError:
                self._failed.add(key)  # nothing to draw (no cells yet): the page says so
                continue
            except Exception:  # noqa: BLE001 - a run the charts cannot draw: logged once, the others drawn
                log.exception("drawing the charts of run %s failed", run.id)
                self._failed.add(key)
                continue
            self.drawn += 1
