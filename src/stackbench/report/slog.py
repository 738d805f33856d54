"""The SLOG shoot-out as a table, fastest device first: QD1 latency decides (a SLOG serves one sync write at a
time), QD16 shows what it does under load. Every claim in it is analysis/slog.py's: the QD1 median is the
geometric mean of the runs' medians with its 95 % interval, `vs next` is compare's test against the next
device, the verdict names a class only where the interval lies in one, and the note names a best
candidate only where it is proven better than the second. The terminal and Markdown show `slog_table`
("12,345", "85.2 µs"); CSV gets `slog_csv_table`, plain numbers with the unit in the header. A `Size`
column appears when more than one write size is ranked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackbench.analysis.stats import format_p
from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.base.units import format_iops, format_latency_ns, format_size

if TYPE_CHECKING:
    from stackbench.analysis.slog import Candidate, Comparison, Ranking, SizeRanking


def slog_table(ranking: Ranking) -> Tabular:
    several = len(ranking.sizes) > 1
    rows = []
    for size_ranking in ranking.sizes:
        for c in size_ranking.ranked:
            q1, q16 = c.qd1, c.qd16
            interval = c.qd1_interval
            rows.append([
                c.name,
                *([format_size(c.size)] if several else []),
                format_iops(q1.iops) if q1 else "-",
                _median(c),
                f"{format_latency_ns(interval[0])} to {format_latency_ns(interval[1])}" if interval else "-",
                format_latency_ns(q1.mean_ns) if q1 else "-",
                format_latency_ns(q1.stdev_ns) if q1 else "-",
                format_iops(q1.best_1s_iops) if q1 and q1.best_1s_iops else "-",
                format_iops(q16.iops) if q16 else "-",
                format_latency_ns(q16.median_ns) if q16 else "-",
                format_iops(q16.best_1s_iops) if q16 and q16.best_1s_iops else "-",
                str(c.runs) if q1 else "-",
                _versus(size_ranking.versus_next(c)),
                c.verdict,
            ])
    headers = ["Candidate", *(["Size"] if several else []), "QD1 IOPS", "QD1 median", "QD1 median 95% CI",
               "QD1 mean", "QD1 stdev", "QD1 best 1 s", "QD16 IOPS", "QD16 median", "QD16 best 1 s", "Runs",
               "QD1 median vs next", "Verdict"]
    notes = [
        *(_conclusion(r, several, ranking.min_effect) for r in ranking.sizes),
        "QD1 median = geometric mean of each separate run's median completion latency, with its 95 % interval "
        "across runs; vs next = that median against the next device's (change [95 % interval], p after Holm over "
        f"every pair ranked; better = at least {ranking.min_effect:.0%} lower); mean, standard deviation and "
        "percentiles of all runs together; best 1 s = highest one-second IOPS sample.",
        ranking.note,
    ]
    return Tabular(
        headers=headers,
        rows=rows,
        title="SLOG shoot-out (devices by QD1 median latency, fastest first)",
        notes=notes,
        right_aligned=frozenset(range(1, len(headers) - 2)),
    )


def _median(c: Candidate) -> str:
    if c.qd1 is None:
        return "-"
    if c.qd1.run_medians_ns or c.qd1.median_ns is not None:
        return format_latency_ns(c.qd1_latency_ns)
    return f"{format_latency_ns(c.qd1.mean_ns)} (mean)"


def _versus(comparison: Comparison | None) -> str:
    """`-23.1% [-30.2%, -15.0%] p=0.001 better`; `~` and the same numbers when not proven. Plain wording:
    truth's shared formatting of intervals replaces it at merge."""
    if comparison is None:
        return "-"
    test = comparison.test
    if test is None or not test.testable:
        return "untested: one value"
    word = "better" if comparison.better else "same" if comparison.same else "~"
    return (f"{test.ratio - 1:+.1%} [{test.low - 1:+.1%}, {test.high - 1:+.1%}] "  # type: ignore[operator]
            f"{format_p(comparison.p_holm)} {word}")


