"""Options and helpers shared by several commands."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, Optional

import typer

try:  # Typer 0.29 vendors click; earlier releases use the click package (as cli/app.py)
    from typer._click import types as click_types
except ImportError:  # pragma: no cover - depends on the installed Typer
    from click import types as click_types  # type: ignore[no-redef]

from stackbench.cli.app import notes_width, out
from stackbench.report.document import Report
from stackbench.base.registry import one_of
from stackbench.report.formats import FORMATS, exporter
from stackbench.report.tabular import Tabular
from stackbench.base.usertext import refusal

DbOption = typer.Option(
    None,
    "--db",
    envvar="STACKBENCH_DB",
    metavar="URL",
    help="Results database: a file path or an SQLAlchemy URL (sqlite:///PATH, postgresql://HOST/DB). Default: "
    "results.db in the stackbench directory of $XDG_DATA_HOME (~/.local/share).",
    show_default=False,
)

# `smallblocks` and `audit` store their result only when asked: the same --db, without STACKBENCH_DB, since
# a read-only command must not start writing because of the environment.
StoreIntoOption = typer.Option(
    None,
    "--db",
    metavar="URL",
    help="Also store the result in this results database (SQLAlchemy URL or file path), where `runs` lists it "
    "and `show` prints it again. Not taken from STACKBENCH_DB: pass --db \"$STACKBENCH_DB\" for that store.",
    show_default=False,
)


def target_path(text: str) -> Path:
    """A target as typed: an empty one is an error (Path("") would silently mean the current directory)."""
    if not text.strip():
        raise typer.BadParameter("the target path is empty: name a directory, e.g. -t /tank/bench")
    return Path(text)


def check_label(value: Optional[str]) -> Optional[str]:
    """A run label must name one run unambiguously and print on one line (docs/run.md, "Naming runs")."""
    if value is None:
        return None
    if not value.strip() or value != value.strip():
        raise typer.BadParameter("a label must be non-empty text without leading or trailing blanks")
    if len(value) > 200:
        raise typer.BadParameter(f"a label has at most 200 characters, this one {len(value)}")
    reason = refusal("a label", value)  # control, separator and invisible format characters (usertext.py)
    if reason is not None:
        raise typer.BadParameter(reason)
    if len(value) >= 4 and all(c in "0123456789abcdefABCDEF" for c in value):
        raise typer.BadParameter(
            f"{value!r} looks like a run id prefix, which is looked up before labels; add a letter beyond f, "
            "e.g. 'run-" + value + "'"
        )
    return value


# What is made to be shared (report's documents, chart's and smallblocks' chart files) carries placeholders for
# identifiers (report/redact.py); this keeps them. Declared once so that the commands promise the same.
KeepIdentifiersOption = typer.Option(
    False, "--keep-identifiers", help="Keep host names (NFS servers too), disk serials, WWNs, MAC and IP "
    "addresses, user names in paths and UUIDs as they are. Default: replaced by placeholders (host-1, disk-A, "
    "user-1, ...), as in every file made to be shared.",
)


# The --help panel of the options that say how a result is printed (`run --help` groups its options).
OUTPUT_PANEL = "Output"


def _known_format(value: str) -> str:
    return exporter(value).name  # the registry's own error for a name it does not hold


# The output options, declared once: every command that prints a result takes both (tests/cli/test_cli_options.py).
FormatOption = typer.Option(
    FORMATS[0], "--format", "-f", help=f"Output format: {one_of(FORMATS)}.", show_default=True,
    callback=_known_format, metavar="FORMAT", rich_help_panel=OUTPUT_PANEL,
)
JsonOption = typer.Option(
    False, "--json", help="Print machine-readable JSON on stdout instead of tables: the same as --format json.",
    rich_help_panel=OUTPUT_PANEL,
)
# Commands that answer with a line rather than a result (rm, goal add) have --json and no --format.
JsonReplyOption = typer.Option(False, "--json", help="Print machine-readable JSON on stdout instead of text.")


# The two range types below are not click's IntRange and FloatRange on purpose: Typer draws those ranges
# beside the option's metavar in --help ("N [2<=x<=100]", "PCT [0.1<=x<=100]"), which at 80 columns left
# the help text of `tune --help`'s panels 19 characters a line. Each option's help says its range instead,
# as `said` writes it (tests/cli/test_cli_help.py checks that it does, and the help column's width).

class _Bounded(click_types.ParamType):
    """A number option's bounds (`max` None: none above), said in its help and in its usage error."""

    min: float
    max: float | None

    @property
    def said(self) -> str:
        """The range as an option's help says it: "2-100", or "1 or more"."""
        return f"{_number(self.min)}-{_number(self.max)}" if self.max is not None else f"{_number(self.min)} or more"

    def within(self, number: Any, param: Any, ctx: Any) -> Any:
        """`number` if it lies in the range, else click's usage error naming the range."""
        if number < self.min or (self.max is not None and number > self.max):
            bounds = f"from {_number(self.min)} to {_number(self.max)}" if self.max is not None \
                else f"of at least {_number(self.min)}"
            self.fail(f"{_number(number)} is out of range: give one {bounds}", param, ctx)
        return number


