"""The numbers on a short log axis (style.set_log_ticks, shared by every chart with one): an axis spanning
less than a decade is numbered near both its ends, not only at its foot. Read from a drawn figure's own
tick labels, after a real render (the ticks are chosen at draw time from the axis's final range)."""

from __future__ import annotations

import math

import pytest

from report.charts.conftest import drawn, inside
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure


def _numbered(low: float, high: float) -> list[tuple[float, str]]:
    """(position, text) of the numbered ticks of a log y axis from `low` to `high`, as a chart draws it."""
    with style.styled():
        drawing, [ax] = style.new_drawing(4.0, 1)
        ax.set_yscale("log")
        ax.set_ylim(low, high)
        ax.bar([0, 1], [low * 1.1, high * 0.95], bottom=low)
        style.set_log_ticks(ax, "y")
    ax = drawn(Figure(kind="test", title="short log axis", alt="", drawing=drawing)).axes[0]
    limits = ax.get_ylim()
    return [(t.get_position()[1], t.get_text()) for t in ax.get_yticklabels()
            if t.get_text() and inside(t.get_position()[1], limits)]


@pytest.mark.parametrize("low, high", [(400, 1900), (4000, 19000), (0.4, 1.9), (150, 1400), (3000, 6000),
                                       (3100, 3900), (1300, 9000)])
def test_an_axis_within_a_decade_is_numbered_near_both_ends(low: float, high: float) -> None:
    """400 to 1,900 was numbered 400, 500, ..., 900, 1,000 (every digit): the top 40 % of the axis, where the
    tallest bars end, had no number. Each end must now lie within a third of the axis of a number."""
    numbered = _numbered(low, high)
    span = math.log10(high / low)
    positions = [position for position, _ in numbered]
    assert len(numbered) >= 3, numbered
    assert math.log10(high / max(positions)) <= span / 3, numbered
    assert math.log10(min(positions) / low) <= span / 3, numbered
    assert all(text == style.plain_number(position) for position, text in numbered)  # plain numbers, as before


def test_the_ticks_chosen_stay_round_numbers() -> None:
    """The cases of the docstring: whole digits where they number both ends, round even steps where not."""
    assert style.readable_log_ticks(3000, 6000) == [3000, 4000, 5000, 6000]
    assert style.readable_log_ticks(100, 10_000) == [100, 1000, 10_000]
    assert style.readable_log_ticks(400, 1900) == [500, 1000, 1500]


@pytest.mark.parametrize("which, size_in", [("x", 6.0), ("y", 1.5)])
def test_the_numbers_of_a_crowded_decade_do_not_touch(which: str, size_in: float) -> None:
    """20,000 to 92,000 on the stack chart's 6 in wide axis: every digit is a tick, and 70,000, 80,000 and
    90,000 ran into each other. Measured on the drawn labels: none overlaps the next, and the top one stays."""
    with style.styled():
        drawing, _ = style.new_drawing(4.0, 0, layout=None)
        width, height = (size_in, 1.0) if which == "x" else (1.0, size_in)
        ax = drawing.add_axes((1 / 10, 0.5 / 4, width / 10, height / 4))
        getattr(ax, f"set_{which}scale")("log")
        getattr(ax, f"set_{which}lim")(20_000, 92_000)
        style.set_log_ticks(ax, which)
    ax = drawn(Figure(kind="test", title="crowded", alt="", drawing=drawing)).axes[0]
    renderer = drawing.canvas.get_renderer()
    labels = [t for t in getattr(ax, f"get_{which}ticklabels")() if t.get_text()
              and inside(t.get_position()[0 if which == "x" else 1], (20_000, 92_000))]
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert len(boxes) >= 3 and labels[-1].get_text() == "90,000", [t.get_text() for t in labels]
    assert not [(a, b) for a, b in zip(labels, labels[1:]) if a.get_window_extent(renderer).overlaps(
        b.get_window_extent(renderer))], [t.get_text() for t in labels]
