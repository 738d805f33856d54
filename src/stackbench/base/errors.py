"""The one error type users see.

Every failure a user can meet is a `StackbenchError` carrying what went wrong and how to fix it; the CLI
prints it as a single line `Error: <what>. <fix>` and exits non-zero. Keeping the fix mandatory in the
constructor is what stops bare "something failed" messages from creeping in.
"""

from __future__ import annotations


class StackbenchError(Exception):
    """A user-facing failure: `what` happened, `fix` says what to do about it."""

    exit_code = 1

    def __init__(self, what: str, fix: str) -> None:
        self.what = what.rstrip(". ")
        self.fix = fix.rstrip(". ")
        super().__init__(self.one_line())

    def one_line(self) -> str:
        line = f"{self.what}. {self.fix}."
        return " ".join(line.split())


class UsageError(StackbenchError):
    """A value on the command line that cannot be used (out of range, unsafe characters, unknown name)."""

    exit_code = 2


class FioNotFound(StackbenchError):
    """fio is missing or cannot be executed."""


class FioOutputError(StackbenchError):
    """fio's output could not be understood (garbage, truncated, wrong shape)."""


class FioJobError(StackbenchError):
    """fio ran but a job reported an error."""


class UnsafeTarget(StackbenchError):
    """The target holds data stackbench was not allowed to destroy, or cannot hold the test."""


class StoreError(StackbenchError):
    """The results store cannot be opened or does not hold what was asked for."""


class Interrupted(StackbenchError):
    """The user (Ctrl-C) or the system (SIGTERM) stopped a run."""

    exit_code = 130


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is, so the same cleanup as Ctrl-C happens."""


class FleetHostsFailed(StackbenchError):
    """One or more hosts of a fleet run cannot take part; `failures` holds one line per host with its fix."""

    def __init__(self, what: str, fix: str, failures: list[str]) -> None:
        super().__init__(what, fix)
        self.failures = failures


def interrupt_cause(interrupt: KeyboardInterrupt) -> str:
    """`Ctrl-C`, or the signal's name when SIGTERM/SIGHUP arrived: what a message says stopped the command."""
    if isinstance(interrupt, Terminated):
        return interrupt.args[0] if interrupt.args else "SIGTERM"
    return "Ctrl-C"
