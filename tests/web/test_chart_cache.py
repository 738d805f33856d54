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


# The charts kept on disk (report/charts/files.py) and drawn before anyone asks (web/chart_warmer.py).

def _counting(calls: list[str], name: str):  # noqa: ANN202
    return lambda: (calls.append(name), [Drawn(name)])[1]


@pytest.mark.slow  # real charts drawn
def test_kept_charts_are_drawn_again_when_the_run_or_the_renderer_changes(tmp_path, monkeypatch) -> None:
    """A key names what the charts show (web/charts.run_charts_key): a relabelled run, one with a new status
    or more cells, or a new renderer version is drawn again, and an entry drawn for another is never served."""
    from dataclasses import replace

    from stackbench.report.charts import figure
    from stackbench.web import charts as web_charts
    from stackbench.report.charts.files import ChartFiles
    from stored_runs import runs

    run = runs()[0]
    calls: list[str] = []

    def kept(shown, name: str, cells: int | None = None) -> list[Chart]:  # noqa: ANN001 - a fresh process each time
        cache = ChartCache(files=ChartFiles(tmp_path))
        return cache.charts(web_charts.run_charts_key(shown, False, cells), _counting(calls, name))

    first = kept(run, "first")
    assert kept(run, "again") == first  # another process (empty memory) reads the file
    kept(replace(run, label="relabelled"), "relabelled")
    kept(replace(run, status="incomplete"), "status")
    kept(run, "one more cell", cells=len(run.cells) + 1)
    assert kept(run, "unchanged") == first
    web_charts.renderer.cache_clear()
    monkeypatch.setattr(figure, "RENDERER_VERSION", figure.RENDERER_VERSION + 1)
    assert kept(run, "new renderer") != first  # drawn again (a drawing of its own name), not the old entry
    web_charts.renderer.cache_clear()
    assert calls == ["first", "relabelled", "status", "one more cell", "new renderer"]


@pytest.mark.slow  # real charts drawn
def test_a_damaged_entry_reads_as_missing_and_is_drawn_again(tmp_path) -> None:
    from stackbench.report.charts.files import ChartFiles
    from stackbench.web.charts import renderer

    calls: list[str] = []
    ChartCache(files=ChartFiles(tmp_path)).charts("k", _counting(calls, "whole"))
    (entry,) = tmp_path.glob("*.json")
    entry.write_bytes(entry.read_bytes()[:1000])  # a full disk, a crash without the rename
    again = ChartCache(files=ChartFiles(tmp_path)).charts("k", _counting(calls, "damaged"))
    assert calls == ["whole", "damaged"] and b"</svg>" in again[0].svg
    assert ChartFiles(tmp_path).read(("k", renderer())) == again


@pytest.mark.slow  # real charts drawn in three processes
def test_processes_sharing_the_directory_draw_a_run_once(tmp_path) -> None:
    """Three processes (as `serve --workers 3`) miss the same entry at once: one draws, the others wait on its
    lock file and read what it wrote, byte for byte."""
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parent.parent
    script = f"""
import sys, time
sys.path[:0] = [{str(tests)!r}, {str(tests / 'web')!r}]
from stackbench.report.charts.files import ChartFiles
from stackbench.web.charts import ChartCache
from test_chart_cache import Drawn
def draw():
    with open({str(tmp_path / 'drawn')!r}, 'a') as log:
        log.write('drawn\\n')
    time.sleep(1)  # long enough for the others to arrive meanwhile
    return [Drawn('shared')]
charts = ChartCache(files=ChartFiles({str(tmp_path / 'charts')!r})).charts('k', draw)
sys.stdout.buffer.write(charts[0].svg)
"""
    processes = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE) for _ in range(3)]
    outputs = [p.communicate(timeout=120)[0] for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0]
    assert (tmp_path / "drawn").read_text() == "drawn\n"
    assert outputs[0].startswith(b"<?xml") and outputs.count(outputs[0]) == 3


@pytest.mark.slow  # a real chart drawn
def test_user_text_in_a_kept_chart_stays_text(tmp_path) -> None:
    """A label is data: kept and read back, the SVG is well-formed XML holding the label as text, and no
    element of it comes from the label."""
    from xml.etree import ElementTree

    from stackbench.report.charts.files import ChartFiles

    label = '<script>alert(1)</script> ]]> & "quoted" \u202e'
    ChartCache(files=ChartFiles(tmp_path)).charts("k", lambda: [Drawn(label)])
    kept = ChartCache(files=ChartFiles(tmp_path)).charts("k", lambda: [])[0]
    tree = ElementTree.fromstring(kept.svg)
    texts = "".join(tree.itertext())
    assert '<script>alert(1)</script> ]]> & "quoted" \\u202e' in texts
    assert not [e for e in tree.iter() if e.tag.rsplit("}", 1)[-1] == "script"]
    assert label.split()[0] in kept.alt  # the alt text is the page's to escape (its template autoescapes)


