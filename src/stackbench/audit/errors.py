"""The one error facts parsers raise: which file, which line, what was expected."""

from __future__ import annotations


class FactsFormatError(ValueError):
    """A saved fact file whose format this version of stackbench does not recognise.

    The loader records it and treats that fact as unknown: one odd file (a newer zpool, a cut capture) must
    not hide what the other files show, and must never be read half-way as if it were complete.
    """

    def __init__(self, file: str, line: int | None, message: str) -> None:
        self.file, self.line, self.message = file, line, message
        where = f"{file} line {line}" if line else file
        super().__init__(f"{where}: {message}")
