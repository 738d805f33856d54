"""The output options are declared once (cli/common.py) and every command that prints a result offers them:
`--format/-f` with every format in the registry, and `--json`."""

from __future__ import annotations

import inspect
from typing import Any, Iterator

import typer.main

from stackbench.cli import app
from stackbench.cli.common import FormatOption, JsonOption
from stackbench.report.formats import FORMATS

RESULTS = {
    "run", "import", "show", "runs", "compare", "ab", "layers", "slog", "synclat", "smallblocks", "goal list",
    "audit", "crypto", "user list",
}
# Commands that answer with a line, not a result: --json, and no --format.
REPLIES = {"rm", "goal add", "facts save", "user add", "user passwd", "user remove", "user claim",
           "token create", "token revoke", "push"}
# Commands that write a document file (-o FILE) and answer with a line: their --format names the file's format
# (html, md, xlsx), not one of the printed formats, and --json is the reply's.
DOCUMENTS = {"report"}


def _commands() -> Iterator[tuple[str, Any]]:
    """(name as typed, click command) for every command, group commands as `goal list`."""

    def walk(command: Any, prefix: str) -> Iterator[tuple[str, Any]]:
        if hasattr(command, "commands"):
            for name, sub in sorted(command.commands.items()):
                yield from walk(sub, f"{prefix} {name}".strip())
        else:
            yield prefix, command

    yield from walk(typer.main.get_command(app), "")


def _flags(command: Any) -> set[str]:
    return {flag for param in command.params for flag in getattr(param, "opts", [])}


def _callbacks() -> Iterator[tuple[str, Any]]:
    for info in app.registered_commands:
        yield info.name or info.callback.__name__, info.callback
    for group in app.registered_groups:
        for info in group.typer_instance.registered_commands:
            yield f"{group.name} {info.name or info.callback.__name__}", info.callback


def test_every_command_that_prints_a_result_takes_format_and_json() -> None:
    commands = dict(_commands())
    assert RESULTS <= commands.keys()
    missing = {name: sorted({"--format", "-f", "--json"} - _flags(commands[name])) for name in sorted(RESULTS)}
    assert {name: flags for name, flags in missing.items() if flags} == {}


def test_a_command_with_only_one_of_them_is_a_reply_with_json() -> None:
    only_one = {name for name, command in _commands() if ("--format" in _flags(command)) != ("--json" in _flags(command))}
    assert only_one <= REPLIES
    assert all("--json" in _flags(command) for name, command in _commands() if name in only_one)


def test_the_options_are_the_shared_declarations() -> None:
    own = []
    for name, callback in _callbacks():
        for param in inspect.signature(callback).parameters.values():
            decls = getattr(param.default, "param_decls", None) or ()
            if "--format" in decls and name not in DOCUMENTS and param.default is not FormatOption:
                own.append(f"{name} --format")
            if "--json" in decls and name in RESULTS and param.default is not JsonOption:
                own.append(f"{name} --json")
    assert own == []


def test_a_command_that_writes_a_document_takes_output_format_and_json() -> None:
    commands = dict(_commands())
    assert {name: sorted({"-o", "--output", "--format", "--json"} - _flags(commands[name])) for name in DOCUMENTS} == \
        {name: [] for name in DOCUMENTS}


def test_format_offers_every_registered_format() -> None:
    assert FormatOption.default == FORMATS[0] == "table"
    assert all(name in FormatOption.help for name in FORMATS)
