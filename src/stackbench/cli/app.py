"""The Typer application every command module registers on, and the one error handler.

Command modules only parse options, call into the library and print; domain errors are
`StackbenchError`s that `main()` turns into one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable

try:  # Typer 0.29 vendors click; earlier releases use the click package
    from typer._click import exceptions as click
except ImportError:  # pragma: no cover - depends on the installed Typer
    import click  # type: ignore[no-redef]
import typer
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.text import Text

from stackbench.base.usertext import shown
if TYPE_CHECKING:
    from stackbench.base.errors import StackbenchError

app = typer.Typer(
    name="stackbench",
    help=(
        "Benchmark and tune a storage stack layer by layer: measure a baseline with fio, find the layer "
        "that loses performance, change one thing, prove it helped."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)

# Exit status, the same for every command (README, "Exit status"): 0 done; 1 an error or refusal; 2 bad
# usage; 3 done, and the audit found problems or the guest hides AES-NI; 70 a bug; 130 interrupted.
EXIT_FINDINGS = 3


def _width(stream: object) -> int | None:
    """Terminal width on a terminal; otherwise $COLUMNS or 160, so a table piped to a file or read by a
    script keeps its rows on one line instead of Rich's 80-column default squeezing the pattern names."""
    if _is_terminal(stream):
        return None
    return _columns() or 160


def notes_width(stream: object) -> int | None:
    """The width a table's notes wrap at: None on a terminal (its width, as the tables'); otherwise $COLUMNS
    or 80, Rich's own width for a pipe. Not the 160 a piped table is laid out in (`_width`): that keeps rows
    whole, but a note is prose, and its 160-character lines ran past the 80 columns a log or a pager is
    read at."""
    return None if _is_terminal(stream) else _columns() or 80


def _is_terminal(stream: object) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def _columns() -> int | None:
    """$COLUMNS as a number of columns, None where it is unset, 0 or not a number."""
    try:
        return int(os.environ.get("COLUMNS", "")) or None
    except ValueError:
        return None


class UserTextConsole(Console):
    """The CLI's consoles: what they print is data, never markup or codes, and shows as it was typed.

    Labels, paths, targets, notes, commands, facts and fio's messages are printed as they are: markup is
    off (a label `[b]x[/b]` is text, not bold), highlighting is off, and Rich's emoji codes are off (a path
    `/tank/:ab:` stayed `:ab:` only on a console made with emoji=False: Rich replaces `:ab:` by an emoji
    even with markup off). Our own styling goes through `Text` and `style=`. Every character printed that
    is a control, separator or invisible format character (an ESC, a carriage return, U+202E from a store
    written before labels refused them) is written escaped (usertext.shown), newlines kept; tables are
    escaped before they are laid out (report/tabular.py), this is the backstop for everything else."""

    def __init__(self, **options: Any) -> None:
        super().__init__(markup=False, highlight=False, emoji=False, **options)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> RenderResult:
        for segment in super().render(renderable, options):
            text = segment.text
            if segment.control or text.isprintable():
                yield segment
            else:
                yield Segment(shown(text, keep="\n"), segment.style, segment.control)


# Tables and results go to stdout; progress, warnings and errors to stderr, so `--json` stays clean.
out = UserTextConsole(width=_width(sys.stdout))
err = UserTextConsole(stderr=True, width=_width(sys.stderr))


def error_line(message: str) -> None:
    """`Error: message` as one line on stderr; the message is printed as text, whatever it contains."""
    err.print(Text.assemble(("Error:", "bold red"), " ", one_line(message)), soft_wrap=True)


def one_line(message: str) -> str:
    """Collapse line breaks (a path or an fio message may hold some) so an error stays one line."""
    return " ".join(str(message).split())


def warn(message: str) -> None:
    err.print(Text.assemble(("Warning:", "yellow"), " ", one_line(message)), soft_wrap=True)


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
    restore_dead_tune_sessions()


def restore_dead_tune_sessions() -> None:
    """Settings a `tune` session changed and could not restore because its process was killed (kill -9, OOM,
    power cut) are restored when the next stackbench command starts, as dead runs' scratch files are cleaned
    up (docs/tune.md, "The journal"); a value someone else changed since is left alone and named."""
    from stackbench.measure.tune_journal import needs_recovery

    if needs_recovery():
        from stackbench.measure.tune_changes import recover

        recover(warn)  # a damaged journal is named in a warning, and never stops an unrelated command


