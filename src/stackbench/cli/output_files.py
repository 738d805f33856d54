"""Writing a command's output files all at once or not at all (`stackbench report`).

Every file is first written to a hidden temporary file beside its final name and renamed over it only when
all of them are written, so a full disk, a bad directory or Ctrl-C leaves neither a half-written file nor a
temporary one. An existing file is kept unless the user passed --force.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

from stackbench.errors import StackbenchError, UsageError


def write_all(files: Sequence[tuple[Path, bytes]], *, force: bool) -> None:
    """Write `files` ((path, bytes), in order); refuse before writing anything if one exists and not `force`."""
    if not force:
        existing = [path for path, _ in files if path.exists() or path.is_symlink()]
        if existing:
            more = f" (and {len(existing) - 1} more file(s) it would write)" if len(existing) > 1 else ""
            raise StackbenchError(f"{existing[0]} already exists{more}",
                                  "Pass --force to replace it, or choose another -o FILE")
    for path, _ in files:
        if path.is_dir():
            raise UsageError(f"{path} is a directory", "Give -o the name of a file to write, e.g. -o report.html")
        if not path.parent.is_dir():
            raise StackbenchError(f"cannot write {path}: the directory {path.parent} does not exist",
                                  "Create it first, or choose another -o FILE")
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            try:
                handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
            except OSError as error:
                raise StackbenchError(f"cannot write {path}: {error.strerror or error}",
                                      "Choose a directory you can write to with -o FILE") from None
            staged.append((temporary, path))
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temporary, 0o666 & ~_umask())
        for temporary, path in staged:
            os.replace(temporary, path)
        staged = []
    except OSError as error:
        raise StackbenchError(f"cannot write {error.filename or files[0][0]}: {error.strerror or error}",
                              "Free some space or choose another -o FILE") from None
    finally:
        for temporary, _ in staged:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