def _conclusion(ranking: SizeRanking, several: bool, min_effect: float) -> str:
    """What the ranking proves at one size: the best device, or that none is proven better (with the
    interval of the first against the second), or why there is nothing to rank."""
    where = f"{format_size(ranking.size)}: " if several else ""
    devices = ranking.devices
    if not devices:
        return f"{where}No candidate measured as a device: nothing to rank."
    if len(devices) == 1:
        return f"{where}Only one device candidate ({devices[0].name}): nothing to rank it against."
    top = ranking.comparisons[0]
    test = top.test
    if test is None or not test.testable:
        return (f"{where}No candidate proven better: {top.candidate.name} and {top.next.name} are not both "
                "measured in separate runs, so nothing tests them.")
    interval = f"{test.ratio - 1:+.1%} [{test.low - 1:+.1%}, {test.high - 1:+.1%}], {format_p(top.p_holm)}"  # type: ignore[operator]
    if ranking.best is not None:
        return (f"{where}Best candidate by QD1 median latency: {top.candidate.name}, proven better than "
                f"{top.next.name} ({interval}).")
    same = f" (the same within ±{min_effect:.0%})" if top.same else ""
    return f"{where}No candidate proven better: {top.candidate.name} vs {top.next.name} {interval}{same}."


def slog_csv_table(ranking: Ranking) -> Tabular:
    """The ranking for a spreadsheet, in the same order: IOPS to 0.1, completion latencies in microseconds
    to 0.001, the change against the next device in percent to 0.01, an empty cell where a depth was not
    measured or has no such value (the display's "(mean)" stand-in for a missing median stays in the mean
    column)."""
    several = len(ranking.sizes) > 1
    rows = []
    for size_ranking in ranking.sizes:
        for c in size_ranking.ranked:
            q1, q16 = c.qd1, c.qd16
            interval = c.qd1_interval
            versus = size_ranking.versus_next(c)
            test = versus.test if versus and versus.test and versus.test.testable else None
            rows.append([
                c.name,
                *([plain.count(c.size)] if several else []),
                plain.iops(q1.iops if q1 else None),
                plain.microseconds(c.qd1_latency_ns if q1 and (q1.run_medians_ns or q1.median_ns is not None) else None),
                plain.microseconds(interval[0] if interval else None),
                plain.microseconds(interval[1] if interval else None),
                plain.microseconds(q1.mean_ns if q1 else None),
                plain.microseconds(q1.stdev_ns if q1 else None),
                plain.iops(q1.best_1s_iops if q1 else None),
                plain.iops(q16.iops if q16 else None),
                plain.microseconds(q16.median_ns if q16 else None),
                plain.iops(q16.best_1s_iops if q16 else None),
                plain.count(c.runs if q1 else None),
                plain.percent(test.ratio - 1 if test else None),
                plain.percent(test.low - 1 if test else None),  # type: ignore[operator]
                plain.percent(test.high - 1 if test else None),  # type: ignore[operator]
                plain.number(versus.p_holm if test else None, 6),  # type: ignore[union-attr]
                ("better" if versus.better else "same" if versus.same else "no evidence") if test else "",  # type: ignore[union-attr]
                c.verdict,
            ])
    return Tabular(
        headers=["Candidate", *(["Size bytes"] if several else []), "QD1 IOPS", "QD1 median clat us",
                 "QD1 median CI low us", "QD1 median CI high us", "QD1 mean clat us", "QD1 stdev clat us",
                 "QD1 best 1 s IOPS", "QD16 IOPS", "QD16 median clat us", "QD16 best 1 s IOPS", "runs",
                 "vs next %", "vs next CI low %", "vs next CI high %", "vs next p", "vs next", "Verdict"],
        rows=rows,
        title="SLOG shoot-out (devices by QD1 median latency, fastest first)",
        right_aligned=frozenset(range(1, 17 + (1 if several else 0))),
    )
