"""The Typer application every command module registers on, and the one error handler.

Command modules only parse options, call into the library and print; domain errors are
`StackbenchError`s that `main()` turns into one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console

app = typer.Typer(
    name="stackbench",
    help=(
        "Benchmark and tune a storage stack layer by layer: measure a baseline with fio, find the layer "
        "that loses performance, change one thing, prove it helped."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

def _width(stream: object) -> int | None:
    """Terminal width on a terminal; otherwise $COLUMNS or 160, so a table piped to a file or read by a
    script keeps its rows on one line instead of Rich's 80-column default squeezing the pattern names."""
    if getattr(stream, "isatty", lambda: False)():
        return None
    try:
        return int(os.environ.get("COLUMNS", "")) or 160
    except ValueError:
        return 160


# Tables and results go to stdout; progress, warnings and errors to stderr, so `--json` stays clean.
out = Console(width=_width(sys.stdout))
err = Console(stderr=True, width=_width(sys.stderr))


def fail(message: str, exit_code: int = 1) -> None:
    """Print `Error: ...` on one line to stderr and exit."""
    err.print(f"[bold red]Error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(exit_code)


def warn(message: str) -> None:
    err.print(f"[yellow]Warning:[/] {message}", highlight=False, soft_wrap=True)


def version_callback(value: bool) -> None:
    if value:
        from stackbench import __version__

        out.print(f"stackbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Benchmark and tune a storage stack layer by layer."""


def run_app(argv: list[str] | None = None) -> None:
    from stackbench.errors import StackbenchError

    try:
        # Outside standalone mode Typer *returns* the code of a typer.Exit, and turns Ctrl-C into Exit(130).
        code = app(args=argv, prog_name="stackbench", standalone_mode=False)
        if code == 130:
            raise KeyboardInterrupt
        if isinstance(code, int) and not isinstance(code, bool) and code:
            sys.exit(code)
    except StackbenchError as error:
        err.print(f"[bold red]Error:[/] {error.one_line()}", highlight=False, soft_wrap=True)
        sys.exit(error.exit_code)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except KeyboardInterrupt:
        err.print("[bold red]Error:[/] interrupted. Nothing half-written was kept.", highlight=False)
        sys.exit(130)
    except Exception as error:
        # Typer's (vendored click) usage errors know how to show themselves.
        show = getattr(error, "show", None)
        if callable(show) and isinstance(getattr(error, "exit_code", None), int):
            show()
            sys.exit(error.exit_code)
        if type(error).__name__ == "Abort":
            err.print("[bold red]Error:[/] aborted.", highlight=False)
            sys.exit(130)
        if os.environ.get("STACKBENCH_DEBUG"):
            raise
        err.print(
            f"[bold red]Error:[/] internal error {type(error).__name__}: {error}. This is a bug in stackbench: "
            "please report it with the output of the same command run with STACKBENCH_DEBUG=1.",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(70)
