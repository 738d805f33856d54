"""The report's charts kept on disk (report/charts/stored.py) as the commands use them: `report` reads them
from the chart directory, `run` and `import` draw a new run's there once it is stored (docs/report.md,
"Charts kept"). Neither ever fails on them: a chart directory that cannot be used, or a chart that cannot
be drawn or written, is one warning line, and the report draws as it would without.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from stackbench.cli.app import warn

# Drawing a run's report charts costs about 2-3 s of CPU, whatever the run's size (matplotlib's import and four
# figures). After a minute of measuring that is a few percent of the command, and the report it speeds up is a
# big run's (2.2 s for 48 cells); after a short run it would double the command, and a small run's report is
# quick to draw then. So `run` and `ab` draw ahead on their own only past this; --charts/--no-charts decide.
AHEAD_AFTER_S = 60.0

if TYPE_CHECKING:
    from stackbench.report.charts.files import ChartFiles
    from stackbench.store.repository import Store


def report_chart_files() -> "ChartFiles | None":
    """The chart directory ($XDG_CACHE_HOME/stackbench/charts), or None with a warning when it cannot be
    used (it cannot be made, or another user can write it: its charts would go into reports unchecked)."""
    from stackbench.base.errors import StackbenchError
    from stackbench.report.charts.files import ChartFiles, default_directory

    try:
        return ChartFiles(default_directory())
    except StackbenchError as error:
        warn(f"{error.what}; charts are drawn, not kept ({error.fix})")
        return None


def charts_ahead(asked: bool | None, measured_s: float) -> bool:
    """Whether a command draws its runs' report charts once they are stored: as --charts/--no-charts say,
    else only after measuring for AHEAD_AFTER_S or more (an import measures nothing: 0 s)."""
    return asked if asked is not None else measured_s >= AHEAD_AFTER_S


def draw_report_charts(store: "Store", run_ids: Sequence[str]) -> None:
    """Draw stored runs' report charts into the chart directory, so that their first report reads them. The
    runs are stored already: whatever goes wrong here costs a warning, never a run."""
    from stackbench.cli.progress import spinner
    from stackbench.load.report_contents import store_report_charts

    charts = report_chart_files()
    if charts is None:
        return
    try:
        with spinner("drawing charts for the report"):
            for run_id in run_ids:
                store_report_charts(store, run_id, charts)
    except Exception as error:  # noqa: BLE001 - a chart that cannot be drawn must not fail a stored run
        warn(f"the charts of the report were not drawn ahead ({type(error).__name__}: {error}); "
             "`stackbench report` draws them")


__all__ = ["AHEAD_AFTER_S", "charts_ahead", "draw_report_charts", "report_chart_files"]
