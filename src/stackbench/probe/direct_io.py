"""Does the file system under a target honour O_DIRECT?

Why: a buffered write test on an idle machine measures the page cache (GB/s that the device never saw),
and the README's first command must print device numbers. tmpfs before Linux 6.6, and OpenZFS before 2.3
(which accepts the flag and still caches in the ARC) are the common cases; the first refuses the open with
EINVAL, which is what this probe sees. The probe opens a new empty file in the target directory with
O_DIRECT and removes it: no byte of anyone's data is touched.
"""

from __future__ import annotations

import errno
import mmap
import os
import secrets
from pathlib import Path


def honours_o_direct(directory: Path) -> tuple[bool, str]:
    """(True, "") when an O_DIRECT open works in `directory`; otherwise (False, why)."""
    flag = getattr(os, "O_DIRECT", None)
    if flag is None:
        return False, "this platform has no O_DIRECT"
    probe = Path(directory) / f".stackbench-direct-probe-{secrets.token_hex(8)}"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY | flag, 0o600)
    except OSError as error:
        try:
            probe.unlink()
        except OSError:
            pass
        if error.errno == errno.EINVAL:
            return False, "the file system refuses O_DIRECT (EINVAL)"
        return False, f"O_DIRECT open failed: {error.strerror}"
    try:
        os.close(fd)
    finally:
        probe.unlink(missing_ok=True)
    return True, ""


def direct_io_alignment(directory: Path) -> int | None:
    """The smallest write size (512 to 4096 bytes) O_DIRECT accepts on a new file in `directory`.

    Why: a block size that is not a multiple of it fails in fio only when its cell starts, after other
    cells have run; asking the file system first turns that into a refusal before anything runs. The
    probe writes zeros to its own new file and removes it. None when no size works (or O_DIRECT is refused).
    """
    flag = getattr(os, "O_DIRECT", None)
    if flag is None:
        return None
    probe = Path(directory) / f".stackbench-align-probe-{secrets.token_hex(8)}"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY | flag, 0o600)
    except OSError:
        return None
    buffer = mmap.mmap(-1, 4096)  # anonymous maps are page-aligned, as O_DIRECT wants its memory
    try:
        for size in (512, 1024, 2048, 4096):
            try:
                os.pwrite(fd, memoryview(buffer)[:size], 0)
                return size
            except OSError as error:
                if error.errno != errno.EINVAL:
                    return None
        return None
    finally:
        buffer.close()
        os.close(fd)
        probe.unlink()
