"""`stackbench smallblocks PATH...`: file-size histogram and special vdev sizing (docs/method.md section 5)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Group
from rich.text import Text

from stackbench.cli.app import app, err, error_line, out, warn
from stackbench.cli.common import FormatOption, emit
from stackbench.report.tabular import Tabular
from stackbench.units import format_bytes, format_size, parse_size


@app.command("smallblocks")
def smallblocks_command(
    paths: list[Path] = typer.Argument(..., help="Directories to scan (files count themselves).", show_default=False),
    special_size: Optional[str] = typer.Option(
        None, "--special-size", help="Usable size of the special vdev (one side of the mirror), e.g. 58G."
    ),
    metadata_share: float = typer.Option(
        0.3, "--metadata-share", help="Estimated metadata, in % of the data (rule of thumb: 0.3)."
    ),
    recordsize: str = typer.Option(
        "128K", "--recordsize", help="The datasets' recordsize: special_small_blocks must stay below it."
    ),
    one_file_system: bool = typer.Option(False, "--one-file-system", "-x", help="Do not cross mount points."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Parallel directory readers (default 2 x CPUs)."),
    output_format: str = FormatOption,
    json_output: bool = typer.Option(False, "--json", help="Same as --format json."),
) -> None:
    """Count regular files into power-of-two size bins and recommend `special_small_blocks`.

    Bins follow the practitioners' pipeline `find | xargs ls -l | awk`: a file of size s goes to
    2^floor(log2 s), everything under 1 KiB (empty files too) to the 1k bin; symlinks and directories are
    not counted, hard links count once per path. With --special-size it picks the largest
    special_small_blocks below --recordsize whose small files plus estimated metadata fit in 75 % of the
    special vdev (OpenZFS keeps the last 25 % for metadata). It also reports the metadata walk rate (files/s): what a special
    vdev speeds up. Ctrl-C prints the partial histogram.

    Examples:

        stackbench smallblocks /tank/data --special-size 58G

        stackbench smallblocks /srv/a /srv/b -x --json
    """
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from stackbench.errors import UsageError
    from stackbench.scan.special_vdev import estimates, recommend
    from stackbench.scan.walker import walk_histogram

    if not 0 <= metadata_share < 100:
        raise UsageError(f"--metadata-share must be a percentage, got {metadata_share}", "Use e.g. 0.3")
    size = parse_size(special_size, option="special-size") if special_size else None
    record = parse_size(recordsize, option="recordsize")
    if record & (record - 1) or not 512 <= record <= 16 * 1024**2:
        raise UsageError(
            f"--recordsize {recordsize} is not a ZFS recordsize (a power of two from 512 to 16M)",
            "Use the dataset's value from `zfs get recordsize`, e.g. 128K",
        )
    fmt = "json" if json_output else output_format
    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err, transient=True,
        disable=not err.is_terminal,
    )
    task = progress.add_task("scanning", total=None)

    def tick(files: int, seconds: float) -> None:
        rate = files / seconds if seconds else 0
        progress.update(task, description=f"{files:,} files seen, {rate:,.0f} files/s")

    with progress:
        result = walk_histogram(paths, workers=workers, one_file_system=one_file_system, on_progress=tick)
    histogram = result.histogram
    rec = recommend(histogram, size, metadata_share / 100, record)
    table = estimates(histogram, metadata_share / 100, record)
    data = smallblocks_json(result, rec, table)
    emit(fmt, histogram_table(result), data)
    if fmt == "table":
        out.print(recommendation_text(result, rec, table))
    if result.unreadable:
        warn(
            f"{result.unreadable} directories could not be read (e.g. {', '.join(result.unreadable_examples[:3])}); "
            "their files are not counted. Run as a user that can read them (root) for a complete histogram"
        )
    if result.partial:
        error_line("interrupted: the histogram above is PARTIAL.")
        sys.exit(130)


def smallblocks_json(result: Any, rec: Any, table: list) -> dict[str, Any]:
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
    }


def histogram_table(result: Any) -> Tabular:
    rows = [
        [format_size(r["bin"]), f"{r['count']:,}", format_bytes(r["bytes"]), format_bytes(r["cumulative_bytes"]),
         f"{r['cumulative_pct']:.2f}%"]
        for r in result.histogram.rows()
    ]
    title = f"File sizes: {result.histogram.files:,} files, {format_bytes(result.histogram.total_bytes)}"
    if result.partial:
        title += " (PARTIAL: interrupted)"
    return Tabular(
        headers=["bin (≥)", "files", "bytes", "cumulative bytes", "cumulative %"],
        rows=rows,
        title=title,
        notes=["bin = 2^floor(log2 size); files under 1 KiB, empty ones included, are in the 1K bin"],
        right_aligned=frozenset({1, 2, 3, 4}),
    )


def recommendation_text(result: Any, rec: Any, table: list) -> Group:
    lines = [
        Text(
            f"Metadata walk: {result.histogram.files:,} files in {result.seconds:.2f} s, "
            f"{result.files_per_second:,.0f} files/s with {result.workers} readers",
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
