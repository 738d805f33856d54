"""Warnings as a closed set of codes, as hyperfine keeps them: data only, at the bottom of the import flow.

A warning tells the user that a number should not be trusted as it stands and what to do about it. Its
text is for people and gets reworded; its code is for scripts and does not change. A script that looks
for a substring of the text breaks silently the day the sentence is improved (synclat's own filter did),
so every warning the program stores or prints carries one `WarningCode`, scripts and the program filter
on the code, and the codes are listed with their meaning and fix in docs/json.md (a test keeps that list
equal to the enum). A new warning is a new member here and a row there; a `Warning` with a code outside
the set cannot be made.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class WarningCode(enum.StrEnum):
    """Every warning stackbench emits; the value is the name, as JSON and the store spell it."""

    PAGE_CACHE = "PAGE_CACHE"  # read tests on a file smaller than 2x RAM measure caches
    TMPFS_TARGET = "TMPFS_TARGET"  # the target is tmpfs: every result measures RAM
    DIRECT_IO_UNAVAILABLE = "DIRECT_IO_UNAVAILABLE"  # O_DIRECT asked for where possible, not honoured here
    TOO_FEW_RUNS = "TOO_FEW_RUNS"  # one fio run: no interval, no verdict
    FEW_RUNS_LOW_POWER = "FEW_RUNS_LOW_POWER"  # fewer than 3 runs on a side of a comparison
    CI_ABOVE_TARGET = "CI_ABOVE_TARGET"  # adaptive measurement stopped before its interval target
    HIGH_SPREAD = "HIGH_SPREAD"  # separate runs differ a lot from each other
    HIGH_CV = "HIGH_CV"  # per-second IOPS swing a lot inside runs
    NO_SAMPLES = "NO_SAMPLES"  # a compared side has one summary and nothing to test
    WEAK_REPLICATES = "WEAK_REPLICATES"  # a compared side predates separate runs
    ABANDONED = "ABANDONED"  # the run's process died; the run was marked abandoned
    HOST_DROPPED = "HOST_DROPPED"  # a fleet host dropped out mid-run; the run is partial
    SCRATCH_LEFT = "SCRATCH_LEFT"  # a fleet host's scratch file could not be removed (host unreachable)
    LESS_SAFE = "LESS_SAFE"  # one side of a comparison trades durability or correctness for its speed
    ORDER_EFFECT = "ORDER_EFFECT"  # in an ab session the arm measured second in a round did better (or worse)
    SYNC_NOISE = "SYNC_NOISE"  # synclat/slog: the runs' spread leaves a time per write, a class or a ranking open
    IMPORT_UNKNOWN = "IMPORT_UNKNOWN"  # an imported output does not say a workload field: stored as unknown
    IMPORT_DERIVED = "IMPORT_DERIVED"  # an imported field computed exactly from the printed numbers
    NO_LATENCY = "NO_LATENCY"  # fio measured no latency (gtod_reduce): empty, not 0
    LEGACY = "LEGACY"  # a plain-text warning stored by a stackbench without codes


@dataclass(frozen=True)
class Warning:  # shadows the builtin exception where imported; stackbench never raises or catches that one
    """One warning: `subject` is what it is about (cell patterns, a compared row; "" for the run and its
    target as a whole), `text` what was seen, `fix` the option or action that fixes it ("" if none)."""

    code: WarningCode
    subject: str
    text: str
    fix: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", WarningCode(self.code))  # ValueError for a code outside the set

    def __str__(self) -> str:
        """The line the user reads: `subject: text; fix`, each part only when present."""
        line = f"{self.subject}: {self.text}" if self.subject else self.text
        return f"{line}; {self.fix}" if self.fix else line

    def to_json(self) -> dict[str, str]:
        return {"code": self.code.value, "subject": self.subject, "text": self.text, "fix": self.fix}

    @classmethod
    def from_json(cls, value: Any) -> Warning:
        """A stored warning: the dict `to_json` writes, or a plain string from before codes (LEGACY).

        A code this version does not know (written by a newer stackbench) also reads as LEGACY, keeping the
        text: reading old or newer stores never fails over a warning.
        """
        if isinstance(value, dict):
            text = str(value.get("text", ""))
            subject, fix = str(value.get("subject") or ""), str(value.get("fix") or "")
            try:
                return cls(WarningCode(value.get("code")), subject, text, fix)
            except ValueError:
                return cls(WarningCode.LEGACY, subject, text, fix)
        return cls(WarningCode.LEGACY, "", str(value))
