"""Where a real browser draws the names of a layer table's tree column: a nested layer's name must start
to the right of the layer it sits on, as the text table indents it. HTML collapses leading spaces unless
the cell keeps them (report/tabular.py `tree`), which drew every layer at the root."""

from __future__ import annotations

from typing import Any

CHROMIUM = "/usr/bin/chromium"

# For each body row: the tree cell's text and how far right of the cell's left edge the browser drew its first
# visible character (a Range over that one character), in CSS pixels; rows whose tree cell is empty are left out.
OFFSETS = """table => [...table.tBodies[0].rows].map(row => {
  const cell = row.cells[1], node = cell.firstChild;
  if (!node || !node.textContent.trim()) return null;
  const first = node.textContent.search(/\\S/), range = document.createRange();
  range.setStart(node, first); range.setEnd(node, first + 1);
  return [node.textContent, range.getBoundingClientRect().left - cell.getBoundingClientRect().left];
}).filter(Boolean)"""


def tree_offsets(table: Any) -> list[tuple[str, float]]:
    """The (text, offset) of every named row of `table`, a Playwright locator of a layer table."""
    return [(text, offset) for text, offset in table.evaluate(OFFSETS)]


def assert_depth_drawn(offsets: list[tuple[str, float]]) -> None:
    """Each depth (two leading spaces a level, as report/layer_table.py writes it) drawn further right than
    the one above it, by at least a few pixels, and every name of one depth at the same place."""
    by_depth: dict[int, set[float]] = {}
    for text, offset in offsets:
        by_depth.setdefault((len(text) - len(text.lstrip(" "))) // 2, set()).add(round(offset, 1))
    assert len(by_depth) >= 2, f"no nested layer in the table: {offsets}"
    assert all(len(places) == 1 for places in by_depth.values()), offsets
    lefts = [by_depth[depth].pop() for depth in sorted(by_depth)]
    assert all(deeper - above >= 4 for above, deeper in zip(lefts, lefts[1:])), offsets
