"""Every chart kind drawn from real runs in a real store: `stackbench run` and `stackbench synclat` with fio
on a disk-backed directory (the session fixture `measured`, tests/report/charts/conftest.py), then
`stackbench chart` and the public functions documents call. Checked on the SVG, without pixels."""

from __future__ import annotations

from pathlib import Path

import pytest

from report.charts.conftest import Store, chart, ids, svg_tree, texts
from stackbench.store import open_store

pytestmark = pytest.mark.slow


def _draw(store: Store, tmp_path: Path, name: str, *args: str):  # noqa: ANN202 - the SVG root
    out = tmp_path / f"{name}.svg"
    result = chart(store, out, *args)
    assert result.returncode == 0, result.stderr
    return svg_tree(out)


def test_matrix_has_a_panel_per_pattern_and_a_series_per_depth(measured: Store, tmp_path: Path) -> None:
    root = _draw(measured, tmp_path, "m", "matrix")
    words = texts(root)
    assert {"randread", "write"} <= set(words)
    assert words.count("IOPS (I/O per second)") == 2 and words.count("block size (bytes, K = 1024)") == 2
    assert len(ids(root, "series-")) == 4  # QD1 and QD4 in each of the two panels
    assert {"QD1", "QD4"} <= set(words)
    footer = next(t for t in words if "stackbench" in t and "run " in t)
    assert "fio-3" in footer and "matrix" in footer


def test_timeline_shades_each_ramp_and_draws_the_median_band(measured: Store, tmp_path: Path) -> None:
    root = _draw(measured, tmp_path, "t", "timeline", "-k", "timeline", "--cell", "4K QD4 rnd read")
    assert len(ids(root, "ramp-")) == 2  # two separate fio runs, each with its 1 s ramp
    assert len(ids(root, "samples-")) == 2
    assert ids(root, "median") == ["median"] and ids(root, "ci-band") == ["ci-band"]
    words = texts(root)
    assert "IOPS (I/O per second)" in words and "ramp (discarded)" in words
    assert "time (s), the cell's fio runs one after another" in words


def test_percentiles_and_histogram_of_a_measured_cell(measured: Store, tmp_path: Path) -> None:
    root = _draw(measured, tmp_path, "p", "matrix", "-k", "percentiles")
    assert len(ids(root, "series-")) == 3 and "4K QD1 rnd read" in texts(root)
    root = _draw(measured, tmp_path, "h", "matrix", "-k", "histogram", "--cell", "64K QD4 seq write")
    assert len(ids(root, "percentile-")) == 3
    assert any("json+ buckets" in t for t in texts(root))


def test_compare_colours_the_revert_and_shades_the_band(measured: Store, tmp_path: Path) -> None:
    root = _draw(measured, tmp_path, "c", "fast", "capped", "-k", "compare")
    assert ids(root, "min-effect-band")
    reverts = ids(root, "verdict-revert-")
    assert len(reverts) == 2 and len(ids(root, "whisker-revert-")) == 2  # 500 IOPS cap: both rows far worse
    node = next(n for n in root.iter() if n.get("id") == reverts[0])
    assert "#d55e00" in "".join(p.get("style", "") for p in node.iter()).lower()  # vermillion: worse
    assert any("REVERT" in t for t in texts(root))


def test_compare_the_other_way_round_colours_the_keep(measured: Store, tmp_path: Path) -> None:
    root = _draw(measured, tmp_path, "k", "capped", "fast", "-k", "compare")
    keeps = ids(root, "verdict-keep-")
    assert len(keeps) == 2 and not ids(root, "verdict-revert-")
    node = next(n for n in root.iter() if n.get("id") == keeps[0])
    assert "#0072b2" in "".join(p.get("style", "") for p in node.iter()).lower()  # blue: better
    assert any("KEEP" in t for t in texts(root))


def test_layers_outline_the_biggest_gap(measured: Store, tmp_path: Path) -> None:
    root = _draw(measured, tmp_path, "l", "fast", "capped", "-k", "layers", "--names", "host,capped")
    assert len(ids(root, "biggest-gap-")) == 2 and len(ids(root, "series-")) == 2
    words = texts(root)
    factors = [t for t in words if t.startswith("×")]
    assert len(factors) == 2
    assert any("biggest gap" in t and "from host to capped" in t for t in words)


def test_synclat_overlays_two_runs_log_log(measured: Store, tmp_path: Path) -> None:
    root = _draw(measured, tmp_path, "s", "sync-a", "sync-b", "-k", "synclat")
    assert len(ids(root, "series-")) == 2
    words = texts(root)
    assert {"4K", "8K", "16K", "32K"} <= set(words)
    assert "write size (bytes, K = 1024), log scale" in words
    footer = next(t for t in words if "stackbench" in t and "runs " in t)
    assert "sync-a" in footer and "sync-b" in footer


def test_custom_lines_per_depth(measured: Store, tmp_path: Path) -> None:
    root = _draw(measured, tmp_path, "x", "matrix", "--x", "bs", "--y", "p99", "--series", "iodepth",
                 "--where", "rw=write")
    assert len(ids(root, "series-")) == 2
    assert "p99 completion latency (µs)" in texts(root)


def test_run_figures_of_a_stored_run_are_matrix_percentiles_timeline_histogram_and_stack(measured: Store) -> None:
    from stackbench.store.latency_bins import cell_bins
    from stackbench.report.charts import representative_cell, run_figures

    store = open_store(measured.url)
    run = store.get_run("timeline")
    cell = representative_cell(run)
    figures = run_figures(run, bins={cell.id: cell_bins(store, run, cell)})
    # `stackbench run` recorded what the devices under its target did: the stack chart comes last
    assert [f.kind for f in figures] == ["matrix", "percentiles", "timeline", "histogram", "stack"]
    again = run_figures(run, bins={cell.id: cell_bins(store, run, cell)})
    for figure, twin in zip(figures, again):
        assert figure.title and figure.alt.endswith(".")
        assert figure.render("svg") == twin.render("svg")  # the same run gives the same bytes
    store.dispose()


def test_cache_refuses_a_read_cell(measured: Store, tmp_path: Path) -> None:
    result = chart(measured, tmp_path / "c.svg", "timeline", "-k", "cache", "--cell", "4K QD4 rnd read")
    assert result.returncode == 2
    assert "is not a write" in result.stderr and "--cell" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_histogram_from_a_postgresql_store(pg_url: str, tmp_path: Path) -> None:
    """The json+ buckets are read back from PostgreSQL's fio_outputs as from SQLite's (a real server)."""
    from conftest import DATA
    from report.charts.conftest import cli_here

    label = f"pg-chart-{tmp_path.name}"
    imported = cli_here("import", str(DATA / "fio" / "seqwrite-posixaio.jsonplus.json"), "-l", label, "--db", pg_url)
    assert imported.returncode == 0, imported.stderr
    out = tmp_path / "h.svg"
    result = cli_here("chart", label, "-k", "histogram", "-o", str(out), "--db", pg_url)
    assert result.returncode == 0, result.stderr
    root = svg_tree(out)
    assert len(ids(root, "percentile-")) == 3 and any(label in t for t in texts(root))
