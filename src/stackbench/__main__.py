"""`python -m stackbench` and the `stackbench` command (pyproject's script): the signals first, then the CLI.

Importing the CLI takes a few tenths of a second (more on a loaded machine). A SIGTERM or SIGHUP in that
time would otherwise kill the process with the system's default action, before `run_app` installs its
handlers; here it is turned into the same interruption as a Ctrl-C, which nothing has yet been written for.
A signal the caller ignores (`nohup` ignores SIGHUP) stays ignored.
"""

import signal
import sys


def _stopped_while_starting(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def entry() -> None:
    # All inside the try: a signal may land between two of these lines. Once run_app is under way it
    # handles interruptions itself and leaves with SystemExit, so what reaches the except is start-up's.
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _stopped_while_starting)
        from stackbench.cli import main

        main()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while Python is still loading stackbench
        sys.stderr.write("Error: interrupted while starting. Nothing was written.\n")
        sys.exit(130)


if __name__ == "__main__":
    entry()
