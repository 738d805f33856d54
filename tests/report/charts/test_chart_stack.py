"""`stackbench chart --kind stack`: what every layer under the target did during each cell, drawn from the
stored run's layer table (analysis/layer_activity.py, the source of `show`'s "Layers during each cell").

The fast tests store synthetic runs (tests/analysis_layers.py: figures chosen so each bar and each
amplification can be computed by hand) in a real SQLite store and draw them through the real CLI; the slow
one draws a real run made by `stackbench run` with fio on ext4 on a loop device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis_layers import mirror_run
from report.charts.conftest import Store, chart, cli_here, ids, svg_tree, texts
from stackbench.store import Store as Repository
from stored_runs import store_run

WRITE, READ = "4K QD4 rnd write", "4K QD4 rnd read"


@pytest.fixture(scope="module")
def layered(tmp_path_factory: pytest.TempPathFactory) -> Store:
    url = f"sqlite:///{tmp_path_factory.mktemp('stack') / 'results.db'}"
    store = Repository(url)
    stored = mirror_run()
    store_run(store, stored)
    store.dispose()
    return Store(url, {"mirror": stored.id})


def _notes(root) -> list[str]:  # noqa: ANN001 - the SVG root
    return [" ".join(texts(group)) for group in root.iter() if group.get("id", "").startswith("note-")]


def test_each_layer_is_drawn_with_its_amplification_and_the_busiest_stands_out(layered: Store, tmp_path: Path) -> None:
    out = tmp_path / "stack.svg"
    result = chart(layered, out, "mirror", "-k", "stack")
    assert result.returncode == 0, result.stderr
    root = svg_tree(out)
    words = texts(root)
    # two panels: the cells with layer activity, each with its unit on the axis
    assert words.count("IOPS (I/O per second), log scale") == 2
    assert any(w.startswith(f"{WRITE}: 1 fio run; bottom layers, summed: 2.00x fio's bytes") for w in words)
    assert any(w.startswith(f"{READ}: 1 fio run; bottom layers, summed: 1.00x fio's bytes; ARC hit ratio 75.0 %")
               for w in words)
    assert len(ids(root, "fio-")) == 2 and len(ids(root, "busiest-")) == 1
    notes = _notes(root)
    assert notes[:4] == ["1,000 IOPS submitted", "256 IOPS · ampl. 1.00x · util 50 %",
                         "256 IOPS · ampl. 1.00x · util 50 %",
                         "256 IOPS · ampl. 1.00x · util 96 % · BUSIEST (utilisation 96 %)"]
    assert notes[4:7] == ["3,000 IOPS submitted", "2,560 IOPS · ampl. 1.00x · util 50 %",
                          "1,280 IOPS · ampl. 0.50x · util 50 %"]
    # sdc, in the saved stack, has no counts in the write cell: its row says so rather than vanishing
    assert [" ".join(texts(g)) for g in root.iter() if g.get("id", "").startswith("missing-")] == \
        ["no counts recorded in this cell"]
    assert {"└ md0 (md)", "└ sdc (disk)"} <= {w.strip() for w in words}
    footer = next(t for t in words if "stackbench" in t and "run " in t)
    assert "fio-3.33" in footer and "mirror" in footer
    assert "busiest layer: where the saturated layers' time is spent" in words  # the legend's key to the vermillion bar


def test_cell_draws_one_panel_and_metric_mb_s_draws_mb_s(layered: Store, tmp_path: Path) -> None:
    out = tmp_path / "read.png"
    result = chart(layered, out, "mirror", "-k", "stack", "--cell", READ.lower(), "--metric", "mb_s")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / "read.svg"
    assert chart(layered, svg, "mirror", "-k", "stack", "--cell", READ, "--metric", "mb_s").returncode == 0
    root = svg_tree(svg)
    words = texts(root)
    assert words.count("MB/s (10^6 bytes per second), log scale") == 1 and not ids(root, "busiest-")
    assert _notes(root)[:2] == [f"{3000 * 4096 / 1e6:.1f} MB/s submitted", "10 MB/s · ampl. 1.00x · util 50 %"]


def test_a_cell_without_layer_activity_is_refused_naming_those_with(layered: Store, tmp_path: Path) -> None:
    out = tmp_path / "seq.svg"
    result = chart(layered, out, "mirror", "-k", "stack", "--cell", "1M QD4 seq write")
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: cell 1M QD4 seq write of run 5555eeee5555 recorded no layer activity")
    assert f"{WRITE}; {READ}" in line and not out.exists()


def test_a_run_stored_before_layer_telemetry_is_refused_in_one_line(imported: Store, tmp_path: Path) -> None:
    out = tmp_path / "stack.svg"
    result = chart(imported, out, "jsonplus", "-k", "stack")
    assert result.returncode == 1, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "has no layer activity to draw" in line and "stored before layer telemetry" in line
    assert "Run it again with `stackbench run`" in line and not out.exists()


def test_stack_takes_only_its_own_options(layered: Store, tmp_path: Path) -> None:
    result = chart(layered, tmp_path / "s.svg", "mirror", "-k", "stack", "--names", "a,b")
    assert result.returncode == 2 and "--names is for layers, not stack" in result.stderr


def test_the_help_says_what_stack_draws_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = cli_here("chart", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.replace("│", " ").split())  # the options' box drawn away
    assert "stack: what every layer under the target did per cell, fio down to the disks: IOPS or MB/s, " \
        "amplification against fio's bytes, the busiest layer." in text
    assert "stackbench chart baseline -k stack -o stack.png" in text and "stack: every cell with layer counts" in text
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


@pytest.mark.slow
def test_a_real_run_on_a_loop_device_is_drawn(tmp_path: Path, ext4_loop: Path) -> None:
    """A real `stackbench run` of O_DIRECT random writes on ext4 on a loop device: the chart draws fio and
    the loop device with its amplification, as `show --json` has it, and the layers under its backing file."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    made = cli_here("run", "-t", str(ext4_loop), "--rw", "randwrite", "--bs", "4k", "--qd", "4", "--runs", "1",
                    "--ramp", "0", "--runtime", "2", "--size", "16M", "--label", "loop", "--db", url, "--json")
    assert made.returncode == 0, made.stderr
    run_id = json.loads(made.stdout)["run_id"]
    shown = cli_here("show", run_id, "--db", url, "--json")
    [layers] = [c["layers"] for c in json.loads(shown.stdout)["cells"]]
    loop = layers["layers"][0]
    store = Store(url, {"loop": run_id})
    for suffix in ("svg", "png"):
        result = chart(store, tmp_path / f"stack.{suffix}", "loop", "-k", "stack", "--keep-identifiers")
        assert result.returncode == 0, result.stderr
    root = svg_tree(tmp_path / "stack.svg")
    words = [w.strip() for w in texts(root)]
    bars = len(ids(root, "layer-")) + len(ids(root, "busiest-")) + len(ids(root, "saturated-"))
    assert f"└ {loop['device']} (loop)" in words and bars == sum(1 for layer in layers["layers"] if layer["iops"] > 0)
    assert f"ampl. {loop['write_amplification']:.2f}x" in _notes(root)[1]
    assert words.count("IOPS (I/O per second), log scale") == 1