# What the running command has kept so far, for an interruption its own code does not catch (one that lands
# after its last commit, while it reads back or prints): the interruption's cause ("Ctrl-C", "SIGTERM")
# in, the one line that says what was kept out. Without it the line would say nothing was kept.
_kept: "Callable[[str], StackbenchError] | None" = None


def say_kept(describe: "Callable[[str], StackbenchError]") -> None:
    """From now on, an interruption of this command is reported by `describe(cause)`."""
    global _kept
    _kept = describe


# The last SIGTERM or SIGHUP delivered: Typer turns the exception that reaches it into exit code 130 and
# drops it, so run_app learns the cause from here.
_delivered: str | None = None


def _terminate(signum: int, _frame: object) -> None:
    global _delivered
    from stackbench.base.errors import Terminated

    _delivered = signal.Signals(signum).name
    raise Terminated(_delivered)


def _deliver_again(unraisable: Any) -> None:
    """`sys.unraisablehook`: a Ctrl-C or SIGTERM whose exception was raised inside a callback whose
    exceptions Python ignores (a weakref's, as the import system's module locks use while a command
    imports its modules; a `__del__`) would be printed as a traceback and lost, and the command would go
    on to its end, its scratch file with it. The signal is sent again from a timer thread 50 ms later, so
    that it lands in the program's own flow. It cannot be raised from here: whatever this hook raises is
    ignored the same way (and `os.kill` to ourselves here would run the handler at once, in this hook)."""
    error = unraisable.exc_value
    if isinstance(error, KeyboardInterrupt):
        from stackbench.base.errors import Terminated

        signum = signal.Signals.__members__.get(str(error), signal.SIGTERM) if isinstance(error, Terminated) \
            else signal.SIGINT
        again = threading.Timer(0.05, os.kill, (os.getpid(), signum))
        again.daemon = True
        again.start()
        return
    sys.__unraisablehook__(unraisable)


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP (a closed terminal, a killed tmux or ssh session) clean up exactly like Ctrl-C,
    in every command, not only while fio runs; a signal the caller ignores (nohup) stays ignored. None of
    the three is lost when it lands in a callback (`_deliver_again`)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _terminate)
    sys.unraisablehook = _deliver_again


def _exit(code: int) -> None:
    """Exit with `code`. After an interrupt, leave with os._exit once the output is flushed: CPython
    otherwise re-kills itself with SIGINT at shutdown when a KeyboardInterrupt passed through C code on its
    way here, and the shell sees "killed by signal" instead of the documented 130."""
    if code == 130:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(130)
    sys.exit(code)


def run_app(argv: list[str] | None = None) -> None:
    global _kept, _delivered
    from stackbench.base.errors import StackbenchError, Terminated, interrupt_cause

    _kept = _delivered = None
    install_signal_handlers()
    if argv is not None and any("\x00" in argument for argument in argv):
        # A real command line cannot hold a NUL (argv is C strings); a caller's list can, and the
        # path options' os.stat would raise ValueError on it.
        error_line("an argument contains a NUL character, which no path or value can hold: remove it. "
                   "See 'stackbench --help'")
        _exit(2)
    try:
        # Outside standalone mode Typer *returns* the code of a typer.Exit, and turns Ctrl-C (and the
        # Terminated of SIGTERM/SIGHUP) into Exit(130).
        code = app(args=argv, prog_name="stackbench", standalone_mode=False)
        if code == 130:
            raise Terminated(_delivered) if _delivered else KeyboardInterrupt
        if isinstance(code, int) and not isinstance(code, bool) and code:
            _exit(code)
    except StackbenchError as error:
        error_line(error.one_line())
        _exit(error.exit_code)
    except typer.Exit as done:
        _exit(done.exit_code)
    except KeyboardInterrupt as interrupt:
        error_line(_kept(interrupt_cause(interrupt)).one_line() if _kept is not None
                   else "interrupted. Nothing half-written was kept.")
        _exit(130)
    except click.UsageError as error:
        # Bad usage is one line too (click prints three), and always exit 2.
        command = error.ctx.command_path if error.ctx is not None else "stackbench"
        error_line(f"{error.format_message().rstrip('.')}. See '{command} --help'")
        _exit(2)
    except click.ClickException as error:
        error_line(error.format_message())
        _exit(error.exit_code)
    except Exception as error:
        if type(error).__name__ == "Abort":
            error_line("aborted.")
            _exit(130)
        if os.environ.get("STACKBENCH_DEBUG"):
            raise
        error_line(
            f"internal error {type(error).__name__}: {error}. This is a bug in stackbench: "
            "please report it with the output of the same command run with STACKBENCH_DEBUG=1."
        )
        sys.exit(70)
