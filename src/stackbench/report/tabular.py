"""The one table model every output format renders: headers, rows of text, a title and notes.

Commands build a `Tabular` from what analysis returned; the formats in `report/` turn it into text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence


@dataclass(frozen=True)
class Tabular:
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]
    title: str | None = None
    notes: Sequence[str] = field(default_factory=tuple)
    right_aligned: frozenset[int] = frozenset()
    styles: dict[int, str] = field(default_factory=dict)  # row index -> Rich style
