"""Warnings are a closed set of codes (stackbench/warning.py): made by the situation each names, stored and
read back with their code, filtered by code, and every code documented in docs/json.md."""

from __future__ import annotations

from stackbench.cli.synclat import warnings_to_print
from stackbench.warning import Warning, WarningCode

ONE_RUN = Warning(
    WarningCode.TOO_FEW_RUNS, "4K QD1 rnd write dsync",
    "measured in one fio run, so there is no interval and no verdict can use it",
    "use --runs 3 or more (5 before comparing runs)",
)


def test_synclat_drops_the_one_run_warning_by_its_code_not_its_words() -> None:
    # Another code whose text holds the very words of the dropped one: a filter on the text would drop it too.
    same_words = Warning(WarningCode.HIGH_SPREAD, "8K QD1 rnd write dsync", f"{ONE_RUN.text}; per-second samples")
    reworded = Warning(WarningCode.TOO_FEW_RUNS, "16K QD1 rnd write dsync", "a single run, reworded", "")
    assert warnings_to_print([ONE_RUN, same_words, reworded], shown=set()) == [same_words]


def test_synclat_prints_a_warning_only_once() -> None:
    cache = Warning(WarningCode.PAGE_CACHE, "", "read results are cache-dominated", "use --size")
    assert warnings_to_print([cache], shown={cache}) == []