def test_a_chart_directory_another_user_can_write_is_refused(tmp_path) -> None:
    from stackbench.base.errors import StackbenchError
    from stackbench.report.charts.files import ChartFiles

    open_to_all = tmp_path / "charts"
    open_to_all.mkdir(mode=0o777)
    open_to_all.chmod(0o777)
    with pytest.raises(StackbenchError, match="can be written by another user"):
        ChartFiles(open_to_all)
    made = ChartFiles(tmp_path / "new" / "charts").directory
    assert made.stat().st_mode & 0o777 == 0o700


@pytest.mark.slow  # real charts drawn by a real server
def test_the_warmer_draws_the_newest_runs_before_their_pages_are_opened(fresh_site, tmp_path, monkeypatch) -> None:
    """With warm_runs, a server draws its newest runs' charts into the chart directory on start; a run
    page then answers from them, drawing nothing; without the kept charts (a new directory, a restart)
    the page draws them on its first view as before."""
    from stackbench.web.pages import run as run_page
    from stackbench.web.settings import Settings
    from web.site import SHARED, assert_charts_served

    directory = tmp_path / "charts"
    with fresh_site(replace_settings(SHARED, chart_cache=directory, warm_runs=10)) as site:
        warmer = site.app.state.server.warmer
        assert warmer.idle.wait(120)
        warmer.stop()
        stored = len(site.store.list_runs())
        assert warmer.drawn == stored and len(list(directory.glob("*.json"))) == stored
        alice = site.login("alice")

        def refuse(*_args):  # noqa: ANN002, ANN202
            raise AssertionError("a run page drew its charts")

        with monkeypatch.context() as patched:
            patched.setattr(run_page, "draw_run_charts", refuse)
            page = alice.get(f"/runs/{site.runs['a']}")
            assert page.status_code == 200
            assert_charts_served(alice, page.text, 2)
    with fresh_site(replace_settings(SHARED, chart_cache=tmp_path / "empty")) as site:  # nothing kept
        assert site.app.state.server.warmer is None
        alice = site.login("alice")
        page = alice.get(f"/runs/{site.runs['b']}")
        assert page.status_code == 200
        assert_charts_served(alice, page.text, 2)
        assert len(list((tmp_path / "empty").glob("*.json"))) == 1
    assert Settings().warm_runs == 0 and Settings().chart_cache is None  # tests and embedders opt in


def replace_settings(settings, **changes):  # noqa: ANN001, ANN201
    from dataclasses import replace

    return replace(settings, **changes)


@pytest.mark.slow  # real charts drawn
def test_a_run_the_warmer_cannot_draw_is_logged_once_and_the_others_are_drawn(tmp_path, monkeypatch, caplog) -> None:
    from stackbench.store import open_store
    from stackbench.web import chart_warmer
    from stackbench.report.charts.files import ChartFiles
    from stored_runs import build_store

    url = f"sqlite:///{tmp_path / 'r.db'}"
    build_store(url)
    store = open_store(url)
    listed = [run for run, _ in store.list_runs()]
    broken, tried, real = listed[0].id, [], chart_warmer.draw_run_charts

    def draw(store, run):  # noqa: ANN001, ANN202
        tried.append(run.id)
        if run.id == broken:
            raise ValueError("a drawing that fails")
        return real(store, run)

    monkeypatch.setattr(chart_warmer, "draw_run_charts", draw)
    warmer = chart_warmer.ChartWarmer(store, ChartCache(files=ChartFiles(tmp_path / "charts")), 10, 3600)
    warmer.sweep()
    warmer.sweep()  # drawn ones are kept, the broken one is not tried again
    assert sorted(tried) == sorted(run.id for run in listed)
    assert warmer.drawn == len(listed) - 1 == len(list((tmp_path / "charts").glob("*.json")))
    assert [r.getMessage() for r in caplog.records if "failed" in r.getMessage()] == [
        f"drawing the charts of run {broken} failed"]
    store.dispose()


def test_a_chart_directory_that_is_not_a_directory_is_refused(tmp_path) -> None:
    """A symbolic link (even to a directory), a file or a FIFO at the path: refused, and left as it is."""
    import os

    from stackbench.base.errors import StackbenchError
    from stackbench.report.charts.files import ChartFiles

    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("kept\n")
    os.mkfifo(tmp_path / "fifo")
    for name in ("link", "file", "fifo"):
        with pytest.raises(StackbenchError, match="chart cache"):
            ChartFiles(tmp_path / name)
    assert (tmp_path / "file").read_text() == "kept\n" and (tmp_path / "link").is_symlink()
