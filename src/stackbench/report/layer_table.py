"""`show RUN`'s "Layers during each cell": what every layer of the target's stack did while each cell ran
(analysis/layer_activity.py), one row per cell and layer, top down, and the same per cell in `--json`;
`compare A B`'s the same rows of both runs for each cell they share, B's under A's.

Device names come from the machine (a loop device's, a dm name) and are shown as data: the table is a
`Tabular`, escaped when it is made, and rendered without markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from stackbench.analysis.layer_activity import (BUSIEST_RULE, PRORATED, ZPOOL_IOSTAT, CellLayers, LayerActivity,
                                               VdevActivity, cell_layers)
from stackbench.base.units import format_bytes, format_iops, format_latency_ns, format_mb_per_s
from stackbench.model.results import Cell, Run
from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.stack.layer import CountedLayer, VdevPlace, counted_layers_of, vdev_places_of

if TYPE_CHECKING:  # the comparison is made by whoever shows it; its layers are only read here
    from stackbench.analysis.compare import RunComparison

HEADERS = ["Cell", "Layer", "IOPS", "MB/s", "size", "await", "util", "ampl."]


def places_of(run: Run) -> list[CountedLayer] | None:
    """Where each sampled device sits in the run's saved stack, None where it saved none."""
    return counted_layers_of(run.facts.get("stack"))


def cell_layers_json(cell: Cell, places: Sequence[CountedLayer] | None,
                     vdev_places: Sequence[VdevPlace] | None = None) -> dict[str, Any] | None:
    """A cell's `layers` in `--json` (docs/json.md), None where its runs sampled no device."""
    found = cell_layers(cell, places, vdev_places)
    return found.to_json() if found is not None else None


def layer_table(run: Run) -> Tabular | None:
    """The run's layer table, None where no cell has one (a run from before layer telemetry, an import)."""
    places, vdev_places = places_of(run), vdev_places_of(run.facts.get("stack"))
    found = [(cell, layers) for cell in run.cells if (layers := cell_layers(cell, places, vdev_places)) is not None]
    if not found:
        return None
    rows: list[list[str]] = []
    notes = ["MB/s = 10^6 bytes/s; size = bytes per completed I/O; await = time per completed I/O; util = "
             "share of the seconds with a request in flight; ampl. = the layer's bytes in the cell's direction / "
             "fio's; summed over each cell's runs"]
    missing: set[str] = set()
    vdev_note = False
    for cell, layers in found:
        direction = cell.result.direction
        first = len(rows)
        for index, layer in enumerate(layers.layers):
            rows += _vdev_rows([v for v in layers.vdevs if v.at == index], direction)
            rows.append(["", _label(layer), format_iops(layer.iops), format_mb_per_s(layer.mb_per_s * 1e6),
                         format_bytes(layer.avg_request_bytes) if layer.avg_request_bytes is not None else "-",
                         format_latency_ns(layer.await_ms * 1e6 if layer.await_ms is not None else None),
                         f"{layer.util_pct:.0f} %", _times(layer.amplification.get(direction))])
        rows += _vdev_rows([v for v in layers.vdevs if v.at >= len(layers.layers)], direction)
        vdev_note = vdev_note or bool(layers.vdevs)
        bottom = layers.bottom_amplification.get(direction)
        if layers.several_bottom and bottom is not None:
            rows.append(["", "bottom layers, summed", "", "", "", "", "", _times(bottom)])
        rows[first][0] = cell.pattern
        notes += _cell_notes(cell, layers)
        missing.update(layers.not_recorded)
    if any(layers.busiest for _, layers in found):
        notes.insert(1, BUSIEST_RULE)
    if vdev_note:
        notes.append(VDEV_NOTE)
    if any(vdev.source == ZPOOL_IOSTAT for _, layers in found for vdev in layers.vdevs):
        notes.append(ZPOOL_NOTE)
    if PRORATED in missing:
        missing.discard(PRORATED)
        notes.append("ampl. of some runs takes fio's bytes at its mean rate over the layer's seconds (runs "
                     "measured before stackbench kept fio's bytes per second, or cells run in one fio process): "
                     "off where fio's rate changed from second to second")
    if missing:
        notes.append("not recorded for some runs (measured before stackbench kept them; the queue trend needs "
                     "runs of 3 s or more): " + ", ".join(sorted(missing)))
    every = frozenset(range(len(HEADERS)))
    return Tabular(headers=HEADERS, rows=rows, title="Layers during each cell", notes=notes,
                   right_aligned=every - {0, 1}, no_wrap=every, tree=frozenset({1}))


