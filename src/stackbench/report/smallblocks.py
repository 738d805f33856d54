"""`smallblocks`: the file-size histogram as a table, the special vdev estimate and recommendation as
text under it, and both in the JSON (docs/smallblocks.md). The terminal and Markdown show
`histogram_table` ("64K", "1,234", "27.3 KiB", "0.03%"); CSV gets `histogram_csv_table`, bytes and counts
as whole numbers.

The results come from scan/ (the walk, the histogram, special_vdev's estimate), which report/ does not
import: the arguments are typed `Any`, and the docstrings say what they are.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text

from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.base.units import count, format_bytes, format_size


def smallblocks_json(result: Any, rec: Any, table: list[Any], about: dict[str, Any] | None = None) -> dict[str, Any]:
    """`result` is the walk (scan.walker), `rec` the recommendation and `table` the usage estimate per
    special_small_blocks value (scan.special_vdev). `about` adds what reproduces and names the scan
    (scan_id, label, created_at, paths, settings, stackbench_version; docs/json.md), after the results."""
    return {
        "bins": result.histogram.to_json(),
        "files": result.histogram.files,
        "bytes": result.histogram.total_bytes,
        "seconds": result.seconds,
        "files_per_s": result.files_per_second,
        "workers": result.workers,
        "unreadable_dirs": result.unreadable,
        "partial": result.partial,
        "recommendation": rec.to_json(),
        "special_usage": [
            {"special_small_blocks": e.special_small_blocks, "small_file_bytes": e.small_file_bytes,
             "metadata_bytes": e.metadata_bytes, "total_bytes": e.total}
            for e in table
        ],
        "unreadable_examples": list(result.unreadable_examples),
        **(about or {}),
    }


def histogram_table(result: Any) -> Tabular:
    rows = [
        [format_size(r["bin"]), f"{r['count']:,}", format_bytes(r["bytes"]), format_bytes(r["cumulative_bytes"]),
         f"{r['cumulative_pct']:.2f}%"]
        for r in result.histogram.rows()
    ]
    title = f"File sizes: {count(result.histogram.files, 'file')}, {format_bytes(result.histogram.total_bytes)}"
    if result.partial:
        title += " (PARTIAL: interrupted)"
    return Tabular(
        headers=["bin (≥)", "files", "bytes", "cumulative bytes", "cumulative %"],
        rows=rows,
        title=title,
        notes=["bin = 2^floor(log2 size); files under 1 KiB, empty ones included, are in the 1K bin"],
        right_aligned=frozenset({1, 2, 3, 4}),
    )


def histogram_csv_table(result: Any) -> Tabular:
    """The histogram for a spreadsheet: each bin's lower bound in bytes, the files, the bytes and the
    cumulative bytes counted exactly, the cumulative share in % to 0.0001."""
    rows = [
        [plain.count(r["bin"]), plain.count(r["count"]), plain.count(r["bytes"]), plain.count(r["cumulative_bytes"]),
         plain.number(r["cumulative_pct"], 4)]
        for r in result.histogram.rows()
    ]
    return Tabular(
        headers=["bin from bytes", "files", "bytes", "cumulative bytes", "cumulative %"],
        rows=rows,
        title="File sizes",
        right_aligned=frozenset({0, 1, 2, 3, 4}),
    )


def recommendation_text(result: Any, rec: Any, table: list[Any]) -> Group:
    """The walk rate, the usage per special_small_blocks value and the verdict, as lines under the
    histogram on the terminal; lines of prose, not a table, so they stay Rich text rather than a `Tabular`
    (Markdown and CSV export the histogram, JSON has them all)."""
    lines = [
        Text(
            f"Metadata walk: {count(result.histogram.files, 'file')} in {result.seconds:.2f} s, "
            f"{result.files_per_second:,.0f} files/s with {count(result.workers, 'reader')}",
        ),
        Text("Estimated special vdev usage (small files below the value + metadata "
             f"{format_bytes(rec.metadata_bytes)}):", style="bold"),
    ]
    if not table:
        lines.append(Text("  no special_small_blocks value is below the recordsize: only metadata can go to the "
                          "special vdev (special_small_blocks=0)"))
    for e in table:
        lines.append(Text(f"  special_small_blocks={format_size(e.special_small_blocks)}: {format_bytes(e.total)}"))
    if rec.special_size is not None:
        verdict = (
            f"Recommendation: special_small_blocks={format_size(rec.special_small_blocks) if rec.special_small_blocks else 0}"
            f" — uses about {format_bytes(rec.estimated_usage_bytes)} of {format_bytes(rec.usable_bytes)} usable "
            f"(75 % of {format_bytes(rec.special_size)}); {rec.reason}."
        )
        lines.append(Text(verdict, style="bold green" if rec.fits else "bold red"))
        lines.append(Text(
            "Apply per dataset: zfs set special_small_blocks=VALUE POOL/DATASET (affects newly written blocks only). "
            "A special vdev holds pool metadata: losing it loses the pool, so mirror it.",
            style="dim",
        ))
    else:
        lines.append(Text(f"{rec.reason}.", style="dim"))
    return Group(*lines)
