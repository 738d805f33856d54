"""`stackbench smallblocks PATH...`: file-size histogram and special vdev sizing (docs/method.md section 5)."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from stackbench.cli.app import app, err, out, warn
from stackbench.cli.common import (
    FiniteRange, FormatOption, IntBetween, JsonOption, KeepIdentifiersOption, StoreIntoOption, check_label, chosen_format, emit, open_store_from,
    say_stored,
)
from stackbench.base.units import count, parse_size

if TYPE_CHECKING:
    from stackbench.scan.walker import WalkResult


@app.command("smallblocks")
def smallblocks_command(
    paths: list[Path] = typer.Argument(..., help="Directories to scan (files count themselves).", show_default=False),
    special_size: Optional[str] = typer.Option(
        None, "--special-size", help="Usable size of the special vdev (one side of the mirror), e.g. 58G."
    ),
    metadata_share: float = typer.Option(
        0.3, "--metadata-share", click_type=FiniteRange(0, 100), metavar="PCT",
        help="Estimated metadata, in % of the data (0-100; rule of thumb: 0.3)."
    ),
    recordsize: str = typer.Option(
        "128K", "--recordsize", help="The datasets' recordsize: special_small_blocks must stay below it."
    ),
    one_file_system: bool = typer.Option(False, "--one-file-system", "-x", help="Do not cross mount points."),
    workers: Optional[int] = typer.Option(
        None, "--workers", click_type=IntBetween(1), metavar="N",
        help="Parallel directory readers (1 or more), a process each (default: one per CPU, "
        "doubled while they mostly wait for the disk, up to 8 per CPU).", show_default=False,
    ),
    db: Optional[str] = StoreIntoOption,
    label: Optional[str] = typer.Option(
        None, "--label", "-l", help="A name for the stored scan, usable wherever its id is (needs --db).",
        callback=check_label,
    ),
    chart: Optional[Path] = typer.Option(
        None, "--chart", help="Also draw the special vdev sizing chart into FILE.svg or FILE.png (docs/charts.md), "
        "a new or regular file.", show_default=False,
    ),
    keep_identifiers: bool = KeepIdentifiersOption,
    force: bool = typer.Option(False, "--force", help="Replace the --chart FILE if it exists."),
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

        stackbench smallblocks /tank/data --special-size 58G --db ~/.local/share/stackbench/results.db -l tank

        stackbench smallblocks /tank/data --special-size 58G --chart special.png
    """
    # Only what the walk needs is imported before it starts (docs/smallblocks.md, "Speed"): the report, the
    # store's ids and the progress display (only on a terminal) come when they are used.
    from stackbench.base.errors import Interrupted

    size, record = _sizes(special_size, recordsize, metadata_share,
                          labelled_without_db=label is not None and db is None)
    chart_format = _chart_format(chart, force=force)
    fmt = chosen_format(output_format, json_output)
    store = open_store_from(db) if db is not None else None  # a bad --db fails now, not after the walk
    started = datetime.now(timezone.utc)
    result = _walk(paths, workers=workers, one_file_system=one_file_system)
    settings = {"recordsize_bytes": record, "special_size_bytes": size, "metadata_share_pct": metadata_share,
                "one_file_system": one_file_system, "workers": workers}
    rec, table, data = _scan_document(result, paths, settings, label=label, started=started, stored=store is not None)
    failure = None
    if store is not None:
        failure = _store_scan(store, data, label=label, started=started, partial=result.partial)
    print_scan(result, rec, table, data, fmt)
    if chart is not None and not result.partial:
        _draw_chart(chart, chart_format, result.histogram, rec, paths, keep_identifiers=keep_identifiers, force=force)
    if failure is not None:
        raise failure
    if data["scan_id"] and fmt != "json":
        err.print(f"Stored as scan {data['scan_id'][:12]}: see it again with `stackbench show {data['scan_id'][:12]}`",
                  highlight=False, markup=False)
    if result.partial:
        raise Interrupted("interrupted: the histogram above is PARTIAL",
                          "Run it again and let it finish to count every file")


def _sizes(special_size: Optional[str], recordsize: str, metadata_share: float, *,
           labelled_without_db: bool) -> tuple[int | None, int]:
    """--special-size and --recordsize in bytes, checked with --metadata-share and --label before anything is
    walked."""
    from stackbench.base.errors import UsageError

    if not 0 <= metadata_share < 100:
        raise UsageError(f"--metadata-share must be a percentage, got {metadata_share}", "Use e.g. 0.3")
    size = parse_size(special_size, option="special-size") if special_size else None
    record = parse_size(recordsize, option="recordsize")
    if record & (record - 1) or not 512 <= record <= 16 * 1024**2:
        raise UsageError(
            f"--recordsize {recordsize} is not a ZFS recordsize (a power of two from 512 to 16M)",
            "Use the dataset's value from `zfs get recordsize`, e.g. 128K",
        )
    if labelled_without_db:
        raise UsageError("--label names a stored scan, and nothing is stored without --db",
                         "Add --db URL (e.g. --db ~/.local/share/stackbench/results.db), or leave out --label")
    return size, record


