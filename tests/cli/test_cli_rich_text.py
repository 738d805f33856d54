"""Paths, labels, targets, notes and commands print as typed: never an emoji, never markup.

Found by hand: a path `/tank/:ab:` printed as `/tank/🆎` in `report`'s "Wrote ..." line. Rich replaces
emoji codes (`:ab:`, `:smile:`) in every string a console prints unless the console is made with
emoji=False, markup or not; and a progress column made without markup=False reads its text as markup and
emoji codes too. So the CLI's consoles are `UserTextConsole`s (no markup, no highlighting, no emoji), and
a check over the source keeps every console and progress column that way (`test_no_rich_...`).

Each command that echoes a path or a label runs here with a directory and a label that hold both an emoji
code and markup; the output must hold them verbatim."""

from __future__ import annotations

import ast
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from conftest import DATA, cli_here, run_cli

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "stackbench"
TRICKY = ":ab: [b]x[/b] :smile:"
EMOJI = ("\U0001f18e", "\U0001f604")  # 🆎 and 😄, what Rich made of :ab: and :smile:


def _verbatim(done, *, code: int = 0, markdown: bool = False) -> str:  # noqa: ANN001 - conftest's Result
    text = done.stdout + done.stderr
    assert done.returncode == code, text
    if markdown:  # Markdown escapes the brackets, so that they read as typed where it is shown
        text = re.sub(r"\\(.)", r"\1", text)
    assert TRICKY in text, text  # the code and the markup as typed ...
    assert not any(emoji in text for emoji in EMOJI), text  # ... and never an emoji
    return text


@pytest.fixture
def tricky() -> Iterator[tuple[Path, str]]:
    """A directory whose name holds an emoji code and markup, a store in it, two runs labelled alike. Under a
    short directory of /tmp, not tmp_path: the tables print the path beside the label at a width of 160, and
    a longer tmp_path (an xdist worker's) would wrap the label onto two lines."""
    base = Path(tempfile.mkdtemp(prefix="sbt-", dir="/tmp"))
    directory = base / TRICKY
    directory.mkdir(parents=True)  # `[/b]` makes it two directories: the path reads as TRICKY
    db = f"sqlite:///{directory / 'r.db'}"
    capture = directory / "capture.json"
    shutil.copyfile(DATA / "fio" / "randread-psync.json", capture)
    try:
        for label in (TRICKY, TRICKY + " B"):
            done = cli_here("import", str(capture), "--label", label, "--db", db)
            _verbatim(done)  # import names its label
        yield directory, db
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
def test_commands_that_echo_a_label_or_a_path_print_them_verbatim(tricky: tuple[Path, str], monkeypatch) -> None:  # noqa: ANN001
    directory, db = tricky
    b = TRICKY + " B"
    for args in (["runs"], ["show", TRICKY], ["compare", TRICKY, b], ["layers", TRICKY, b, "--names", f"{TRICKY},y"],
                 ["report", TRICKY, "-o", str(directory / "r.html")], ["report", TRICKY, "-f", "md",
                                                                        "-o", str(directory / "r.md")],
                 ["chart", TRICKY, "-o", str(directory / "c.svg")], ["rm", b, "--yes"]):
        for fmt in ([], ["--format", "markdown"]) if args[0] in ("runs", "show", "compare", "layers") else ([],):
            _verbatim(cli_here(*args, *fmt, "--db", db), markdown=bool(fmt))
    made = run_cli("user", "add", "alice", "--password-stdin", "--db", db, input="correct horse battery staple\n")
    assert made.returncode == 0, made.stderr
    assert cli_here("user", "claim", "alice", TRICKY, "--db", db).returncode == 0  # names a label, echoes none
    assert cli_here("token", "create", "--scope", "push", "--user", "alice", "--note", TRICKY, "--db", db).returncode == 0
    _verbatim(cli_here("token", "list", "--db", db))  # the note
    assert cli_here("export", "--openmetrics", str(directory / "m.prom"), "--db", db).returncode == 0
    assert TRICKY in (directory / "m.prom").read_text()
    monkeypatch.setattr("stackbench.web.server.serve", lambda config: None)
    _verbatim(cli_here("serve", "--db", db))  # "Serving PATH on ..."
    scanned = cli_here("smallblocks", str(directory), "--chart", str(directory / "special.svg"), "--db", db,
                       "--label", TRICKY + " scan")
    _verbatim(scanned)
    _verbatim(cli_here("runs", "--kind", "scan", "--db", db))  # the stored scan's label
    # a run: the "Run ...: file PATH" line and the stored label (a second of fio)
    _verbatim(cli_here("run", "-t", str(directory), "--bs", "4k", "--rw", "randread", "--qd", "1", "--runs", "1",
                       "--runtime", "1", "--ramp", "0", "--size", "8M", "--db", db, "--label", TRICKY + " run"))
    # the one-line error names the missing run as typed
    _verbatim(cli_here("show", TRICKY + " nowhere", "--db", db), code=1)


