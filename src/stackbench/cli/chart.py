"""`stackbench chart RUN... --kind K -o FILE`: one chart of stored runs as an SVG or PNG file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from stackbench.cli.app import app, err
from stackbench.cli.common import AlphaOption, DbOption, KeepIdentifiersOption, MinEffectOption, split_list
from stackbench.base.errors import UsageError
from stackbench.report.charts.kinds import KINDS, ChartKind, ChartRequest, chart_kind, takers

if TYPE_CHECKING:
    from stackbench.base.output_files import Destination
    from stackbench.report.charts.figure import Figure

def _help() -> str:
    """The command's help, its kinds and examples made from their records (report/charts/kinds.py). A
    paragraph is one line here, for the help to wrap it to the terminal's width."""
    return "\n\n".join([
        "Draw one chart of stored runs into an SVG or PNG file (the format from the file's suffix).",
        "Every chart has units on its axes, the fio version and the runs in a footer, and colours safe for "
        "colour-blind readers, with markers or hatches as a second cue (docs/charts.md shows each kind):",
        *(f"{kind.name}: {kind.summary}." for kind in KINDS.values()),
        "A chart is made to be shared: identifiers in its labels and footer (host names, serials, user names in "
        "paths, addresses) are replaced by placeholders as in `stackbench report` (docs/reports.md, "
        '"Redaction"), unless --keep-identifiers.',
        "Examples:",
        *(f"    {kind.example}" for kind in KINDS.values()),
    ])


def _for(option: str) -> str:
    """`histogram, timeline, cache:`, the kinds an option is for, before its help."""
    return ", ".join(takers(option)) + ":"


_CUSTOM = next(kind.name for kind in KINDS.values() if "--x" in kind.options)
_SEVERAL = "; ".join(f"{kind.name}: {kind.draws}" for kind in KINDS.values() if kind.runs != (1, 1) or kind.scan)


@app.command("chart", help=_help())
def chart_command(
    runs: list[str] = typer.Argument(..., help=f"Runs (ids, id prefixes or labels); one unless the kind says: "
                                     f"{_SEVERAL}.", show_default=False),
    output: Path = typer.Option(..., "--output", "-o", help="The file to write: FILE.svg or FILE.png (800 px wide), "
                                "a new or regular file; - writes the SVG to standard output.", show_default=False),
    kind: Optional[str] = typer.Option(
        None, "--kind", "-k", help=f"What to draw: {', '.join(KINDS)}. Default: {next(iter(KINDS))}, or {_CUSTOM} "
        "with --x.", show_default=False,
    ),
    metric: str = typer.Option("iops", "--metric", help=f"{_for('--metric')} iops or mb_s (10^6 bytes/s)."),
    cell: Optional[str] = typer.Option(
        None, "--cell", help=f'{_for("--cell")} the cell, as `show` names it, e.g. "4K QD1 rnd read". '
        "Default: the first cell with per-second samples (cache: the first sequential write; stack: every cell "
        "with layer counts).", show_default=False,
    ),
    names: Optional[str] = typer.Option(None, "--names", help=f"{_for('--names')} layer names, comma-separated: "
                                        "host,vm."),
    x: Optional[str] = typer.Option(None, "--x", help=f"{_for('--x')} the x axis: bs, iodepth, numjobs, rw or label.",
                                    show_default=False),
    y: str = typer.Option("iops", "--y", help=f"{_for('--y')} the y axis: iops, mb_s (10^6 bytes/s) or p99 (µs)."),
    series: Optional[str] = typer.Option(None, "--series", help=f"{_for('--series')} one line or bar colour per "
                                         "value of this field (bs, iodepth, numjobs, rw, label).", show_default=False),
    where: Optional[list[str]] = typer.Option(None, "--where", help=f"{_for('--where')} keep cells with FIELD=VALUE, "
                                              "e.g. rw=randwrite or bs=4k; repeat for several.", show_default=False),
    min_effect: float = MinEffectOption,
    alpha: float = AlphaOption,
    force: bool = typer.Option(
        False, "--force", help="Replace FILE if it exists; compare: also draw when key facts (fio version, size, "
        "device) differ."
    ),
    keep_identifiers: bool = KeepIdentifiersOption,
    db: Optional[str] = DbOption,
) -> None:
    """`stackbench chart`; its help is `_help()`, made from the kinds' records."""
    fmt = image_format(output)
    check_output(output, force)
    chosen = chart_kind(kind, custom_axes=bool(x))
    if metric not in ("iops", "mb_s"):
        raise UsageError(f"--metric {metric!r} is not iops or mb_s", "Use --metric iops or --metric mb_s")
    given = {"--cell": cell is not None, "--names": names is not None, "--x": bool(x), "--series": bool(series),
             "--where": bool(where)}
    chosen.check(len(runs), [option for option, value in given.items() if value])

    from stackbench.cli.common import open_store_from
    from stackbench.report.redact import redactor

    store = open_store_from(db)
    redact = redactor(keep_identifiers)
    options = {"metric": metric, "y": y, "min_effect": min_effect, "alpha": alpha, "force": force}
    if chosen.scan:
        request = ChartRequest(scan=stored_scan(store, runs[0], redact), **options)
    else:
        request = _runs_request(chosen, store, runs, redact, cell=cell, names=names, x=x, series=series,
                                where=where or [], **options)
    figure = chosen.draw(request)
    save_figure(figure, output, fmt, force=force)
    err.print(f"wrote {shown(output)} ({figure.kind}: {figure.title})", highlight=False, soft_wrap=True)


