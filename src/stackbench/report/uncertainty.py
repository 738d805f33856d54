"""How every presenter writes an uncertain number: a value with its interval, a change, a factor, a spread.

One module, so the terminal, Markdown, CSV, the xlsx workbook, the HTML report and the web pages write the
same words for the same runs. The rule is analysis's (`between_runs.too_noisy`): an interval whose ends are
more than 4x apart, or none at all, is never printed as bounds ("-100%/+211506333543310%", "20.53 ± 44.78
x"); the runs' range is, with the words "too noisy to tell". JSON keeps the raw bounds, with `too_noisy`.

    3,008 ± 1.1%                      a value (IOPS, MB/s) and its 95 % interval
    12,216 -48%/+93%                  a wide one, lopsided as intervals on the log scale are
    too noisy to tell (runs 9,120 to 1,000,000)
    3,008 (1 run: no interval)
    +19.9% [+18.5%, +21.4%]           a change (compare)
    24.8x [22.1, 27.9]                a factor (layers, compare's summary: 1.20x [1.18, 1.22])
    0.9%                              a spread (sd between runs)
"""

from __future__ import annotations

from typing import Callable

from stackbench.analysis.between_runs import too_noisy
from stackbench.base.units import format_iops

TOO_NOISY = "too noisy to tell"
VALUE, CHANGE, FACTOR, SPREAD = "value", "change", "factor", "spread"


def describe(
    centre: float | None,
    low: float | None = None,
    high: float | None = None,
    *,
    style: str = VALUE,
    number: Callable[[float], str] = format_iops,
    runs: tuple[float, float] | None = None,
    n: int | None = None,
) -> str:
    """The one way an uncertain number is written for people (terminal, Markdown, HTML, web).

    `style` says what it is: VALUE (`centre` and its interval, in the unit `number` writes), CHANGE and
    FACTOR (a ratio B / A or lower / upper and its interval), SPREAD (`centre` = exp(sd of logs) - 1,
    `low`/`high` = exp(-+sd), the one-sd band). `runs` is the lowest and highest separate run, written
    (with `number`) when the interval is too wide to read; `n` the number of runs (1: no interval at all).
    """
    if centre is None:
        return "-"
    if style == VALUE and n == 1:
        return f"{number(centre)} (1 run: no interval)"
    if too_noisy(low, high):
        return TOO_NOISY + (f" (runs {number(runs[0])} to {number(runs[1])})" if runs else "")
    assert low is not None and high is not None
    if style == CHANGE:
        return f"{_pct(centre)} [{_pct(low)}, {_pct(high)}]"
    if style == FACTOR:
        return f"{_factor(centre)}x [{_factor(low)}, {_factor(high)}]" + (" (gain)" if high < 1 else "")
    if style == SPREAD:
        return f"{centre:.1%}"
    down, up = (centre - low) / centre, (high - centre) / centre
    if up > 1.1 * down and up >= 0.1:
        return f"{number(centre)} -{down:.0%}/+{up:.0%}"
    return f"{number(centre)} ± {max(down, up):.1%}"


def readable(low: float | None, high: float | None) -> bool:
    """Whether a spreadsheet gets the bounds (CSV, xlsx): the same rule, bounds or empty cells."""
    return not too_noisy(low, high)


def noisy_note(what: str, runs: tuple[float, float] | None, number: Callable[[float], str]) -> str:
    """The text a spreadsheet's note column gets for an interval it leaves empty: `4K QD1 rnd write: too
    noisy to tell (runs 9120 to 1000000)`, numbers written by `number` (plain ones in CSV)."""
    return f"{what}: {TOO_NOISY}" + (f" (runs {number(runs[0])} to {number(runs[1])})" if runs else "")


def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f}%"


def _factor(value: float) -> str:
    return f"{value:.1f}" if value >= 9.95 else f"{value:.2f}"
