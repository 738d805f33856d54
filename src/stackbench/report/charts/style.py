"""The one look of every chart: colours, markers, hatches, sizes, the footer, and user text kept as text.

- Colours are Okabe and Ito's palette ("Color Universal Design", 2008), which stays distinguishable under
  the common colour-vision deficiencies; series also differ by marker (lines) or hatch (bars), so colour is
  never the only cue, and a chart printed in grey still reads.
- Sizes are chosen for an 800 px wide PNG (WIDTH_PX): a 10 in wide drawing at 80 dpi, with 11-13 pt
  text, gives text about 12-14 px high.
- Every chart carries a footer with the fio version(s) and the runs it shows (label and short id), so a
  screenshot posted on a forum still says what it is.
- User text (labels, patterns, paths) is data: mathtext is off (`text.parse_math`), so a label with `$`
  signs is printed as it is, never interpreted.
- Artists that tests count get a `gid` (SVG `id`) from `gid()`, unique within one chart.
"""

from __future__ import annotations

import math
from collections import Counter
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from stackbench.base.units import format_size

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as Drawing

    from stackbench.model.results import Run

# Okabe-Ito, in the order series take them; black is kept for reference lines.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")
LINESTYLES = ("-", "--", "-.", ":")
GREY = "#999999"
SHADE = "#DDDDDD"
# Verdict colours (compare): blue = better, vermillion = worse, grey = same / no evidence; each verdict also
# has its own marker, so the verdict reads without colour.
VERDICT_STYLE = {
    "keep": ("#0072B2", "^"),
    "revert": ("#D55E00", "v"),
    "same": ("#009E73", "o"),
    "no evidence": (GREY, "s"),
}

WIDTH_IN = 10.0
WIDTH_PX = 800  # every chart is drawn to be legible at this width (issue 13): its PNG's width
RC: dict[str, Any] = {
    "font.size": 11,
    "axes.titlesize": 13,
    "axes.labelsize": 12,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "legend.fontsize": 10,
    "figure.titlesize": 14,
    "axes.grid": True,
    "grid.color": "#E5E5E5",
    "grid.linewidth": 0.8,
    "axes.axisbelow": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "text.parse_math": False,  # labels are data: `$x$` stays `$x$`
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "figure.autolayout": False,  # each drawing's layout is its own (constrained), found once (figure.py)
    "figure.constrained_layout.use": False,
}


@contextmanager
def styled() -> Iterator[None]:
    """Draw (and render) under the charts' style."""
    import matplotlib

    with matplotlib.rc_context(RC):
        yield