# The spreadsheet's layer rows (CSV and the workbook): each column's header with its unit, and the decimals a
# CSV cell keeps (None: words).
EXPORT_COLUMNS: tuple[tuple[str, int | None], ...] = (
    ("Cell", None), ("Layer", None), ("kind", None), ("depth", 0), ("runs", 0), ("seconds (s)", 2),
    ("IOPS", 1), ("MB/s (10^6 bytes/s)", 3), ("size (bytes per I/O)", 0), ("await (ms)", 3), ("util (%)", 1),
    ("queue depth", 2), ("read (bytes)", 0), ("written (bytes)", 0), ("read ampl. (layer / fio bytes)", 3),
    ("write ampl. (layer / fio bytes)", 3), ("saturated", None), ("busiest", None), ("ARC hit ratio (%)", 1),
)


def layer_export_rows(run: Run) -> list[list[Any]]:
    """The layer table's rows for a spreadsheet: the figures `show` prints per cell and layer (and the
    bottom layers' sum where there are several, and each pool's `zpool iostat -v` rows, their kind
    `zpool CLASS KIND`), as numbers, None where a run did not record one; empty where no cell has layer
    activity."""
    places, vdev_places = places_of(run), vdev_places_of(run.facts.get("stack"))
    rows: list[list[Any]] = []
    for cell in run.cells:
        layers = cell_layers(cell, places, vdev_places)
        if layers is None:
            continue
        for vdev in layers.vdevs:
            rows.append([cell.pattern, vdev.name, " ".join(["zpool", *([vdev.vdev_class] if vdev.vdev_class else []),
                                                           vdev.kind]),
                         vdev.depth, layers.runs, vdev.seconds, vdev.iops, vdev.mb_per_s, vdev.avg_request_bytes, None,
                         None, None, vdev.read_bytes, vdev.write_bytes, vdev.amplification.get("read"),
                         vdev.amplification.get("write"), "", "", layers.arc_hit_pct])
        for layer in layers.layers:
            rows.append([cell.pattern, layer.device, layer.kind, layer.depth, layers.runs, layer.seconds, layer.iops,
                         layer.mb_per_s, layer.avg_request_bytes, layer.await_ms, layer.util_pct, layer.queue_depth,
                         layer.read_bytes, layer.write_bytes, layer.amplification.get("read"),
                         layer.amplification.get("write"), "yes" if layer.saturated else "no",
                         "yes" if layer.device == layers.busiest else "no", layers.arc_hit_pct])
        bottom = layers.bottom_amplification
        if layers.several_bottom and any(v is not None for v in bottom.values()):
            rows.append([cell.pattern, "bottom layers, summed", "", None, layers.runs, *[None] * 9,
                         bottom.get("read"), bottom.get("write"), "", "", layers.arc_hit_pct])
    return rows


def layer_export_table(run: Run) -> Tabular | None:
    """`show --format csv`'s layer rows, after the cells: plain numbers, the units in the headers; None
    where no cell has layer activity."""
    rows = [[value if decimals is None else plain.number(value, decimals)
             for value, (_, decimals) in zip(row, EXPORT_COLUMNS)] for row in layer_export_rows(run)]
    if not rows:
        return None
    return Tabular(headers=[header for header, _ in EXPORT_COLUMNS], rows=rows, title="Layers during each cell",
                   right_aligned=frozenset(i for i, (_, decimals) in enumerate(EXPORT_COLUMNS) if decimals is not None))


def _label(layer: LayerActivity) -> str:
    """`loop3 (loop)`, indented by its depth in the stack: the tree's shape in the rows."""
    kind = "" if layer.kind == "device" else f" ({layer.kind})"
    return f"{'  ' * layer.depth}{layer.device}{kind}"


VDEV_NOTE = ("a pool's rows are arranged as zpool iostat -v prints them (the pool, its vdevs by class, their "
             "leaves; no await or util): a leaf's figures are its block device's (as /proc/diskstats counted "
             "them, at the layers' instants), a vdev's figures are its leaves' summed (a mirror's both legs'), "
             "the pool's every vdev's but the cache's")
ZPOOL_NOTE = ("the rows of a pool with a leaf that is no block device (a file vdev) are zpool iostat's reports: its "
              "rates over intervals timed by when their lines arrived (off where the machine delayed them), size = "
              "bytes per operation before the disk's queue merged them")


