"""Keeping a measurement the store could not take.

A fio run that finished is minutes of someone's machine time; when the results database cannot store it
(full disk, lock, read-only file) its raw fio JSON is written to a recovery file instead, and the error
names the file so that `stackbench import FILE` can store it later. The file goes to the first of these
that can hold it: $XDG_STATE_HOME/stackbench/recovery (~/.local/state/...), the current directory, the
system's temporary directory. Those are usually on other file systems than a full database.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def recovery_dirs() -> list[Path]:
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return [state / "stackbench" / "recovery", Path.cwd(), Path(tempfile.gettempdir())]


def keep(raw_fio_output: str, name: str) -> Path | None:
    """Write `raw_fio_output` whole to a new file called `name` (readable by its owner only) in the first
    place that takes it, through the one output-file writer: never over anything already there."""
    from stackbench.base.errors import StackbenchError
    from stackbench.base.output_files import Destination, write_file

    data = raw_fio_output.encode()
    for directory in recovery_dirs():
        path = directory / name
        try:
            directory.mkdir(parents=True, exist_ok=True)
            write_file(path, data, force=False, destination=Destination("the recovery file", force=None),
                       private=True)
            return path
        except (OSError, StackbenchError):
            continue
    return None