def new_drawing(
    height_in: float, panels: int = 1, *, sharey: bool = False, columns: int | None = None,
    layout: str | None = "constrained",
) -> tuple["Drawing", list["Axes"]]:
    """A fresh matplotlib Figure (object API, Agg canvas, no pyplot state) with `panels` axes in a grid;
    `layout` None for a chart that places its axes itself."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as Drawing

    # At the PNG's resolution: a layout measures text as the PNG draws it, hinted, its widest.
    drawing = Drawing(figsize=(WIDTH_IN, height_in), layout=layout, dpi=WIDTH_PX / WIDTH_IN)
    FigureCanvasAgg(drawing)
    if panels == 0:
        return drawing, []
    cols = columns or min(panels, 2)
    rows = math.ceil(panels / cols)
    axes = drawing.subplots(rows, cols, squeeze=False, sharey=sharey)
    flat = [ax for row in axes for ax in row]
    for extra in flat[panels:]:
        extra.set_visible(False)
    return drawing, flat[:panels]


def run_name(run: "Run") -> str:
    """How a chart names a run: its label and short id, or the short id alone."""
    return f"{run.label} ({run.id[:8]})" if run.label else run.id[:12]


def fio_versions(runs: Iterable["Run"]) -> list[str]:
    versions = [str((run.facts or {}).get("fio_version") or "") for run in runs]
    return [v for v in dict.fromkeys(versions) if v]


def footer(drawing: "Drawing", runs: Sequence["Run"] = (), *, extra: str = "") -> None:
    """The footer every chart carries: fio version(s) and the runs shown (or what else the data is)."""
    parts = []
    versions = fio_versions(runs)
    if runs:
        parts.append(", ".join(versions) if versions else "fio version unknown")
        names = [run_name(run) for run in runs]
        parts.append(("run " if len(names) == 1 else "runs ") + ", ".join(names))
    if extra:
        parts.append(extra)
    parts.append("stackbench")
    drawing.text(0.005, 0.003, " · ".join(parts), fontsize=9, color="#555555", ha="left", va="bottom",
                 gid="footer", wrap=True)
    engine = drawing.get_layout_engine()
    if engine is not None:  # a chart placing its axes itself leaves the footer its room
        engine.set(h_pad=0.04, rect=(0, 0.035, 1, 0.965))


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def marker(index: int) -> str:
    return MARKERS[index % len(MARKERS)]


def hatch(index: int) -> str:
    return HATCHES[index % len(HATCHES)]


def linestyle(index: int) -> str:
    return LINESTYLES[index % len(LINESTYLES)]


class Gids:
    """Unique SVG ids for the artists tests count: `series-0`, `series-1`, ... per prefix."""

    def __init__(self) -> None:
        self._used: Counter[str] = Counter()

    def __call__(self, prefix: str) -> str:
        number = self._used[prefix]
        self._used[prefix] += 1
        return f"{prefix}-{number}"


def size_label(nbytes: int) -> str:
    """Block and write sizes as fio users write them: 4K, 64K, 1M, 512B."""
    return format_size(int(nbytes))


def log_axis_note(axis_label: str) -> str:
    return f"{axis_label}, log scale"


def set_log_ticks(ax: "Axes", which: str = "y", *, fewest: int = 3) -> None:
    """Plain numbers (1, 10, 100, 1,000) on a log axis instead of 10^n, so the values read directly, and
    always several of them: the ticks are chosen when the chart is drawn, from the axis's final range
    (`readable_log_ticks`), so an axis within one decade (3,000 to 6,000 IOPS) is numbered too. `fewest`
    is how many ticks a coarser step must give to be chosen over a finer one. On the drawn axis, a number
    that would touch the one before it is left out (`apart`)."""
    from matplotlib.ticker import FuncFormatter, Locator, NullFormatter

    class ReadableLogLocator(Locator):
        def __call__(self) -> list[float]:
            low, high = self.axis.get_view_interval()  # type: ignore[union-attr]
            box = ax.get_window_extent()
            length_pt = (box.width if which == "x" else box.height) * 72 / ax.figure.dpi
            return apart(self.tick_values(low, high), low, high, length_pt, which)

        def tick_values(self, vmin: float, vmax: float) -> list[float]:
            return readable_log_ticks(vmin, vmax, fewest=fewest)

    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_locator(ReadableLogLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: plain_number(v)))
    axis.set_minor_formatter(NullFormatter())


LABEL_EM = 0.62  # a tick label's width per character, in its font size (DejaVu Sans digits: 0.64)
LABEL_GAP_PT = 6.0


def apart(ticks: Sequence[float], low: float, high: float, length_pt: float, which: str) -> list[float]:
    """The ticks of a log axis `length_pt` long whose numbers do not touch the one kept before them (every
    digit at the top of a decade is crowded: 70,000 80,000 90,000 ran into each other on a 6 in axis), the
    top one always kept, in place of the one before it where both do not fit."""
    import matplotlib
    from matplotlib.font_manager import FontProperties

    if len(ticks) < 3 or low <= 0 or high <= low:
        return list(ticks)
    size = FontProperties(size=matplotlib.rcParams[f"{which}tick.labelsize"]).get_size_in_points()

    def at(tick: float) -> float:
        return math.log(tick / low) / math.log(high / low) * length_pt

    def room(tick: float) -> float:  # along the axis: a number's width on x, its height on y
        return len(plain_number(tick)) * LABEL_EM * size if which == "x" else 1.2 * size

    def fits(first: float, second: float) -> bool:
        return at(second) - at(first) >= (room(first) + room(second)) / 2 + LABEL_GAP_PT

    kept = [ticks[0]]
    for tick in ticks[1:-1]:
        if fits(kept[-1], tick):
            kept.append(tick)
    while len(kept) > 1 and not fits(kept[-1], ticks[-1]):
        kept.pop()
    return kept + [ticks[-1]] if fits(kept[-1], ticks[-1]) else kept


def nice_below(value: float) -> float:
    """The largest 1, 2 or 5 times a power of ten at or below `value`: a round foot for bars on a log axis,
    which have no zero to stand on."""
    exponent = math.floor(math.log10(value))
    for step in (5.0, 2.0, 1.0):
        if step * 10.0**exponent <= value:
            return step * 10.0**exponent
    return 10.0**exponent


LOG_TICK_STEPS = ((1.0,), (1.0, 2.0, 5.0), tuple(float(m) for m in range(1, 10)))
LABELLED_END = 1 / 3  # no more than this share of a log axis (in decades) unnumbered at either end


def readable_log_ticks(low: float, high: float, *, fewest: int = 3, most: int = 10) -> list[float]:
    """Tick positions for a log axis from `low` to `high`: powers of ten when they give `fewest` ticks or
    more (every second or third one past `most`), else 1-2-5 of each decade, else every digit (3,000,
    4,000, 5,000), else, for a range inside one digit step (3,100 to 3,900), evenly spaced round numbers.
    Each choice must also label both ends' neighbourhood (`LABELLED_END`): every digit of 400 to 1,900
    stops at 1,000, which left the top 40 % of the axis without a number, so that axis gets 500, 1,000,
    1,500 instead."""
    from matplotlib.ticker import MaxNLocator

    low, high = sorted((low, high))
    if not (math.isfinite(low) and math.isfinite(high)) or high <= 0:
        return []
    low = low if low > 0 else high / 1000
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    enough: list[float] = []  # the first choice with enough ticks, should no choice label both ends
    for steps in LOG_TICK_STEPS:
        ticks = [m * 10.0**e for e in range(first, last + 1) for m in steps if low <= m * 10.0**e <= high * (1 + 1e-9)]
        if len(ticks) >= fewest:
            ticks = ticks[::math.ceil(len(ticks) / most)]  # only powers of ten over many decades are thinned
            if _ends_labelled(ticks, low, high):
                return ticks
            enough = enough or ticks
    even = [float(t) for t in MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(low, high) if low <= t <= high]
    return even if not enough or (len(even) >= 2 and _ends_labelled(even, low, high)) else enough


def _ends_labelled(ticks: Sequence[float], low: float, high: float) -> bool:
    """Whether a tick lies near each end of the axis: within `LABELLED_END` of its length, in decades."""
    span = math.log10(high / low)
    if span <= 0 or not ticks:
        return span <= 0
    return max(math.log10(ticks[0] / low), math.log10(high / ticks[-1])) <= LABELLED_END * span * (1 + 1e-9)


def plain_number(value: float) -> str:
    """1234.5 -> `1,234`, 0.5 -> `0.5`, 0.01 -> `0.01`: tick labels without scientific notation."""
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:,.3g}"
    return f"{value:.3g}"


def thousands(ax: "Axes", which: str = "y") -> None:
    """Linear-axis tick labels with thousands separators (12,000 rather than 1.2e4)."""
    from matplotlib.ticker import FuncFormatter

    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: plain_number(v)))


def legend_below(ax: "Axes", ncol: int | None = None, **kwargs: Any) -> None:
    """A legend under the axes, so it never covers data."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=ncol or min(len(labels), 4),
              frameon=False, **kwargs)


def bars(ax: "Axes", *args: Any, gid: str, **kwargs: Any) -> Any:
    """`ax.bar` whose bars carry SVG ids: the first exactly `gid` (so a test counts one id per series), the
    others `gid.1`, `gid.2`, ... (ids stay unique in an HTML page that inlines the SVG)."""
    container = ax.bar(*args, **kwargs)
    for index, patch in enumerate(container.patches):
        patch.set_gid(gid if index == 0 else f"{gid}.{index}")
    return container