def _vdev_rows(vdevs: Sequence[VdevActivity], direction: str) -> list[list[str]]:
    """A pool's rows as `zpool iostat -v` prints them: the pool, its normal vdevs, then a header row per
    other class (special, logs, cache, ...) over its vdevs, each leaf under its vdev; indented by depth."""
    rows: list[list[str]] = []
    shown: set[tuple[str, str]] = set()
    for vdev in vdevs:
        heading = vdev.vdev_class if vdev.vdev_class not in (None, "normal") else None
        if heading is not None and vdev.level == 1 and (vdev.pool, heading) not in shown:
            shown.add((vdev.pool, heading))
            rows.append(["", f"{'  ' * (vdev.depth - 1)}{heading}", "", "", "", "", "", ""])
        label = f"{vdev.name} (pool, zpool iostat)" if vdev.level == 0 else (
            f"{vdev.name} ({vdev.kind})" if vdev.kind not in ("leaf", "vdev", "disk") else vdev.name)
        rows.append(["", f"{'  ' * vdev.depth}{label}", format_iops(vdev.iops), format_mb_per_s(vdev.mb_per_s * 1e6),
                     format_bytes(vdev.avg_request_bytes) if vdev.avg_request_bytes is not None else "-", "-", "-",
                     _times(vdev.amplification.get(direction))])
    return rows