def _number(value: Any) -> str:
    """An int as typed (10000000, not 1e+07), a float in its shortest form (0.0001, not 0.000100)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


class FiniteRange(_Bounded, click_types.FloatParamType):
    """A float option's range that refuses nan and inf too: click checks a range by comparing, and every
    comparison with nan is false, so `--alpha nan` passed and ended in an internal error deep in the
    statistics. Every float option of the CLI is declared with one (tests/faults/test_cli_fuzz.py)."""

    def __init__(self, low: float, high: float) -> None:
        self.min, self.max = low, high

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a number: give one from {_number(self.min)} to {_number(self.max)}",
                      param, ctx)
        return self.within(number, param, ctx)


class IntBetween(_Bounded, click_types.IntParamType):
    """An integer option's range (`high` None: no upper bound)."""

    def __init__(self, low: int, high: int | None = None) -> None:
        self.min, self.max = low, high

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return self.within(super().convert(value, param, ctx), param, ctx)


# The verdict options of `compare` and `ab`, declared once so both accept the same ranges.
VERDICT_PANEL = "Verdict"
MinEffectOption = typer.Option(
    5.0, "--min-effect", click_type=FiniteRange(0.1, 100), metavar="PCT", rich_help_panel=VERDICT_PANEL,
    help="Smallest change, in % (0.1-100), that can earn keep/revert."
)
AlphaOption = typer.Option(
    0.05, "--alpha", click_type=FiniteRange(0.0001, 0.5), metavar="P", rich_help_panel=VERDICT_PANEL,
    help="Significance level, 0.0001-0.5 (family-wise over the rows, Holm)."
)


def chosen_format(output_format: str, json_output: bool) -> str:
    """--json is --format json, and wins when both are given."""
    return "json" if json_output else output_format


def emit(fmt: str, tabular: Tabular | None, data: Any, csv: Tabular | None = None) -> None:
    """Print a result with one table (or none) and its JSON data in the chosen format; `csv`, when the
    table's cells are formatted for reading, is the same table with plain numbers for CSV."""
    emit_report(fmt, Report(tables=() if tabular is None else (tabular,), data=data,
                            csv_tables=None if csv is None else (csv,)))


def emit_report(fmt: str, report: Report) -> None:
    """Print a report in the chosen format: the format's exporter renders it for the output console."""
    from stackbench.report.formats import Screen

    text = exporter(fmt).render(report, Screen(out.width, out.color_system, out.no_color,
                                               notes_width=notes_width(sys.stdout)))
    sys.stdout.write(text)
    sys.stdout.flush()


def split_list(values: Optional[list[str]]) -> list[str] | None:
    """Accept both `--bs 4k,64k` and `--bs 4k --bs 64k`."""
    if not values:
        return None
    items = [item.strip() for value in values for item in value.split(",") if item.strip()]
    return items or None


def print_json(data: Any) -> None:
    from stackbench.report.formats.json import dumps

    sys.stdout.write(dumps(data))
    sys.stdout.flush()


def open_store_from(db: str | None):  # noqa: ANN201 - returns Store, imported lazily for fast --help
    """Open the store, and first settle runs whose process died (SIGKILL, power cut): see abandoned.py; and
    remove the scratch volumes such a process left (scratch_volumes.py). The runs' cleanup is imported only
    when some run is still marked running (a fiftieth of `show`'s start)."""
    from stackbench.cli.app import warn
    from stackbench.measure.scratch_volumes import reap as reap_volumes
    from stackbench.store import open_store

    store = open_store(db)
    running = store.running_runs()
    notes = []
    if running:
        from stackbench.measure.abandoned import reap

        notes = [str(note) for note in reap(store, running)]
    for note in [*notes, *reap_volumes()]:  # runs, and layers --auto's scratch volumes
        warn(note)
    return store


__all__ = [
    "DbOption", "StoreIntoOption", "KeepIdentifiersOption", "FormatOption", "JsonOption", "JsonReplyOption", "chosen_format", "emit", "emit_report", "split_list",
    "print_json", "open_store_from", "out",
]


def print_run(store: Any, run: Any, fmt: str) -> None:
    """A run in `fmt`, with the stored goals checked against it (docs/run.md)."""
    from stackbench.analysis.goals import evaluate
    from stackbench.report.run import run_report

    emit_report(fmt, run_report(run, evaluate([goal for _, goal in store.list_goals()], run)))


def say_stored(store: Any, kind: str, item_id: str, command: str) -> None:
    """From here on, an interruption of `command` says whether its `kind` (scan, audit) `item_id` was
    stored: the store is asked, since the signal may land during the commit or after it, while printing."""
    from stackbench.cli.app import say_kept
    from stackbench.base.errors import Interrupted, StackbenchError

    def describe(cause: str) -> Interrupted:
        try:
            store.resolve_any(item_id, kinds=(kind,))
        except StackbenchError:
            return Interrupted(f"{cause} stopped {command} before its {kind} was stored; nothing was kept",
                               f"Run `stackbench {command}` again")
        return Interrupted(f"{cause} stopped {command} after its {kind} was stored as {item_id[:12]}, which is "
                           "kept", f"See it with `stackbench show {item_id[:12]}`")

    say_kept(describe)
