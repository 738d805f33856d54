"""Running a knob's actions and reads: an argv without a shell (base/user_commands.py: its own process group, a
timeout, interruptions forwarded), or a value written to a kernel file.

Kernel files are only ever under /sys and /proc/sys, opened without creating or truncating: a knob can change a
setting the kernel exposes and nothing else. A failure is one `ActionFailed` naming the command and what it said.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from stackbench.base import user_commands
from stackbench.base.errors import StackbenchError
from stackbench.tune.knob import Action

COMMAND_TIMEOUT_S = 120.0
KERNEL_ROOTS = ("/sys/", "/proc/sys/")


class ActionFailed(StackbenchError):
    """A knob's read, apply or undo did not work: the session stops that knob (or the check refuses it)."""


def _kernel_path(path: str) -> str:
    if not path.startswith(KERNEL_ROOTS) or "/../" in path or path.endswith("/.."):
        raise ActionFailed(f"{path} is not a kernel setting under /sys or /proc/sys",
                           "This is a bug in the knob's declaration: report it")
    return path


def read_kernel_file(path: str) -> str:
    """A sysfs or /proc/sys value, stripped."""
    try:
        return Path(_kernel_path(path)).read_text().strip()
    except OSError as error:
        raise ActionFailed(f"cannot read {path}: {error.strerror or error}",
                           "Check that the device or setting still exists") from None


def write_kernel_file(path: str, value: str) -> None:
    try:
        fd = os.open(_kernel_path(path), os.O_WRONLY | os.O_CLOEXEC)
    except OSError as error:
        raise ActionFailed(f"cannot open {path} to write {value}: {error.strerror or error}",
                           "Run as root, and check that the setting exists on this kernel") from None
    try:
        os.write(fd, value.encode())
    except OSError as error:
        raise ActionFailed(f"writing {value} to {path} failed: {error.strerror or error}",
                           "The kernel refused the value: it is not one this device or setting takes") from None
    finally:
        os.close(fd)


def run(action: Action, timeout: float = COMMAND_TIMEOUT_S) -> None:
    """Run one action; ActionFailed when it does not succeed (its state is then unknown: read it again)."""
    if action.path is not None:
        write_kernel_file(action.path, str(action.value))
        return
    _checked(action.argv, timeout, output=False)


def output_of(words: Sequence[str], timeout: float = COMMAND_TIMEOUT_S) -> str:
    """What a read command prints on stdout; ActionFailed when it fails."""
    return _checked(tuple(words), timeout, output=True)


def _checked(words: tuple[str, ...], timeout: float, *, output: bool) -> str:
    shown = Action(argv=words).shown()
    try:
        done = user_commands.run_argv(words, timeout=timeout, output=output)
    except OSError as error:
        raise ActionFailed(f"cannot run {shown}: {error.strerror or error}",
                           f"Install {words[0]} or check its path") from None
    if done.timed_out:
        raise ActionFailed(f"{shown} did not finish within {timeout:g} s and was stopped: its effect is unknown",
                           "Check the setting by hand")
    if not done.ok:
        raise ActionFailed(f"{shown} exited with {done.exit_code}" + (f": {done.said}" if done.said else ""),
                           "Run it by hand to see why")
    return done.output