def _times(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def _cell_notes(cell: Cell, layers: CellLayers) -> list[str]:
    """The busiest layer (where the saturated layers' time is spent) and the ARC's hit ratio of one cell, where
    there are."""
    notes = []
    if layers.busiest:
        notes.append(f"{cell.pattern}: busiest layer {layers.busiest} ({layers.busiest_reason})")
    if layers.arc_hit_pct is not None:
        notes.append(f"{cell.pattern}: ARC hit ratio {layers.arc_hit_pct:.1f} %")
    return notes


COMPARE_HEADERS = ["Cell", "Layer", "run", "IOPS", "MB/s", "await", "util", "ampl."]


def comparison_layers_json(result: RunComparison) -> list[dict[str, Any]]:
    """`compare --json`'s `layers` (docs/json.md): per shared cell, each side's layers, null for a side that
    sampled no device in it."""
    places = places_of(result.base), places_of(result.other)
    return [{"pattern": row.pattern, "key": row.key, "a": cell_layers_json(row.base, places[0]),
             "b": cell_layers_json(row.other, places[1])} for row in result.rows]


def comparison_layer_table(result: RunComparison) -> Tabular | None:
    """`compare A B`'s "Layers during each cell, A and B": what every layer did in each cell both runs
    measured, B's row under A's for the same layer; None where neither run sampled a device.

    B's figures go under A's rather than beside them: five figures a side beside each other need about 105
    columns, while this is readable at 80."""
    a_name = result.base.label or result.base.id[:12]
    b_name = result.other.label or result.other.id[:12]
    return _sides_table(
        [("A", result.base, a_name), ("B", result.other, b_name)],
        [(row.pattern, row.base.result.direction, (row.base, row.other)) for row in result.rows],
        title="Layers during each cell, A and B", headers=COMPARE_HEADERS,
        first_note=f"A = {a_name}, B = {b_name}; each figure is what the layer did during the cell, summed over "
                   "the cell's runs: no interval and no test on them (they are not verdicts; the verdict is the "
                   "comparison's)")


LAYERS_HEADERS = ["Cell", "Device", "layer", "IOPS", "MB/s", "await", "util", "ampl."]


def layers_runs_table(runs: Sequence[Run], names: Sequence[str]) -> Tabular | None:
    """`layers RUN1 RUN2 ...`'s "Layers during each cell, every run": what every block device under each
    run's target did during each cell the runs measured, the runs' rows of one device together, the bottom
    layer's run first; None where no run sampled a device. The figures show where the bytes went (a VM's
    disk amplified by its host's mirror); the gaps above are the verdicts."""
    matched = _matched_cells(runs)
    return _sides_table(
        [(name, run, name) for name, run in zip(names, runs)],
        [(first.pattern, first.result.direction, cells) for first, cells in
         zip(map(_first_measured, matched), matched)],
        title="Layers during each cell, every run", headers=LAYERS_HEADERS,
        first_note="layer = the run's name in the layers table (bottom first); each figure is what the device did "
                   "during the cell, summed over the cell's runs: no interval and no test on them (the gaps above "
                   "are the verdicts)")


def layers_runs_json(runs: Sequence[Run], names: Sequence[str]) -> list[dict[str, Any]]:
    """`layers --json`'s `layer_activity` (docs/json.md): per cell any run measured, each run's layers, null
    for a run that sampled no device in it."""
    places = [places_of(run) for run in runs]
    return [{"pattern": _first_measured(cells).pattern,
             "runs": [{"name": name, "run_id": run.id,
                       "layers": cell_layers_json(c, where) if c is not None else None}
                      for name, run, c, where in zip(names, runs, cells, places)]}
            for cells in _matched_cells(runs)]


def _matched_cells(runs: Sequence[Run]) -> list[tuple[Cell | None, ...]]:
    """Each cell any run measured, in the order they first appear, with every run's cell of that key (None
    where a run lacks it): the cells `layer_gaps` lines up."""
    from stackbench.analysis.compare import match_key  # the key `compare` and `layer_gaps` match cells by

    by_run = [{match_key(c): c for c in run.cells} for run in runs]
    return [tuple(found.get(key) for found in by_run) for key in dict.fromkeys(k for found in by_run for k in found)]


def _first_measured(cells: Sequence[Cell | None]) -> Cell:
    """The first run's cell of a matched key that has one (every key has at least one: `_matched_cells`)."""
    return next(c for c in cells if c is not None)


def _sides_table(sides: Sequence[tuple[str, Run, str]],
                 matched: Sequence[tuple[str, str, Sequence[Cell | None]]], *, title: str, headers: list[str],
                 first_note: str) -> Tabular | None:
    """The rows of several runs' layers, per cell, one device's rows together: a row per side that sampled
    it, named by the side's tag (A, B, or the layer's name); None where no side sampled a device."""
    places = [places_of(run) for _, run, _ in sides]
    found = [(pattern, direction, [cell_layers(c, where) if c is not None else None for c, where in zip(cells, places)],
              cells) for pattern, direction, cells in matched]
    if all(layers is None for _, _, per_side, _ in found for layers in per_side):
        return None
    rows: list[list[str]] = []
    notes = [first_note,
             "MB/s = 10^6 bytes/s; await = time per completed I/O; util = share of the seconds with a request "
             "in flight; ampl. = the layer's bytes in the cell's direction / fio's"]
    anywhere = [any(per_side[i] is not None for _, _, per_side, _ in found) for i in range(len(sides))]
    for (tag, _, name), sampled in zip(sides, anywhere):
        if not sampled:
            notes.append(f"{tag} ({name}) recorded no layer activity in any cell (a run from before layer "
                         "telemetry, or an import)" if tag != name else
                         f"{tag} recorded no layer activity in any cell (a run from before layer telemetry, or an "
                         "import)")
    for pattern, direction, per_side, cells in found:
        if all(layers is None for layers in per_side):
            continue
        first = len(rows)
        present = [(tag, layers) for (tag, _, _), layers in zip(sides, per_side) if layers is not None]
        notes += [f"{pattern}: {tag} recorded no layer activity"  # a side without the cell says nothing of it
                  for (tag, _, _), layers, sampled, measured in zip(sides, per_side, anywhere, cells)
                  if layers is None and sampled and measured is not None]
        keys = list(dict.fromkeys((layer.depth, layer.device, layer.kind)
                                  for _, layers in present for layer in layers.layers))
        for key in keys:
            shown = False
            for tag, layers in present:
                layer = next((layer for layer in layers.layers if (layer.depth, layer.device, layer.kind) == key),
                             None)
                if layer is None:
                    continue
                rows.append(["", "" if shown else _label(layer), tag, format_iops(layer.iops),
                             format_mb_per_s(layer.mb_per_s * 1e6),
                             format_latency_ns(layer.await_ms * 1e6 if layer.await_ms is not None else None),
                             f"{layer.util_pct:.0f} %", _times(layer.amplification.get(direction))])
                shown = True
        for tag, layers in present:
            bottom = layers.bottom_amplification.get(direction)
            if layers.several_bottom and bottom is not None:
                rows.append(["", "bottom layers, summed", tag, "", "", "", "", _times(bottom)])
        rows[first][0] = pattern
    every = frozenset(range(len(headers)))
    return Tabular(headers=headers, rows=rows, title=title, notes=notes, right_aligned=every - {0, 1, 2},
                   no_wrap=every, tree=frozenset({1}))
