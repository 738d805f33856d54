"""The charts cache of the server (web/charts.py): bounded, least recently used dropped first, each page's
charts drawn once, and a page whose charts are cached never waits for another page's drawing."""

from __future__ import annotations

import threading
import time

import pytest

from stackbench.web.charts import Chart, ChartCache


def Drawn(name: str):  # noqa: ANN201, N802 - a real Figure
    """The matrix chart of the synthetic run labelled `name` (tests/stored_runs.py), drawn by report.charts."""
    from dataclasses import replace

    from stackbench.report.charts.matrix import matrix_figure
    from stored_runs import runs

    return matrix_figure(replace(runs()[0], label=name))


@pytest.mark.slow  # four real charts drawn
def test_each_key_is_drawn_once_and_the_oldest_is_dropped() -> None:
    cache = ChartCache(entries=2)
    calls: list[str] = []

    def draw(name: str):  # noqa: ANN202
        return lambda: (calls.append(name), [Drawn(name)])[1]

    first = cache.charts("a", draw("a"))
    assert len(first) == 1 and isinstance(first[0], Chart) and b"<svg" in first[0].svg and "a (1111aaaa)" in first[0].alt
    cache.charts("a", draw("a"))
    cache.charts("b", draw("b"))
    cache.charts("a", draw("a"))  # a is now the most recently used
    cache.charts("c", draw("c"))  # drops b
    cache.charts("a", draw("a"))
    cache.charts("b", draw("b"))
    assert calls == ["a", "b", "c", "b"]


def test_a_cached_page_does_not_wait_for_another_pages_drawing() -> None:
    cache = ChartCache()
    cache.charts("cached", lambda: [Drawn("cached")])
    started, release = threading.Event(), threading.Event()

    def slow():  # noqa: ANN202
        started.set()
        release.wait(5)
        return [Drawn("slow")]

    drawer = threading.Thread(target=cache.charts, args=("slow", slow))
    drawer.start()
    started.wait(5)
    clock = time.monotonic()
    assert "cached" in cache.charts("cached", lambda: [])[0].alt
    assert time.monotonic() - clock < 1
    release.set()
    drawer.join(5)
    assert "slow" in cache.charts("slow", lambda: [])[0].alt
