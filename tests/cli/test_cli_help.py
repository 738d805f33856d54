"""Every command's --help reads at 80 and 120 columns: no line broken mid-sentence and no text cut off by "…".

Issue 33: at 80 columns 9 of 22 command summaries and 40 of 262 help lines broke mid-sentence (docstrings
hard-wrapped at about 110 columns, which Typer's rich markup mode keeps), and 13 option texts of `run --help`
ended in "…" (a word wider than the narrow help column). The help is rendered here through the real entry
point at each width, twice: as the user sees it, which must hold no "…", and with Typer's tables drawn with
ASCII borders and a line between rows, so that every cell's lines can be read back as the paragraph they wrap.
A line of a paragraph is broken too early when the next line's first word would have fitted on it: a text
that reflows never does that, and a hard-wrapped one does wherever the terminal is narrower than its wraps.
"""

from __future__ import annotations

import re
from typing import Iterator

import pytest
import typer.main
import typer.rich_utils

from conftest import cli_here
from stackbench.cli import app

WIDTHS = (80, 120)


def _commands() -> list[list[str]]:
    """Every command and group as typed: [], ["run"], ["goal"], ["goal", "add"], ..."""

    def walk(command: object, words: list[str]) -> Iterator[list[str]]:
        yield words
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk(sub, [*words, name])

    return list(walk(typer.main.get_command(app), []))


COMMANDS = _commands()


def _help(words: list[str], width: int, monkeypatch: pytest.MonkeyPatch, *, boxed: bool) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    for table in ("OPTIONS", "COMMANDS"):
        monkeypatch.setattr(typer.rich_utils, f"STYLE_{table}_TABLE_BOX", "ASCII" if boxed else "")
        monkeypatch.setattr(typer.rich_utils, f"STYLE_{table}_TABLE_SHOW_LINES", boxed)
    done = cli_here(*words, "--help")
    assert done.returncode == 0, done.stderr
    return done.stdout


def _early_breaks(lines: list[str], limit: int) -> list[str]:
    """Lines of one wrapped paragraph whose text must end by column `limit` (counted from the lines' own
    start) that end although the next line's first word would have fitted after them. Typer puts a default,
    a range or "[required]" after the help text as an item of its own, and an example's shell line ends in
    a backslash before the line that continues it: neither is counted."""
    found = []
    for line, following in zip(lines, lines[1:]):
        text, nxt = line.rstrip(), following.strip()
        if not text.strip() or not nxt or nxt.startswith("[") or text.endswith("\\"):
            continue
        if len(text) + 1 + len(nxt.split()[0]) <= limit:
            found.append(f"{text.strip()!r} / {nxt!r}")
    return found


def _cells(panel: list[str]) -> Iterator[list[str]]:
    """The lines of each cell of an ASCII-bordered table inside a panel, padding included."""
    row: list[list[str]] = []
    for line in [*panel, "+"]:
        inner = line.strip("│ ")
        if set(inner) <= set("-+|"):  # a border between rows, or the table's top or bottom
            yield from (list(column) for column in zip(*row))
            row = []
        elif inner.startswith("|"):
            row.append(inner[1:-1].split("|"))