def test_the_tree_stays_indented_in_a_browser(layered: Store, tmp_path: Path) -> None:
    """A browser collapses an SVG text's leading spaces: the depth is drawn with no-break spaces, which it
    keeps, so md0's disks sit under it rather than beside it."""
    out = tmp_path / "stack.svg"
    assert chart(layered, out, "mirror", "-k", "stack").returncode == 0
    raw = ["".join(node.itertext()) for node in svg_tree(out).iter("{http://www.w3.org/2000/svg}text")]
    labels = [text for text in raw if "└" in text]
    assert "└ md0 (md)" in labels and "\u00a0" * 3 + "└ sda (disk)" in labels
    assert not [label for label in labels if label.startswith(" ")]


def test_the_report_of_a_layered_run_has_the_stack_chart_and_of_a_run_without_layers_none(
    layered: Store, imported: Store, tmp_path: Path,
) -> None:
    from stackbench.report.charts import run_figures

    store = Repository(layered.url)
    figures = run_figures(store.get_run("mirror"))
    store.dispose()
    assert [f.kind for f in figures] == ["matrix", "percentiles", "stack"]
    pages = {}
    for name, where in (("mirror", layered), ("jsonplus", imported)):
        out = tmp_path / f"{name}.html"
        done = cli_here("report", name, "-o", str(out), "--db", where.url)
        assert done.returncode == 0, done.stderr
        pages[name] = out.read_text()
    alt = "Bars of IOPS per layer, from fio down to the disks, for 2 cell(s) of run mirror (5555eeee)"
    assert pages["mirror"].count("<figure") == len(figures) and alt in pages["mirror"]
    assert "per layer under" not in pages["jsonplus"] and "<figure" in pages["jsonplus"]


def test_a_throttled_layer_says_why_on_a_line_of_its_own_and_every_word_stays_on_the_chart() -> None:
    """The table's reason for a layer named for its cgroup throttle (the limits, the cgroup, the layer
    above) ran off the chart beside the bar, which says it on a line of its own instead; and the key of fio,
    a saturated and the busiest layer, side by side, ran off both sides at 800 px: it takes two rows."""
    from analysis_layers import disk, summary, two_loops, with_conditions
    from stackbench.report.charts.stack import stack_figure
    from synthetic import cell, run

    counted = summary({name: disk(writes=2000, write_bytes=8_192_000, util=util)
                       for name, util in {"loop1": 100.0, "loop0": 4.0, "vda": 95.0}.items()}, fio_write=8_192_000)
    made = run([with_conditions(cell(runs=[200.0]), [counted])],
               facts={"fio_version": "fio-3.33", "stack": two_loops("loop0").to_json()})
    figure = stack_figure(made)
    drawing = figure.drawing
    figure.render("png")
    [ax] = drawing.axes
    assert "200 IOPS · ampl. 1.00x · util 4 %\nBUSIEST: its cgroup throttle held the layer above" in \
        [text.get_text() for text in ax.texts]
    renderer = drawing.canvas.get_renderer()
    width = drawing.bbox.width
    [key] = drawing.legends
    drawn = [key.get_window_extent(renderer), *(text.get_window_extent(renderer) for text in ax.texts)]
    assert all(0 <= box.x0 and box.x1 <= width for box in drawn), [(box.x0, box.x1, width) for box in drawn]