def _runs_request(kind: "ChartKind", store: Any, refs: list[str], redact: Any, *, cell: str | None,
                  names: str | None, where: list[str], **options: Any) -> "ChartRequest":
    """The runs, redacted, with the one cell the kind picks and its json+ buckets if the kind needs them."""
    loaded = [store.get_run(ref) for ref in refs]
    for run in loaded:  # as report_contents does: learn from every run first, then copy them redacted
        redact.learn_run(run)
    for text in [names or "", *where]:
        redact.learn_text(text)
    copies = [redact.run(run) for run in loaded]
    picked = kind.cell(copies[0], cell) if kind.cell else None
    bins = None
    if kind.bins and picked is not None:
        from stackbench.store.latency_bins import cell_bins

        bins = cell_bins(store, copies[0], picked)
    return ChartRequest(runs=copies, cell=picked, bins=bins, names=split_list([redact.text(names)]) if names else None,
                        where=[redact.text(w) for w in where], **options)


def stored_scan(store: Any, ref: str, redact: Any) -> tuple[Any, Any, str]:
    """A stored smallblocks scan's histogram and recommendation, as `smallblocks --chart` draws them, and what
    was scanned passed through `redact` (report/redact.py)."""
    from stackbench.base.errors import StoreError
    from stackbench.scan.document import scan_from_json

    try:
        _, scan_id = store.resolve_any(ref, kinds=("scan",))
    except StoreError:
        raise UsageError(
            f"--kind special draws a stored smallblocks scan, and {ref!r} names none",
            "Store one with `stackbench smallblocks PATH --db URL` (list them: `stackbench runs --kind scan`), "
            "or draw while scanning: `stackbench smallblocks PATH --chart FILE`",
        ) from None
    stored = store.get_scan(scan_id)
    try:
        result, recommendation, _ = scan_from_json(stored.document)
    except ValueError as error:
        raise StoreError(f"the stored scan {scan_id[:12]} is damaged and cannot be drawn ({error})",
                         f"Delete it with `stackbench rm {scan_id[:12]} --yes` and scan again") from None
    return result.histogram, recommendation, redact.text(", ".join(stored.paths))


def image_format(path: Path) -> str:
    """svg or png, from the file's suffix; SVG for standard output (`-`)."""
    from stackbench.base.output_files import is_stdout

    if is_stdout(path):
        return "svg"
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in ("svg", "png"):
        raise UsageError(f"cannot tell the image format of {str(path)!r} from its suffix",
                         "Name the file FILE.svg or FILE.png")
    return suffix


def _destination(option: str) -> "Destination":
    from stackbench.base.output_files import Destination

    return Destination(option, stdout=option == "-o")


def check_output(path: Path, force: bool, option: str = "-o") -> None:
    """Refuse the output file before drawing (or scanning) for nothing; `save_figure` checks again."""
    from stackbench.base.output_files import check

    check([path], force=force, destination=_destination(option))


def save_figure(figure: "Figure", path: Path, fmt: str, *, force: bool, option: str = "-o") -> None:
    """Render and write through the one output-file writer (stackbench/base/output_files.py): whole or not at
    all, a regular file only, an existing one replaced only with --force."""
    from stackbench.base.output_files import write_file

    write_file(path, figure.render(fmt), force=force, destination=_destination(option))  # type: ignore[arg-type]


def shown(path: Path) -> str:
    from stackbench.base.output_files import is_stdout

    return "the SVG to standard output" if is_stdout(path) else str(path)


__all__ = ["chart_command", "save_figure"]
