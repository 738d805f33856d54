"""A drawn chart, ready to be written as SVG or PNG, and nothing else.

The seam between the charts (report/charts/*, which draw) and the documents and commands that place them
(`stackbench chart`, the HTML/Markdown/XLSX reports): a document never draws, a chart never decides where
it goes. Rendering is deterministic (no date, a fixed SVG id salt) so that the same runs give the same
bytes, which keeps reports diffable and snapshot tests honest. SVG text stays text (fonttype none):
searchable, selectable, smaller, and checkable by tests without pixels.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from stackbench.report.charts.style import WIDTH_PX

if TYPE_CHECKING:
    from matplotlib.figure import Figure as Drawing

ImageFormat = Literal["svg", "png"]
IMAGE_FORMATS: tuple[ImageFormat, ...] = ("svg", "png")
# Raise it with any change to what a chart draws or how: the server keeps drawn charts on disk under keys
# that carry it (report/charts/files.py), and an entry drawn by another version is never served.
RENDERER_VERSION = 4  # 2: a run with layer activity has the stack chart too; 3: the layout found once, at the
# PNG's resolution (the stack chart's fixed), and log axes numbered near both ends, no number touching another;
# 4: the laid-out axes on a grid (the same chart, the same bytes, whatever was drawn before it)


@dataclass(frozen=True)
class Figure:
    kind: str  # the chart kind, as `stackbench chart --kind` names it
    title: str
    alt: str  # one sentence saying what the chart shows, for HTML alt text and Markdown
    drawing: "Drawing"

    def render(self, fmt: ImageFormat) -> bytes:
        """The chart as SVG text (UTF-8, no external reference of any kind) or as a PNG WIDTH_PX wide."""
        import matplotlib

        from stackbench.report.charts.style import styled

        buffer = io.BytesIO()
        _shown_text(self.drawing)
        # Under the charts' style: tick labels are made at draw time and must get its sizes and plain text.
        with styled():
            _lay_out_once(self.drawing)
            if fmt == "svg":
                with matplotlib.rc_context({"svg.hashsalt": "stackbench", "svg.fonttype": "none"}):
                    self.drawing.savefig(buffer, format="svg", metadata={"Date": None})
            elif fmt == "png":
                width_in = self.drawing.get_figwidth()
                self.drawing.savefig(buffer, format="png", dpi=WIDTH_PX / width_in, metadata={"Software": None})
            else:
                raise ValueError(f"unknown image format {fmt!r}")
        return buffer.getvalue()


def _lay_out_once(drawing: "Drawing") -> None:
    """Place the axes (constrained layout: nothing overlaps) once, on the first render, and keep them: the
    other format costs no second layout, and a figure renders to the same bytes every time. Done here rather
    than left to savefig, which, while a figure has a layout engine (even the placeholder that
    `set_layout_engine("none")` leaves), draws the whole figure once more, unseen, before drawing it (the
    stack chart of a 48-cell run as SVG and PNG: 0.90 s of CPU before, 0.74 s after, on a loaded machine)."""
    engine = drawing.get_layout_engine()
    if engine is None:
        return
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    if not isinstance(engine, PlaceHolderLayoutEngine):
        engine.execute(drawing)
        _snap_axes(drawing)
    drawing.set_layout_engine(None)  # no engine at all (style.RC turns the rc's automatic layouts off)


LAYOUT_GRID = 2.0**-16  # of the figure's width and height: 0.012 px of the 800 px PNG


def _snap_axes(drawing: "Drawing") -> None:
    """Put every axes the constrained layout placed on a grid of LAYOUT_GRID, so that the drawing is a
    function of the chart alone. The layout's solver (kiwisolver) orders each constraint's terms by the
    memory addresses of its variables, so the same margins solve to positions that differ in their last bits
    from one draw to the next in one process (1 draw in 60 of the special chart); the SVG names each clip
    path by a hash of its rectangle at full precision, and two drawings of one chart differed in those names
    (`chart SCAN -k special` and `smallblocks --chart` in CI). Snapped, a position differs only if the
    solver's rounding straddles a grid line: about 1e-11 per number."""
    from matplotlib.transforms import Bbox

    for ax in drawing.axes:
        x0, y0, x1, y1 = (round(v / LAYOUT_GRID) * LAYOUT_GRID for v in ax.get_position(original=True).extents)
        ax._set_position(Bbox([[x0, y0], [x1, y1]]))  # as the layout sets it: both positions, twins too
        # (the original one: a fixed aspect makes the drawn one from it)


def _shown_text(drawing: "Drawing") -> None:
    """Every text of the chart with its control and invisible format characters escaped (usertext.shown:
    a label's U+202E would reverse a legend or a title): the texts drawn now, and, through each axis'
    formatter, the tick labels made at draw time (a categorical axis shows its data's strings, run labels
    among them). Done on every render; escaping escaped text changes nothing."""
    from matplotlib.text import Text
    from matplotlib.ticker import Formatter

    from stackbench.base.usertext import shown

    class Shown(Formatter):
        escapes_user_text = True

        def __init__(self, inner: Formatter) -> None:
            self.inner = inner

        def __call__(self, x: float, pos: int | None = None) -> str:
            return shown(self.inner(x, pos), keep="\n")

        def set_axis(self, axis: object) -> None:
            self.inner.set_axis(axis)

        def set_locs(self, locs: object) -> None:
            self.inner.set_locs(locs)

        def get_offset(self) -> str:
            return self.inner.get_offset()

    for text in drawing.findobj(Text):
        value = text.get_text()
        if not value.isprintable():
            text.set_text(shown(value, keep="\n"))
    for ax in drawing.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not getattr(axis.get_major_formatter(), "escapes_user_text", False):
                axis.set_major_formatter(Shown(axis.get_major_formatter()))
