"""`stackbench report RUN... [--compare A B] [--layers R1,R2,...] -o FILE`: a shareable document of stored runs
(and tune sessions) in HTML, Markdown (with PNG charts beside it) or XLSX, with identifiers replaced by
placeholders unless --keep-identifiers (docs/reports.md).

The command gathers the report's contents from the store (report_contents.build_contents, which the
server's report downloads share) and hands them to the document format; the files are written all at
once or not at all.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from stackbench.cli.app import app, out
from stackbench.cli.common import (
    DbOption, JsonReplyOption, KeepIdentifiersOption, open_store_from, print_json, split_list,
)
from stackbench.report.documents import DOCUMENT_FORMATS


def _format_help() -> str:
    """--format's help, made from the registry of document formats (report/documents/__init__.py)."""
    formats = DOCUMENT_FORMATS.values()
    named = "; ".join(f.name + (f" (or {', '.join(f.aliases)})" if f.aliases else "") + f", {f.description}"
                      for f in formats)
    suffixes = ", ".join(suffix for f in formats for suffix in f.suffixes)
    return f"Document format: {named}. Default: from -o's suffix ({suffixes}), else {next(iter(DOCUMENT_FORMATS))}."


@app.command("report")
def report_command(
    runs: Optional[list[str]] = typer.Argument(
        None, help="Runs to report, each with its facts, warnings, goals, cells and commands, or stored tune "
        "sessions, each as `show` prints it: ids, id prefixes or labels. Default: the runs of --compare and "
        "--layers.", show_default=False,
    ),
    compare: Optional[tuple[str, str]] = typer.Option(
        None, "--compare", metavar="A B", help="Add the comparison of run B against run A, as `stackbench compare A B` "
        "with its defaults (differences in key facts are shown, not refused).", show_default=False,
    ),
    layers: Optional[list[str]] = typer.Option(
        None, "--layers", help="Add the layers table of these runs, bottom layer first: comma-separated or repeated "
        "(--layers host,vm,vm-luks).", show_default=False,
    ),
    names: Optional[str] = typer.Option(None, "--names", help="Layer names for --layers, comma-separated. Default: "
                                        "the runs' labels."),
    audits: Optional[list[str]] = typer.Option(
        None, "--audit", help="Add a stored audit (`audit --db`): its findings and what was fixed since the audit "
        "before it. Repeat for several.", show_default=False,
    ),
    output_format: Optional[str] = typer.Option(None, "--format", "-f", help=_format_help(), show_default=False),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="The file to write (a new or regular file; - for standard output). Default: "
        "stackbench-report-ID.FORMAT in the current directory, ID the first run's id prefix.", show_default=False,
    ),
    force: bool = typer.Option(False, "--force", help="Replace the file (and a Markdown report's PNG files) if it exists "
                               "as a regular file."),
    keep_identifiers: bool = KeepIdentifiersOption,
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Write stored runs as one shareable document, in a format of --format.

    A stored tune session (`tune --apply --db`) is shown as `stackbench show TUNE_ID` prints it: the summary,
    the races and each knob's comparison table, made again from its runs.

    Host names, disk serial numbers, WWNs, MAC addresses, user names in paths and UUIDs are replaced by
    stable placeholders (host-1, disk-A, user-1, ...) everywhere in the report, unless --keep-identifiers.
    An existing file is kept unless --force; a device, pipe, socket or link at FILE is never written.

    Example:

        stackbench report baseline lz4 --compare baseline lz4 -o tuning.html

        stackbench report host-zfs vm --layers host-zfs,vm --names host,vm -o layers.md

        stackbench report baseline -o baseline.xlsx

        stackbench report TUNE_ID -o tune.html
    """
    from stackbench.base.errors import UsageError
    from stackbench.base.output_files import Destination, check, is_stdout
    from stackbench.report.documents import document_format
    from stackbench.load.report_contents import build_contents

    if not runs and not compare and not layers and not audits:
        raise UsageError("name at least one run to report", "e.g. stackbench report baseline -o baseline.html, "
                         "or --compare A B, or --layers R1,R2, or --audit AUDIT")
    fmt = document_format(output_format, output.suffix if output else "")
    destination = Destination("-o", stdout=True)
    if output is not None:
        if is_stdout(output) and json_output:
            raise UsageError("--json and -o - both write to standard output", "Give -o FILE, or leave out --json")
        check([output], force=force, destination=destination)  # before the work, and again when writing
    charts = _chart_files() if fmt.name == "html" else None
    store = open_store_from(db)
    named = [store.resolve_any(ref, kinds=("run", "tune")) for ref in runs or []]
    tunes = [item for kind, item in named if kind == "tune"]
    contents = build_contents(store, [item for kind, item in named if kind == "run"], compare=compare,
                              layers=split_list(layers), names=split_list([names]) if names else None,
                              keep_identifiers=keep_identifiers, argv=sys.argv[1:], audits=audits or (),
                              charts=charts, tunes=tunes)
    if output is None:
        first = contents.runs[0].run.id[:12] if contents.runs else f"tune-{tunes[0][:12]}" if tunes \
            else "layers" if layers else "audit"
        output = Path(f"stackbench-report-{first}{fmt.suffixes[0]}")
    files = _write(fmt, contents, output, force=force, destination=destination)
    if not is_stdout(output):
        _reply(fmt, files, contents, json_output=json_output, redacted=not keep_identifiers, tunes=tunes)


def _chart_files() -> Any:
    """An HTML report's charts are SVG: those kept by content are read, not drawn (docs/report.md)."""
    from stackbench.cli.report_charts import report_chart_files

    return report_chart_files()


def _write(fmt: Any, contents: Any, output: Path, *, force: bool, destination: Any) -> list[tuple[Path, bytes]]:
    """Render the document and write it with the files beside it (a Markdown report's PNG charts), all or none
    (base/output_files.write_files); what was written, for the reply."""
    from stackbench.base.errors import UsageError
    from stackbench.base.output_files import is_stdout, write_files

    stem = output.name[: -len(output.suffix)] if output.suffix else output.name
    main, beside = fmt.render(contents, stem)
    if is_stdout(output) and beside:
        raise UsageError(f"a {fmt.name} report's charts are files beside it, and standard output holds one file",
                         "Give -o FILE.md, or --format html for one self-contained file")
    files = [(output, main), *((output.with_name(name), data) for name, data in beside)]
    write_files(files, force=force, destination=destination)
    return files


def _reply(fmt: Any, files: list[tuple[Path, bytes]], contents: Any, *, json_output: bool, redacted: bool,
           tunes: list[str]) -> None:
    """What was written, once it is: one line, or the JSON reply."""
    from stackbench.base.units import count

    if json_output:
        print_json({"format": fmt.name, "files": [str(path) for path, _ in files], "redacted": redacted,
                    "redaction": contents.redaction, "runs": [part.run.id for part in contents.runs],
                    "tune_sessions": tunes, "charts": len(contents.figures)})
        return
    more = f" and {count(len(files) - 1, 'chart file')} beside it" if len(files) > 1 else ""
    out.print(f"Wrote {files[0][0]}{more} ({fmt.name}; {contents.redaction}).", highlight=False)


__all__ = ["report_command"]
