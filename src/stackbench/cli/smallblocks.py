"""`stackbench smallblocks PATH...`: file-size histogram and special vdev sizing (docs/method.md section 5)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app, err, error_line, out, warn
from stackbench.cli.common import FormatOption, JsonOption, chosen_format, emit
from stackbench.units import parse_size


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
    chart: Optional[Path] = typer.Option(
        None, "--chart", help="Also draw the special vdev sizing chart into FILE.svg or FILE.png (docs/charts.md).",
        show_default=False,
    ),
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
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

        stackbench smallblocks /tank/data --special-size 58G --chart special.png
    """
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from stackbench.errors import UsageError
    from stackbench.report.smallblocks import histogram_table, recommendation_text, smallblocks_json
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
    if chart is not None:
        from stackbench.cli.chart import image_format

        chart_format = image_format(chart)  # refuse a bad file name before the scan, not after it
    fmt = chosen_format(output_format, json_output)
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
    if chart is not None and not result.partial:
        from stackbench.cli.chart import save_figure
        from stackbench.report.charts import scan_figures

        save_figure(scan_figures(histogram, rec, source=", ".join(str(p) for p in paths))[0], chart, chart_format)
        err.print(f"wrote {chart} (special vdev sizing chart)", highlight=False, soft_wrap=True)
    if result.unreadable:
        warn(
            f"{result.unreadable} directories could not be read (e.g. {', '.join(result.unreadable_examples[:3])}); "
            "their files are not counted. Run as a user that can read them (root) for a complete histogram"
        )
    if result.partial:
        error_line("interrupted: the histogram above is PARTIAL.")
        sys.exit(130)
