"""`python -m stackbench` and the `stackbench` command (pyproject's script): the signals first, then the CLI.

Importing the CLI takes a few tenths of a second (more on a loaded machine). A SIGTERM or SIGHUP in that
time would otherwise kill the process with the system's default action, before `run_app` installs its
handlers; here it is turned into the same interruption as a Ctrl-C, which nothing has yet been written for.
A signal the caller ignores (`nohup` ignores SIGHUP) stays ignored.
"""

import gc
import signal
import sys


def _stopped_while_starting(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _start_the_walk(args: list[str]) -> None:
    """`smallblocks` starts walking before the CLI loads, which then loads while the readers work
    (docs/smallblocks.md, "Speed"); on a command line it does not plainly understand, it starts nothing."""
    from stackbench.scan.early import walk_arguments

    arguments = walk_arguments(args)
    if arguments is not None:
        from stackbench.scan.walker import start_early

        start_early(*arguments)


def entry() -> None:
    # All inside the try: a signal may land between two of these lines. Once run_app is under way it
    # handles interruptions itself and leaves with SystemExit, so what reaches the except is start-up's.
    # No garbage collection while the modules load (they make no garbage worth it), and afterwards none that
    # scans them (cli.run_app freezes them and turns it back on): a collection walked every object made so
    # far, again and again as the imports grew the heap, a sixth of `stackbench runs`' CPU time (issue 34).
    gc.disable()
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _stopped_while_starting)
        if sys.argv[1:2] == ["smallblocks"]:
            _start_the_walk(sys.argv[2:])
        from stackbench.cli import main

        main()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while Python is still loading stackbench
        sys.stderr.write("Error: interrupted while starting. Nothing was written.\n")
        sys.exit(130)


if __name__ == "__main__":
    entry()