@pytest.mark.slow  # fio: synclat sweeps two sizes, ab runs two arms, slog measures a candidate for 15 s
def test_measuring_commands_echo_their_target_and_commands_verbatim(tmp_path: Path) -> None:
    directory = tmp_path / TRICKY
    directory.mkdir(parents=True)  # `[/b]` makes it two directories: the path reads as TRICKY
    db = f"sqlite:///{tmp_path / 'r.db'}"
    _verbatim(cli_here("synclat", str(directory), "--sizes", "4k", "--min-time", "1s", "--size", "8M",
                       "--label", TRICKY + " sweep", "--db", db))
    _verbatim(cli_here("ab", "-t", str(directory), "--a", f"echo '{TRICKY}'", "--b", "true", "--rounds", "2",
                       "--bs", "4k", "--rw", "randread", "--qd", "1", "--runtime", "1", "--ramp", "0",
                       "--size", "8M", "--label", "tricky-ab", "--db", db))  # "applying a: COMMAND"
    _verbatim(cli_here("slog", str(directory), "--size", "8M", "--db", db))  # "SLOG candidate PATH"
    facts = tmp_path / f"facts {TRICKY}"
    saved = cli_here("facts", "save", str(facts))
    assert TRICKY in saved.stdout + saved.stderr and not any(e in saved.stdout + saved.stderr for e in EMOJI)
    assert json.loads(cli_here("audit", "--from", str(facts), "--json").stdout) is not None


def _calls(name: str) -> list[tuple[Path, ast.Call]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if called == name:
                    found.append((path.relative_to(PACKAGE), node))
    return found


def _keyword(call: ast.Call, name: str) -> object:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return keyword.value.value
    return None


@pytest.mark.slow
def test_no_rich_console_or_column_reads_user_text_as_markup_or_emoji() -> None:
    """The mechanism: every Rich Console the package makes is a UserTextConsole (cli/app.py, which sets
    them) or is made with emoji=False and markup=False; every progress TextColumn with markup=False (with markup on, Rich
    reads its text as markup and emoji codes); and nothing renders markup (`from_markup`, `render_markup`,
    `rich.print`) or turns emoji or markup on."""
    consoles = _calls("Console")  # UserTextConsole's own super().__init__(...) is not a call named Console
    assert consoles, "the check finds no Console: it is broken"
    for path, call in consoles:
        assert _keyword(call, "emoji") is False and _keyword(call, "markup") is False, f"{path}:{call.lineno}"
    for path, call in _calls("TextColumn"):
        assert _keyword(call, "markup") is False, f"{path}:{call.lineno}"
    for name in ("from_markup", "render_markup", "rprint"):
        assert _calls(name) == [], name
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text()
        assert "emoji=True" not in source and "markup=True" not in source, path
        assert "from rich import print" not in source and "rich.print(" not in source, path
    source = (PACKAGE / "cli" / "app.py").read_text()
    assert "out = UserTextConsole(" in source and "err = UserTextConsole(" in source