def _walk(paths: list[Path], *, workers: Optional[int], one_file_system: bool) -> "WalkResult":
    """The walk's `ScanResult`; on a terminal with a spinner that counts the files seen."""
    from stackbench.scan.walker import walk_histogram

    if not err.is_terminal:
        return walk_histogram(paths, workers=workers, one_file_system=one_file_system)
    from stackbench.cli.progress import spinner

    with spinner("scanning") as say:
        def tick(files: int, seconds: float) -> None:
            say(f"{count(files, 'file')} seen, {files / seconds if seconds else 0:,.0f} files/s")

        return walk_histogram(paths, workers=workers, one_file_system=one_file_system, on_progress=tick)


def _chart_format(chart: Optional[Path], *, force: bool) -> str:
    """--chart's image format (svg or png), a bad file name refused before the scan, not after it."""
    if chart is None:
        return ""
    from stackbench.cli.chart import check_output, image_format

    chart_format = image_format(chart)
    check_output(chart, force, "--chart")
    return chart_format


def _scan_document(result: "WalkResult", paths: list[Path], settings: dict[str, Any], *, label: Optional[str],
                   started: datetime, stored: bool) -> tuple[Any, list[Any], dict[str, Any]]:
    """The recommendation, the table of estimates and the scan's JSON document (with an id when it is to be
    stored), from the walk and the settings it was asked for."""
    from stackbench import __version__
    from stackbench.report.smallblocks import smallblocks_json
    from stackbench.scan.special_vdev import estimates, recommend

    share, record = settings["metadata_share_pct"] / 100, settings["recordsize_bytes"]
    rec = recommend(result.histogram, settings["special_size_bytes"], share, record)
    table = estimates(result.histogram, share, record)
    scan_id = None
    if stored:
        from stackbench.model.results import new_id

        scan_id = new_id()
    about = {"scan_id": scan_id, "label": label, "created_at": started.isoformat(),
             "paths": [os.path.abspath(p) for p in paths], "settings": settings, "stackbench_version": __version__}
    return rec, table, smallblocks_json(result, rec, table, about)


def _store_scan(store: Any, data: dict[str, Any], *, label: Optional[str], started: datetime,
                partial: bool) -> Optional[Exception]:
    """Keep the scan; if the store refuses it, its error to raise once the scan is shown (without its id,
    since nothing holds it)."""
    from stackbench.base.errors import StackbenchError

    say_stored(store, "scan", data["scan_id"], "smallblocks")
    try:
        store.add_scan(scan_id=data["scan_id"], label=label, created_at=started,
                       status="partial" if partial else "complete", document=data)
    except StackbenchError as error:
        data["scan_id"] = None
        return error
    return None


def _draw_chart(chart: Path, chart_format: str, histogram: Any, rec: Any, paths: list[Path], *,
                keep_identifiers: bool, force: bool) -> None:
    """The special vdev sizing chart, the scanned paths redacted unless --keep-identifiers: it is made to be
    shared."""
    from stackbench.cli.chart import save_figure
    from stackbench.report.charts import scan_figures
    from stackbench.report.redact import redactor

    source = redactor(keep_identifiers).text(", ".join(str(p) for p in paths))
    save_figure(scan_figures(histogram, rec, source=source)[0], chart, chart_format, force=force, option="--chart")
    err.print(f"wrote {chart} (special vdev sizing chart)", highlight=False, soft_wrap=True)


def print_scan(result: Any, rec: Any, table: list[Any], data: dict[str, Any], fmt: str) -> None:
    """A scan as `smallblocks` prints it, for a fresh walk and for `show` of a stored one alike: the
    histogram in `fmt`, the recommendation under the terminal table, unreadable directories on stderr."""
    from stackbench.report.smallblocks import histogram_csv_table, histogram_table, recommendation_text

    emit(fmt, histogram_table(result), data, csv=histogram_csv_table(result))
    if fmt == "table":
        out.print(recommendation_text(result, rec, table))
    if result.unreadable:
        warn(
            f"{result.unreadable} directories could not be read (e.g. {', '.join(result.unreadable_examples[:3])}); "
            "their files are not counted. Run as a user that can read them (root) for a complete histogram"
        )


def show_scan(stored: Any, fmt: str) -> None:
    """`stackbench show SCAN`: the stored scan (a `StoredScan`) printed as `smallblocks` printed it."""
    from stackbench.base.errors import StoreError
    from stackbench.scan.document import scan_from_json

    try:
        result, rec, table = scan_from_json(stored.document)
    except ValueError as error:
        raise StoreError(
            f"the stored scan {stored.id[:12]} is damaged and cannot be shown ({error})",
            f"Delete it with `stackbench rm {stored.id[:12]} --yes` and scan again",
        ) from None
    print_scan(result, rec, table, stored.document, fmt)
