"""Command-line interface: one module per command, all registered on the Typer application in cli/app.py.

A command runs with only its own module imported: `stackbench runs` has no use for what `run`, `audit`
or `push` import, and Typer turns every registered command into a click command on each call. COMMANDS
says which module registers which top-level command or group (tests/cli/test_cli_commands.py checks it
against what the modules register). `--help`, an unknown name, and `stackbench.cli.app` asked for as a
whole (the tests, the docs check) load them all, in the order of COMMANDS.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

_application = importlib.import_module("stackbench.cli.app")
# Importing the submodule bound its name in this package; `stackbench.cli.app` is the whole application
# instead (module __getattr__ below), as it was when every command module was imported with the package.
globals().pop("app")

# Top-level command or group name -> the module under stackbench.cli that registers it, in --help's order.
COMMANDS: dict[str, str] = {
    "run": "run",
    "runs": "results",
    "rm": "results",
    "show": "results",
    "import": "results",
    "compare": "compare",
    "ab": "ab",
    "tune": "tune",
    "layers": "layers",
    "stack": "stack",
    "goal": "goals",
    "synclat": "synclat",
    "slog": "slog",
    "smallblocks": "smallblocks",
    "facts": "audit",
    "audit": "audit",
    "crypto": "crypto",
    "report": "report",
    "serve": "serve",
    "user": "user",
    "token": "push",
    "push": "push",
    "export": "push",
    "chart": "chart",
}
MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))


def command_name(argv: list[str]) -> str | None:
    """The command an argument list asks for: its first word that is not an option (the application's
    own options, --version and --help, take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def load_commands(argv: list[str] | None = None) -> None:
    """Register the command `argv` names, or every command when it names none that is known."""
    name = command_name(argv) if argv is not None else None
    if name in COMMANDS:
        importlib.import_module(f"stackbench.cli.{COMMANDS[name]}")
        return
    for module in MODULES:
        importlib.import_module(f"stackbench.cli.{module}")
    _in_help_order(_application.app)


def _in_help_order(application: "typer.Typer") -> None:
    """Commands registered one at a time (a test process runs one command, then asks for --help) keep
    the order a fresh `stackbench --help` shows."""
    rank = {module: index for index, module in enumerate(MODULES)}

    def place(module: str) -> int:
        return rank.get(module.rsplit(".", 1)[-1], len(rank))

    application.registered_commands.sort(key=lambda info: place(info.callback.__module__))
    application.registered_groups.sort(
        key=lambda info: place(info.typer_instance.registered_commands[0].callback.__module__))


def all_commands() -> "typer.Typer":
    """The application with every command registered."""
    load_commands()
    return _application.app


def __getattr__(name: str) -> object:
    if name == "app":
        return all_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_app(argv: list[str] | None = None) -> None:
    """The CLI's entry point with the asked command's module loaded first; `argv` None reads sys.argv."""
    load_commands(sys.argv[1:] if argv is None else argv)
    if not gc.isenabled():  # off since the process started (__main__.entry): the start-up's objects are loaded
        gc.freeze()  # they live as long as the process: no collection scans them again
        gc.enable()
    _application.run_app(argv)


def main() -> None:
    run_app()


__all__ = ["COMMANDS", "all_commands", "load_commands", "main", "run_app"]
