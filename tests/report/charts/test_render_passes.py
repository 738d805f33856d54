"""What rendering a chart costs in draws (report/charts/figure.py): the layout is found once, and each
format draws the figure once. savefig drew a figure twice while it had a layout engine (once unseen, to lay
it out), the placeholder engine left after the first render included, so a 48-cell run's report paid its
charts' drawing twice (issue 13's 3 s target missed with the stack chart's 8 panels). And the stack chart,
which places its panels itself, keeps every text inside the PNG it draws."""

from __future__ import annotations

import pytest

from analysis_layers import mirror_run
from report.charts.conftest import drawn
from stackbench.report.charts import run_figures
from stackbench.report.charts.stack import stack_figure


@pytest.mark.parametrize("kind", ["matrix", "percentiles", "stack"])
def test_each_render_draws_the_figure_once(kind: str) -> None:
    [figure] = [f for f in run_figures(mirror_run()) if f.kind == kind]
    draws: list[str] = []
    figure.drawing.canvas.mpl_connect("draw_event", lambda _event: draws.append(fmt))
    for fmt in ("svg", "png", "svg"):
        figure.render(fmt)
    assert draws == ["svg", "png", "svg"]


def test_the_stack_chart_keeps_its_texts_inside_the_png() -> None:
    """Names on the left, figures on the right (the busiest's in bold), wrapped titles above: measured as
    the PNG draws them, rendered after the SVG as `chart` and the reports do (the layout, found on the
    first render, once measured text at the SVG's 72 dpi: the PNG's hinted text is wider, and its right
    column was cut)."""
    from matplotlib.text import Text

    figure = stack_figure(mirror_run())
    figure.render("svg")
    drawing = drawn(figure)
    renderer = drawing.canvas.get_renderer()
    edge = drawing.bbox
    texts = [t for t in drawing.findobj(Text) if t.get_visible() and t.get_text().strip()]
    boxes = {t.get_text(): t.get_window_extent(renderer) for t in texts}
    assert any("BUSIEST" in text for text in boxes)  # the longest figures, in bold
    outside = [text for text, box in boxes.items() if box.x0 < edge.x0 or box.x1 > edge.x1 or box.y0 < edge.y0
               or box.y1 > edge.y1]
    assert not outside, outside
