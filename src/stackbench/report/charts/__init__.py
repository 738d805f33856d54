"""Charts drawn with matplotlib from stored runs (issue 13). Imported only by the commands that draw, so
that matplotlib never slows the start of the others.

The functions here are what documents (`stackbench report`) and the server call; each returns
`Figure`s (figure.py) and imports its chart module, and with it matplotlib, only when called. `stackbench
chart` draws the kinds of `kinds.py`, each a record whose module's `draw` makes its one figure. Data that is
not in a `Run` (json+ latency buckets, which live in the store's fio_outputs) is passed in by the caller:
report/ never reads the store.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from stackbench.report.charts.figure import IMAGE_FORMATS, Figure
from stackbench.report.charts.kinds import representative_cell

if TYPE_CHECKING:
    from stackbench.analysis.compare import RunComparison
    from stackbench.analysis.layers import LayerGaps
    from stackbench.model.results import Cell, Run

def run_figures(run: "Run", *, bins: Mapping[str, Counter[int]] | None = None, metric: str = "iops",
                cell: "Cell | None" = None) -> list[Figure]:
    """The charts of one run: matrix bars, latency percentiles (when the cells have them), and for one cell
    (`cell`, default `representative_cell`) its per-second timeline (when it has samples) and its latency
    histogram (when `bins`, json+ clat buckets keyed by cell id, hold it), its layers per cell (when its cells
    recorded what the layers under the target did, stack.py); for a fleet run, its hosts side by
    side with the total (hosts.py)."""
    from stackbench.model.results import is_fleet
    from stackbench.report.charts.histogram import histogram_figure
    from stackbench.report.charts.matrix import matrix_figure
    from stackbench.report.charts.percentiles import percentiles_figure
    from stackbench.report.charts.timeline import timeline_figure

    figures = [matrix_figure(run, metric)]
    if any(c.result.clat is not None and c.result.clat.p50_ns is not None for c in run.cells):
        figures.append(percentiles_figure(run))
    chosen = cell or representative_cell(run)
    if chosen is not None and chosen.samples:
        figures.append(timeline_figure(run, chosen, metric))
    if chosen is not None and bins and sum((bins.get(chosen.id) or Counter()).values()):
        figures.append(histogram_figure(run, chosen, bins[chosen.id]))
    figures += stack_figures(run, metric)
    if is_fleet(run):
        figures += hosts_figures(run, metric)
    return figures


def hosts_figures(run: "Run", metric: str = "iops") -> list[Figure]:
    """A fleet run's hosts per cell with the total and the slowest host named; StackbenchError for a run of
    one machine."""
    from stackbench.report.charts.hosts import hosts_figure

    return [hosts_figure(run, metric)]


def stack_figures(run: "Run", metric: str = "iops") -> list[Figure]:
    """What every layer under the run's target did per cell; none for a run whose cells recorded no layer
    activity (measured before layer telemetry, or imported), which has no such chart rather than an error."""
    from stackbench.report.charts.stack import layered_cells, stack_figure

    return [stack_figure(run, metric)] if layered_cells(run) else []


def compare_figures(comparison: "RunComparison") -> list[Figure]:
    from stackbench.report.charts.compare import compare_figure

    return [compare_figure(comparison)]


def layers_figures(gaps: "LayerGaps", runs: Sequence["Run"] = ()) -> list[Figure]:
    """`runs`: the runs behind the layers, bottom first, for the footer's fio versions and labels."""
    from stackbench.report.charts.layers import layers_figure

    return [layers_figure(gaps, tuple(runs))]


def synclat_figures(runs: Sequence["Run"]) -> list[Figure]:
    from stackbench.report.charts.synclat import synclat_figure

    return [synclat_figure(runs)]


def scan_figures(histogram: Any, recommendation: Any, *, source: str = "") -> list[Figure]:
    """`histogram` is a scan.histogram.SizeHistogram, `recommendation` a scan.special_vdev.Recommendation,
    `source` what was scanned (for the footer)."""
    from stackbench.report.charts.special import special_figure

    return [special_figure(histogram, recommendation, source=source)]


def cache_figures(run: "Run", cell: "Cell") -> list[Figure]:
    from stackbench.report.charts.cache import cache_figure

    return [cache_figure(run, cell)]


def custom_figures(runs: Sequence["Run"], *, x: str, y: str, series: str | None = None,
                   where: Sequence[str] = ()) -> list[Figure]:
    from stackbench.report.charts.custom import custom_figure

    return [custom_figure(runs, x=x, y=y, series=series, where=where)]


__all__ = [
    "IMAGE_FORMATS", "Figure", "cache_figures", "compare_figures", "custom_figures", "hosts_figures",
    "layers_figures",
    "representative_cell", "run_figures", "scan_figures", "stack_figures", "synclat_figures",
]