def early_breaks(text: str, width: int) -> list[str]:
    """Every too-early line break of a --help rendered with ASCII table borders at `width` columns: in a
    table cell (the text may end one space before the cell's border), and in the description above the
    panels, whose paragraphs and examples end as far from the right edge as they start from the left."""
    found: list[str] = []
    panel: list[str] | None = None
    paragraph: list[str] = []
    for line in [*text.splitlines(), ""]:
        indent = len(line) - len(line.lstrip())
        if paragraph and (not line.strip() or indent != len(paragraph[0]) - len(paragraph[0].lstrip())):
            found += _early_breaks(paragraph, width - (len(paragraph[0]) - len(paragraph[0].lstrip())))
            paragraph = []
        if line.startswith("╭"):
            panel = []
        elif line.startswith("╰") and panel is not None:
            found += [early for cell in _cells(panel) for early in _early_breaks(cell, len(cell[0]) - 1)]
            panel = None
        elif panel is not None:
            panel.append(line)
        elif line.strip():
            paragraph.append(line)
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("words", COMMANDS, ids=lambda words: " ".join(words) or "stackbench")
def test_help_has_no_line_broken_mid_sentence(words: list[str], width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assert early_breaks(_help(words, width, monkeypatch, boxed=True), width) == []


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("words", COMMANDS, ids=lambda words: " ".join(words) or "stackbench")
def test_help_cuts_off_no_text(words: list[str], width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _help(words, width, monkeypatch, boxed=False)
    assert "…" not in shown
    assert max(len(line) for line in shown.splitlines()) <= width


def test_the_check_finds_a_hard_wrapped_paragraph() -> None:
    """The detector itself: a paragraph wrapped at 30 columns in an 80-column text is found, line by
    line, and the same words wrapped by Rich at 80 are not."""
    from rich.console import Console

    words = ("Each cell is measured in several separate fio runs, interleaved round-robin across cells so "
             "that drift in the machine's load hits every cell alike.")
    console = Console(width=80, record=True, file=open("/dev/null", "w"))
    console.print(" " + words)
    reflowed = console.export_text()
    hard = "\n".join(" " + line for line in re.findall(r".{1,30}(?:\s|$)", words))
    assert early_breaks(reflowed, 80) == []
    assert len(early_breaks(hard, 80)) >= 3


def test_run_groups_its_options_into_panels(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _help(["run"], 80, monkeypatch, boxed=False)
    panels = re.findall(r"╭─ (.+?) ─", shown)
    # Typer shows the options of no panel first: --db, which every command that reads the store takes, and --help
    assert panels == ["Options", "Target", "Workload", "Repeats", "Output", "Fleet (--hosts)"]


# The least width of an option's help text at 80 columns. Issue: `tune --help`'s Rounds panel and `ab --help`'s
# Commands panel showed "<int range> [2<=x<=100]" and "SECONDS [1<=x<=86400]", Typer's range drawn in the type
# column, which left their help text 18 and 24 characters a line. Without it the narrowest is tune's Rounds
# panel at 27 (its --calibrate-rounds and --no-confirm columns).
MIN_HELP_WIDTH = 26


def help_widths(text: str) -> dict[str, int]:
    """Per panel of a --help as the user sees it, the width of its help column, from the panel's right border
    to where most of its wrapped lines start (a continuation line of the type column starts left of it)."""
    widths: dict[str, int] = {}
    panel: str | None = None
    starts: list[int] = []
    right = 0
    for line in text.splitlines():
        if line.startswith("╭"):
            panel, starts, right = line.strip("╭─╮ "), [], len(line) - 1
        elif line.startswith("╰") and panel is not None:
            if starts:
                widths[panel] = right - max(set(starts), key=starts.count)
            panel = None
        elif panel is not None:
            inner = line[1:right]
            if not inner[:3].strip() and inner.strip():  # a wrapped line: nothing in the option's column
                starts.append(1 + len(inner) - len(inner.lstrip()))
    return widths


def test_the_width_check_finds_a_narrow_help_column() -> None:
    """The measure itself, on a panel drawn as Typer draws one: help text from column 59 of 80 is 20 wide."""
    panel = ["╭─ Rounds " + "─" * 69 + "╮",
             "│ --rounds  -r  <int range>" + " " * 33 + "Most rounds per   │",
             "│" + " " * 58 + "knob, A first and │",
             "│" + " " * 58 + "B first in turn.  │",
             "╰" + "─" * 78 + "╯"]
    assert help_widths("\n".join(panel)) == {"Rounds": 20}


@pytest.mark.parametrize("words", COMMANDS, ids=lambda words: " ".join(words) or "stackbench")
def test_every_help_column_is_wide_enough_at_80_columns(words: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    widths = help_widths(_help(words, 80, monkeypatch, boxed=False))
    assert {panel: width for panel, width in widths.items() if width < MIN_HELP_WIDTH} == {}


def _ranged_options() -> list[tuple[list[str], str, str]]:
    """(command words, option, its range as its help must say it) of every shown option with a range."""
    from stackbench.cli.common import FiniteRange, IntBetween

    found = []
    for words in COMMANDS:
        command = typer.main.get_command(app)
        for word in words:
            command = command.commands[word]  # type: ignore[attr-defined]
        for param in command.params:
            if isinstance(param.type, (FiniteRange, IntBetween)) and not getattr(param, "hidden", False):
                found.append((words, param.opts[0], param.type.said))
    return found


RANGED = _ranged_options()


def test_the_ranged_options_are_found() -> None:
    """The walk above itself: `tune --rounds` (2-100) and `serve --port` (1-65535) are among them."""
    assert (["tune"], "--rounds", "2-100") in RANGED and (["serve"], "--port", "1-65535") in RANGED


@pytest.mark.parametrize("words, option, said", RANGED, ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_every_range_is_said_in_its_options_help_at_80_columns(words: list[str], option: str, said: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A number option's range is in its own help text, since Typer no longer draws it (it drew "[2<=x<=100]"
    in the type column, 19 characters of help a line left at 80 columns): the option's row, its first line
    and the lines below it that start right of the option's column, holds it."""
    shown = _help(words, 80, monkeypatch, boxed=False)
    assert max(len(line) for line in shown.splitlines()) <= 80 and "<=x" not in shown
    lines = shown.splitlines()
    first = next((i for i, line in enumerate(lines) if re.match(rf"│[ *]*{re.escape(option)}(?![\w-])", line)), None)
    assert first is not None, f"{option} is not in {' '.join(words)} --help"
    column = lines[first].index(option)
    row = [lines[first]]
    for line in lines[first + 1:]:
        inner = line.lstrip("│ ")
        if not inner or line.startswith("╰") or len(line) - len(inner) <= column:
            break
        row.append(line)
    text = " ".join(" ".join(row).replace("│", " ").split())
    assert said in text, text
