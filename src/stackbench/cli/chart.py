"""`stackbench chart RUN... --kind K -o FILE`: one chart of stored runs as an SVG or PNG file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from stackbench.cli.app import app, err
from stackbench.cli.common import AlphaOption, DbOption, KeepIdentifiersOption, MinEffectOption, split_list
from stackbench.base.errors import StackbenchError, UsageError

if TYPE_CHECKING:
    from stackbench.base.output_files import Destination
    from stackbench.report.charts.figure import Figure
    from stackbench.model.results import Cell, Run

# The same list as report.charts.KINDS, repeated here so that `--help` does not import the charts package.
# `special` draws a stored smallblocks scan, every other kind stored runs.
KINDS = ("matrix", "percentiles", "histogram", "timeline", "compare", "layers", "synclat", "cache", "custom",
         "hosts", "special")
CELL_KINDS = ("histogram", "timeline", "cache")


@app.command("chart")
def chart_command(
    runs: list[str] = typer.Argument(..., help="Runs (ids, id prefixes or labels). compare: A then B; layers: "
                                     "bottom layer first; special: one stored smallblocks scan.", show_default=False),
    output: Path = typer.Option(..., "--output", "-o", help="The file to write: FILE.svg or FILE.png (800 px wide), "
                                "a new or regular file; - writes the SVG to standard output.", show_default=False),
    kind: Optional[str] = typer.Option(
        None, "--kind", "-k", help=f"What to draw: {', '.join(KINDS)}. Default: matrix, or custom with --x.",
        show_default=False,
    ),
    metric: str = typer.Option("iops", "--metric", help="matrix, timeline, layers, hosts: iops or mb_s (10^6 bytes/s)."),
    cell: Optional[str] = typer.Option(
        None, "--cell", help='histogram, timeline, cache: the cell, as `show` names it, e.g. "4K QD1 rnd read". '
        "Default: the first cell with per-second samples (cache: the first sequential write).", show_default=False,
    ),
    names: Optional[str] = typer.Option(None, "--names", help="layers: layer names, comma-separated: host,vm."),
    x: Optional[str] = typer.Option(None, "--x", help="custom: the x axis: bs, iodepth, numjobs, rw or label.",
                                    show_default=False),
    y: str = typer.Option("iops", "--y", help="custom: the y axis: iops, mb_s (10^6 bytes/s) or p99 (µs)."),
    series: Optional[str] = typer.Option(None, "--series", help="custom: one line or bar colour per value of this "
                                         "field (bs, iodepth, numjobs, rw, label).", show_default=False),
    where: Optional[list[str]] = typer.Option(None, "--where", help="custom: keep cells with FIELD=VALUE, e.g. "
                                              "rw=randwrite or bs=4k; repeat for several.", show_default=False),
    min_effect: float = MinEffectOption,
    alpha: float = AlphaOption,
    force: bool = typer.Option(
        False, "--force", help="Replace FILE if it exists; compare: also draw when key facts (fio version, size, "
        "device) differ."
    ),
    keep_identifiers: bool = KeepIdentifiersOption,
    db: Optional[str] = DbOption,
) -> None:
    """Draw one chart of stored runs into an SVG or PNG file (the format from the file's suffix).

    Every chart has units on its axes, the fio version and the runs in a footer, and colours safe for
    colour-blind readers, with markers or hatches as a second cue (docs/charts.md shows each kind):

    matrix: IOPS or MB/s per block size and queue depth, a panel per pattern.

    percentiles: p50/p99/p99.9 completion latency per cell. histogram: one cell's latency histogram from
    fio's json+ buckets.

    timeline: one cell's per-second samples, ramps shaded, the median and its interval.

    compare: the change per cell from A to B with its interval, coloured by verdict (--min-effect, --alpha,
    --force as in `stackbench compare`, where it also replaces FILE).

    layers: each layer's value per cell and the factor lost between neighbours, the biggest gap outlined.

    synclat: time per sync write against write size, several runs overlaid.

    cache: MB/s against GB written for a sequential write, and where throughput falls and by how much.

    custom: any --x/--y/--series, filtered by --where.

    hosts: a fleet run (`run --hosts`): per cell, a bar per host with the slowest host and the spread named,
    and the fleet's total.

    special: a stored `smallblocks --db` scan: files and bytes per size bin, cumulative bytes, the
    recommended special_small_blocks and the special device's capacity.

    A chart is made to be shared: identifiers in its labels and footer (host names, serials, user names in
    paths, addresses) are replaced by placeholders as in `stackbench report` (docs/reports.md, "Redaction"),
    unless --keep-identifiers.

    Examples:

        stackbench chart baseline -k matrix -o matrix.svg

        stackbench chart baseline -k timeline --cell "4K QD1 rnd read" -o timeline.png

        stackbench chart baseline lz4-off -k compare -o compare.png

        stackbench chart host vm vm-luks -k layers --names host,vm,vm+luks -o layers.svg

        stackbench chart optane sata-ssd -k synclat -o synclat.png

        stackbench chart host vm --x bs --y mb_s --series label --where rw=write -o custom.svg

        stackbench chart rack4 -k hosts -o hosts.svg

        stackbench chart tank-scan -k special -o special.png
    """
    fmt = image_format(output)
    check_output(output, force)
    chosen = kind or ("custom" if x else "matrix")
    if chosen not in KINDS:
        raise UsageError(f"--kind {chosen!r} is not a chart kind", f"Use one of: {', '.join(KINDS)}")
    if metric not in ("iops", "mb_s"):
        raise UsageError(f"--metric {metric!r} is not iops or mb_s", "Use --metric iops or --metric mb_s")
    if chosen == "custom" and not x:
        raise UsageError("--kind custom needs --x",
                         "Add e.g. --x bs --y iops (fields: bs, iodepth, numjobs, rw, label)")
    if chosen != "custom" and (x or series or where):
        raise UsageError(f"--x, --series and --where belong to --kind custom, not {chosen}",
                         "Leave out --kind (or use --kind custom) to draw any axes")
    if cell is not None and chosen not in CELL_KINDS:
        raise UsageError(f"--cell is for {', '.join(CELL_KINDS)}, not {chosen}", "Leave out --cell")
    if names is not None and chosen != "layers":
        raise UsageError(f"--names is for layers, not {chosen}", "Leave out --names")
    if chosen == "compare" and len(runs) != 2:
        raise UsageError(f"compare takes two runs, A then B; got {len(runs)}",
                         "e.g. stackbench chart base new -k compare -o c.svg")
    if chosen == "layers" and len(runs) < 2:
        raise UsageError("layers takes at least two runs, bottom layer first",
                         "e.g. stackbench chart host vm -k layers -o l.svg")
    single = ("matrix", "percentiles", "hosts", "special") + CELL_KINDS
    if chosen in single and len(runs) != 1:
        raise UsageError(f"{chosen} draws one {'scan' if chosen == 'special' else 'run'}; got {len(runs)}",
                         "Give one run, or use --kind custom --x label for several")

    from stackbench.cli.common import open_store_from
    from stackbench.report.redact import redactor

    store = open_store_from(db)
    redact = redactor(keep_identifiers)
    if chosen == "special":
        save_figure(scan_figure(store, runs[0], redact), output, fmt, force=force)
        err.print(f"wrote {shown(output)} (special vdev sizing chart)", highlight=False, soft_wrap=True)
        return
    loaded = [store.get_run(ref) for ref in runs]
    for run in loaded:  # as report_contents does: learn from every run first, then copy them redacted
        redact.learn_run(run)
    for text in [names or "", *(where or [])]:
        redact.learn_text(text)
    figure = draw(chosen, [redact.run(run) for run in loaded], store, metric=metric, cell=cell,
                  names=redact.text(names) if names else None, x=x, y=y, series=series,
                  where=[redact.text(w) for w in where or []], min_effect=min_effect, alpha=alpha, force=force)
    save_figure(figure, output, fmt, force=force)
    err.print(f"wrote {shown(output)} ({figure.kind}: {figure.title})", highlight=False, soft_wrap=True)


def draw(kind: str, runs: list["Run"], store: Any, **options: Any) -> "Figure":
    """The one figure of `kind` from loaded runs; `store` gives what a Run does not hold (json+ buckets)."""
    from stackbench.report import charts

    run = runs[0]
    if kind == "matrix":
        return charts.run_figures(run, metric=options["metric"])[0]
    if kind == "percentiles":
        from stackbench.report.charts.percentiles import percentiles_figure

        return percentiles_figure(run)
    if kind == "timeline":
        from stackbench.report.charts.timeline import timeline_figure

        return timeline_figure(run, pick_cell(run, options["cell"], need_samples=True), options["metric"])
    if kind == "cache":
        return charts.cache_figures(run, cache_cell(run, options["cell"]))[0]
    if kind == "histogram":
        from stackbench.report.charts.histogram import histogram_figure
        from stackbench.store.latency_bins import cell_bins

        chosen = pick_cell(run, options["cell"], need_samples=False)
        return histogram_figure(run, chosen, cell_bins(store, run, chosen))
    if kind == "compare":
        from stackbench.analysis.compare import compare_runs

        comparison = compare_runs(runs[0], runs[1], alpha=options["alpha"], min_effect=options["min_effect"] / 100,
                                  force=options["force"])
        return charts.compare_figures(comparison)[0]
    if kind == "layers":
        from stackbench.analysis.layers import layer_gaps

        names = split_list([options["names"]]) if options["names"] else None
        metric = "bw" if options["metric"] == "mb_s" else "iops"
        return charts.layers_figures(layer_gaps(runs, names, metric), runs)[0]
    if kind == "synclat":
        return charts.synclat_figures(runs)[0]
    if kind == "hosts":
        from stackbench.analysis.fleet import is_fleet

        if not is_fleet(run):
            raise UsageError(f"run {run.id[:12]} is not a fleet run (it was measured on one machine), and "
                             "--kind hosts draws the hosts of a `stackbench run --hosts` run",
                             "Chart a fleet run, or use --kind matrix for this one")
        return charts.hosts_figures(run, options["metric"])[0]
    return charts.custom_figures(runs, x=options["x"], y=options["y"], series=options["series"],
                                 where=options["where"])[0]


def pick_cell(run: "Run", key: str | None, *, need_samples: bool) -> "Cell":
    """The cell named `key` (as `show` prints it, case and spaces ignored), or the default cell."""
    from stackbench.report.charts import representative_cell

    if not run.cells:
        raise StackbenchError(f"run {run.id[:12]} has no cells", "Chart a run with finished cells (`stackbench runs`)")
    if key is None:
        found = representative_cell(run)
        assert found is not None
    else:
        wanted = " ".join(key.lower().split())
        matches = [c for c in run.cells if " ".join(c.pattern.lower().split()) == wanted]
        if not matches:
            raise UsageError(f"run {run.id[:12]} has no cell {key!r}",
                             "Use one of: " + "; ".join(c.pattern for c in run.cells))
        found = matches[0]
    if need_samples and not found.samples:
        with_samples = [c.pattern for c in run.cells if c.samples]
        why, fix = _why_no_samples(run, found)
        raise StackbenchError(
            f"cell {found.pattern} of run {run.id[:12]} has no per-second samples ({why})",
            ("Choose a cell that has: " + "; ".join(with_samples)) if with_samples else fix,
        )
    return found


def _why_no_samples(run: "Run", cell: "Cell") -> tuple[str, str]:
    """Why a cell has no per-second samples, and the fix that gets them."""
    if run.source != "measured":
        return "an imported run has none", "Measure with `stackbench run`, which stores per-second samples"
    if not cell.workload.time_based:
        return ("its file was written in less than fio's one-second sample window, and it was stored before "
                "such a write was kept as one sample"), "Measure again, with a larger --size for a sample per second"
    return ("its fio runs were shorter than fio's one-second sample window",
            "Measure again with --runtime 2 or more")


def cache_cell(run: "Run", key: str | None) -> "Cell":
    """The write cell the cache chart draws: `key`, or the first sequential write with samples."""
    if key is None:
        writes = [c for c in run.cells if c.result.direction == "write" and c.samples]
        writes.sort(key=lambda c: c.workload.rw != "write")  # sequential first, as a cache test writes
        if not writes:
            unsampled = [c for c in run.cells if c.result.direction == "write"]
            if unsampled and run.source == "measured":
                why, fix = _why_no_samples(run, unsampled[0])
                raise StackbenchError(f"run {run.id[:12]} has no write cell with per-second samples ({why})", fix)
            raise StackbenchError(
                f"run {run.id[:12]} has no write cell with per-second samples",
                "Measure a sequential write with `stackbench run --rw write --bs 1m --runtime 10m`",
            )
        return writes[0]
    chosen = pick_cell(run, key, need_samples=True)
    if chosen.result.direction != "write":
        raise UsageError(f"cell {chosen.pattern} is not a write: a write cache fills only with writes",
                         "Choose a write cell with --cell")
    return chosen


def scan_figure(store: Any, ref: str, redact: Any) -> "Figure":
    """The special vdev sizing chart of a stored smallblocks scan, as `smallblocks --chart` draws it, its
    paths passed through `redact` (report/redact.py)."""
    from stackbench.base.errors import StoreError
    from stackbench.report.charts import scan_figures
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
    return scan_figures(result.histogram, recommendation, source=redact.text(", ".join(stored.paths)))[0]


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
